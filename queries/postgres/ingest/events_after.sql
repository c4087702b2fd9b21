-- events_after: up to :limit stored events with a seq above :after_seq, in seq order (the store order the
-- derived work and copies read), every column as stored.
SELECT seq, event_id, type, platform, bot, occurred_at_ms, received_at_ms, sent_at_ms,
       ref, campaign, source, medium, deferred, visitor_id, ip_hash, device_id, click_id,
       click_id_source, resolve, url, referrer, user_agent, os_version, app_version,
       bot_reason, properties, install_referrer, audience
FROM lp_events WHERE seq > :after_seq ORDER BY seq LIMIT :limit
