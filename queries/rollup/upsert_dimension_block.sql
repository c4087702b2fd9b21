-- upsert_dimension_block: stores a dimension block's entries (read, added to and written
-- back by the rollup job). Parameters (positional): dim, level, block, entries.
-- Idempotent: yes (REPLACE); the watermark in the same transaction guards the additions.
INSERT OR REPLACE INTO dimension_blocks (dim, level, block, entries) VALUES (?, ?, ?, ?)
