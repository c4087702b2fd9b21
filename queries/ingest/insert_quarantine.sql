-- insert_quarantine: keeps one rejected event (or rejected body) for operators.
-- Parameters: received_at_ms, event_index, code, field, message, raw_text,
--   raw_truncated, user_agent.
-- Idempotent: no; a client that resends a bad event is quarantined again (that is information).
INSERT INTO quarantine (
    received_at_ms, event_index, code, field, message, raw_text, raw_truncated, user_agent
) VALUES (:received_at_ms, :event_index, :code, :field, :message, :raw_text, :raw_truncated, :user_agent)
