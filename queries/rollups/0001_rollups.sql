-- Schema of the rollup file (data/linkpulse-rollups.sqlite): attribution and conversion
-- rollups, all derived from the events table by the rollup job (queries/rollup/). It can be
-- deleted at any time: the next start rebuilds it. The job's connection has this file as its
-- main schema; every other connection attaches it as "agg". Statements use unqualified names.

-- rolled_through_seq: every event with seq <= this is counted in the rollups; advanced in the
-- same transaction as the rows it covers. database_id ties the file to one events database.
CREATE TABLE rollup_state (
    singleton             INTEGER PRIMARY KEY CHECK (singleton = 1),
    database_id           TEXT    NOT NULL,
    rolled_through_seq    INTEGER NOT NULL,
    attribution_window_ms INTEGER NOT NULL
);

-- The attribution of every non-bot install, open and fallback: how it was matched, the click
-- it was matched to, and the dimensions it is counted under (its own, filled from the click).
CREATE TABLE attribution (
    seq               INTEGER PRIMARY KEY,
    match_type        TEXT NOT NULL,
    matched_click_seq INTEGER,
    matched_click_id  TEXT,
    ref               TEXT,
    campaign          TEXT,
    source            TEXT,
    medium            TEXT
);

-- When each rolled-up event happened, to answer the sub-15-minute edges of a range exactly.
CREATE TABLE event_times (
    occurred_at_ms INTEGER NOT NULL,
    seq            INTEGER NOT NULL,
    PRIMARY KEY (occurred_at_ms, seq)
) WITHOUT ROWID;

-- Non-bot clicks by ref, for attribution rule 2 (the newest click of a ref at or before t).
CREATE TABLE ref_clicks (
    ref            TEXT    NOT NULL,
    occurred_at_ms INTEGER NOT NULL,
    seq            INTEGER NOT NULL,
    campaign       TEXT,
    source         TEXT,
    medium         TEXT,
    PRIMARY KEY (ref, occurred_at_ms, seq)
) WITHOUT ROWID;

-- Non-bot clicks by UTC hour, address and platform, for attribution rule 3 (fingerprint).
-- The hour first keeps inserts local (clicks arrive roughly in time order) while a lookup
-- reads only the hours its window covers.
CREATE TABLE fingerprint_clicks (
    hour           INTEGER NOT NULL,      -- occurred_at_ms / 3,600,000
    ip_key         INTEGER NOT NULL,      -- first 8 bytes of the keyed IP hash, signed
    platform       TEXT    NOT NULL,
    occurred_at_ms INTEGER NOT NULL,
    seq            INTEGER NOT NULL,
    os_version     TEXT,                  -- major.minor, when the click knew it
    ref            TEXT,
    campaign       TEXT,
    source         TEXT,
    medium         TEXT,
    PRIMARY KEY (hour, ip_key, platform, occurred_at_ms, seq)
) WITHOUT ROWID;

-- Conversion counts. grain: 1 = 15-minute buckets by every dimension, 2 = UTC days by every
-- dimension, 3 = 15-minute buckets by platform only, 4 = UTC days by platform only, 5 = UTC
-- hours by platform only (link dimensions '' there). bucket: the bucket's start, UTC ms. A
-- missing dimension is ''. Counts add up across rows; click_visitors is a VisitorSketch
-- (merged, never added).
CREATE TABLE rollups (
    grain                INTEGER NOT NULL,
    bucket               INTEGER NOT NULL,
    platform             TEXT    NOT NULL,
    bot                  INTEGER NOT NULL,
    ref                  TEXT    NOT NULL,
    campaign             TEXT    NOT NULL,
    source               TEXT    NOT NULL,
    medium               TEXT    NOT NULL,
    events               INTEGER NOT NULL,
    clicks               INTEGER NOT NULL,
    fallbacks            INTEGER NOT NULL,
    installs_click_id    INTEGER NOT NULL,
    installs_ref         INTEGER NOT NULL,
    installs_fingerprint INTEGER NOT NULL,
    installs_organic     INTEGER NOT NULL,
    opens                INTEGER NOT NULL,
    deferred_opens       INTEGER NOT NULL,
    click_visitors       BLOB,
    PRIMARY KEY (grain, bucket, platform, bot, ref, campaign, source, medium)
) WITHOUT ROWID;

-- Conversion counts by ONE dimension (dim: ref, campaign, source, medium or platform) over
-- power-of-two blocks of UTC days: block b of level L covers days [b * 2^L, (b + 1) * 2^L)
-- (days since 1970-01-01). Any range of whole days is at most two blocks per level, so a
-- breakdown over 90 days reads about ten blocks. entries: every value's counts in one blob
-- (format in Sources/LinkpulseStore/DimensionBlock.swift); no sketches here.
CREATE TABLE dimension_blocks (
    dim     TEXT    NOT NULL,
    level   INTEGER NOT NULL,
    block   INTEGER NOT NULL,
    entries BLOB    NOT NULL,
    PRIMARY KEY (dim, level, block)
);

-- Click visitors by one dimension's value and UTC day, for the unique clicks of a
-- breakdown's rows (looked up by value).
CREATE TABLE dimension_days (
    dim            TEXT    NOT NULL,
    value          TEXT    NOT NULL,
    day            INTEGER NOT NULL,      -- days since 1970-01-01
    bot            INTEGER NOT NULL,
    click_visitors BLOB    NOT NULL,
    PRIMARY KEY (dim, value, day, bot)
) WITHOUT ROWID;
