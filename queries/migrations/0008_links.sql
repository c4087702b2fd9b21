-- Migration 0008: hosted links, served on the link domains as GET /<ref>.
--
-- One row a link, found by its ref (the short URL's path, case-sensitive). A deleted link
-- keeps its row (deleted_at_ms set): its ref answers 410 and is never given out again.
-- deep_link is a JSON object of the link's value and sub1…sub10, NULL when it has none.
-- Times are UTC ms.
CREATE TABLE links (
    ref                TEXT    NOT NULL UNIQUE,
    app                TEXT    NOT NULL,
    url                TEXT    NOT NULL,
    campaign           TEXT,
    source             TEXT,
    medium             TEXT,
    deep_link          TEXT,
    ios_url            TEXT,
    android_url        TEXT,
    desktop_url        TEXT,
    ios_preview        INTEGER NOT NULL DEFAULT 1,
    social_title       TEXT,
    social_description TEXT,
    social_image       TEXT,
    expires_at_ms      INTEGER,
    created_at_ms      INTEGER NOT NULL,
    updated_at_ms      INTEGER NOT NULL,
    deleted_at_ms      INTEGER
);
-- The list, newest first, without the deleted ones.
CREATE INDEX links_newest ON links (created_at_ms DESC, ref) WHERE deleted_at_ms IS NULL;
