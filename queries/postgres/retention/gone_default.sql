-- gone_default: up to $2 events of lp_events_default that happened before $1: the batch the next
-- statements delete.
CREATE TEMP TABLE lp_gone ON COMMIT DROP AS
SELECT seq, type FROM lp_events_default WHERE occurred_at_ms < $1 ORDER BY occurred_at_ms LIMIT $2
