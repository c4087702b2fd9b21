-- cube_block_tag: the tag of one cube block (no row: no events there), read without its
-- entries; a reader that holds the block's decoded sums under this tag need not read more.
-- Run on a reader connection (rollup file attached as agg; the name is unique among the
-- attached files). Parameters: level, block. Idempotent: yes (read-only).
SELECT tag FROM cube_blocks WHERE level = :level AND block = :block
