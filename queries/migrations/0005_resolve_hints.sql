-- Migration 0005: what an app's first-launch call (`POST /v1/resolve`) adds to its event.
-- * click_id_source: where the app read click_id from, as a code (install_referrer 0,
--   pasteboard 1, universal_link 2, app_link 3, other 4; NULL: not said). An install referrer's
--   click id makes the match `install_referrer` instead of `click_id`.
-- * resolve: 1 when the event came through /v1/resolve (a device's first resolve is its first
--   session), NULL otherwise.
-- Both are new columns (no rewrite of the table); the events view gains them at its end.

ALTER TABLE event_rows ADD COLUMN click_id_source INTEGER;
ALTER TABLE event_rows ADD COLUMN resolve INTEGER;

DROP VIEW events;
CREATE VIEW events AS
SELECT r.seq,
       CASE WHEN typeof(r.event_id) <> 'blob' THEN r.event_id
            WHEN length(r.event_id) = 16 THEN lower(substr(hex(r.event_id), 1, 8) || '-' || substr(hex(r.event_id), 9, 4) || '-'
                 || substr(hex(r.event_id), 13, 4) || '-' || substr(hex(r.event_id), 17, 4) || '-' || substr(hex(r.event_id), 21))
            ELSE substr(hex(r.event_id), 3, 8) || '-' || substr(hex(r.event_id), 11, 4) || '-' || substr(hex(r.event_id), 15, 4)
                 || '-' || substr(hex(r.event_id), 19, 4) || '-' || substr(hex(r.event_id), 23) END AS event_id,
       CASE r.type WHEN 0 THEN 'click' WHEN 1 THEN 'open' WHEN 2 THEN 'install' ELSE 'fallback' END AS type,
       r.occurred_at_ms,
       r.occurred_at_ms + r.received_delta AS received_at_ms,
       r.occurred_at_ms + r.sent_delta AS sent_at_ms,
       r.ref, r.campaign, r.source, r.medium,
       CASE r.platform WHEN 0 THEN 'ios' WHEN 1 THEN 'android' WHEN 2 THEN 'web' WHEN 3 THEN 'desktop' ELSE 'other' END AS platform,
       CASE WHEN typeof(r.device_id) <> 'blob' THEN r.device_id
            WHEN length(r.device_id) = 16 THEN lower(substr(hex(r.device_id), 1, 8) || '-' || substr(hex(r.device_id), 9, 4) || '-'
                 || substr(hex(r.device_id), 13, 4) || '-' || substr(hex(r.device_id), 17, 4) || '-' || substr(hex(r.device_id), 21))
            ELSE substr(hex(r.device_id), 3, 8) || '-' || substr(hex(r.device_id), 11, 4) || '-' || substr(hex(r.device_id), 15, 4)
                 || '-' || substr(hex(r.device_id), 19, 4) || '-' || substr(hex(r.device_id), 23) END AS device_id,
       CASE WHEN typeof(r.click_id) <> 'blob' THEN r.click_id
            WHEN length(r.click_id) = 16 THEN lower(substr(hex(r.click_id), 1, 8) || '-' || substr(hex(r.click_id), 9, 4) || '-'
                 || substr(hex(r.click_id), 13, 4) || '-' || substr(hex(r.click_id), 17, 4) || '-' || substr(hex(r.click_id), 21))
            ELSE substr(hex(r.click_id), 3, 8) || '-' || substr(hex(r.click_id), 11, 4) || '-' || substr(hex(r.click_id), 15, 4)
                 || '-' || substr(hex(r.click_id), 19, 4) || '-' || substr(hex(r.click_id), 23) END AS click_id,
       r.deferred,
       r.url, r.referrer,
       (SELECT value FROM event_texts WHERE id = r.user_agent) AS user_agent,
       CASE WHEN typeof(r.ip_hash) = 'blob' THEN lower(hex(r.ip_hash)) ELSE r.ip_hash END AS ip_hash,
       CASE WHEN r.visitor IS NULL THEN
                CASE WHEN typeof(r.device_id) <> 'blob' THEN r.device_id
                     WHEN length(r.device_id) = 16 THEN lower(substr(hex(r.device_id), 1, 8) || '-' || substr(hex(r.device_id), 9, 4) || '-'
                          || substr(hex(r.device_id), 13, 4) || '-' || substr(hex(r.device_id), 17, 4) || '-' || substr(hex(r.device_id), 21))
                     ELSE substr(hex(r.device_id), 3, 8) || '-' || substr(hex(r.device_id), 11, 4) || '-' || substr(hex(r.device_id), 15, 4)
                          || '-' || substr(hex(r.device_id), 19, 4) || '-' || substr(hex(r.device_id), 23) END
            WHEN typeof(r.visitor) = 'blob' THEN 'v:' || lower(hex(r.visitor))
            ELSE r.visitor END AS visitor_id,
       (SELECT value FROM event_texts WHERE id = r.os_version) AS os_version,
       (SELECT value FROM event_texts WHERE id = r.app_version) AS app_version,
       r.properties,
       r.bot,
       (SELECT value FROM event_texts WHERE id = r.bot_reason) AS bot_reason,
       CASE r.click_id_source WHEN 0 THEN 'install_referrer' WHEN 1 THEN 'pasteboard' WHEN 2 THEN 'universal_link'
                              WHEN 3 THEN 'app_link' WHEN 4 THEN 'other' END AS click_id_source,
       coalesce(r.resolve, 0) AS resolve
FROM event_rows r;
