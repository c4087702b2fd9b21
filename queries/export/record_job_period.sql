-- record_job_period: marks a period of a scheduled export job as done. Run in the same
-- transaction as insert_export_file, after the file is in place.
-- Parameters: job name, period_start_ms, period_end_ms, now_ms.
-- Idempotent: yes (a period already recorded only moves updated_at_ms; never moves backwards).
INSERT INTO export_jobs (name, last_period_start_ms, last_period_end_ms, updated_at_ms)
VALUES (:job, :period_start_ms, :period_end_ms, :now_ms)
ON CONFLICT (name) DO UPDATE SET
    last_period_start_ms = max(last_period_start_ms, excluded.last_period_start_ms),
    last_period_end_ms = max(last_period_end_ms, excluded.last_period_end_ms),
    updated_at_ms = excluded.updated_at_ms
