-- reset: empties the id index (both levels) and ties it to an events database, from seq 0 (it
-- is then rebuilt from the events). Run on the id index file.
-- Parameters: database_id. Idempotent: yes.
DELETE FROM event_ids;
DELETE FROM recent_event_ids;
INSERT OR REPLACE INTO index_state (singleton, database_id, indexed_through_seq) VALUES (1, :database_id, 0);
