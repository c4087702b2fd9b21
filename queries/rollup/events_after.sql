-- events_after: the next events to roll up, in seq order. Parameters (positional): after
-- (the watermark), limit. Idempotent: yes (read-only).
SELECT seq, event_id, id_key, type, occurred_at_ms, ref, campaign, source, medium, platform,
       click_id, deferred, ip_hash, visitor_id, os_version, bot
FROM events WHERE seq > ? ORDER BY seq LIMIT ?
