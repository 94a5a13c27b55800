#!/usr/bin/env bash
# Retakes the README's pictures of the Cockpit (docs/screenshots/): one of every kind of page,
# in a real headless Chromium through playwright-core (tests/browser/screenshots.js), over a
# demonstration repository the script makes and removes, served by the debug binary of this
# checkout. Installs what it needs as scripts/ci/cockpit-browser.sh does: Debian's chromium,
# nodejs and npm when missing, and the pinned packages of tests/browser/package.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if [ ! -x "$CHROMIUM" ]; then
  echo "cockpit-screenshots: installing Debian's chromium"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "cockpit-screenshots: installing Debian's nodejs and npm"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

(cd "$root/tests/browser" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
(cd "$root" && cargo build --quiet)
export MAJORDOMUS_BIN=${MAJORDOMUS_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/majordomus}
node "$root/tests/browser/screenshots.js"
