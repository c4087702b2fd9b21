-- drop_click_indexes: attribution matches no click before the horizon $1 any more (as on SQLite):
-- the click indexes forget them. Run with the horizon's record.
WITH r AS (DELETE FROM lp_ref_clicks WHERE occurred_at_ms < $1)
DELETE FROM lp_fingerprint_clicks WHERE occurred_at_ms < $1
