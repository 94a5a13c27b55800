# Sourced by the CI steps that drive majordomus with the official MCP Python SDK
# (mcp-python-client.sh, skills-python-client.sh, mcp-python-live.sh): one throwaway virtual
# environment holding the SDK's 2.x (`mcp>=2.3,<3`, PyPI), made once and reused by later runs.
# Sets `venv`; MAJORDOMUS_CI_VENV names another place for it.
venv=${MAJORDOMUS_CI_VENV:-/tmp/majordomus-ci-venv}

# Creates the environment unless it is there, then installs the SDK unless a 2.x is installed.
python_sdk() {
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp").split(".")[0] != "2")' 2>/dev/null; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'mcp>=2.3,<3'
  fi
}
