-- state: how far the rollups have come and how far attribution has (the rollups count only
-- attributed events).
SELECT (SELECT through_seq FROM lp_derived_state WHERE job = 'rollups') AS counted_through_seq,
       (SELECT through_seq FROM lp_derived_state WHERE job = 'attribution') AS attributed_through_seq
