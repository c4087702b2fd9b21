-- Installs matched through the Play Install Referrer (match type install_referrer) get their
-- own count. Rows of the platform grains gain a column (0 for what was counted before it
-- existed: no install had that match type then); cube parts gain a lane in format 2 of their
-- entries (RollupCube.swift), format 1 parts are read as they are.
ALTER TABLE rollups ADD COLUMN installs_install_referrer INTEGER NOT NULL DEFAULT 0;
