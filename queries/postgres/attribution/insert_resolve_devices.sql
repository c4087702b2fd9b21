-- insert_resolve_devices: the devices whose first resolve is in this round. :rows: JSON array of
-- {device, first_seq}; a device seen in an earlier round keeps its first seq.
INSERT INTO lp_resolve_devices (device, first_seq)
SELECT device, first_seq FROM json_to_recordset(:rows::json) AS d(device text, first_seq bigint)
ON CONFLICT (device) DO NOTHING
