# Sourced by the benches that run beside the bench kit (cold-start.sh, modern.sh, peers.sh): the
# kit copied into the work directory and built, and the layers and repositories made from it,
# each once and kept between runs. Expects `kit` (the kit's source), `work` and, for kit_repo,
# `bin` (the majordomus binary that writes a repository's scaffold).

# kit_peers [rmcp]: $work/peers, a writable copy of the kit, built by its build.sh (or only its
# rmcp peer, given `rmcp`), unless its rmcp peer is already there.
kit_peers() {
  [ -x "$work/peers/rmcp/target/release/peer-rmcp" ] && return
  rm -rf "$work/peers" && cp -r "$kit" "$work/peers" && chmod -R u+w "$work/peers"
  if [ "${1:-}" = rmcp ]; then
    (cd "$work/peers/rmcp" && cargo build --release --locked --quiet)
  else
    (cd "$work/peers" && ./build.sh)
  fi
}

# kit_repo N: sets `layer` to $work/layer-N (the kit's generated layer of N files) and `repo` to
# $work/repo-N (a git repository with a majordomus scaffold whose knowledge is those files).
kit_repo() {
  layer="$work/layer-$1"
  repo="$work/repo-$1"
  [ -d "$layer" ] || python3 "$work/peers/gen_layer.py" "$1" "$layer" >/dev/null
  if [ ! -d "$repo/.ai" ]; then
    rm -rf "$repo" && mkdir -p "$repo" && git -C "$repo" init -q
    "$bin" init --repo "$repo" >/dev/null
    mkdir -p "$repo/.ai/repo/knowledge/curated" && find "$layer" -maxdepth 1 -name "*.md" -print0 | xargs -0 cp -t "$repo/.ai/repo/knowledge/curated/"
    git -C "$repo" add -A && git -C "$repo" -c user.email=b@x -c user.name=b commit -qm layer
  fi
}
