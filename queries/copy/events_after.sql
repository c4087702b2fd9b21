-- events_after (linkpulse copy): up to ? stored events with a seq above ?, decoded as they were
-- sent (the events view), in seq order: what a copy into PostgreSQL stores again.
-- Parameters: after_seq, limit. Idempotent: yes (read-only).
SELECT seq, event_id, type, occurred_at_ms, received_at_ms, sent_at_ms, ref, campaign, source, medium,
       platform, device_id, click_id, deferred, url, referrer, user_agent, ip_hash, visitor_id,
       os_version, app_version, properties, bot_reason, click_id_source, resolve
FROM events WHERE seq > ? ORDER BY seq LIMIT ?
