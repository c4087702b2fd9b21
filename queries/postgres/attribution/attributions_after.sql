-- attributions_after: up to :limit stored answers with a seq above :after_seq, in seq order.
SELECT seq, match_type, matched_click_seq, candidates FROM lp_attributions WHERE seq > :after_seq ORDER BY seq LIMIT :limit
