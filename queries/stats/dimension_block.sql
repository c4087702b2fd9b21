-- dimension_block: the entries blob of one dimension block (no row: no events there).
-- Parameters (positional): dim, level, block. Idempotent: yes (read-only).
SELECT entries FROM dimension_blocks WHERE dim = ? AND level = ? AND block = ?
