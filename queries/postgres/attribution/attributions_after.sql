-- attributions_after: up to $2 stored answers with a seq above $1, in seq order.
SELECT seq, match_type, matched_click_seq, candidates FROM lp_attributions WHERE seq > $1 ORDER BY seq LIMIT $2
