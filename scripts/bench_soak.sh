#!/usr/bin/env bash
# appliance bench soak inside a loopback-only network namespace (WebRTC on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
exec unshare -n sh -c 'ip link set lo up && exec "$@"' sh .venv/bin/appliance bench soak "$@"
