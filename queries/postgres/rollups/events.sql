-- events: up to :limit attributed events after seq :after_seq through seq :through_seq, in seq order, with what the
-- rollups count them under: the columns of stats/raw_events.sql, then the seq.
SELECT e.occurred_at_ms, e.type, e.platform, e.bot, e.deferred, e.visitor_id,
       e.ref, e.campaign, e.source, e.medium, a.match_type,
       a.ref AS counted_ref, a.campaign AS counted_campaign, a.source AS counted_source, a.medium AS counted_medium,
       e.audience, e.referrer,
       CASE WHEN c.seq IS NOT NULL THEN coalesce(c.audience, '') END AS click_audience, c.referrer AS click_referrer, e.seq
FROM lp_events e
LEFT JOIN lp_attributions a ON a.seq = e.seq
LEFT JOIN lp_events c ON c.seq = a.matched_click_seq
WHERE e.seq > :after_seq AND e.seq <= :through_seq
ORDER BY e.seq
LIMIT :limit
