-- Migration 0003: events by when they happened, for the edges of a stats range finer than the
-- rollups and for the raw-event export in time order (this replaces the derived event_times
-- table). Events arrive roughly in time order, so inserts land at the index's end: cheap on
-- the ingest path, unlike an index keyed by ref or address would be.
CREATE INDEX events_by_time ON events (occurred_at_ms);
