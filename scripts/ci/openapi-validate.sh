#!/usr/bin/env bash
# Validates `majordomus openapi` with a real OpenAPI 3.1 validator (openapi-spec-validator, PyPI),
# installed into a throwaway virtual environment.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${MAJORDOMUS_CI_VENV:-/tmp/majordomus-ci-venv}
if [ ! -x "$venv/bin/openapi-spec-validator" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check openapi-spec-validator
fi
doc=$(mktemp --suffix=.json)
trap 'rm -f "$doc"' EXIT
(cd "$root" && cargo run --quiet -- openapi) >"$doc"
"$venv/bin/openapi-spec-validator" "$doc"
echo "openapi-validate: ok: $(wc -c <"$doc") bytes validate as OpenAPI 3.1"
