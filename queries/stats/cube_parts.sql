-- cube_parts: every stored part of one cube grain's buckets in [from, to); the caller adds
-- up the cells that pass the filters. Run on a reader connection (rollup file attached as agg).
-- Parameters: grain, from_ms, to_ms. Idempotent: yes (read-only).
SELECT bucket, entries FROM cube_parts WHERE grain = :grain AND bucket >= :from_ms AND bucket < :to_ms
