#!/usr/bin/env bash
# The whole test suite: install, build the release preset and run every test with CTest, then build
# the asan preset (AddressSanitizer + UndefinedBehaviorSanitizer) and run every test there too.
# Last, scripts/fuzz.sh builds the fuzz preset (clang + libFuzzer) and runs each fuzz target for 30 s
# on its seed corpus (skipped, with a message, only when clang cannot build libFuzzer binaries).
# scripts/test.sh --no-asan skips the sanitizer and fuzzing passes (quicker, for local iteration).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
ctest --preset release -j "$(nproc)"
if [[ "${1:-}" != "--no-asan" ]]; then
  scripts/build.sh asan
  # The golden plans (label "golden": every bundled model x strategy x 3 targets, minutes of CPU in
  # release) run in the release pass only; under ASan they would take most of CI's time.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --preset asan -j "$(nproc)" -LE golden
  scripts/fuzz.sh --if-available 30
fi
echo "test.sh: all tests passed"
