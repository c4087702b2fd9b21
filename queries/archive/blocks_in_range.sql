-- blocks_in_range: the sealed blocks that can hold events with seq in [?1, ?2] and event time
-- in [?3, ?4] (all inclusive), in seq order; what the event_archive table reads for a scan.
-- Blocks never overlap in seqs, so the one that can hold ?1 is the last to start at or before it.
-- Yields: id. Idempotent: yes (read only).
SELECT id FROM event_blocks
WHERE first_seq >= coalesce((SELECT max(first_seq) FROM event_blocks WHERE first_seq <= ?1), ?1)
  AND first_seq <= ?2 AND latest_ms >= ?3 AND earliest_ms <= ?4
ORDER BY first_seq
