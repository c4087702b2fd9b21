-- insert_tuple: a new link tuple under the next id ('' for a missing dimension), in the
-- transaction of the pass that first counts under it.
-- Parameters: id, ref, campaign, source, medium. Idempotent: no (a second insert fails).
INSERT INTO link_tuples (id, ref, campaign, source, medium) VALUES (:id, :ref, :campaign, :source, :medium)
