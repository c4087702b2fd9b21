-- counts: how many events and quarantined bodies a copy holds, and its highest seq (0 when
-- empty). Run on the events database or a backup of it. Parameters: none. Idempotent: yes.
-- Sealed events (event_blocks) counted; the highest seq is event_rows' (sealing never moves the
-- newest row). No virtual table needed, so any connection can run it.
SELECT (SELECT count(*) FROM event_rows) + (SELECT coalesce(sum(row_count), 0) FROM event_blocks),
       (SELECT count(*) FROM quarantine),
       (SELECT coalesce(max(seq), 0) FROM event_rows)
