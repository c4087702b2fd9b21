-- checkpoint_passive: copies what it can of the main file's WAL into the file without waiting
-- for readers or the writer; answers (busy, WAL frames, frames copied).
-- Parameters: none. Idempotent: yes.
PRAGMA main.wal_checkpoint(PASSIVE)
