-- keep_clicks: keeps the clicks of the batch that an event outside the batch was attributed to.
INSERT INTO lp_kept_clicks (seq, event_id, occurred_at_ms, url, properties, ref, campaign, source, medium)
SELECT e.seq, e.event_id, e.occurred_at_ms, e.url, e.properties, e.ref, e.campaign, e.source, e.medium
FROM lp_gone g
JOIN lp_events e ON e.seq = g.seq
WHERE g.type = 0
  AND EXISTS (SELECT 1 FROM lp_attributions a
              WHERE a.matched_click_seq = g.seq AND NOT EXISTS (SELECT 1 FROM lp_gone o WHERE o.seq = a.seq))
ON CONFLICT (seq) DO NOTHING
