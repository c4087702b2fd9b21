-- delete_attribution: forgets the attribution of one event retention deletes (it is counted in
-- the rollups already). Run on the attribution file. Parameters: seq.
-- Idempotent: yes.
DELETE FROM attribution WHERE seq = :seq
