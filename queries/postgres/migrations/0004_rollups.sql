-- Migration 0004 (PostgreSQL): rollups, counted by the daemon doing the derived work after it
-- has attributed the events, each round one transaction with its watermark ('rollups' in
-- lp_derived_state, never ahead of 'attribution'). Stats read whole UTC days and hours from
-- here and only the edges of a range from the raw events; everything counted is counted once.
INSERT INTO lp_derived_state (job, through_seq) VALUES ('rollups', 0);

-- The counts of the events of one UTC hour (grain 6) or day (grain 2), once by every link
-- dimension (1 ref, 2 campaign, 3 source, 4 medium: platform -1) and once in all (dimension 0,
-- value '') by platform, people and bots apart. An event counts under the dimensions attribution
-- gave it. value '' is an event without that dimension (validation stores no empty value).
-- visitors: the VisitorSketch of the clicks' visitors ('' when no click).
CREATE TABLE lp_rollups (
    dimension                 smallint NOT NULL,
    grain                     smallint NOT NULL,
    bucket_ms                 bigint   NOT NULL,
    value                     text     NOT NULL,
    platform                  smallint NOT NULL,
    bot                       boolean  NOT NULL,
    events                    bigint   NOT NULL,
    clicks                    bigint   NOT NULL,
    fallbacks                 bigint   NOT NULL,
    installs_click_id         bigint   NOT NULL,
    installs_ref              bigint   NOT NULL,
    installs_fingerprint      bigint   NOT NULL,
    installs_organic          bigint   NOT NULL,
    opens                     bigint   NOT NULL,
    deferred_opens            bigint   NOT NULL,
    installs_install_referrer bigint   NOT NULL,
    visitors                  bytea    NOT NULL,
    PRIMARY KEY (dimension, grain, bucket_ms, value, platform, bot)
);
-- One value over a range (stats filtered by one link dimension).
CREATE INDEX lp_rollups_by_value ON lp_rollups (dimension, value, grain, bucket_ms);
