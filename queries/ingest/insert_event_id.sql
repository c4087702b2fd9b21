-- insert_event_id: adds one (id_key, seq) pair to the id index's recent level, in id_key order
-- within a merge. Parameters: id_key, seq.
-- Idempotent: yes (a pair already present is left as it is).
INSERT OR IGNORE INTO recent_event_ids (id_key, seq) VALUES (:id_key, :seq)
