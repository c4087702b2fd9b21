-- Migration 0003: attribution at commit time (issue "Conversion engine v2").
-- Every install, open and fallback of a person is attributed by the ingest writer in the
-- transaction that stores it, so its answer is readable as soon as it is acknowledged and is
-- part of the event record (rollups are derived from it and can be rebuilt at any time).

-- How the event was attributed: 'click_id', 'ref', 'fingerprint' or 'organic'; NULL for clicks
-- and bots (not attributed) and, until the backfill that follows this migration has run, for
-- events stored before it. matched_click_seq: the click whose link the event is counted under
-- (click_id and fingerprint: the matched click; ref: the newest click of the ref at or before
-- the event, which filled what the event did not send); NULL when none. The dimensions an
-- event is counted under follow from these and the click's row (`MatchType.countedDimensions`).
ALTER TABLE events ADD COLUMN match_type TEXT;
ALTER TABLE events ADD COLUMN matched_click_seq INTEGER;

-- Events by when they happened: the edges of a stats range finer than the rollups, and the
-- raw-event export in time order. (Replaces the rollup file's event_times.)
CREATE INDEX events_by_time ON events (occurred_at_ms);

-- Attribution rule 2: the newest non-bot click of a ref at or before an instant.
CREATE INDEX events_ref_clicks ON events (ref, occurred_at_ms)
WHERE type = 'click' AND bot = 0 AND ref IS NOT NULL;

-- Attribution rule 3: non-bot clicks by UTC hour, address (the first 8 bytes of the keyed IP
-- hash) and platform. The hour first keeps inserts local (clicks arrive roughly in time order)
-- while a lookup reads only the hours its window covers. Queries must spell the expressions
-- exactly as here for SQLite to use the index.
CREATE INDEX events_fingerprint_clicks ON events (occurred_at_ms / 3600000, substr(ip_hash, 1, 16), platform, occurred_at_ms)
WHERE type = 'click' AND bot = 0 AND ip_hash IS NOT NULL;
