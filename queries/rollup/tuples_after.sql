-- tuples_after: the link tuples with an id above ?1, in id order (to extend a cache of them).
-- Run on the rollup connection and on readers (the rollup file attached as agg; the name is
-- unique among the attached files). Parameters (positional): after_id. Idempotent: yes (read-only).
SELECT id, ref, campaign, source, medium FROM link_tuples WHERE id > ?1 ORDER BY id
