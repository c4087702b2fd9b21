-- checkpoint_restart: copies the main file's WAL into the file and, when no reader is left on
-- any of its frames, makes sure the next commit writes the WAL over from its start; answers
-- (busy, WAL frames, frames copied), busy 1 when a reader or the writer kept it from finishing.
-- It waits for them as long as the connection's busy handler does: run it with that off.
-- Parameters: none. Idempotent: yes.
PRAGMA main.wal_checkpoint(RESTART)
