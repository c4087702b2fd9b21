-- record_job_period: marks the period [:period_start_ms, :period_end_ms) of the scheduled export job :job as done, in the
-- transaction that records its file. A period never moves backwards.
INSERT INTO lp_export_jobs (name, last_period_start_ms, last_period_end_ms)
VALUES (:job, :period_start_ms, :period_end_ms)
ON CONFLICT (name) DO UPDATE SET
    last_period_start_ms = greatest(lp_export_jobs.last_period_start_ms, excluded.last_period_start_ms),
    last_period_end_ms = greatest(lp_export_jobs.last_period_end_ms, excluded.last_period_end_ms),
    updated_at = now()
