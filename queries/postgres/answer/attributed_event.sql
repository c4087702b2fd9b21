-- attributed_event: one stored event with its attribution, for the answers to apps and API
-- reads: 0 type, 1 bot, 2 resolve, 3-6 own ref, campaign, source, medium, 7 own url,
-- 8 own properties, 9 the attribution watermark, 10 match type, 11 matched click seq,
-- 12 candidates, 13-20 the matched click's event id, occurred_at_ms, url, properties, ref,
-- campaign, source, medium (from lp_kept_clicks when retention deleted the click's row), 21 the
-- first seq of the device's resolves. No row: no event $1 (or retention deleted it).
SELECT e.type, e.bot, e.resolve, e.ref, e.campaign, e.source, e.medium, e.url, e.properties,
       (SELECT through_seq FROM lp_derived_state WHERE job = 'attribution'),
       a.match_type, a.matched_click_seq, a.candidates,
       COALESCE(c.event_id, k.event_id), COALESCE(c.occurred_at_ms, k.occurred_at_ms), COALESCE(c.url, k.url),
       COALESCE(c.properties, k.properties), COALESCE(c.ref, k.ref), COALESCE(c.campaign, k.campaign),
       COALESCE(c.source, k.source), COALESCE(c.medium, k.medium),
       (SELECT first_seq FROM lp_resolve_devices
        WHERE device = CASE WHEN e.device_id IS NOT NULL THEN 'd:' || e.device_id ELSE 'v:' || e.visitor_id END)
FROM lp_events e
LEFT JOIN lp_attributions a ON a.seq = e.seq
LEFT JOIN lp_events c ON c.seq = a.matched_click_seq
LEFT JOIN lp_kept_clicks k ON k.seq = a.matched_click_seq AND c.seq IS NULL
WHERE e.seq = $1
