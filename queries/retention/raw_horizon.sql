-- raw_horizon: the raw-event horizon in UTC ms (no row: retention has never deleted a raw
-- event). Events that happened before it may have been deleted; their rollups are kept.
-- Run on the events database. Parameters: none. Idempotent: yes (read-only).
SELECT CAST(value AS INTEGER) FROM installation WHERE name = 'raw_horizon_ms'
