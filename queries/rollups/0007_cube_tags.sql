-- Migration 0007 of the rollup file: every cube part and cube block gets a tag, a random
-- 64-bit number drawn each time its entries are written. Stats readers keep the decoded sums
-- of parts and blocks in memory under their tag: reading the tag (stored before the entries,
-- so the entries' overflow pages are not touched) tells whether what they hold is still the
-- stored content, whichever process wrote it and even after a rebuild.
--
-- The rollups are derived: they are recounted from the raw events (the next passes start
-- from seq 0, as after `linkpulse rollup --rebuild`) rather than copied into the new tables,
-- which would leave the file with the old tables' size again in free pages.

DROP TABLE cube_parts;
CREATE TABLE cube_parts (
    id      INTEGER PRIMARY KEY,
    grain   INTEGER NOT NULL,
    bucket  INTEGER NOT NULL,
    tag     INTEGER NOT NULL,
    entries BLOB    NOT NULL
);
CREATE INDEX cube_parts_by_bucket ON cube_parts (grain, bucket);

DROP TABLE cube_blocks;
CREATE TABLE cube_blocks (
    level   INTEGER NOT NULL,
    block   INTEGER NOT NULL,
    tag     INTEGER NOT NULL,
    entries BLOB    NOT NULL,
    PRIMARY KEY (level, block)
);

DELETE FROM rollups;
DELETE FROM dimension_days;
UPDATE rollup_state SET rolled_through_seq = 0, through_event_id = NULL, blocks_merged_through_day = 0;
