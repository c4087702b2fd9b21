-- copy_into: writes a consistent, compacted copy of the events database to a new file, from
-- one read snapshot (the daemon keeps writing beside it). Run on the events database.
-- Parameters: the new file's path (it must not exist). Idempotent: no.
VACUUM INTO :path
