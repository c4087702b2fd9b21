-- derived: settings of every connection to a derived file (id index, attribution, rollups):
-- a WAL started over is truncated back to 64 MiB. Their durability is durability_normal.sql.
-- Parameters: none. Idempotent: yes.
PRAGMA journal_size_limit = 67108864
