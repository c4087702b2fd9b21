-- Migration 0005 of the rollup file: dimension blocks above one day (levels 1 to 8) hold only
-- the days before blocks_merged_through_day; the days from it on (the last two, and any
-- further ones a pass has not merged up yet) are only in their one-day blocks (level 0) until
-- they are merged up, once. A pass of fresh events then rewrites a few small day blocks
-- instead of every level's large block. Blocks of earlier versions held every day at every
-- level, so the rollups are counted again.
ALTER TABLE rollup_state ADD COLUMN blocks_merged_through_day INTEGER NOT NULL DEFAULT 0;
DELETE FROM rollups;
DELETE FROM dimension_blocks;
DELETE FROM dimension_days;
UPDATE rollup_state SET rolled_through_seq = 0, through_event_id = NULL;
