-- state: how far attribution has come (every event with seq <= this is attributed).
SELECT through_seq FROM lp_derived_state WHERE job = 'attribution'
