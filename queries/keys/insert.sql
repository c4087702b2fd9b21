-- insert: stores a key, unless one with the same id or digest is stored already (then no row
-- changes: a key adopted twice, by two daemons or two starts, is stored once).
-- Parameters: :id, :name, :kind, :digest, :created_at_ms. Idempotent: yes.
INSERT INTO access_keys (id, name, kind, digest, created_at_ms)
VALUES (:id, :name, :kind, :digest, :created_at_ms)
ON CONFLICT DO NOTHING
