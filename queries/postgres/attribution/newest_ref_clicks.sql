-- newest_ref_clicks: for each (ref, time) pair of :refs (text[]) and :at_ms (bigint[]), the newest
-- attributed-through non-bot click of that ref at or before that time (of clicks at the same
-- instant, the one stored last): ref, time, seq, campaign, source, medium.
SELECT c.ref, c.occurred_at_ms, c.seq, c.campaign, c.source, c.medium
FROM unnest(:refs::text[], :at_ms::bigint[]) AS q(ref, at_ms)
CROSS JOIN LATERAL (
    SELECT r.ref, r.occurred_at_ms, r.seq, r.campaign, r.source, r.medium FROM lp_ref_clicks r
    WHERE r.ref = q.ref AND r.occurred_at_ms <= q.at_ms
    ORDER BY r.occurred_at_ms DESC, r.seq DESC LIMIT 1
) c
