-- events_after: the next events to attribute (clicks included: later events match them), in
-- seq order, in their stored form (ids and the IP hash as bytes, type and platform as codes;
-- see 0004_compact_events.sql) with the OS version's text. Parameters (positional): after
-- (the watermark), limit. Idempotent: yes (read-only).
SELECT r.seq, r.event_id, r.type, r.occurred_at_ms, r.ref, r.campaign, r.source, r.medium, r.platform,
       r.click_id, r.ip_hash, t.value, r.bot
FROM ev.event_rows r LEFT JOIN ev.event_texts t ON t.id = r.os_version
WHERE r.seq > ? ORDER BY r.seq LIMIT ?
