-- events_after: the next events to attribute (clicks included: later events match them), in
-- seq order, in their stored form (ids and the IP hash as bytes, type and platform as codes;
-- see 0004_compact_events.sql) with the OS version's text; for resolves (0005_resolve_hints)
-- the device key: 'd', the type and the hex of device_id when the app sent one, else 'v' and
-- the same of the visitor id (answer/attributed_event.sql builds it the same way).
-- Parameters (positional): after (the watermark), limit. Idempotent: yes (read-only).
SELECT r.seq, r.event_id, r.type, r.occurred_at_ms, r.ref, r.campaign, r.source, r.medium, r.platform,
       r.click_id, r.ip_hash, t.value, r.bot, r.click_id_source,
       CASE WHEN r.resolve IS NULL THEN NULL
            WHEN r.device_id IS NOT NULL THEN 'd' || typeof(r.device_id) || hex(r.device_id)
            ELSE 'v' || typeof(r.visitor) || hex(r.visitor) END
FROM ev.event_rows r LEFT JOIN ev.event_texts t ON t.id = r.os_version
WHERE r.seq > ? ORDER BY r.seq LIMIT ?
