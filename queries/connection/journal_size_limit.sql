-- journal_size_limit: a WAL started over is truncated back to 64 MiB instead of keeping the
-- size it reached (every connection of every file).
-- Parameters: none. Idempotent: yes.
PRAGMA journal_size_limit = 67108864
