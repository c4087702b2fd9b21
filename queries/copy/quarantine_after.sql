-- quarantine_after (linkpulse copy): up to :limit quarantined events with an id above :after_id, in id order.
-- Parameters: after_id, limit. Idempotent: yes (read-only).
SELECT id, received_at_ms, event_index, code, field, message, raw_text, raw_truncated, user_agent
FROM quarantine WHERE id > :after_id ORDER BY id LIMIT :limit
