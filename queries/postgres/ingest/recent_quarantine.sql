-- recent_quarantine: the newest :limit quarantined events, newest first (for operators).
SELECT id, received_at_ms, event_index, code, field, message, raw_text, raw_truncated, user_agent
FROM lp_quarantine ORDER BY id DESC LIMIT :limit
