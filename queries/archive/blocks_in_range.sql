-- blocks_in_range: the sealed blocks that can hold events with seq in [:low_seq, :high_seq] and
-- event time in [:earliest_ms, :latest_ms] (all inclusive), in seq order; what the event_archive table reads for a scan.
-- Blocks never overlap in seqs, so the one that can hold :low_seq is the last to start at or before it.
-- Yields: id. Idempotent: yes (read only).
SELECT id FROM event_blocks
WHERE first_seq >= coalesce((SELECT max(first_seq) FROM event_blocks WHERE first_seq <= :low_seq), :low_seq)
  AND first_seq <= :high_seq AND latest_ms >= :earliest_ms AND earliest_ms <= :latest_ms
ORDER BY first_seq
