-- copy_schema_into: writes a consistent, compacted copy of one attached database (a derived
-- file) to a new file, from one read snapshot. The schema name is one of agg, attr, ids
-- (allow-listed by the caller, never user text), substituted for SCHEMA.
-- Parameters: the new file's path (it must not exist). Idempotent: no.
VACUUM SCHEMA INTO :path
