-- events_in_time: one page of the raw-event export, the events stored when the export began,
-- ordered by time then seq (through events_by_time), with their attribution (empty
-- for the few not attributed yet).
-- matched_click_id is the event id of the click the event was attributed to, for the match
-- types whose answers name a click (click_id 1, fingerprint 3, install_referrer 4: MatchType.code),
-- read as /v1/resolve reads it (the click may be sealed).
-- Parameters: after_ms, to_ms, snapshot_seq (the newest seq when the export
--   began), after_seq (the keyset cursor: the page starts after (after_ms, after_seq); from_ms
--   and -1 at the start), ref, campaign, source, medium, platform code (NULL = any; compared with the
--   values as stored), include_bots (0/1), page size.
-- The cursor is the index's lower bound (occurred_at_ms >= after_ms), so each page seeks
-- straight to where the last one ended instead of scanning from the range's start.
-- Idempotent: yes (read-only).
-- match_type is stored as a code (MatchType.code: 1 is click_id), which the reader names, and
-- so is click_id_source (ClickIdSource.code). The last column is the audience as stored
-- (AudienceDimensions.stored), which the export splits into its fields.
-- Columns as stored in event_rows (type and platform codes, ids and visitor in their compact
-- form, see migrations/0004): the reader decodes them (RawEventPage), which is several times
-- cheaper than the events view's SQL. platform is compared as its code.
-- Sealed events (event_archive, which reads its blocks in time order and merges their rows) are
-- read beside event_rows as a second arm; SQLite merges the two.
SELECT e.seq, e.event_id, e.type, e.occurred_at_ms, e.occurred_at_ms + e.sent_delta, e.occurred_at_ms + e.received_delta,
       e.ref, e.campaign, e.source, e.medium, e.platform, e.device_id, e.click_id, e.deferred,
       e.url, e.referrer, (SELECT value FROM event_texts WHERE id = e.user_agent),
       (SELECT value FROM event_texts WHERE id = e.os_version), (SELECT value FROM event_texts WHERE id = e.app_version),
       e.properties, e.bot, (SELECT value FROM event_texts WHERE id = e.bot_reason), e.visitor, a.match_type,
       CASE WHEN a.match_type IN (1, 3, 4) THEN coalesce((SELECT c.event_id FROM event_rows c WHERE c.seq = a.matched_click_seq),
                                                 (SELECT c.event_id FROM event_archive c WHERE c.seq = a.matched_click_seq)) END, e.click_id_source, e.install_referrer,
       (SELECT value FROM event_texts WHERE id = e.audience)
FROM event_rows e INDEXED BY events_by_time
LEFT JOIN attr.attribution a ON a.seq = e.seq
WHERE e.occurred_at_ms >= :after_ms AND e.occurred_at_ms < :to_ms AND e.seq <= :snapshot_seq
  AND (e.occurred_at_ms > :after_ms OR e.seq > :after_seq)
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
WHERE e.occurred_at_ms >= :after_ms AND e.occurred_at_ms < :to_ms AND e.seq <= :snapshot_seq
  AND (e.occurred_at_ms > :after_ms OR e.seq > :after_seq)
  AND (:ref IS NULL OR e.ref = :ref) AND (:campaign IS NULL OR e.campaign = :campaign)
  AND (:source IS NULL OR e.source = :source) AND (:medium IS NULL OR e.medium = :medium)
  AND (:platform IS NULL OR e.platform = :platform) AND (:include_bots OR e.bot = 0)
ORDER BY 4, 1
LIMIT :limit
