-- events_after: the next events to attribute (clicks included: later events match them), in
-- seq order, in their stored form (ids and the IP hash as bytes, type and platform as codes;
-- see 0004_compact_events.sql) with the OS version's text; for resolves (0005_resolve_hints)
-- the device key: 'd', the type and the hex of device_id when the app sent one, else 'v' and
-- the same of the visitor id (answer/attributed_event.sql builds it the same way).
-- Run on an events reader (EventStore.attributionPage), not in the attribution file's transaction.
-- Parameters: after (the watermark), limit. Idempotent: yes (read-only).
-- Sealed events (event_archive) are read beside event_rows, as the second arm of a UNION ALL
-- (a row is in one of them); each arm reads in seq order, and SQLite merges them.
SELECT r.seq, r.event_id, r.type, r.occurred_at_ms, r.ref, r.campaign, r.source, r.medium, r.platform,
       r.click_id, r.ip_hash, (SELECT value FROM event_texts WHERE id = r.os_version) AS os_version, r.bot, r.click_id_source,
       CASE WHEN r.resolve IS NULL THEN NULL
            WHEN r.device_id IS NOT NULL THEN 'd' || typeof(r.device_id) || hex(r.device_id)
            ELSE 'v' || typeof(r.visitor) || hex(r.visitor) END AS resolving_device
FROM event_rows r WHERE r.seq > :after_seq
UNION ALL
SELECT r.seq, r.event_id, r.type, r.occurred_at_ms, r.ref, r.campaign, r.source, r.medium, r.platform,
       r.click_id, r.ip_hash, (SELECT value FROM event_texts WHERE id = r.os_version), r.bot, r.click_id_source,
       CASE WHEN r.resolve IS NULL THEN NULL
            WHEN r.device_id IS NOT NULL THEN 'd' || typeof(r.device_id) || hex(r.device_id)
            ELSE 'v' || typeof(r.visitor) || hex(r.visitor) END
FROM event_archive r WHERE r.seq > :after_seq
ORDER BY 1 LIMIT :limit
