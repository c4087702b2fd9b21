-- click_by_seq: a stored click by seq: its event id, time, link dimensions, OS version and bot
-- flag. No row when that seq is not a click. Parameters (positional): seq.
-- Idempotent: yes (read-only).
SELECT event_id, occurred_at_ms, ref, campaign, source, medium, os_version, bot
FROM events WHERE seq = ? AND type = 'click'
