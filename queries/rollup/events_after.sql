-- events_after: the next events to roll up, in seq order, in their stored compact form (see
-- migrations/0004: type and platform codes, visitor and device id as stored; the audience as
-- its event_texts id, and the referrer); only events the
-- follower has already attributed. Their attribution is read beside them, in the same seq
-- order (attributions_after.sql).
-- Parameters: after (the rollup watermark), through (the attribution watermark),
-- limit. Idempotent: yes (read-only).
-- Sealed events (event_archive) are read beside event_rows, as the second arm of a UNION ALL
-- (a row is in one of them); each arm reads in seq order, and SQLite merges them.
SELECT e.seq, e.type, e.occurred_at_ms, e.ref, e.campaign, e.source, e.medium, e.platform, e.deferred,
       e.visitor, e.device_id, e.bot, e.audience, e.referrer
FROM event_rows e
WHERE e.seq > :after_seq AND e.seq <= :through_seq
UNION ALL
SELECT e.seq, e.type, e.occurred_at_ms, e.ref, e.campaign, e.source, e.medium, e.platform, e.deferred,
       e.visitor, e.device_id, e.bot, e.audience, e.referrer
FROM event_archive e
WHERE e.seq > :after_seq AND e.seq <= :through_seq
ORDER BY 1 LIMIT :limit
