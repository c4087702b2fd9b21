-- The click visitors a rollup pass adds to a dimension value's day go into a part of their own
-- (one row per value, day, audience and pass) instead of being merged into the day's sketch at
-- once: a day's sketch grows to 16 KiB (a HyperLogLog past 1,000 visitors), and merging every
-- pass into it rewrote every busy value's sketch at every pass (156 MiB a pass for 10,000 busy
-- refs). Parts are folded into `dimension_days` every few passes, in slices; readers take the
-- union of a value's day and its parts (a union is idempotent, so a row seen both folded and
-- as a part counts once). Nothing counted before changes: `dimension_days` stays as it is.
CREATE TABLE dimension_day_parts (
    dim            TEXT    NOT NULL,
    value          TEXT    NOT NULL,
    day            INTEGER NOT NULL,      -- days since 1970-01-01
    bot            INTEGER NOT NULL,
    pass           INTEGER NOT NULL,      -- the seq through which the pass that wrote it counted
    click_visitors BLOB    NOT NULL,
    PRIMARY KEY (dim, value, day, bot, pass)
) WITHOUT ROWID;

-- How many passes wrote parts since the last fold.
ALTER TABLE rollup_state ADD COLUMN dimension_part_passes INTEGER NOT NULL DEFAULT 0;
