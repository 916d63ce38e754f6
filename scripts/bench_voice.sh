#!/usr/bin/env bash
# appliance bench voice inside a loopback-only network namespace (WebRTC on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
# APPLIANCE: the appliance command to run (default: this clone's .venv).
exec unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${APPLIANCE:-.venv/bin/appliance}" bench voice "$@"
