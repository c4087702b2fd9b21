-- fold_insert: one slice of a fold, first half: copies the recent level's keys in a key range
-- into the main level (in key order, so each leaf of that range is written once). In the same
-- transaction as fold_delete. Run on the id index file.
-- Parameters: lowest key, highest key (inclusive). Idempotent: yes (OR IGNORE).
INSERT OR IGNORE INTO event_ids (id_key, seq)
SELECT id_key, seq FROM recent_event_ids WHERE id_key BETWEEN :low_key AND :high_key ORDER BY id_key, seq
