-- attributed_event: one stored event with its attribution, for the answers to apps
-- (`POST /v1/resolve`) and API reads, and for the round that attributed it, once committed.
-- Runs on an events reader (events database as main, the attribution file attached; no two
-- files share a name, so names are unqualified). Columns: 0 type code, 1 bot, 2 resolve, 3-6 own ref, campaign, source, medium, 7 own
-- url, 8 own properties, 9 attributed through seq, 10 match type, 11 matched click seq, 12
-- candidates, 13-19 the click's event id, occurred_at_ms, url, properties, ref, campaign,
-- source and medium (through the events view), 21 the first seq of the device's resolves
-- (device key as in attribution/events_after.sql). No row when no event has this seq.
-- Parameters: :seq. Idempotent: yes (read-only).
-- The event and its click may be sealed (event_archive): each is read from event_rows and from
-- event_archive, and the one that has it answers (a row is in one of them; the click's event id
-- is in its stored form, see migrations/0004).
SELECT r.type, r.bot, r.resolve, r.ref, r.campaign, r.source, r.medium, r.url, r.properties,
       (SELECT attributed_through_seq FROM attribution_state) AS attributed_through_seq,
       a.match_type, a.matched_click_seq, a.candidates,
       coalesce(c.event_id, ca.event_id) AS click_event_id, coalesce(c.occurred_at_ms, ca.occurred_at_ms) AS click_occurred_at_ms,
       coalesce(c.url, ca.url) AS click_url, coalesce(c.properties, ca.properties) AS click_properties,
       coalesce(c.ref, ca.ref) AS click_ref, coalesce(c.campaign, ca.campaign) AS click_campaign,
       coalesce(c.source, ca.source) AS click_source, coalesce(c.medium, ca.medium) AS click_medium,
       (SELECT first_seq FROM resolve_devices WHERE device =
            CASE WHEN r.device_id IS NOT NULL THEN 'd' || typeof(r.device_id) || hex(r.device_id)
                 ELSE 'v' || typeof(r.visitor) || hex(r.visitor) END) AS first_resolve_seq
FROM (SELECT seq, type, bot, resolve, ref, campaign, source, medium, url, properties, device_id, visitor FROM event_rows WHERE seq = :seq
      UNION ALL
      SELECT seq, type, bot, resolve, ref, campaign, source, medium, url, properties, device_id, visitor FROM event_archive WHERE seq = :seq) r
LEFT JOIN attribution a ON a.seq = r.seq
LEFT JOIN event_rows c ON c.seq = a.matched_click_seq
LEFT JOIN event_archive ca ON ca.seq = a.matched_click_seq
