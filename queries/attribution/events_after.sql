-- events_after: the next events to attribute (clicks included: later events match them), in
-- seq order. Parameters (positional): after (the watermark), limit. Idempotent: yes (read-only).
SELECT seq, event_id, type, occurred_at_ms, ref, campaign, source, medium, platform,
       click_id, ip_hash, os_version, bot
FROM events WHERE seq > ? ORDER BY seq LIMIT ?
