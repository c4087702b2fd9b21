-- export_files: every recorded export file, newest period first.
SELECT name, job, period_start_ms, period_end_ms, period_label, rows, bytes, created_at_ms
FROM lp_export_files ORDER BY period_start_ms DESC, job, name
