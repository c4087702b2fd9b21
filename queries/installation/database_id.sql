-- database_id: the random id of this events database (no row: not drawn yet), which the
-- derived files keep to recognise the database they belong to. Run on the events database.
-- Parameters: none. Idempotent: yes (read-only).
SELECT value FROM installation WHERE name = 'database_id'
