-- upsert_cube_block: stores a cube block's entries (read, added to and written back by the
-- rollup job) under a new random tag (readers' caches know a block's content by it).
-- Parameters: level, block, entries.
-- Idempotent: yes (REPLACE); the watermark in the same transaction guards the additions.
INSERT OR REPLACE INTO cube_blocks (level, block, tag, entries) VALUES (:level, :block, random(), :entries)
