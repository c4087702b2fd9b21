-- Schema of the attribution file (data/linkpulse-attribution.sqlite): how every install, open
-- and fallback of a person was attributed, decided once, in store order, by the attribution
-- follower moments after the event was committed, and the click indexes it decides with. Like
-- the rollup file it is derived: deleted, it is rebuilt by replaying the events in store
-- order, which gives the same answers. Its connection has this file as main and the events
-- database ("ev") and id index ("ids") attached; readers attach it as "attr".

-- attributed_through_seq: every event with seq <= this is attributed; advanced in the same
-- transaction as the rows it covers. through_event_id: the id of that event, checked at open
-- (an events database restored from another copy has other events under the same seqs).
CREATE TABLE attribution_state (
    singleton              INTEGER PRIMARY KEY CHECK (singleton = 1),
    database_id            TEXT    NOT NULL,
    attributed_through_seq INTEGER NOT NULL,
    through_event_id       TEXT,
    attribution_window_ms  INTEGER NOT NULL
);

-- One row per attributed event (non-bot installs, opens and fallbacks): the match type and
-- the click whose link it is counted under (click_id and fingerprint: the matched click; ref:
-- the newest click of the ref that filled what the event did not send; NULL when none). The
-- dimensions it is counted under follow from these and the click's row
-- (MatchType.countedDimensions).
CREATE TABLE attribution (
    seq               INTEGER PRIMARY KEY,
    match_type        TEXT    NOT NULL,
    matched_click_seq INTEGER
);

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
