-- The fingerprint index on disk keeps a span, not every click: fingerprint_clicks holds the
-- non-bot clicks that happened at or after fingerprint_from_ms (and before recent_from_ms,
-- after which they are in memory). Lookups of earlier instants, those of events that arrive
-- more than that span late, read the raw events of their window instead (they hold the same
-- clicks), which keeps the answers exact and the file from growing with every click ever made.
-- The rows before it are deleted in batches between rounds.
ALTER TABLE attribution_state ADD COLUMN fingerprint_from_ms INTEGER NOT NULL DEFAULT -9223372036854775808;
