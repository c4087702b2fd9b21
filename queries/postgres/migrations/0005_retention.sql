-- Migration 0005 (PostgreSQL): raw-event retention (--retention-days). The daemon doing the
-- derived work drops the month partitions of lp_events wholly before the horizon, once the
-- rollups have counted them, and deletes the rows of lp_events_default before it; the horizon is
-- recorded in lp_installation ('raw_horizon_ms'), so stats refuse edges before it.

-- The clicks deleted events were not the last users of: an event still kept was attributed to
-- them, and its answer (/v1/resolve, /v1/attributions) names the click, its time, URL and
-- properties. Written when the click's row goes.
CREATE TABLE lp_kept_clicks (
    seq            bigint PRIMARY KEY,
    event_id       text   NOT NULL,
    occurred_at_ms bigint NOT NULL,
    url            text,
    properties     text,
    ref            text,
    campaign       text,
    source         text,
    medium         text
);

-- The events attributed to a click, to find the clicks still answered for.
CREATE INDEX lp_attributions_by_click ON lp_attributions (matched_click_seq) WHERE matched_click_seq IS NOT NULL;
