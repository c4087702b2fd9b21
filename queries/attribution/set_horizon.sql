-- set_horizon: records the memory horizon of the click indexes (clicks before it are on disk),
-- in the same transaction as the clicks moved to disk. Parameters: horizon_ms.
-- Idempotent: yes.
UPDATE attribution_state SET recent_from_ms = :horizon_ms
