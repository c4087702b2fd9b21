-- text_id: the id of a text in the events' dictionary (event_texts), if it is there.
-- Parameters: value. Idempotent: yes (read-only).
SELECT id FROM event_texts WHERE value = :value
