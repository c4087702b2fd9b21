-- wal: turns write-ahead logging on for the connection's main file (kept by the file once
-- set); answers the journal mode in force.
-- Parameters: none. Idempotent: yes.
PRAGMA journal_mode = WAL
