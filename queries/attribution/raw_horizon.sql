-- raw_horizon: the raw-event horizon (UTC ms; no row when retention has deleted nothing), read
-- at the start of every round: clicks that happened before it are never matched (their rows
-- are, or may soon be, deleted). Parameters: none. Idempotent: yes (read-only).
SELECT CAST(value AS INTEGER) FROM ev.installation WHERE name = 'raw_horizon_ms'
