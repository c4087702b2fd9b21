-- delete_ref_click: takes one click before the raw horizon out of the on-disk ref index
-- (attribution no longer matches clicks before the horizon). Run on the attribution file.
-- Parameters: ref, occurred_at_ms, seq. Idempotent: yes.
DELETE FROM ref_clicks WHERE ref = :ref AND occurred_at_ms = :occurred_at_ms AND seq = :seq
