-- insert_database_id: records the events database's random id, drawn once at its first open.
-- Run on the events database. Parameters: id. Idempotent: no (one row per name).
INSERT INTO installation (name, value) VALUES ('database_id', :id)
