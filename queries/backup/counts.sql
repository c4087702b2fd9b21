-- counts: how many events and quarantined bodies a copy holds, and its highest seq (0 when
-- empty). Run on the events database or a backup of it. Parameters: none. Idempotent: yes.
-- Sealed events (event_blocks) included; no virtual table needed, so any connection can run it.
SELECT (SELECT count(*) FROM event_rows) + (SELECT coalesce(sum(row_count), 0) FROM event_blocks),
       (SELECT count(*) FROM quarantine),
       max(coalesce((SELECT max(seq) FROM event_rows), 0), coalesce((SELECT max(last_seq) FROM event_blocks), 0))
