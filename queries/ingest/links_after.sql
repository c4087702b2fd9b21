-- links_after: the entries of event_links after an id, in id order (ids only grow; readers
-- cache them). Parameters (positional): after. Idempotent: yes (read-only).
SELECT id, ref, campaign, source, medium FROM event_links WHERE id > ? ORDER BY id
