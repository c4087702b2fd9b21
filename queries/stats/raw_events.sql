-- raw_events: the rolled-up events that happened in [from, to), with the dimensions and match
-- type attribution gave them, for the parts of a range that are not whole 15-minute buckets.
-- Parameters (positional): from_ms, to_ms. Idempotent: yes (read-only).
SELECT e.occurred_at_ms, e.type, e.platform, e.bot, e.deferred, e.visitor_id,
       CASE WHEN a.seq IS NULL THEN e.ref ELSE a.ref END,
       CASE WHEN a.seq IS NULL THEN e.campaign ELSE a.campaign END,
       CASE WHEN a.seq IS NULL THEN e.source ELSE a.source END,
       CASE WHEN a.seq IS NULL THEN e.medium ELSE a.medium END, a.match_type
FROM event_times t
JOIN events e ON e.seq = t.seq
LEFT JOIN attribution a ON a.seq = t.seq
WHERE t.occurred_at_ms >= ? AND t.occurred_at_ms < ?
