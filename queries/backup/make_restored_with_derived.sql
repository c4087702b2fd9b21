-- make_restored_with_derived: turns a backup copy that carries its derived files into a data
-- directory's events database: the manifest goes, the database id stays (the derived files
-- restored beside it were copied from this database and are counted on from their
-- watermarks), and so does a retention hold the copy may hold.
-- Run on the restored copy. Parameters: none. Idempotent: yes.
DROP TABLE IF EXISTS linkpulse_backup;
DELETE FROM installation WHERE name IN ('retention_hold_seq', 'retention_hold_until_ms');
