-- counts: how many events and quarantined bodies a copy holds, and its highest seq (0 when
-- empty). Run on the events database or a backup of it. Parameters: none. Idempotent: yes.
SELECT (SELECT count(*) FROM event_rows), (SELECT count(*) FROM quarantine), (SELECT coalesce(max(seq), 0) FROM event_rows)
