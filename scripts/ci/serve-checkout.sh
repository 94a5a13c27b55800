# Sourced by the CI steps that drive `majordomus serve` from bash: `serve_checkout LOG` builds the
# debug binary, starts `serve --port 0 --repo .` on this checkout in the background with its
# stderr in LOG, and sets SERVER_PID and PORT from the line that names the port (a server that does
# not start fails the step, its log shown); `stop_served` ends it, for the step's exit trap.
SERVER_PID=
PORT=

serve_checkout() {
    local log=$1
    cargo build --quiet
    : >"$log"
    target/debug/majordomus serve --port 0 --repo . 2>"$log" &
    SERVER_PID=$!
    for _ in $(seq 1 300); do
        PORT=$(sed -n '1s/^majordomus serving .* on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")
        [ -n "$PORT" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$PORT" ]; then
        echo "majordomus serve did not start:" >&2
        cat "$log" >&2
        exit 1
    fi
}

stop_served() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
}
