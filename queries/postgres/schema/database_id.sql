-- database_id: the id this database got when it was created (tells copies apart).
SELECT value FROM lp_installation WHERE key = 'database_id'
