-- Migration 0011 of the rollup file: opens are counted by match type too (opens_by_match, so
-- that open_rate counts only the opens a link brought), and the rollups remember the counting
-- rules they were counted by.
-- The rows by platform gain five columns, placed before the sketch (which stays last, so that
-- reading a row's counts never touches its overflow pages: see 0010): the table is copied,
-- every row as it is, the new counts 0. Cube parts of format 4 carry the same counts as lanes
-- 10…14 (RollupCube.swift); older parts are read as they are.
-- counting_rules: the `CountingRules.version` the rollups were counted by (1 for everything
-- counted before this column existed). At open, rollups of earlier rules are counted again
-- from the raw events when those are all kept (RollupStore.prepareRollups).
CREATE TABLE rollups_by_match (
    grain                     INTEGER NOT NULL,
    bucket                    INTEGER NOT NULL,
    platform                  TEXT    NOT NULL,
    bot                       INTEGER NOT NULL,
    ref                       TEXT    NOT NULL,
    campaign                  TEXT    NOT NULL,
    source                    TEXT    NOT NULL,
    medium                    TEXT    NOT NULL,
    events                    INTEGER NOT NULL,
    clicks                    INTEGER NOT NULL,
    fallbacks                 INTEGER NOT NULL,
    installs_click_id         INTEGER NOT NULL,
    installs_ref              INTEGER NOT NULL,
    installs_fingerprint      INTEGER NOT NULL,
    installs_organic          INTEGER NOT NULL,
    opens                     INTEGER NOT NULL,
    deferred_opens            INTEGER NOT NULL,
    installs_install_referrer INTEGER NOT NULL DEFAULT 0,
    opens_install_referrer    INTEGER NOT NULL DEFAULT 0,
    opens_click_id            INTEGER NOT NULL DEFAULT 0,
    opens_ref                 INTEGER NOT NULL DEFAULT 0,
    opens_fingerprint         INTEGER NOT NULL DEFAULT 0,
    opens_organic             INTEGER NOT NULL DEFAULT 0,
    click_visitors            BLOB,
    UNIQUE (grain, bucket, platform, bot, ref, campaign, source, medium)
);

INSERT INTO rollups_by_match (
    grain, bucket, platform, bot, ref, campaign, source, medium, events, clicks, fallbacks,
    installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens, deferred_opens,
    installs_install_referrer, click_visitors)
SELECT grain, bucket, platform, bot, ref, campaign, source, medium, events, clicks, fallbacks,
       installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens, deferred_opens,
       installs_install_referrer, click_visitors
FROM rollups ORDER BY grain, bucket, platform, bot, ref, campaign, source, medium;

DROP TABLE rollups;
ALTER TABLE rollups_by_match RENAME TO rollups;

ALTER TABLE rollup_state ADD COLUMN counting_rules INTEGER NOT NULL DEFAULT 1;
