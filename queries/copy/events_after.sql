-- events_after (linkpulse copy): up to :limit stored events with a seq above :after_seq, decoded as they were
-- sent (the events view), in seq order: what a copy into PostgreSQL stores again.
-- The seqs of the page are found first in event_rows and event_archive (sealed events), each in
-- seq order, so that no side is sorted whole; then the view decodes those rows.
-- Parameters: after_seq, limit. Idempotent: yes (read-only).
SELECT seq, event_id, type, occurred_at_ms, received_at_ms, sent_at_ms, ref, campaign, source, medium,
       platform, device_id, click_id, deferred, url, referrer, user_agent, ip_hash, visitor_id,
       os_version, app_version, properties, bot_reason, click_id_source, resolve, install_referrer, audience
FROM events
WHERE seq IN (SELECT seq FROM event_rows WHERE seq > :after_seq
              UNION ALL
              SELECT seq FROM event_archive WHERE seq > :after_seq
              ORDER BY 1 LIMIT :limit)
ORDER BY seq
