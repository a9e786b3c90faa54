#!/usr/bin/env bash
# Configures and builds one preset (default: release -> build/sramplan).
# Usage: scripts/build.sh [preset] [target...]   (no target: everything, tests and benchmarks included)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
jobs="${SRAMPLAN_JOBS:-$(nproc)}"
cmake --preset "$preset" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build --preset "$preset" -j "$jobs" "${targets[@]}"
