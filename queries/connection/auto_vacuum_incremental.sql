-- auto_vacuum_incremental: the first statement of a new events database, before its first
-- page is written (turning WAL on writes one): lets retention give the space of deleted
-- events back to the filesystem (incremental_vacuum.sql). Also run before the vacuum of an
-- emptied attribution file (its reset), which applies it to that file.
-- Parameters: none. Idempotent: yes (on a file with content it no longer changes anything).
PRAGMA auto_vacuum = INCREMENTAL
