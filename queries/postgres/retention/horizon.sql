-- horizon: the recorded raw-event horizon (UTC ms; no row: nothing deleted yet).
SELECT value::bigint FROM lp_installation WHERE key = 'raw_horizon_ms'
