-- Migration 0002: the click indexes name the click's link (ev.event_links) instead of copying
-- its campaign, source and medium, and the platform as its code (ios 0, android 1, web 2,
-- desktop 3, other 4): about half their size. The file is derived: the old indexes are
-- dropped and the state row deleted, so the follower attributes every event again at start
-- (and the rollups are counted again from its answers).
DROP TABLE ref_clicks;
DROP TABLE fingerprint_clicks;
DELETE FROM attribution;
DELETE FROM attribution_state;

-- Non-bot clicks by ref, for attribution rule 2 (the newest click of a ref at or before t).
CREATE TABLE ref_clicks (
    ref            TEXT    NOT NULL,
    occurred_at_ms INTEGER NOT NULL,
    seq            INTEGER NOT NULL,
    link           INTEGER NOT NULL,      -- ev.event_links.id
    PRIMARY KEY (ref, occurred_at_ms, seq)
) WITHOUT ROWID;

-- Non-bot clicks by UTC hour, address and platform, for attribution rule 3 (fingerprint).
-- The hour first keeps inserts local (clicks arrive roughly in time order) while a lookup
-- reads only the hours its window covers.
CREATE TABLE fingerprint_clicks (
    hour           INTEGER NOT NULL,      -- occurred_at_ms / 3,600,000
    ip_key         INTEGER NOT NULL,      -- first 8 bytes of the keyed IP hash, signed
    platform       INTEGER NOT NULL,      -- platform code
    occurred_at_ms INTEGER NOT NULL,
    seq            INTEGER NOT NULL,
    os_version     TEXT,                  -- major.minor, when the click knew it
    link           INTEGER,               -- ev.event_links.id; NULL for a click without one
    PRIMARY KEY (hour, ip_key, platform, occurred_at_ms, seq)
) WITHOUT ROWID;
