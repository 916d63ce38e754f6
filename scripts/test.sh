#!/usr/bin/env bash
# README command 2: install what the tests need, lint, then run them. The tests start their
# own services (redis-server, the appliance, headless Chromium) on 127.0.0.1, inside a
# loopback-only network namespace (unshare -n, root): nothing can leave the machine, and
# WebRTC pairs 127.0.0.1 with 127.0.0.1 (see appliance/voice/ice.py).
#
# No arguments: ruff (lint and format check, rules in pyproject.toml), the fast suite
# (-m "not e2e", 4 workers: most of its time is waiting on real-time audio, not CPU), its
# own time printed, then the end-to-end tests (-m e2e, one process: one LLM server and one
# Chromium for the session). With arguments: pytest with those arguments, nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --with moonshine-base-en  # the tests run every ASR engine

in_namespace() {
  if [ "$(id -u)" -eq 0 ] && unshare -n true 2>/dev/null; then
    unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$@"
  else
    echo "test.sh: cannot create a loopback-only network namespace (needs root); WebRTC tests will be skipped" >&2
    "$@"
  fi
}

pytest_in_namespace() {  # pytest exit 5 = no tests collected: a failure here
  local rc=0
  in_namespace .venv/bin/python -m pytest -q "$@" || rc=$?
  [ $rc -eq 5 ] && { echo "no tests ran" >&2; return 1; }
  return $rc
}

if [ $# -gt 0 ]; then
  pytest_in_namespace "$@"
  exit
fi

.venv/bin/ruff check appliance tests scripts
.venv/bin/ruff format --check appliance tests scripts

log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
pytest_in_namespace -m "not e2e" -n 4 -p no:cacheprovider | tee "$log" || rc=$?
echo "test.sh: fast suite (-m 'not e2e'): $(grep -oE '[0-9]+ passed.* in [0-9.]+s' "$log" | tail -1)"
[ $rc -eq 0 ] || exit $rc
pytest_in_namespace -m e2e
