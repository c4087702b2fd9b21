-- tuples_after: the link tuples with an id above :after_id, in id order (to extend a cache of them).
-- Run on the rollup connection and on readers (the rollup file attached as agg; the name is
-- unique among the attached files). Parameters: after_id. Idempotent: yes (read-only).
SELECT id, ref, campaign, source, medium FROM link_tuples WHERE id > :after_id ORDER BY id
