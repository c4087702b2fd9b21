-- Migration 0006: sealed blocks of raw events (the cold form of event_rows).
--
-- Once every derived file has passed them, runs of old events move out of event_rows into
-- blocks: one row per run of up to about a thousand consecutive seqs, every column of every
-- event kept (format in Sources/LinkpulseStore/EventBlock.swift), deflated. Readers see them
-- through the `event_archive` virtual table (Sources/LinkpulseStore/EventArchiveTable.swift),
-- with the same columns and values as event_rows. A row is in event_rows or in a block, never
-- both. An event far out of time order with its neighbours (a phone that flushed days late)
-- is left in event_rows, so that every block covers a short span of event time.
-- id: never reused (AUTOINCREMENT), so a reader may cache a block by its id; a block rewritten
-- is a new row.
CREATE TABLE event_blocks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    first_seq   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    row_count   INTEGER NOT NULL,
    earliest_ms INTEGER NOT NULL,      -- the earliest occurred_at_ms in the block
    latest_ms   INTEGER NOT NULL,      -- the latest
    data        BLOB    NOT NULL
);
CREATE UNIQUE INDEX event_blocks_by_seq ON event_blocks (first_seq, last_seq, earliest_ms, latest_ms);
CREATE INDEX event_blocks_by_time ON event_blocks (earliest_ms, latest_ms, first_seq, last_seq);

-- How far sealing has looked: every event at or below sealed_through_seq is in a block or was
-- left in event_rows for being out of time order.
CREATE TABLE archive_state (
    singleton          INTEGER PRIMARY KEY CHECK (singleton = 1),
    sealed_through_seq INTEGER NOT NULL
);
INSERT INTO archive_state VALUES (1, 0);

-- The events view reads both: the rows still in event_rows and the sealed ones. A statement
-- that asks it for a seq or a range of seqs reads each side by its seq (SQLite pushes the
-- condition into both arms of the UNION ALL); it must not be joined on its inner side (a join
-- into a UNION ALL is not pushed down), so statements that look up a matched click by seq join
-- event_rows and event_archive each and take the one that has it.
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
FROM (SELECT * FROM event_rows UNION ALL SELECT * FROM event_archive) r;
