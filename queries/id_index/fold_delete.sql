-- fold_delete: one slice of a fold, second half: removes from the recent level the keys of a
-- range that fold_insert copied, in the same transaction. Run on the id index file.
-- Parameters: lowest key, highest key (inclusive). Idempotent: yes.
DELETE FROM recent_event_ids WHERE id_key BETWEEN :low_key AND :high_key
