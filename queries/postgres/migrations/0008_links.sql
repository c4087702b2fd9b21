-- Migration 0008 (PostgreSQL): hosted links, as in the SQLite events database, shared by every
-- daemon on the database (a link made through one serves on all of them at once). A deleted
-- link keeps its row: its ref answers 410 and is never given out again. deep_link is a JSON
-- object of the link's value and sub1…sub10. Times are UTC ms.
CREATE TABLE lp_links (
    ref                text    PRIMARY KEY,
    app                text    NOT NULL,
    url                text    NOT NULL,
    campaign           text,
    source             text,
    medium             text,
    deep_link          text,
    ios_url            text,
    android_url        text,
    desktop_url        text,
    ios_preview        boolean NOT NULL DEFAULT true,
    social_title       text,
    social_description text,
    social_image       text,
    expires_at_ms      bigint,
    created_at_ms      bigint  NOT NULL,
    updated_at_ms      bigint  NOT NULL,
    deleted_at_ms      bigint
);
CREATE INDEX lp_links_newest ON lp_links (created_at_ms DESC, ref) WHERE deleted_at_ms IS NULL;
