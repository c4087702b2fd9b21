#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Linkpulse builds and tests against, when missing:
# the SQLite and zlib headers and the time zone database (build), and for the test suite Chromium
# with its WebDriver (the dashboard is tested in a real headless browser).
# Usage: ops/install-deps.sh [build|test]
set -euo pipefail

want=(libsqlite3-dev zlib1g-dev pkg-config tzdata)
if [ "${1:-build}" = "test" ]; then
  # The dashboard's browser tests drive headless Chromium through chromedriver.
  want+=(chromium chromium-driver fonts-dejavu-core)
fi

missing=()
for package in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
