-- events_in_time: one page of the raw-event export, the events stored when the export began,
-- in time order then seq (rows of the lp_export_rows view, in RawEventColumn order).
-- $1 after_ms (the range's start at first), $2 to_ms, $3 snapshot_seq (the newest seq when the
-- export began), $4 after_seq (the keyset cursor: the page starts after ($1, $4); -1 at first),
-- $5-$8 ref, campaign, source, medium, $9 platform code (NULL: any), $10 include bots, $11 page size.
SELECT * FROM lp_export_rows e
WHERE e.occurred_at_ms >= $1 AND e.occurred_at_ms < $2 AND e.seq <= $3
  AND (e.occurred_at_ms > $1 OR e.seq > $4)
  AND ($5::text IS NULL OR e.ref = $5) AND ($6::text IS NULL OR e.campaign = $6)
  AND ($7::text IS NULL OR e.source = $7) AND ($8::text IS NULL OR e.medium = $8)
  AND ($9::smallint IS NULL OR e.platform = $9) AND ($10 OR NOT e.bot)
ORDER BY e.occurred_at_ms, e.seq
LIMIT $11
