-- progress: how far attribution has come: its watermark, the seq of the newest stored event
-- (seqs a commit took for duplicates stay unused, so not lp_event_seq's), how many stored
-- events wait for it (counted up to 1,000,000), and when the oldest of them was received (NULL
-- when none waits). For /metrics and /readyz.
WITH state AS (SELECT through_seq FROM lp_derived_state WHERE job = 'attribution')
SELECT s.through_seq,
       COALESCE((SELECT max(e.seq) FROM lp_events e), 0),
       (SELECT count(*) FROM (SELECT 1 FROM lp_events e WHERE e.seq > s.through_seq LIMIT 1000000) waiting),
       (SELECT e.received_at_ms FROM lp_events e WHERE e.seq > s.through_seq ORDER BY e.seq LIMIT 1)
FROM state s
