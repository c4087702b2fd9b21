-- uncounted: how many events the batch holds, and how many of them the rollups have not counted
-- yet (then the batch waits).
SELECT count(*) AS gone, count(*) FILTER (WHERE g.seq > (SELECT through_seq FROM lp_derived_state WHERE job = 'rollups')) AS uncounted
FROM lp_gone g
