-- set_attribution: records how an install, open or fallback was attributed.
-- Parameters (positional): match_type, matched_click_seq, seq. Idempotent: yes.
UPDATE events SET match_type = ?1, matched_click_seq = ?2 WHERE seq = ?3
