-- raw_events: the events the rollups count (seq up to the rollup watermark) that happened in
-- [from, to), for the parts of a range that are not whole 15-minute buckets: their own
-- dimensions, their attribution, and the dimensions of the click it names (the caller derives
-- the dimensions they are counted under, as the rollup job does). Found through the time
-- index of event_rows, decoded through the events view.
-- Parameters (positional): from_ms, to_ms. Idempotent: yes (read-only).
SELECT e.occurred_at_ms, e.type, e.platform, e.bot, e.deferred, e.visitor_id,
       e.ref, e.campaign, e.source, e.medium, a.match_type,
       c.seq, c.ref, c.campaign, c.source, c.medium
FROM event_rows r INDEXED BY events_by_time
JOIN events e ON e.seq = r.seq
LEFT JOIN attr.attribution a ON a.seq = r.seq
LEFT JOIN event_rows c ON c.seq = a.matched_click_seq
WHERE r.occurred_at_ms >= ?1 AND r.occurred_at_ms < ?2
  AND r.seq <= (SELECT rolled_through_seq FROM agg.rollup_state)
