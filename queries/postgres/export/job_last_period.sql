-- job_last_period: the last period the scheduled export job :job finished (no row: never ran).
SELECT last_period_start_ms, last_period_end_ms FROM lp_export_jobs WHERE name = :job
