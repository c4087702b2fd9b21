-- insert_attribution: stores how an install, open or fallback was attributed.
-- Parameters (positional): seq, match_type, matched_click_seq, matched_click_id, ref,
-- campaign, source, medium. Idempotent: yes (REPLACE).
INSERT OR REPLACE INTO attribution (seq, match_type, matched_click_seq, matched_click_id, ref, campaign, source, medium)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
