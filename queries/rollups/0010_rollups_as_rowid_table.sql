-- Migration 0010 of the rollup file: the rows by platform (grains 3 to 5, the only ones left in
-- `rollups` since the cubes) move to an ordinary rowid table with the same key as a UNIQUE
-- constraint, and the sketch column last.
-- Why: a WITHOUT ROWID table is an index B-tree, whose rows keep at most about 1,000 bytes on
-- their page; a longer row keeps only about 490 there and puts the rest on overflow pages,
-- the last of them mostly empty. These rows carry a click visitor sketch of 0.5 to 16 KiB, so
-- at 10 M events 69 of the table's 155 MB were unused space. A rowid table keeps rows of up to
-- about 4 KiB on its own pages and fills overflow pages whole: 104 MB plus a 2 MB key index.
-- The sketch goes last so that reading the counts of a row never touches its overflow pages.
-- Nothing counted changes: every row is copied as it is.
CREATE TABLE rollups_by_rowid (
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
    click_visitors            BLOB,
    UNIQUE (grain, bucket, platform, bot, ref, campaign, source, medium)
);

INSERT INTO rollups_by_rowid (
    grain, bucket, platform, bot, ref, campaign, source, medium, events, clicks, fallbacks,
    installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens, deferred_opens,
    installs_install_referrer, click_visitors)
SELECT grain, bucket, platform, bot, ref, campaign, source, medium, events, clicks, fallbacks,
       installs_click_id, installs_ref, installs_fingerprint, installs_organic, opens, deferred_opens,
       installs_install_referrer, click_visitors
FROM rollups ORDER BY grain, bucket, platform, bot, ref, campaign, source, medium;

DROP TABLE rollups;
ALTER TABLE rollups_by_rowid RENAME TO rollups;
