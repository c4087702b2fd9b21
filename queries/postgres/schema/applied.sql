-- applied: the migrations already applied, by name.
SELECT name FROM lp_migrations
