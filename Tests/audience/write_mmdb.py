"""Writes a small MMDB country database for the tests, with the mmdb-writer package.

Usage: write_mmdb.py FILE DATABASE_TYPE NETWORK=CC [NETWORK=CC ...]
Each NETWORK (CIDR, IPv4 or IPv6) gets the record {"country": {"iso_code": CC}}, the shape of
GeoLite2 Country and DB-IP Lite. The file is written beside FILE and renamed onto it, so a
reader never sees half a file.
"""
import os
import sys

from mmdb_writer import MMDBWriter
from netaddr import IPSet

path, database_type, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
writer = MMDBWriter(ip_version=6, database_type=database_type, languages=["en"], description={"en": "Linkpulse test data"}, ipv4_compatible=True)
for pair in pairs:
    network, code = pair.split("=")
    writer.insert_network(IPSet([network]), {"country": {"iso_code": code}})
writer.to_db_file(path + ".part")
os.replace(path + ".part", path)
