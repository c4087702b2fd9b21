-- attributed_event: one stored event with its attribution, for the answers to apps and API
-- reads: its type, bot, resolve, own ref, campaign, source, medium, url and properties; the
-- attribution watermark; its match type, matched click seq and candidates; the matched click's
-- event id, time, url, properties, ref, campaign, source and medium (from lp_kept_clicks when
-- retention deleted the click's row); the first seq of the device's resolves. Read by column
-- name (PostgresAttributedEventColumn). No row: no event :seq (or retention deleted it).
SELECT e.type, e.bot, e.resolve, e.ref, e.campaign, e.source, e.medium, e.url, e.properties,
       (SELECT through_seq FROM lp_derived_state WHERE job = 'attribution') AS attributed_through_seq,
       a.match_type, a.matched_click_seq, a.candidates,
       COALESCE(c.event_id, k.event_id) AS click_event_id, COALESCE(c.occurred_at_ms, k.occurred_at_ms) AS click_occurred_at_ms,
       COALESCE(c.url, k.url) AS click_url, COALESCE(c.properties, k.properties) AS click_properties,
       COALESCE(c.ref, k.ref) AS click_ref, COALESCE(c.campaign, k.campaign) AS click_campaign,
       COALESCE(c.source, k.source) AS click_source, COALESCE(c.medium, k.medium) AS click_medium,
       (SELECT first_seq FROM lp_resolve_devices
        WHERE device = CASE WHEN e.device_id IS NOT NULL THEN 'd:' || e.device_id ELSE 'v:' || e.visitor_id END) AS first_resolve_seq
FROM lp_events e
LEFT JOIN lp_attributions a ON a.seq = e.seq
LEFT JOIN lp_events c ON c.seq = a.matched_click_seq
LEFT JOIN lp_kept_clicks k ON k.seq = a.matched_click_seq AND c.seq IS NULL
WHERE e.seq = :seq
