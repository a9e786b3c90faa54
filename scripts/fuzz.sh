#!/usr/bin/env bash
# Builds the fuzz preset (clang, libFuzzer, ASan + UBSan; build-fuzz/) and runs every fuzz target for
# N seconds on a copy of its corpus (tests/fuzz/<format>/, seeds and regressions/, not
# regressions-pending/). Generated inputs and crash reproducers go to a temporary directory, never
# into the repository. Exits 1 if any target crashed, hung (-timeout=10 s), ran out of memory
# (-rss_limit_mb=2048) or hit a sanitizer report, and prints each reproducer's path.
#
# Usage: scripts/fuzz.sh [--if-available] [SECONDS] [FORMAT...]
#   SECONDS        per target (default 30, libFuzzer -max_total_time)
#   FORMAT         some of: onnx graph mcunet model target placement_csv plan tflite (default: all)
#   --if-available exit 0 with a message when clang++ cannot build libFuzzer binaries (scripts/test.sh)
# Environment: FUZZ_OUT=DIR keeps corpora, logs and artifacts in DIR (default: a new /tmp directory);
#   FUZZ_SEED=N (default 1) seeds libFuzzer's mutations, so a run starts with the same inputs each time
#   (FUZZ_SEED=0: a random seed, for long local campaigns);
#   FUZZ_KEEP_GOING=1 keeps fuzzing after a crash (libFuzzer -fork=1 -ignore_crashes=1 ...), to collect
#   every distinct crash of a long run; the exit code is still 1 if any was found.
# Reproduce a crash: build-fuzz/fuzz/fuzz_<format> <reproducer>; then save it as
# tests/fuzz/<format>/regressions/<name> (fixed) or tests/fuzz/<format>/regressions-pending/ (not yet).
set -euo pipefail
cd "$(dirname "$0")/.."

if_available=0
if [[ "${1:-}" == "--if-available" ]]; then
  if_available=1
  shift
fi
seconds="${1:-30}"
shift || true
all_formats=(onnx graph mcunet model target placement_csv plan tflite)
formats=("$@")
if ((${#formats[@]} == 0)); then formats=("${all_formats[@]}"); fi
for f in "${formats[@]}"; do
  [[ " ${all_formats[*]} " == *" $f "* ]] || { echo "fuzz.sh: unknown format '$f' (${all_formats[*]})" >&2; exit 1; }
done

# libFuzzer needs clang with its fuzzer runtime (Debian: clang, libclang-rt-14-dev).
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$probe_dir/p.cc"
if ! command -v clang++ >/dev/null ||
   ! clang++ -fsanitize=fuzzer,address,undefined "$probe_dir/p.cc" -o "$probe_dir/p" 2>"$probe_dir/err"; then
  msg="fuzz.sh: clang++ cannot build libFuzzer binaries (install the Debian packages clang and libclang-rt-14-dev: scripts/install-deps.sh)"
  if ((if_available)); then
    echo "$msg; fuzzing SKIPPED" >&2
    cat "$probe_dir/err" >&2 2>/dev/null || true
    exit 0
  fi
  echo "$msg" >&2
  exit 1
fi

targets=()
for f in "${formats[@]}"; do targets+=("fuzz_$f"); done
scripts/build.sh fuzz "${targets[@]}"

out="${FUZZ_OUT:-$(mktemp -d /tmp/sramplan-fuzz.XXXXXX)}"
mkdir -p "$out"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for f in "${formats[@]}"; do
  corpus="$out/$f/corpus"
  artifacts="$out/$f/artifacts"
  mkdir -p "$corpus" "$artifacts"
  # Copy the committed corpus (flattened: a/b.json -> a_b.json) next to what earlier runs in $out found.
  while IFS= read -r -d '' file; do
    rel="${file#tests/fuzz/$f/}"
    cp "$file" "$corpus/${rel//\//_}"
  done < <(find "tests/fuzz/$f" -type f -not -path '*/regressions-pending/*' -print0)
  args=(-max_total_time="$seconds" -seed="${FUZZ_SEED:-1}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$artifacts/")
  dict="tests/fuzz/$f.dict"
  [[ "$f" == model ]] && dict="tests/fuzz/graph.dict"
  [[ -f "$dict" ]] && args+=(-dict="$dict")
  if [[ "${FUZZ_KEEP_GOING:-0}" == 1 ]]; then
    args+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  fi
  log="$out/$f/fuzz.log"
  echo "fuzz.sh: fuzz_$f for ${seconds} s (corpus $corpus, log $log)" >&2
  rc=0
  "build-fuzz/fuzz/fuzz_$f" "${args[@]}" "$corpus" >"$log" 2>&1 || rc=$?
  # Executions: the final stats line, or in fork mode the last status line's "#N:".
  runs=$(grep -E '^stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}' || true)
  if [[ -z "$runs" ]]; then
    runs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  fi
  mapfile -t found < <(find "$artifacts" -type f | sort)
  if ((rc != 0 || ${#found[@]} > 0)); then
    failed+=("$f")
    echo "fuzz.sh: fuzz_$f FAILED (exit $rc, ${runs:-?} runs); log $log" >&2
    grep -E 'ERROR: |BUG: |runtime error|SUMMARY|terminate called|what\(\)' "$log" | head -20 >&2 || tail -20 "$log" >&2
    for a in "${found[@]}"; do
      echo "fuzz.sh: reproducer: $a   (rerun: build-fuzz/fuzz/fuzz_$f $a)" >&2
    done
  else
    echo "fuzz.sh: fuzz_$f OK: ${runs:-?} runs, no crash" >&2
  fi
done
if ((${#failed[@]} > 0)); then
  echo "fuzz.sh: crashes in: ${failed[*]} (artifacts under $out)" >&2
  exit 1
fi
if [[ -z "${FUZZ_OUT:-}" ]]; then
  rm -rf "$out"
  echo "fuzz.sh: all ${#formats[@]} targets ran ${seconds} s without a crash" >&2
else
  echo "fuzz.sh: all ${#formats[@]} targets ran ${seconds} s without a crash (corpora under $out)" >&2
fi
