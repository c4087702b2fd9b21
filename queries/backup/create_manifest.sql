-- create_manifest: the table a backup carries beside the events database's own tables: what
-- the copy is and what else it needs to bring an installation back (its secrets file).
-- Run on the backup copy only. Parameters: none. Idempotent: no.
CREATE TABLE linkpulse_backup (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID
