-- events_tail: one page of the raw-event export, the events stored after the export began (after
-- its snapshot), in seq order, so that an export running beside ingest neither repeats nor
-- misses an event. Columns as events_in_time.sql's.
-- $1 from_ms, $2 to_ms, $3 snapshot_seq, $4 after_seq, $5-$10 the filters, $11 page size.
SELECT e.seq, e.event_id, e.type, e.occurred_at_ms, e.sent_at_ms, e.received_at_ms,
       e.ref, e.campaign, e.source, e.medium, e.platform, e.device_id, e.click_id, e.deferred,
       e.url, e.referrer, e.user_agent, e.os_version, e.app_version,
       e.properties, e.bot, e.bot_reason, e.visitor_id, a.match_type,
       CASE WHEN a.match_type = 'click_id' THEN e.click_id END
FROM lp_events e
LEFT JOIN lp_attributions a ON a.seq = e.seq
WHERE e.seq > greatest($3, $4) AND e.occurred_at_ms >= $1 AND e.occurred_at_ms < $2
  AND ($5::text IS NULL OR e.ref = $5) AND ($6::text IS NULL OR e.campaign = $6)
  AND ($7::text IS NULL OR e.source = $7) AND ($8::text IS NULL OR e.medium = $8)
  AND ($9::smallint IS NULL OR e.platform = $9) AND ($10 OR NOT e.bot)
ORDER BY e.seq
LIMIT $11
