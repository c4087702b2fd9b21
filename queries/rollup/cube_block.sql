-- cube_block: the entries of one cube block (no row: no events there). Run on the rollup
-- connection and on readers (the rollup file attached as agg; the name is unique among the
-- attached files). Parameters: level, block. Idempotent: yes (read-only).
SELECT entries FROM cube_blocks WHERE level = :level AND block = :block
