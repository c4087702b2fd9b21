-- events_after: the next events to roll up, in seq order, with the attribution the ingest
-- writer stored for them. Parameters (positional): after (the watermark), limit.
-- Idempotent: yes (read-only).
SELECT seq, type, occurred_at_ms, ref, campaign, source, medium, platform, deferred, visitor_id, bot,
       match_type, matched_click_seq
FROM events WHERE seq > ? ORDER BY seq LIMIT ?
