-- truncate_wal: copies every committed page of the connection's main file from its WAL into
-- the file and truncates the WAL to zero bytes; run on each file as the store closes, so a
-- command (generate, rollup, export) leaves no large WAL behind. Busy readers or writers of
-- another process make it copy less (it never waits long): harmless.
-- Parameters: none. Idempotent: yes.
PRAGMA main.wal_checkpoint(TRUNCATE)
