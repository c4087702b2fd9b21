-- events_tail: one page of the raw-event export, the events stored after the export began
-- (after its snapshot), in seq order, so an export running beside ingest neither repeats nor
-- misses an event. Parameters: from_ms, to_ms, snapshot_seq, after_seq, ref,
--   campaign, source, medium, platform, include_bots (0/1), page size.
-- Idempotent: yes (read-only).
-- match_type is stored as a code (MatchType.code: 1 is click_id), which the reader names, and
-- so is click_id_source (ClickIdSource.code). The last column is the audience as stored
-- (AudienceDimensions.stored), which the export splits into its fields. matched_click_id as in events_in_time.sql.
-- Columns as stored in event_rows (type and platform codes, ids and visitor in their compact
-- form, see migrations/0004): the reader decodes them (RawEventPage), which is several times
-- cheaper than the events view's SQL. platform is compared as its code.
-- Sealed events (event_archive) are read beside event_rows as a second arm; each arm reads in seq
-- order and SQLite merges them.
SELECT e.seq, e.event_id, e.type, e.occurred_at_ms, e.occurred_at_ms + e.sent_delta, e.occurred_at_ms + e.received_delta,
       e.ref, e.campaign, e.source, e.medium, e.platform, e.device_id, e.click_id, e.deferred,
       e.url, e.referrer, (SELECT value FROM event_texts WHERE id = e.user_agent),
       (SELECT value FROM event_texts WHERE id = e.os_version), (SELECT value FROM event_texts WHERE id = e.app_version),
       e.properties, e.bot, (SELECT value FROM event_texts WHERE id = e.bot_reason), e.visitor, a.match_type,
       CASE WHEN a.match_type IN (1, 3, 4) THEN coalesce((SELECT c.event_id FROM event_rows c WHERE c.seq = a.matched_click_seq),
                                                 (SELECT c.event_id FROM event_archive c WHERE c.seq = a.matched_click_seq)) END, e.click_id_source, e.install_referrer,
       (SELECT value FROM event_texts WHERE id = e.audience)
FROM event_rows e
LEFT JOIN attr.attribution a ON a.seq = e.seq
WHERE e.seq > max(:snapshot_seq, :after_seq) AND e.occurred_at_ms >= :from_ms AND e.occurred_at_ms < :to_ms
  AND (:ref IS NULL OR e.ref = :ref) AND (:campaign IS NULL OR e.campaign = :campaign)
  AND (:source IS NULL OR e.source = :source) AND (:medium IS NULL OR e.medium = :medium)
  AND (:platform IS NULL OR e.platform = :platform) AND (:include_bots OR e.bot = 0)
UNION ALL
SELECT e.seq, e.event_id, e.type, e.occurred_at_ms, e.occurred_at_ms + e.sent_delta, e.occurred_at_ms + e.received_delta,
       e.ref, e.campaign, e.source, e.medium, e.platform, e.device_id, e.click_id, e.deferred,
       e.url, e.referrer, (SELECT value FROM event_texts WHERE id = e.user_agent),
       (SELECT value FROM event_texts WHERE id = e.os_version), (SELECT value FROM event_texts WHERE id = e.app_version),
       e.properties, e.bot, (SELECT value FROM event_texts WHERE id = e.bot_reason), e.visitor, a.match_type,
       CASE WHEN a.match_type IN (1, 3, 4) THEN coalesce((SELECT c.event_id FROM event_rows c WHERE c.seq = a.matched_click_seq),
                                                 (SELECT c.event_id FROM event_archive c WHERE c.seq = a.matched_click_seq)) END, e.click_id_source, e.install_referrer,
       (SELECT value FROM event_texts WHERE id = e.audience)
FROM event_archive e
LEFT JOIN attr.attribution a ON a.seq = e.seq
WHERE e.seq > max(:snapshot_seq, :after_seq) AND e.occurred_at_ms >= :from_ms AND e.occurred_at_ms < :to_ms
  AND (:ref IS NULL OR e.ref = :ref) AND (:campaign IS NULL OR e.campaign = :campaign)
  AND (:source IS NULL OR e.source = :source) AND (:medium IS NULL OR e.medium = :medium)
  AND (:platform IS NULL OR e.platform = :platform) AND (:include_bots OR e.bot = 0)
ORDER BY 1
LIMIT :limit
