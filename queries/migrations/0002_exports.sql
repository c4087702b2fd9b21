-- Migration 0002: scheduled exports. Kept in the events database (not the derived rollup
-- file), since which periods were exported must survive a rollup rebuild.

-- The last period each scheduled job finished: a period is exported at most once, and every
-- period after this one that is due runs at the next tick (catch-up after downtime).
CREATE TABLE export_jobs (
    name                 TEXT    PRIMARY KEY,
    last_period_start_ms INTEGER NOT NULL,
    last_period_end_ms   INTEGER NOT NULL,
    updated_at_ms        INTEGER NOT NULL
) WITHOUT ROWID;

-- Every export file a scheduled job wrote and still keeps, by file name (unique in the
-- export directory). Rows are deleted with their files when a job's `keep` is exceeded.
CREATE TABLE export_files (
    name            TEXT    PRIMARY KEY,
    job             TEXT    NOT NULL,
    period_start_ms INTEGER NOT NULL,
    period_end_ms   INTEGER NOT NULL,
    period_label    TEXT    NOT NULL,  -- the local date or hour the file covers, as in its name
    rows            INTEGER NOT NULL,
    bytes           INTEGER NOT NULL,
    created_at_ms   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX export_files_by_job ON export_files (job, period_start_ms);
