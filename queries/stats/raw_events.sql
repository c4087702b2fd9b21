-- raw_events: the events the rollups count (seq up to the rollup watermark) that happened in
-- [from, to), for the parts of a range that are not whole 15-minute buckets (and for the whole
-- range of a question about audience dimensions): their own dimensions, audience and referrer,
-- their attribution, and the dimensions, audience and referrer of the click it names (the
-- caller derives what they are counted under, as the rollup job does). Found through the time
-- index. Parameters: from_ms, to_ms. Idempotent: yes (read-only).
-- Columns in their stored form (type and platform codes, visitor and device id as stored, the
-- audiences as event_texts ids: the caller decodes them as the rollup pass does). Sealed events and clicks (event_archive) are read
-- beside event_rows (a row is in one of them).
SELECT e.occurred_at_ms, e.type, e.platform, e.bot, e.deferred, e.visitor, e.device_id,
       e.ref, e.campaign, e.source, e.medium, a.match_type,
       coalesce(c.seq, ca.seq) AS click_seq, coalesce(c.ref, ca.ref) AS click_ref, coalesce(c.campaign, ca.campaign) AS click_campaign,
       coalesce(c.source, ca.source) AS click_source, coalesce(c.medium, ca.medium) AS click_medium,
       e.audience, e.referrer, coalesce(c.audience, ca.audience) AS click_audience, coalesce(c.referrer, ca.referrer) AS click_referrer
FROM (SELECT seq, occurred_at_ms, type, platform, bot, deferred, visitor, device_id, ref, campaign, source, medium, audience, referrer
      FROM event_rows INDEXED BY events_by_time WHERE occurred_at_ms >= :from_ms AND occurred_at_ms < :to_ms
      UNION ALL
      SELECT seq, occurred_at_ms, type, platform, bot, deferred, visitor, device_id, ref, campaign, source, medium, audience, referrer
      FROM event_archive WHERE occurred_at_ms >= :from_ms AND occurred_at_ms < :to_ms) e
LEFT JOIN attr.attribution a ON a.seq = e.seq
LEFT JOIN event_rows c ON c.seq = a.matched_click_seq
LEFT JOIN event_archive ca ON ca.seq = a.matched_click_seq
WHERE e.seq <= (SELECT rolled_through_seq FROM agg.rollup_state)
