-- job_last_period: the last period a scheduled export job finished (no row: never ran).
-- Parameters: job name. Idempotent: yes (read-only).
SELECT last_period_start_ms, last_period_end_ms FROM export_jobs WHERE name = :job
