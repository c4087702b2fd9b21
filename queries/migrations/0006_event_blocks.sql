-- Migration 0006: sealed blocks of raw events (the cold form of event_rows).
--
-- Once every derived file has passed them, runs of old events move out of event_rows into
-- blocks: one row per run of up to about a thousand consecutive seqs, every column of every
-- event kept (format in Sources/LinkpulseStore/EventBlock.swift), deflated. Readers see them
-- through the `event_archive` virtual table (Sources/LinkpulseStore/EventArchiveTable.swift),
-- with the same columns and values as event_rows. A row is in event_rows or in a block, never
-- both. An event far out of time order with its neighbours (a phone that flushed days late)
-- is left in event_rows, so that every block covers a short span of event time.
-- id: never reused (AUTOINCREMENT), so a reader may cache a block by its id; a block rewritten
-- is a new row.
CREATE TABLE event_blocks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    first_seq   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    row_count   INTEGER NOT NULL,
    earliest_ms INTEGER NOT NULL,      -- the earliest occurred_at_ms in the block
    latest_ms   INTEGER NOT NULL,      -- the latest
    data        BLOB    NOT NULL
);
CREATE UNIQUE INDEX event_blocks_by_seq ON event_blocks (first_seq, last_seq, earliest_ms, latest_ms);
CREATE INDEX event_blocks_by_time ON event_blocks (earliest_ms, latest_ms, first_seq);

-- How far sealing has looked: every event at or below sealed_through_seq is in a block or was
-- left in event_rows for being out of time order.
CREATE TABLE archive_state (
    singleton          INTEGER PRIMARY KEY CHECK (singleton = 1),
    sealed_through_seq INTEGER NOT NULL
);
INSERT INTO archive_state VALUES (1, 0);
