-- rows_after: the next events to seal, every column in event_rows order (the order
-- EventArchiveTable.columns lists). Parameters: :after_seq, :through_seq, :limit. Idempotent: yes.
SELECT seq, event_id, type, platform, bot, occurred_at_ms, received_delta, sent_delta, ref, campaign, source, medium,
       deferred, visitor, ip_hash, device_id, click_id, url, referrer, user_agent, os_version, app_version,
       bot_reason, properties, click_id_source, resolve, install_referrer, audience
FROM event_rows WHERE seq > :after_seq AND seq <= :through_seq ORDER BY seq LIMIT :limit
