-- raw_events: the counted events (seq up to the rollups' watermark, so that the edges of a range
-- and its rollup rows count the same events) that happened in
-- [:from_ms, :to_ms): their own dimensions, their match type and the dimensions attribution counts them
-- under (NULL for clicks and bots, which count under their own), their own audience and
-- referrer and those of the click attribution matched them to (CountedAudience.counted picks),
-- for stats counted from the raw events, as the SQLite store counts the edges of a range finer
-- than its rollups.
SELECT e.occurred_at_ms, e.type, e.platform, e.bot, e.deferred, e.visitor_id,
       e.ref, e.campaign, e.source, e.medium, a.match_type,
       a.ref AS counted_ref, a.campaign AS counted_campaign, a.source AS counted_source, a.medium AS counted_medium,
       e.audience, e.referrer,
       CASE WHEN c.seq IS NOT NULL THEN coalesce(c.audience, '') END AS click_audience, c.referrer AS click_referrer
FROM lp_events e
LEFT JOIN lp_attributions a ON a.seq = e.seq
LEFT JOIN lp_events c ON c.seq = a.matched_click_seq
WHERE e.occurred_at_ms >= :from_ms AND e.occurred_at_ms < :to_ms
  AND e.seq <= (SELECT through_seq FROM lp_derived_state WHERE job = 'rollups')
