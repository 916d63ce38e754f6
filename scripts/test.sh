#!/usr/bin/env bash
# README command 2: install what the tests need, then run them. Tests start their own
# services (redis-server, the appliance, headless Chromium) on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
set +e
.venv/bin/python -m pytest -q "$@"
rc=$?
# pytest exit 5 = no tests collected: a failure here.
[ $rc -eq 5 ] && { echo "no tests ran" >&2; exit 1; }
exit $rc
