-- Migration 0004: raw events stored compactly (about a third of the bytes), read back as before
-- through the `events` view.
--
-- event_rows holds integers and short blobs where the old table held text:
-- * event_id, device_id, click_id: a canonical UUID (8-4-4-4-12 hex digits) as 16 bytes when
--   its letters are lower case, 17 bytes (a 0x01 byte, then the 16) when upper case; any other
--   id as its text. The view gives back exactly the text that was sent.
-- * ip_hash: the 32 hex digits of the keyed hash as 16 bytes.
-- * visitor: NULL when the visitor id is the device id (an app that sent one); the 16 bytes of
--   a `v:`-prefixed keyed visitor id; any other visitor id as its text.
-- * type and platform as small codes (click 0, open 1, install 2, fallback 3; ios 0, android
--   1, web 2, desktop 3, other 4), bot 0/1.
-- * received_at_ms and sent_at_ms as differences from occurred_at_ms (a few bytes instead of 6).
-- * user agent, OS and app versions and the bot reason as ids of event_texts (values repeated
--   by many events). Ref, campaign, source, medium, url and referrer stay text in the row: a
--   dictionary of values that are often new (a URL with a click id, every ref × campaign pair)
--   would write a random page of its unique index for nearly every event, which halved
--   batched ingest when links were dictionary-encoded.
-- The id_key column is gone: the id index derives it from the id (SHA-256, as at ingest).
-- The dictionary only grows: its ids are never reused, so readers may cache them.
-- The copy below uses the functions lp_compact_id, lp_hex_blob and lp_compact_visitor, which
-- every connection of the daemon registers (the same encoder ingest uses).

CREATE TABLE event_texts (
    id    INTEGER PRIMARY KEY,
    value TEXT    NOT NULL UNIQUE
);

CREATE TABLE event_rows (
    seq            INTEGER PRIMARY KEY,
    event_id       BLOB    NOT NULL,      -- BLOB affinity: a text id is kept as text, never made a number
    type           INTEGER NOT NULL,
    platform       INTEGER NOT NULL,
    bot            INTEGER NOT NULL,
    occurred_at_ms INTEGER NOT NULL,
    received_delta INTEGER NOT NULL,      -- received_at_ms - occurred_at_ms
    sent_delta     INTEGER,               -- sent_at_ms - occurred_at_ms
    ref            TEXT,
    campaign       TEXT,
    source         TEXT,
    medium         TEXT,
    deferred       INTEGER,
    visitor        BLOB,
    ip_hash        BLOB,
    device_id      BLOB,
    click_id       BLOB,
    url            TEXT,
    referrer       TEXT,
    user_agent     INTEGER,               -- event_texts.id, as are the three below
    os_version     INTEGER,
    app_version    INTEGER,
    bot_reason     INTEGER,
    properties     TEXT                   -- canonical JSON object, or NULL
);

INSERT OR IGNORE INTO event_texts (value)
SELECT value FROM (
    SELECT user_agent AS value FROM events UNION SELECT os_version FROM events
    UNION SELECT app_version FROM events UNION SELECT bot_reason FROM events
) WHERE value IS NOT NULL;

INSERT INTO event_rows
SELECT e.seq, lp_compact_id(e.event_id),
       CASE e.type WHEN 'click' THEN 0 WHEN 'open' THEN 1 WHEN 'install' THEN 2 ELSE 3 END,
       CASE e.platform WHEN 'ios' THEN 0 WHEN 'android' THEN 1 WHEN 'web' THEN 2 WHEN 'desktop' THEN 3 ELSE 4 END,
       e.bot, e.occurred_at_ms, e.received_at_ms - e.occurred_at_ms, e.sent_at_ms - e.occurred_at_ms,
       e.ref, e.campaign, e.source, e.medium, e.deferred, lp_compact_visitor(e.visitor_id, e.device_id), lp_hex_blob(e.ip_hash),
       lp_compact_id(e.device_id), lp_compact_id(e.click_id),
       e.url, e.referrer,
       (SELECT id FROM event_texts WHERE value = e.user_agent),
       (SELECT id FROM event_texts WHERE value = e.os_version),
       (SELECT id FROM event_texts WHERE value = e.app_version),
       (SELECT id FROM event_texts WHERE value = e.bot_reason),
       e.properties
FROM events e ORDER BY e.seq;

DROP INDEX events_by_time;
DROP TABLE events;
CREATE INDEX events_by_time ON event_rows (occurred_at_ms);

-- The events as they were sent and stored, decoded: what exports, stats edges, operators and
-- tests read. Hot paths (the rollup pass) read event_rows directly.
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
       (SELECT value FROM event_texts WHERE id = r.bot_reason) AS bot_reason
FROM event_rows r;
