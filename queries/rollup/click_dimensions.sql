-- click_dimensions: the link dimensions (ref, campaign, source, medium) of the click stored under a
-- seq (no row when that event is not a click). Parameters (positional): seq.
-- Idempotent: yes (read-only).
SELECT ref, campaign, source, medium FROM event_rows WHERE seq = ? AND type = 0
