-- insert: stores a key unless one with the same id or digest is stored already (a key adopted
-- by two daemons at once is stored once). Answers the id when a row was added.
-- Parameters: :id, :name, :kind, :digest, :created_at_ms. Idempotent: yes.
INSERT INTO lp_access_keys (id, name, kind, digest, created_at_ms)
VALUES (:id, :name, :kind, :digest, :created_at_ms)
ON CONFLICT DO NOTHING
RETURNING id
