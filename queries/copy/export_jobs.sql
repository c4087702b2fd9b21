-- export_jobs: the last period each scheduled export job finished, for `linkpulse copy`.
SELECT name, last_period_start_ms, last_period_end_ms FROM export_jobs ORDER BY name
