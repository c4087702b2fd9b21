-- Migration 0003 (PostgreSQL): scheduled exports, as in the SQLite events database. One daemon
-- at a time runs them (the one doing the derived work); a period is recorded once: a second
-- record of the same period (a daemon that lost the lead mid-export) changes nothing.

-- The last period each scheduled job finished; the periods after it that are due run next.
CREATE TABLE lp_export_jobs (
    name                 text        PRIMARY KEY,
    last_period_start_ms bigint      NOT NULL,
    last_period_end_ms   bigint      NOT NULL,
    updated_at           timestamptz NOT NULL DEFAULT now()
);

-- Every export file a scheduled job wrote and still keeps, by file name (unique in the export
-- directory). Deleted with their files when a job's `keep` is exceeded.
CREATE TABLE lp_export_files (
    name            text   PRIMARY KEY,
    job             text   NOT NULL,
    period_start_ms bigint NOT NULL,
    period_end_ms   bigint NOT NULL,
    period_label    text   NOT NULL,  -- the local date or hour the file covers, as in its name
    rows            bigint NOT NULL,
    bytes           bigint NOT NULL,
    created_at_ms   bigint NOT NULL
);
CREATE INDEX lp_export_files_by_job ON lp_export_files (job, period_start_ms);
