-- insert_text: adds a text to the events' dictionary; its id is lastInsertedRowID.
-- Parameters: value. Idempotent: no (the writer looks it up first, text_id.sql).
INSERT INTO event_texts (value) VALUES (:value)
