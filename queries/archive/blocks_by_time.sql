-- blocks_by_time: the sealed blocks that can hold events with seq in [?1, ?2] and event time in
-- [?3, ?4] (all inclusive), by their earliest event time; what the event_archive table reads for
-- a scan in time order. Yields: id, earliest_ms. Idempotent: yes (read only).
SELECT id, earliest_ms FROM event_blocks INDEXED BY event_blocks_by_time
WHERE earliest_ms <= ?4 AND latest_ms >= ?3 AND last_seq >= ?1 AND first_seq <= ?2
ORDER BY earliest_ms, first_seq
