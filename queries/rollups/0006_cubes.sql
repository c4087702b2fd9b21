-- Migration 0006 of the rollup file: conversion cubes. The rollups by every dimension (grains
-- 1 and 2 of `rollups`: about one row per event at 10,000 refs, keyed by four text columns)
-- become parts of cubes: per grain and bucket, one blob of cells keyed by a link tuple id,
-- the platform and the audience (format in Sources/LinkpulseStore/RollupCube.swift). A
-- rollup pass writes one part per bucket it touched instead of an upsert per cell. The rows
-- by platform only (grains 3 to 5), the dimension blocks and the dimension days stay.

-- Every distinct (ref, campaign, source, medium) rollups are counted under, '' for a missing
-- one. Ids are dense from 1, assigned by rollup passes, never deleted or reused.
CREATE TABLE link_tuples (
    id       INTEGER PRIMARY KEY,
    ref      TEXT NOT NULL,
    campaign TEXT NOT NULL,
    source   TEXT NOT NULL,
    medium   TEXT NOT NULL
);

-- Cube parts. grain: 1 = 15-minute buckets, 2 = UTC days, 6 = UTC hours (the numbers of
-- RollupGrain); bucket: the bucket's start, UTC ms. A bucket's counts are the sum of its parts.
CREATE TABLE cube_parts (
    id      INTEGER PRIMARY KEY,
    grain   INTEGER NOT NULL,
    bucket  INTEGER NOT NULL,
    entries BLOB    NOT NULL
);
CREATE INDEX cube_parts_by_bucket ON cube_parts (grain, bucket);

-- Day cubes added up over power-of-two blocks of UTC days: block b of level L (2, 4, 6 or 8)
-- covers days [b * 2^L, (b + 1) * 2^L) (days since 1970-01-01), and holds only the days before
-- rollup_state.blocks_merged_through_day (later ones are read from the day cubes). Any range
-- of whole days is then a few blocks per level plus a few days. Entries as in cube_parts,
-- without visitor sketches.
CREATE TABLE cube_blocks (
    level   INTEGER NOT NULL,
    block   INTEGER NOT NULL,
    entries BLOB    NOT NULL,
    PRIMARY KEY (level, block)
);

DROP TABLE dimension_blocks;
DROP INDEX IF EXISTS rollup_days_by_campaign;
DROP INDEX IF EXISTS rollup_days_by_ref;
DELETE FROM rollups;
DELETE FROM dimension_days;
UPDATE rollup_state SET rolled_through_seq = 0, through_event_id = NULL, blocks_merged_through_day = 0;
