-- clicks_by_id: the stored clicks (bots' too) under the event ids in :ids (text[]) that happened at
-- or after the raw-event horizon (attribution matches no click before it, as on SQLite): id,
-- seq, time, link and OS version.
SELECT i.event_id, e.seq, e.occurred_at_ms, e.ref, e.campaign, e.source, e.medium, e.os_version
FROM lp_event_ids i JOIN lp_events e ON e.seq = i.seq
WHERE i.event_id = ANY(:ids::text[]) AND e.type = 0
  AND e.occurred_at_ms >= COALESCE((SELECT value::bigint FROM lp_installation WHERE key = 'raw_horizon_ms'), -9223372036854775808)
