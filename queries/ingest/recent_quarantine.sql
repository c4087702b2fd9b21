-- recent_quarantine: the newest quarantined events, newest first.
-- Parameters: limit. Idempotent: yes (read-only).
SELECT id, received_at_ms, event_index, code, field, message, raw_text, raw_truncated, user_agent
FROM quarantine ORDER BY id DESC LIMIT :limit
