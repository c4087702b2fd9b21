-- Migration 0012 (PostgreSQL): each event's audience (country, device, system, browser,
-- language: derived at ingest, as Audience.stored gives it), as in SQLite.
ALTER TABLE lp_events ADD COLUMN audience text;
