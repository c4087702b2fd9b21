-- blocks_by_time: the sealed blocks that can hold events with seq in [:low_seq, :high_seq] and event
-- time in [:earliest_ms, :latest_ms] (all inclusive), by their earliest event time; what the event_archive table reads for
-- a scan in time order. Yields: id, earliest_ms. Idempotent: yes (read only).
SELECT id, earliest_ms FROM event_blocks INDEXED BY event_blocks_by_time
WHERE earliest_ms <= :latest_ms AND latest_ms >= :earliest_ms AND last_seq >= :low_seq AND first_seq <= :high_seq
ORDER BY earliest_ms, first_seq
