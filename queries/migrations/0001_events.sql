-- Migration 0001: raw events, the quarantine of rejected events, and installation facts.
-- Shipped migrations are never edited; add a new numbered file instead.

-- Every accepted event, in arrival order. seq is the server's sequence number (the rowid):
-- rollups and the id index follow it as a watermark. There is deliberately no index on
-- event_id: deduplication uses the separate id index (see queries/ids/), which keeps ingest
-- fast when random client ids outgrow the page cache. Times are UTC epoch milliseconds.
-- The CHECKs are written with OR, not IN: SQLite evaluates an IN list in a CHECK through a
-- temporary table on every insert, which measured 4.6 µs per row, more than the insert itself.
CREATE TABLE events (
    seq            INTEGER PRIMARY KEY,
    event_id       TEXT    NOT NULL,
    id_key         INTEGER NOT NULL,      -- first 8 bytes of SHA-256(event_id), signed
    type           TEXT    NOT NULL CHECK (type = 'click' OR type = 'open' OR type = 'install' OR type = 'fallback'),
    occurred_at_ms INTEGER NOT NULL,      -- event time after clock-skew correction
    received_at_ms INTEGER NOT NULL,
    sent_at_ms     INTEGER,               -- the device's send time, as reported
    ref            TEXT,
    campaign       TEXT,
    source         TEXT,
    medium         TEXT,
    platform       TEXT    NOT NULL CHECK (platform = 'ios' OR platform = 'android' OR platform = 'web'
                                 OR platform = 'desktop' OR platform = 'other'),
    device_id      TEXT,
    click_id       TEXT,
    deferred       INTEGER,               -- 0/1, or NULL when not sent
    url            TEXT,
    referrer       TEXT,
    user_agent     TEXT,
    ip_hash        TEXT,                  -- keyed hash; no raw address is ever stored
    visitor_id     TEXT    NOT NULL,
    os_version     TEXT,
    app_version    TEXT,
    properties     TEXT,                  -- canonical JSON object, or NULL
    bot            INTEGER NOT NULL DEFAULT 0,
    bot_reason     TEXT
);

-- Rejected events, kept so an operator can see what a client sends wrong. raw_text holds at
-- most 32 KiB of the event as sent, with IP addresses replaced by their keyed hash.
CREATE TABLE quarantine (
    id             INTEGER PRIMARY KEY,
    received_at_ms INTEGER NOT NULL,
    event_index    INTEGER,               -- position in the request; NULL for a whole body
    code           TEXT    NOT NULL,
    field          TEXT,
    message        TEXT    NOT NULL,
    raw_text       TEXT    NOT NULL,
    raw_truncated  INTEGER NOT NULL DEFAULT 0,
    user_agent     TEXT
);
CREATE INDEX quarantine_by_time ON quarantine (received_at_ms);

-- Facts about this installation, one row per name (for example database_id, which ties the
-- derived id index file to this database).
CREATE TABLE installation (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
