#!/usr/bin/env bash
# Issue 28's replay target, measured as a user runs it: whole processes, side by side in
# one run. `agent-presets validate` of 100 presets against `agent-presets test` of 100
# ten-step test cases on the same presets (each case's cassette recorded by
# benches/replay.rs against a scripted model), alternating, N times each; prints the
# median wall and CPU time, each one's peak RSS, and the ratios.
#
#   bash benches/replay_cli.sh [--steps S] [-n N]
#
# Environment: CARGO (default cargo), WORK (default /tmp/agent-presets-bench/replay).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
CARGO=${CARGO:-cargo}
WORK=${WORK:-/tmp/agent-presets-bench/replay}
steps=10 n=21
while [ $# -gt 0 ]; do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    -n) n=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "replay_cli.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

cd "$root"
"$CARGO" build --release --quiet
bench=$("$CARGO" bench --bench replay --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "replay" and m.get("executable"):
        print(m["executable"])')
bin=$root/target/release/agent-presets
rm -rf "$WORK"
mkdir -p "$WORK"
# The presets, the cases and their cassettes (nothing timed).
"$bench" --steps "$steps" --reps 0 --keep "$WORK" >/dev/null

cd "$WORK"
python3 - "$bin" "$n" "$steps" <<'EOF'
import os, statistics, subprocess, sys, time

binary, n, steps = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def once(args):
    start = time.perf_counter()
    p = subprocess.Popen([binary, *args, "--no-user"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"`agent-presets {' '.join(args)}` failed:\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss

runs = {"validate": [], "test": []}
for _ in range(n):
    for name in runs:
        runs[name].append(once([name]))

def med(name, i):
    return statistics.median(r[i] for r in runs[name])

v, t = runs["validate"], runs["test"]
for name in runs:
    print(f"{name}: wall {med(name, 0) * 1e3:.1f} ms, CPU {med(name, 1) * 1e3:.1f} ms, "
          f"peak RSS {max(r[2] for r in runs[name]) / 1024:.1f} MiB (median of {n})")
print(f"test of 100 cases of {steps} steps / validate of the 100 presets: "
      f"wall {med('test', 0) / med('validate', 0):.2f}x, CPU {med('test', 1) / med('validate', 1):.2f}x "
      f"(target: wall <= 2x, peak RSS < 64 MiB)")
EOF
