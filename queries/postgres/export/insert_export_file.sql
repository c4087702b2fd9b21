-- insert_export_file: records a file a scheduled export wrote (replacing the record of an
-- earlier file of the same name, which the rename replaced too). :name, :job,
-- :period_start_ms, :period_end_ms, :period_label, :rows, :bytes, :created_at_ms.
INSERT INTO lp_export_files (name, job, period_start_ms, period_end_ms, period_label, rows, bytes, created_at_ms)
VALUES (:name, :job, :period_start_ms, :period_end_ms, :period_label, :rows, :bytes, :created_at_ms)
ON CONFLICT (name) DO UPDATE SET
    job = excluded.job, period_start_ms = excluded.period_start_ms, period_end_ms = excluded.period_end_ms,
    period_label = excluded.period_label, rows = excluded.rows, bytes = excluded.bytes, created_at_ms = excluded.created_at_ms
