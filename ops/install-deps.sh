#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Linkpulse builds and tests against, when missing:
# the SQLite, zlib, libqrencode and libmaxminddb headers and the time zone database (build), and for the test suite Chromium
# with its WebDriver (the dashboard is tested in a real headless browser), and Python with the
# Segment and RudderStack SDKs, schemathesis and mmdb-writer in .build/sdk-venv (the Segment-compatible
# ingest is tested with the SDKs, the OpenAPI document against the daemon with schemathesis, MMDB
# country files are written with mmdb-writer),
# systemd's systemd-analyze (the unit in ops/systemd is verified), PostgreSQL's server (the
# PostgreSQL store's tests start a throwaway cluster of their own), zbar (QR codes read back),
# curl (the docs' examples run as written) and promtool (/metrics checked).
# The audience data, for both: uap-core's user agent expressions (Apache-2.0), and the IPFire
# location data (CC BY-SA 4.0) from Debian's tor-geoipdb, unpacked without the Tor daemon it
# depends on into /usr/local/share/linkpulse/geoip.
# Usage: ops/install-deps.sh [build|test]
set -euo pipefail

want=(libsqlite3-dev zlib1g-dev libqrencode-dev libmaxminddb-dev pkg-config tzdata uap-core)
if [ "${1:-build}" = "test" ]; then
  # The dashboard's browser tests drive headless Chromium through chromedriver.
  want+=(chromium chromium-driver fonts-dejavu-core python3 python3-venv)
  # The systemd unit in ops/systemd is checked with systemd-analyze verify.
  want+=(systemd)
  # The PostgreSQL store is tested against Debian's server, in a throwaway cluster per test run.
  want+=(postgresql)
  # Hosted links' QR codes are read back with zbarimg.
  want+=(zbar-tools)
  # The docs' examples, which the suite runs as written, call curl.
  want+=(curl)
fi

# The SDKs' Python environment, pinned, inside the build folder (never in git).
sdk_venv() {
  [ "${1:-build}" = "test" ] || return 0
  local venv=.build/sdk-venv
  "$venv/bin/python" -c "import segment.analytics, rudderstack.analytics, schemathesis, mmdb_writer" 2>/dev/null && return 0
  echo "Installing the Segment and RudderStack Python SDKs, schemathesis and mmdb-writer into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check segment-analytics-python==2.4.0 rudder-sdk-python==2.1.9 \
    schemathesis==4.32.5 mmdb-writer==0.2.7 netaddr==1.3.0
}

# promtool, from Debian's prometheus package, unpacked into the build folder without installing
# (or starting) the server: the tests check /metrics with `promtool check metrics`.
promtool_unpacked() {
  [ "${1:-build}" = "test" ] || return 0
  local dir=.build/promtool
  [ -x "$dir/usr/bin/promtool" ] && return 0
  echo "Unpacking promtool (Debian's prometheus package) into $dir" >&2
  local download
  download=$(mktemp -d)
  (cd "$download" && { apt-get download prometheus >/dev/null 2>&1 || { $sudo apt-get update -qq && apt-get download prometheus >/dev/null; }; })
  mkdir -p "$dir"
  dpkg-deb -x "$download"/prometheus_*.deb "$dir"
  rm -rf "$download"
}

# Tor's country files (geoip, geoip6) from Debian's tor-geoipdb, unpacked without installing
# the package (it depends on the Tor daemon). Skipped when Tor's own copy is there.
geoip_unpacked() {
  local dir=/usr/local/share/linkpulse/geoip
  [ -f /usr/share/tor/geoip ] && return 0
  [ -f "$dir/geoip" ] && [ -f "$dir/geoip6" ] && return 0
  echo "Unpacking the country data (Debian's tor-geoipdb) into $dir" >&2
  local download
  download=$(mktemp -d)
  (cd "$download" && { apt-get download tor-geoipdb >/dev/null 2>&1 || { $sudo apt-get update -qq && apt-get download tor-geoipdb >/dev/null; }; })
  dpkg-deb -x "$download"/tor-geoipdb_*.deb "$download/root"
  $sudo mkdir -p "$dir"
  $sudo cp "$download/root/usr/share/tor/geoip" "$download/root/usr/share/tor/geoip6" "$dir/"
  rm -rf "$download"
}

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

missing=()
for package in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  geoip_unpacked
  sdk_venv "${1:-build}"
  promtool_unpacked "${1:-build}"
  exit 0
fi

echo "Installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
geoip_unpacked
sdk_venv "${1:-build}"
promtool_unpacked "${1:-build}"
