-- insert_resolve_device: records a device's resolve; only its first stays (store order).
-- Parameters: device key, seq. Idempotent: yes (a replay inserts the same rows).
INSERT OR IGNORE INTO resolve_devices (device, first_seq) VALUES (:device, :first_seq)
