-- insert_event: stores one validated event in its compact form (see migrations/0004) and
-- yields its seq (lastInsertedRowID).
-- Parameters: event_id, type code, platform code, bot, occurred_at_ms,
--   received_at_ms - occurred_at_ms, sent_at_ms - occurred_at_ms, ref, campaign, source,
--   medium, deferred, visitor, ip_hash, device_id, click_id, url, referrer, and the
--   event_texts ids of user_agent, os_version, app_version, bot_reason; then properties,
--   the click_id_source code, the resolve flag (NULL when not a resolve), the install
--   referrer as sent and the event_texts id of the audience (Audience.stored).
-- Idempotent: no. The writer deduplicates by event_id before calling it.
INSERT INTO event_rows (
    event_id, type, platform, bot, occurred_at_ms, received_delta, sent_delta, ref, campaign, source,
    medium, deferred, visitor, ip_hash, device_id, click_id, url, referrer, user_agent, os_version,
    app_version, bot_reason, properties, click_id_source, resolve, install_referrer, audience
) VALUES (
    :event_id, :type, :platform, :bot, :occurred_at_ms, :received_delta, :sent_delta, :ref, :campaign, :source,
    :medium, :deferred, :visitor, :ip_hash, :device_id, :click_id, :url, :referrer, :user_agent, :os_version,
    :app_version, :bot_reason, :properties, :click_id_source, :resolve, :install_referrer, :audience
)
