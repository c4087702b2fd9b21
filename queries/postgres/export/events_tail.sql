-- events_tail: one page of the raw-event export, the events stored after the export began (after
-- its snapshot), in seq order, so that an export running beside ingest neither repeats nor
-- misses an event. Rows of the lp_export_rows view, as events_in_time.sql's.
-- $1 from_ms, $2 to_ms, $3 snapshot_seq, $4 after_seq, $5-$10 the filters, $11 page size.
SELECT * FROM lp_export_rows e
WHERE e.seq > greatest($3, $4) AND e.occurred_at_ms >= $1 AND e.occurred_at_ms < $2
  AND ($5::text IS NULL OR e.ref = $5) AND ($6::text IS NULL OR e.campaign = $6)
  AND ($7::text IS NULL OR e.source = $7) AND ($8::text IS NULL OR e.medium = $8)
  AND ($9::smallint IS NULL OR e.platform = $9) AND ($10 OR NOT e.bot)
ORDER BY e.seq
LIMIT $11
