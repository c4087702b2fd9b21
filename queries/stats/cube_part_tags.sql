-- cube_part_tags: the id, bucket and tag of every stored part of one cube grain's buckets in
-- [from, to), without their entries (see cube_block_tag). Run on a reader connection (rollup
-- file attached as agg). Parameters: grain, from_ms, to_ms.
-- Idempotent: yes (read-only).
SELECT id, bucket, tag FROM cube_parts WHERE grain = :grain AND bucket >= :from_ms AND bucket < :to_ms
