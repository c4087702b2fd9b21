-- rows_after: the next events to seal, every column in event_rows order (the order
-- EventArchiveTable.columns lists). Parameters: after seq, through seq, how many. Idempotent: yes.
SELECT seq, event_id, type, platform, bot, occurred_at_ms, received_delta, sent_delta, ref, campaign, source, medium,
       deferred, visitor, ip_hash, device_id, click_id, url, referrer, user_agent, os_version, app_version,
       bot_reason, properties, click_id_source, resolve, install_referrer, audience
FROM event_rows WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3
