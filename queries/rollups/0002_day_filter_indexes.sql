-- Migration 0002 of the rollup file: day rollups by campaign and by ref. A stats answer
-- filtered to one campaign or ref (the dashboard's drill-down) then reads that value's rows
-- instead of every row of the range. Partial (days only): the 15-minute rows are only read
-- for the edges of a range, and new day rows are a small share of a rollup pass's writes.
-- Used through queries/stats/rollup_day_counts_by_*.sql, which name grain 2 literally (SQLite
-- only uses a partial index when the query's own WHERE implies the index's).
CREATE INDEX rollup_days_by_campaign ON rollups (campaign, bucket) WHERE grain = 2;
CREATE INDEX rollup_days_by_ref ON rollups (ref, bucket) WHERE grain = 2;
