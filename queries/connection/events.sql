-- events: settings of every connection to the events database besides its `synchronous`
-- level (durability_full.sql or durability_normal.sql). Commits never checkpoint (the
-- checkpoint job does, on a connection of its own: see EventStore.checkpoint), and a WAL
-- started over is truncated back to 64 MiB.
-- Parameters: none. Idempotent: yes.
PRAGMA wal_autocheckpoint = 0;
PRAGMA journal_size_limit = 67108864;
