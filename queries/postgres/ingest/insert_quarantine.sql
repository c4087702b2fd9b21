-- insert_quarantine: keeps the rejected events (or rejected bodies) of one commit.
-- :rows: a JSON array of objects with received_at_ms, event_index, code, field, message,
--     raw_text, raw_truncated, user_agent (absent or null for NULL).
-- Idempotent: no; a client that resends a bad event is quarantined again (that is information).
INSERT INTO lp_quarantine (received_at_ms, event_index, code, field, message, raw_text, raw_truncated, user_agent)
SELECT received_at_ms, event_index, code, field, message, raw_text, coalesce(raw_truncated, false), user_agent
FROM json_to_recordset(:rows::json) AS q(
    received_at_ms bigint, event_index integer, code text, field text, message text,
    raw_text text, raw_truncated boolean, user_agent text)
