#!/usr/bin/env bash
# The Cockpit in a real headless Chromium: runs tests/browser/cockpit.spec.js
# (playwright-core and axe-core, versions pinned in tests/browser/package.json) against the debug
# binary serving this checkout. Installs Debian's chromium when /usr/bin/chromium is missing.
# The README's screenshots are retaken by scripts/cockpit-screenshots.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if [ ! -x "$CHROMIUM" ]; then
  echo "cockpit-browser: installing Debian's chromium"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "cockpit-browser: installing Debian's nodejs and npm"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "cockpit-browser: playwright-core needs Node.js 20 or newer; this is $(node --version)" >&2
  exit 1
fi

(cd "$root/tests/browser" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
(cd "$root" && cargo build --quiet)
export MAJORDOMUS_BIN=${MAJORDOMUS_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/majordomus}
node "$root/tests/browser/cockpit.spec.js"
node "$root/tests/browser/writer-form.js"
