-- make_restored: turns a backup copy into a data directory's events database. The manifest
-- goes, and so does the database id: the next start draws a new one, so no derived file
-- (id index, attribution, rollups) made from another state of the events is ever taken for
-- this one's, and everything derived is rebuilt from the restored events. (A backup that
-- carries its derived files, see derived_watermark.sql, keeps the id: make_restored_with_derived.sql.)
-- Run on the restored copy. Parameters: none. Idempotent: yes.
DROP TABLE IF EXISTS linkpulse_backup;
DELETE FROM installation WHERE name = 'database_id';
