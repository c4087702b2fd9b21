-- insert_export_file: records a file a scheduled export wrote (replacing the record of an
-- earlier file of the same name, which the rename replaced too).
-- Parameters: name, job, period_start_ms, period_end_ms, period_label, rows, bytes,
--   created_at_ms. Idempotent: yes.
INSERT OR REPLACE INTO export_files
    (name, job, period_start_ms, period_end_ms, period_label, rows, bytes, created_at_ms)
VALUES (:name, :job, :period_start_ms, :period_end_ms, :period_label, :rows, :bytes, :created_at_ms)
