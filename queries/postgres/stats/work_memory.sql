-- work_memory: a breakdown groups tens of thousands of values: in memory, not sorted on disk
-- (the default 4 MB spills from about 20,000 groups). For the stats transaction only.
SET LOCAL work_mem = '64MB'
