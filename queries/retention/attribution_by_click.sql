-- attribution_by_click: the attributions by the click they matched, so that retention can tell
-- a click still needed from one it may delete. Made the first time retention runs (an
-- installation that keeps everything never pays for it). Run on the attribution file.
-- Parameters: none. Idempotent: yes.
CREATE INDEX IF NOT EXISTS attribution_by_click ON attribution (matched_click_seq)
WHERE matched_click_seq IS NOT NULL
