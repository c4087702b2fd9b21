-- durability_off: the connection's commits and checkpoints never wait for the disk. Only for
-- `linkpulse rollup --rebuild` writing a rollup file it made anew, with a marker beside it that
-- has the file counted again if the machine stops before the rebuild's last, synced checkpoint
-- (AppDatabase.rebuildMarkerFileName). Parameters: none. Idempotent: yes.
PRAGMA main.synchronous = OFF
