-- progress: how far the derived work has come: the attribution watermark, the rollups' (what
-- stats count), the seq of the newest stored event (seqs a commit took for duplicates stay
-- unused, so not lp_event_seq's), then for attribution and for the rollups: how many stored
-- events wait for them (counted up to 1,000,000) and when the oldest of those was received
-- (NULL when none waits). For /metrics, /readyz and the admin API.
WITH state AS (
    SELECT (SELECT through_seq FROM lp_derived_state WHERE job = 'attribution') AS attributed,
           (SELECT through_seq FROM lp_derived_state WHERE job = 'rollups') AS counted
)
SELECT s.attributed, s.counted,
       COALESCE((SELECT max(e.seq) FROM lp_events e), 0),
       (SELECT count(*) FROM (SELECT 1 FROM lp_events e WHERE e.seq > s.attributed LIMIT 1000000) waiting),
       (SELECT e.received_at_ms FROM lp_events e WHERE e.seq > s.attributed ORDER BY e.seq LIMIT 1),
       (SELECT count(*) FROM (SELECT 1 FROM lp_events e WHERE e.seq > s.counted LIMIT 1000000) waiting),
       (SELECT e.received_at_ms FROM lp_events e WHERE e.seq > s.counted ORDER BY e.seq LIMIT 1)
FROM state s
