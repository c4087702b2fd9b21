-- dimension_block: the counts of every value of one dimension in one block of days.
-- Parameters (positional): dim, level, block. Idempotent: yes (read-only).
SELECT value, bot, events, clicks, fallbacks, installs_click_id, installs_ref, installs_fingerprint,
       installs_organic, opens, deferred_opens
FROM dimension_blocks WHERE dim = ? AND level = ? AND block = ?
