-- Migration 0001 (PostgreSQL): raw events partitioned by month, the ids they were sent with,
-- the quarantine of rejected events, and the installation's facts.
--
-- What differs from the SQLite store, and why:
-- * lp_events is partitioned by the month of occurred_at_ms (declarative range partitioning),
--   so retention drops whole months instead of deleting rows. Months are created ahead by
--   lp_ensure_event_months (every daemon calls it at start and daily); an event of a month
--   that has no partition (older than the ones created) lands in lp_events_default.
-- * A unique index of a partitioned table must contain the partition key, so ids cannot be
--   unique in lp_events itself: lp_event_ids holds every stored id once, across daemons.
-- * seq orders events by commit across all daemons: every ingest transaction locks the one
--   row of lp_event_seq before it takes seqs and holds the lock until it commits, so a
--   transaction that commits later always has higher seqs. A derived job that has read every
--   seq up to W never sees a new event at or below W (the watermark rule of the SQLite store).
-- * Values are kept as plain text and integers (the SQLite store's byte-level compaction is
--   not repeated here): PostgreSQL compresses nothing under 2 KB, so the id, hash and visitor
--   texts cost their length.

CREATE TABLE lp_installation (
    key   text PRIMARY KEY,          -- 'database_id', 'hashing_secret', 'ingest_key', …
    value text NOT NULL
);

CREATE TABLE lp_event_seq (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    next_seq  bigint  NOT NULL       -- the seq the next stored event gets
);
INSERT INTO lp_event_seq (singleton, next_seq) VALUES (true, 1);
INSERT INTO lp_installation (key, value) VALUES ('database_id', gen_random_uuid()::text);

CREATE TABLE lp_event_ids (
    event_id text   PRIMARY KEY,
    seq      bigint NOT NULL
);

CREATE TABLE lp_events (
    seq             bigint   NOT NULL,
    event_id        text     NOT NULL,
    type            smallint NOT NULL,   -- click 0, open 1, install 2, fallback 3 (as in SQLite)
    platform        smallint NOT NULL,   -- ios 0, android 1, web 2, desktop 3, other 4
    bot             boolean  NOT NULL,
    occurred_at_ms  bigint   NOT NULL,
    received_at_ms  bigint   NOT NULL,
    sent_at_ms      bigint,
    ref             text,
    campaign        text,
    source          text,
    medium          text,
    deferred        boolean,
    visitor_id      text     NOT NULL,
    ip_hash         text,
    device_id       text,
    click_id        text,
    click_id_source smallint,            -- ClickIdSource's code, as in SQLite
    resolve         boolean  NOT NULL DEFAULT false,
    url             text,
    referrer        text,
    user_agent      text,
    os_version      text,
    app_version     text,
    bot_reason      text,
    properties      text                 -- canonical JSON object (sorted keys), or NULL
) PARTITION BY RANGE (occurred_at_ms);

CREATE TABLE lp_events_default PARTITION OF lp_events DEFAULT;

-- Derived work reads new events by seq; exports and stats edges by time (the partition key).
CREATE INDEX lp_events_by_seq ON lp_events (seq);
CREATE INDEX lp_events_by_time ON lp_events (occurred_at_ms);

CREATE TABLE lp_quarantine (
    id             bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    received_at_ms bigint  NOT NULL,
    event_index    integer,              -- position in the request; NULL for a whole body
    code           text    NOT NULL,
    field          text,
    message        text    NOT NULL,
    raw_text       text    NOT NULL,
    raw_truncated  boolean NOT NULL DEFAULT false,
    user_agent     text
);
CREATE INDEX lp_quarantine_by_time ON lp_quarantine (received_at_ms);

-- Creates the month partitions of lp_events from the month holding from_ms through the month
-- holding to_ms, skipping a month that exists or that lp_events_default already holds rows of
-- (attaching it would fail; those rows stay in the default partition). Safe to run from
-- several daemons at once: it takes a transaction-level advisory lock first.
CREATE FUNCTION lp_ensure_event_months(from_ms bigint, to_ms bigint) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    -- Months as UTC timestamps without a zone: month arithmetic then ignores the session's zone.
    month   timestamp := date_trunc('month', to_timestamp(from_ms / 1000.0) AT TIME ZONE 'UTC');
    last    timestamp := date_trunc('month', to_timestamp(to_ms / 1000.0) AT TIME ZONE 'UTC');
    lo      bigint;
    hi      bigint;
    name    text;
    created integer := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('linkpulse:event_months'));
    WHILE month <= last LOOP
        lo := (extract(epoch FROM month) * 1000)::bigint;
        hi := (extract(epoch FROM month + interval '1 month') * 1000)::bigint;
        name := 'lp_events_' || to_char(month, 'YYYY_MM');
        IF to_regclass(name) IS NULL
           AND NOT EXISTS (SELECT 1 FROM lp_events_default WHERE occurred_at_ms >= lo AND occurred_at_ms < hi) THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF lp_events FOR VALUES FROM (%s) TO (%s)', name, lo, hi);
            created := created + 1;
        END IF;
        month := month + interval '1 month';
    END LOOP;
    RETURN created;
END
$$;
