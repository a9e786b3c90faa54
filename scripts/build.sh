#!/usr/bin/env bash
# Configures and builds one preset (default: release -> build/sramplan). Usage: scripts/build.sh [preset]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
jobs="${SRAMPLAN_JOBS:-$(nproc)}"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
