-- gone_default: up to :batch events of lp_events_default that happened before :before_ms: the batch the next
-- statements delete.
CREATE TEMP TABLE lp_gone ON COMMIT DROP AS
SELECT seq, type FROM lp_events_default WHERE occurred_at_ms < :before_ms ORDER BY occurred_at_ms LIMIT :batch
