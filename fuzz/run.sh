#!/usr/bin/env bash
# Run every fuzz target (or the ones named) for a bounded time each. Not run in CI.
#
#   bash fuzz/run.sh [-t SECONDS] [TARGET...]      (default: 600 s each, all targets)
#
# Targets: preset_validate, template_render, stream_parse, tool_pattern, tool_call,
# sse_stream, redact, redact_forms (see fuzz/README.md). Every build is `-O -a`: optimised, with debug
# assertions and overflow checks on (cargo-fuzz's `-O` alone turns them off, and an
# arithmetic overflow then wraps silently instead of failing the run).
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and nightly compiler features: with a
# stable toolchain they are unlocked with RUSTC_BOOTSTRAP=1 (the default here); set
# FUZZ_TOOLCHAIN=nightly to use a nightly toolchain instead. FUZZ_SANITIZER picks the
# sanitizer (default address; `none` runs about twice as many inputs per second).
#
# The corpus (fuzz/corpus/TARGET) is seeded from fuzz/seeds and the test fixtures by
# fuzz/seeds.py and grows between runs. A crash or timeout leaves its input in
# fuzz/artifacts/TARGET/ and makes this script exit 1; reproduce it with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run -O -a TARGET fuzz/artifacts/TARGET/crash-…
# Logs with libFuzzer's final statistics go to fuzz/logs/TARGET.log.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
seconds=600
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    -t) seconds=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(preset_validate template_render stream_parse tool_pattern tool_call sse_stream redact redact_forms)

if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then
  fuzz=(cargo "+$FUZZ_TOOLCHAIN" fuzz)
else
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
fi
sanitizer=${FUZZ_SANITIZER:-address}

cd "$root"
python3 "$here/seeds.py"
mkdir -p "$here/logs"
status=0
for target in "${targets[@]}"; do
  case $target in
    preset_validate) max_len=32768 ;;
    tool_pattern) max_len=256 ;;
    *) max_len=8192 ;;
  esac
  log=$here/logs/$target.log
  echo "== $target: $seconds s (log: fuzz/logs/$target.log)"
  # -timeout: an input that takes more than 10 s is a hang (reported as a crash);
  # -rss_limit_mb: one that needs more than 2 GB (ASan included) is a memory blow-up.
  if "${fuzz[@]}" run -O -a --sanitizer "$sanitizer" "$target" "$here/corpus/$target" -- \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
      -print_final_stats=1 >"$log" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  corpus=$(find "$here/corpus/$target" -type f | wc -l)
  echo "   $result: ${runs:-?} inputs (${rate:-?}/s), ${cov:-cov: ?}, corpus $corpus files"
  if [ $result = FAILED ]; then
    grep -E 'panicked at|ERROR: libFuzzer|SUMMARY|Test unit written' "$log" | head -5 | sed 's/^/   /'
  fi
done
exit $status
