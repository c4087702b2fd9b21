-- answer: one event with its attribution, read by the round that attributed it, inside its own
-- transaction on the attribution connection (the attribution file as main, the events database
-- attached as ev): the pages the round has just read serve it, where a reader of the events
-- database had dropped its page cache at the writer's last commit. The same columns as
-- answer/attributed_event.sql (see there); no row when no event has this seq.
-- Parameters (positional): seq. Idempotent: yes (read-only).
SELECT r.type, r.bot, r.resolve, r.ref, r.campaign, r.source, r.medium, r.url, r.properties,
       (SELECT attributed_through_seq FROM attribution_state),
       a.match_type, a.matched_click_seq, a.candidates,
       c.event_id, c.occurred_at_ms, c.url, c.properties, c.ref, c.campaign, c.source, c.medium,
       (SELECT first_seq FROM resolve_devices WHERE device =
            CASE WHEN r.device_id IS NOT NULL THEN 'd' || typeof(r.device_id) || hex(r.device_id)
                 ELSE 'v' || typeof(r.visitor) || hex(r.visitor) END)
FROM ev.event_rows r
LEFT JOIN attribution a ON a.seq = r.seq
LEFT JOIN ev.events c ON c.seq = a.matched_click_seq
WHERE r.seq = ?
