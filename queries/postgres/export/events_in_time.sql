-- events_in_time: one page of the raw-event export, the events stored when the export began,
-- in time order then seq (rows of the lp_export_rows view, in RawEventColumn order).
-- :after_ms (the range's start at first), :to_ms, :snapshot_seq (the newest seq when the
-- export began), :after_seq (the keyset cursor: the page starts after (:after_ms, :after_seq); -1 at first),
-- :ref-:medium ref, campaign, source, medium, :platform code (NULL: any), :include_bots include bots, :limit page size.
SELECT * FROM lp_export_rows e
WHERE e.occurred_at_ms >= :after_ms AND e.occurred_at_ms < :to_ms AND e.seq <= :snapshot_seq
  AND (e.occurred_at_ms > :after_ms OR e.seq > :after_seq)
  AND (:ref::text IS NULL OR e.ref = :ref) AND (:campaign::text IS NULL OR e.campaign = :campaign)
  AND (:source::text IS NULL OR e.source = :source) AND (:medium::text IS NULL OR e.medium = :medium)
  AND (:platform::smallint IS NULL OR e.platform = :platform) AND (:include_bots OR NOT e.bot)
ORDER BY e.occurred_at_ms, e.seq
LIMIT :limit
