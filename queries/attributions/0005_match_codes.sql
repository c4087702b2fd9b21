-- The match type as a small code instead of its name (MatchType.code: 0 ref, 1 click_id,
-- 2 organic, 3 fingerprint, 4 install_referrer): SQLite stores 0 and 1 in no byte and the others
-- in one, against 3 to 16 bytes of text, for each of the answers (about half the events). The
-- table is copied, since a TEXT column would turn the codes back into text; the old table's
-- pages are given back when the file is opened next (AppDatabase.compactIfLargelyFree).
CREATE TABLE attribution_coded (
    seq               INTEGER PRIMARY KEY,
    match_type        INTEGER NOT NULL,      -- MatchType.code
    matched_click_seq INTEGER,
    candidates        INTEGER
);
INSERT INTO attribution_coded (seq, match_type, matched_click_seq, candidates)
SELECT seq,
       CASE match_type WHEN 'ref' THEN 0 WHEN 'click_id' THEN 1 WHEN 'organic' THEN 2 WHEN 'fingerprint' THEN 3
                       WHEN 'install_referrer' THEN 4 END,
       matched_click_seq, candidates
FROM attribution ORDER BY seq;
DROP TABLE attribution;
ALTER TABLE attribution_coded RENAME TO attribution;
