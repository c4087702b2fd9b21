-- blocks_merged_through: the first day the cube blocks (above one day) do not include
-- (see rollups/0005 and 0006): ranges from it on are read from the day cubes. Run on a reader
-- connection. Parameters: none. Idempotent: yes (read-only).
SELECT blocks_merged_through_day FROM agg.rollup_state
