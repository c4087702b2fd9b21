-- clicks_by_id: the stored clicks (bots' too) under the event ids in $1 (text[]): id, seq,
-- time, link and OS version.
SELECT i.event_id, e.seq, e.occurred_at_ms, e.ref, e.campaign, e.source, e.medium, e.os_version
FROM lp_event_ids i JOIN lp_events e ON e.seq = i.seq
WHERE i.event_id = ANY($1::text[]) AND e.type = 0
