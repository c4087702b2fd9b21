-- blocks_merged_through: the first day whose dimension blocks above one day do not include it
-- (see rollups/0005): ranges from it on are read from one-day blocks. Run on a reader
-- connection. Parameters: none. Idempotent: yes (read-only).
SELECT blocks_merged_through_day FROM agg.rollup_state
