-- derived_watermark: the lowest watermark (seq) of the derived files, read before a backup
-- copies them. Once retention has deleted raw events, a backup carries the derived files too
-- (the rollups hold the only complete counts), copied in the order rollups, attribution, id
-- index, events: each later copy holds everything the earlier ones were made from, as long as
-- retention deletes nothing at or above this seq meanwhile (hold_retention.sql).
-- Run on the events database with the rollups (agg), attribution (attr) and id index (ids)
-- attached. Parameters: none. Idempotent: yes (read-only).
SELECT min(coalesce((SELECT rolled_through_seq FROM agg.rollup_state), 0),
           coalesce((SELECT attributed_through_seq FROM attr.attribution_state), 0),
           coalesce((SELECT indexed_through_seq FROM ids.index_state), 0))
