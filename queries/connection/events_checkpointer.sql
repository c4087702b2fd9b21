-- events_checkpointer: settings of the events database's checkpoint connection besides its
-- `synchronous` level: a WAL started over is truncated back to 64 MiB.
-- Parameters: none. Idempotent: yes.
PRAGMA journal_size_limit = 67108864
