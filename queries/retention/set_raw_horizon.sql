-- set_raw_horizon: moves the raw-event horizon to an instant (UTC ms), never back: written
-- before the first raw event older than it is deleted, so every reader that finds an older
-- edge refuses it instead of counting from what is left.
-- Run on the events database. Parameters: horizon_ms. Idempotent: yes.
INSERT INTO installation (name, value) VALUES ('raw_horizon_ms', CAST(:horizon_ms AS INTEGER))
ON CONFLICT (name) DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))
