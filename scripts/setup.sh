#!/usr/bin/env bash
# README command 1: install everything, then start the appliance on embedded defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/appliance serve "$@"
