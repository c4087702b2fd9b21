-- record_horizon: raw events before :horizon_ms (UTC ms) may be gone; the horizon never moves back.
INSERT INTO lp_installation (key, value) VALUES ('raw_horizon_ms', :horizon_ms)
ON CONFLICT (key) DO UPDATE SET value = greatest(lp_installation.value::bigint, excluded.value::bigint)::text
