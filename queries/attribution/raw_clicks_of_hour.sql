-- raw_clicks_of_hour: attribution rule 3 before the on-disk fingerprint index's span: every
-- non-bot click that happened within [from_ms, to_ms) (one UTC hour), read from the raw events
-- with its keyed IP hash, platform and OS version's text, newest first (ties in time: the later
-- stored first). The caller keeps them by fingerprint for the round (RawClickHours) and leaves
-- out those stored after the event it attributes. Run on an events reader
-- (EventStore.rawClicks). Parameters: from_ms, to_ms.
-- Idempotent: yes (read-only).
-- Sealed clicks (event_archive) are read beside event_rows (a row is in one of them).
SELECT r.seq, r.occurred_at_ms, r.ip_hash, r.platform, (SELECT value FROM event_texts WHERE id = r.os_version) AS os_version
FROM event_rows r
WHERE r.occurred_at_ms >= :from_ms AND r.occurred_at_ms < :to_ms AND r.type = 0 AND r.bot = 0
UNION ALL
SELECT r.seq, r.occurred_at_ms, r.ip_hash, r.platform, (SELECT value FROM event_texts WHERE id = r.os_version)
FROM event_archive r
WHERE r.occurred_at_ms >= :from_ms AND r.occurred_at_ms < :to_ms AND r.type = 0 AND r.bot = 0
ORDER BY 2 DESC, 1 DESC
