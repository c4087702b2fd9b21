-- create_events_file: the first statements of a new events database, before its first page:
-- incremental auto-vacuum (so retention can give space back), then WAL.
-- Parameters: none. Idempotent: yes (on a file with content, auto_vacuum no longer changes).
PRAGMA auto_vacuum = INCREMENTAL;
PRAGMA journal_mode = WAL;
