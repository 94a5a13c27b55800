# majordomus — common tasks. `just` lists them.

default:
    @just --list

# Build the binary (debug)
build:
    cargo build

# Run the test suite (the README's test command)
test:
    cargo test

# Formatting and lints, as CI runs them
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings

# Everything CI checks
check: lint test
    bash scripts/ci/openapi-validate.sh
    bash scripts/ci/mcp-python-client.sh
    bash scripts/ci/build-refusal.sh
    bash scripts/ci/rerun-if-changed.sh
    bash scripts/ci/cockpit-browser.sh

# The Cockpit in a real headless Chromium
browser:
    bash scripts/ci/cockpit-browser.sh

# Retake the README's Cockpit screenshots (docs/screenshots/)
screenshots:
    bash scripts/cockpit-screenshots.sh

# Fuzz one target (mcp_message, layer_file, http_query, yaml_depth, configuration) for a while; needs cargo-fuzz
fuzz target seconds="60":
    bash scripts/fuzz.sh {{target}} {{seconds}}

# Rewrite every committed artefact a surface change touches, check them, grade the version
# (`just bless --bump` writes the bump; `--full` ends with the whole suite). Review the diff!
bless *args:
    bash scripts/bless.sh {{args}}

# Benchmarks in process: dispatch, the index, the MCP dispatcher, Cockpit renders; and the edit loop
bench:
    cargo bench --bench dispatch
    cargo bench --bench index
    cargo bench --bench mcp_ops
    cargo bench --bench cockpit
    cargo bench --bench search
    cargo bench --bench generation
    bash scripts/ci/rerun-if-changed.sh

# Benchmarks against the peer kit (../shared/bench): stdio side by side, HTTP under wrk load
bench-peers:
    bash scripts/bench/peers.sh 10 5 rmcp floor
    bash scripts/bench/payload-floor.sh
    bash scripts/bench/http.sh 30 64
    python3 scripts/bench/startup.py target/release/majordomus .
    python3 scripts/bench/transition.py target/release/majordomus 60

# Print the OpenAPI document
openapi:
    cargo run --quiet -- openapi

# The published packages from this checkout: the dist binary, the npm packages and the wheel, in dist/
dist:
    bash scripts/dist.sh

# Fail on leftovers that must not land
forbid:
    ! grep -rnE 'dbg!\(|todo!\(|unimplemented!\(|#\[ignore' src tests build.rs benches
