-- The click indexes split in two: the clicks that happened at or after recent_from_ms are held
-- in the follower's memory (RecentClicks), the earlier ones are in the two tables below, which
-- now keep only keys (a matched click's link is read from the events by seq). Memory is not
-- saved: at start the follower lists those clicks again from the events by time. The old
-- tables held every click with its link; they are replaced, and with recent_from_ms at its
-- minimum every click is listed again from the events (then moved here as memory fills).

DROP TABLE ref_clicks;
DROP TABLE fingerprint_clicks;

-- Non-bot clicks before recent_from_ms, by ref (attribution rule 2).
CREATE TABLE ref_clicks (
    ref            TEXT    NOT NULL,
    occurred_at_ms INTEGER NOT NULL,
    seq            INTEGER NOT NULL,
    PRIMARY KEY (ref, occurred_at_ms, seq)
) WITHOUT ROWID;

-- Non-bot clicks before recent_from_ms, by UTC hour, address and platform (rule 3).
CREATE TABLE fingerprint_clicks (
    hour           INTEGER NOT NULL,      -- occurred_at_ms / 3,600,000
    ip_key         INTEGER NOT NULL,      -- first 8 bytes of the keyed IP hash, signed
    platform       INTEGER NOT NULL,      -- the code event_rows.platform uses
    occurred_at_ms INTEGER NOT NULL,
    seq            INTEGER NOT NULL,
    os_version     TEXT,                  -- major.minor, when the click knew it
    PRIMARY KEY (hour, ip_key, platform, occurred_at_ms, seq)
) WITHOUT ROWID;

ALTER TABLE attribution_state ADD COLUMN recent_from_ms INTEGER NOT NULL DEFAULT -9223372036854775808;
