-- insert_tuple: a new link tuple under the next id ('' for a missing dimension), in the
-- transaction of the pass that first counts under it.
-- Parameters (positional): id, ref, campaign, source, medium. Idempotent: no (a second insert fails).
INSERT INTO link_tuples (id, ref, campaign, source, medium) VALUES (?1, ?2, ?3, ?4, ?5)
