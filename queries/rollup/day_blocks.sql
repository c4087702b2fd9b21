-- day_blocks: the one-day dimension blocks (level 0) of the days [from_day, to_day), every
-- dimension, to merge them into the blocks above. Parameters (positional): from_day, to_day.
-- Idempotent: yes (read-only).
SELECT dim, block, entries FROM dimension_blocks WHERE level = 0 AND block >= ? AND block < ?
