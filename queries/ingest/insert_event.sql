-- insert_event: stores one validated event and yields its seq (lastInsertedRowID).
-- Parameters (positional): event_id, id_key, type, occurred_at_ms, received_at_ms, sent_at_ms,
--   ref, campaign, source, medium, platform, device_id, click_id, deferred, url, referrer,
--   user_agent, ip_hash, visitor_id, os_version, app_version, properties, bot, bot_reason.
-- Idempotent: no. The writer deduplicates by event_id before calling it.
INSERT INTO events (
    event_id, id_key, type, occurred_at_ms, received_at_ms, sent_at_ms,
    ref, campaign, source, medium, platform, device_id, click_id, deferred, url, referrer,
    user_agent, ip_hash, visitor_id, os_version, app_version, properties, bot, bot_reason
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
