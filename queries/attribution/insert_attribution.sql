-- insert_attribution: stores how an install, open or fallback was attributed.
-- Parameters: seq, match_type (MatchType.code), matched_click_seq, candidates (fingerprint
-- matches; NULL otherwise). Idempotent: yes (REPLACE).
INSERT OR REPLACE INTO attribution (seq, match_type, matched_click_seq, candidates) VALUES (:seq, :match_type, :matched_click_seq, :candidates)
