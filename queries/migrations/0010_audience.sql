-- Migration 0010: each event's audience (country, device, system, browser, language: derived at
-- ingest, see Audience.stored) as an event_texts id, since few combinations repeat across many
-- events. A new column of event_rows (no rewrite of the table); blocks sealed before it have no
-- such column and read it as NULL (EventArchiveTable); the events view gains it at its end.

ALTER TABLE event_rows ADD COLUMN audience INTEGER;

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
       coalesce(r.resolve, 0) AS resolve,
       r.install_referrer,
       (SELECT value FROM event_texts WHERE id = r.audience) AS audience
FROM (SELECT * FROM event_rows UNION ALL SELECT * FROM event_archive) r;
