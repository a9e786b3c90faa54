#!/usr/bin/env bash
# The whole test suite: install, build (release preset), run every test with CTest.
# scripts/test.sh --asan additionally builds the asan preset (ASan + UBSan) and runs the suite there.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
ctest --preset release -j "$(nproc)"
if [[ "${1:-}" == "--asan" ]]; then
  scripts/build.sh asan
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -j "$(nproc)"
fi
