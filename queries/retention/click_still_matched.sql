-- click_still_matched: whether an event still kept was attributed to this click (its counted
-- link is read from the click's row: the rollup pass, the raw edges of a stats range, the
-- answer to an app), so the click's row must stay. Uses attribution_by_click.sql's index.
-- Run on the events database (attribution file attached as attr). Parameters:
-- click seq. Idempotent: yes (read-only).
SELECT 1 FROM attr.attribution WHERE matched_click_seq = :seq AND matched_click_seq IS NOT NULL LIMIT 1
