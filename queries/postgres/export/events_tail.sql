-- events_tail: one page of the raw-event export, the events stored after the export began (after
-- its snapshot), in seq order, so that an export running beside ingest neither repeats nor
-- misses an event. Rows of the lp_export_rows view, as events_in_time.sql's.
-- :from_ms, :to_ms, :snapshot_seq, :after_seq, :ref-:include_bots the filters, :limit page size.
SELECT * FROM lp_export_rows e
WHERE e.seq > greatest(:snapshot_seq, :after_seq) AND e.occurred_at_ms >= :from_ms AND e.occurred_at_ms < :to_ms
  AND (:ref::text IS NULL OR e.ref = :ref) AND (:campaign::text IS NULL OR e.campaign = :campaign)
  AND (:source::text IS NULL OR e.source = :source) AND (:medium::text IS NULL OR e.medium = :medium)
  AND (:platform::smallint IS NULL OR e.platform = :platform) AND (:include_bots OR NOT e.bot)
ORDER BY e.seq
LIMIT :limit
