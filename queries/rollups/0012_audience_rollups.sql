-- Migration 0012 of the rollup file: the rows by audience. Every event counts once under each
-- audience dimension's value (RollupCells.Dimension codes 5 to 10: country, device, os,
-- browser, referrer host, language; '' when unknown), an install or open a click brought under
-- that click's, per UTC day and per UTC month (RollupCells.Grain codes 2 and 7), people and bots
-- apart: rows per dimension, never a cross product of them. Parts of a range finer than a day
-- are counted from the raw events (StatsReader), which keeps the click visitor sketches, the
-- bulk of a row, to one per value-day.
-- A rowid table with its key as a UNIQUE constraint and the sketch last, as `rollups` (0010).
-- The rows are filled by counting again (CountingRules version 3, RollupStore.prepareRollups).
CREATE TABLE audience_rollups (
    dimension                 INTEGER NOT NULL,
    grain                     INTEGER NOT NULL,
    bucket                    INTEGER NOT NULL,
    value                     TEXT    NOT NULL,
    bot                       INTEGER NOT NULL,
    events                    INTEGER NOT NULL,
    clicks                    INTEGER NOT NULL,
    fallbacks                 INTEGER NOT NULL,
    installs_click_id         INTEGER NOT NULL,
    installs_ref              INTEGER NOT NULL,
    installs_fingerprint      INTEGER NOT NULL,
    installs_organic          INTEGER NOT NULL,
    opens                     INTEGER NOT NULL,
    deferred_opens            INTEGER NOT NULL,
    installs_install_referrer INTEGER NOT NULL,
    opens_install_referrer    INTEGER NOT NULL,
    opens_click_id            INTEGER NOT NULL,
    opens_ref                 INTEGER NOT NULL,
    opens_fingerprint         INTEGER NOT NULL,
    opens_organic             INTEGER NOT NULL,
    click_visitors            BLOB,
    UNIQUE (dimension, grain, bucket, value, bot)
);
