-- insert_export_file: records a file a scheduled export wrote (replacing the record of an
-- earlier file of the same name, which the rename replaced too). $1 name, $2 job,
-- $3 period_start_ms, $4 period_end_ms, $5 period_label, $6 rows, $7 bytes, $8 created_at_ms.
INSERT INTO lp_export_files (name, job, period_start_ms, period_end_ms, period_label, rows, bytes, created_at_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (name) DO UPDATE SET
    job = excluded.job, period_start_ms = excluded.period_start_ms, period_end_ms = excluded.period_end_ms,
    period_label = excluded.period_label, rows = excluded.rows, bytes = excluded.bytes, created_at_ms = excluded.created_at_ms
