-- audience_text: the stored audience text (AudienceDimensions.stored) under an event_texts id,
-- for the rows by audience a pass writes and the raw events a stats answer counts.
-- Parameters: id. Idempotent: yes (read-only).
SELECT value FROM event_texts WHERE id = :id
