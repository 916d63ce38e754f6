#!/usr/bin/env bash
# README command 2: install what the tests need, then run them. The tests start their own
# services (redis-server, the appliance, headless Chromium) on 127.0.0.1, inside a
# loopback-only network namespace (unshare -n, root): nothing can leave the machine, and
# WebRTC pairs 127.0.0.1 with 127.0.0.1 (see appliance/voice/ice.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --with moonshine-base-en  # the tests run every ASR engine
run=(.venv/bin/python -m pytest -q "$@")
set +e
if [ "$(id -u)" -eq 0 ] && unshare -n true 2>/dev/null; then
  unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${run[@]}"
else
  echo "test.sh: cannot create a loopback-only network namespace (needs root); WebRTC tests will be skipped" >&2
  "${run[@]}"
fi
rc=$?
# pytest exit 5 = no tests collected: a failure here.
[ $rc -eq 5 ] && { echo "no tests ran" >&2; exit 1; }
exit $rc
