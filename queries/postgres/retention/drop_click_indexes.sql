-- drop_click_indexes: attribution matches no click before the horizon :before_ms any more (as on SQLite):
-- the click indexes forget them. Run with the horizon's record.
WITH r AS (DELETE FROM lp_ref_clicks WHERE occurred_at_ms < :before_ms)
DELETE FROM lp_fingerprint_clicks WHERE occurred_at_ms < :before_ms
