-- Migration 0002 (PostgreSQL): attribution, decided once per event by the one daemon that holds
-- the derived-work lock (an advisory lock held by a connection of its own: see
-- attribution/try_lead.sql), replaying events in seq order through the same Attributor as the
-- SQLite store. Every table here is derived from lp_events and written only inside that
-- daemon's transactions on the lock-holding connection: a daemon that lost the lock (its
-- connection is gone) can write nothing more.

-- How far each derived job has come: every event with seq <= through_seq is done. Advanced in
-- the transaction that writes what it covers, so a daemon taking over goes on exactly there.
CREATE TABLE lp_derived_state (
    job         text        PRIMARY KEY,   -- 'attribution'
    through_seq bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO lp_derived_state (job, through_seq) VALUES ('attribution', 0);

-- One row per attributed event (non-bot installs, opens and fallbacks), as in the SQLite
-- attribution file: the match type, the click it is counted under (NULL when none), for a
-- fingerprint match how many clicks fitted, and the link dimensions the event is counted
-- under (Attribution.dimensions), so stats read one row here instead of the click's event.
CREATE TABLE lp_attributions (
    seq               bigint  PRIMARY KEY,
    match_type        text    NOT NULL,
    matched_click_seq bigint,
    candidates        integer,
    ref               text,
    campaign          text,
    source            text,
    medium            text
);

-- Non-bot clicks by ref (attribution rule 2: the newest click of a ref at or before a time).
CREATE TABLE lp_ref_clicks (
    ref            text   NOT NULL,
    occurred_at_ms bigint NOT NULL,
    seq            bigint NOT NULL,
    campaign       text,
    source         text,
    medium         text,
    PRIMARY KEY (ref, occurred_at_ms, seq)
);

-- Non-bot clicks by fingerprint (rule 3: same address and platform within the window).
CREATE TABLE lp_fingerprint_clicks (
    ip_key         bigint   NOT NULL,   -- first 8 bytes of the keyed IP hash, signed (Fingerprint.ipKey)
    platform       smallint NOT NULL,
    occurred_at_ms bigint   NOT NULL,
    seq            bigint   NOT NULL,
    os_version     text,                -- major.minor, when the click knew it
    ref            text,
    campaign       text,
    source         text,
    medium         text,
    PRIMARY KEY (ip_key, platform, occurred_at_ms, seq)
);

-- The first resolve of each device (`d:` and its device_id, else `v:` and its visitor id), bots'
-- too: a device's first resolve is its first session (`first_session` of the answer).
CREATE TABLE lp_resolve_devices (
    device    text   PRIMARY KEY,
    first_seq bigint NOT NULL
);
