#!/usr/bin/env bash
# Ours against the baselines, in ONE run on this machine, with the ratios against the
# targets of issue 10 (see BENCHMARKS.md for the figures and how to read them).
#
#   bash benches/compare.sh [--quick] [--callgrind] [--install-dsh]
#
# Ours (always): the per-step loop of `benches/workload.rs` on the shared workload
# (benches/fixtures/workload.json) and on the built-in `standard`; whole-process
# `validate` of 1,000 generated presets and of the built-ins (release build).
#
# Baselines (only when the shared bench folder is there; BENCH_DIR, default
# ../shared/bench next to the repository): the Python seed and jinja2 assemblers, the
# plain-JS one, DSH's npm package (when DSH_DIR holds it: see --install-dsh), the Python
# validation script (PyYAML C loader), and `node -e ''`. (From a git worktree one level
# deeper, ../../shared/bench is tried too.) Without the folder, only our
# figures are printed and every ratio says "skipped". The repository never needs it to
# build or test.
#
# Options:
#   --quick        fewer repetitions (a smoke test, not figures to quote)
#   --callgrind    also count instructions per step with valgrind (stable under load)
#   --install-dsh  npm-install DSH's packages into DSH_DIR (default /tmp/dsh-bench,
#                  outside the repository) if they are not there yet
#
# Environment: BENCH_DIR, DSH_DIR, PRESETS_DIR (default /tmp/agent-presets-bench/p1000g),
# OUT (JSON lines, default /tmp/agent-presets-bench/results.jsonl), CARGO (default cargo).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${BENCH_DIR:-}" ]; then
  # ../shared/bench next to the repository (or next to the folder of worktrees).
  for d in "$root/../shared/bench" "$root/../../shared/bench"; do
    [ -f "$d/workload.py" ] && BENCH_DIR=$(cd "$d" && pwd) && break
  done
  BENCH_DIR=${BENCH_DIR:-$root/../shared/bench}
fi
DSH_DIR=${DSH_DIR:-/tmp/dsh-bench}
WORK=${WORK:-/tmp/agent-presets-bench}
PRESETS_DIR=${PRESETS_DIR:-$WORK/p1000g}
OUT=${OUT:-$WORK/results.jsonl}
CARGO=${CARGO:-cargo}
STEPS=20000 REPS=5 PROC_N=10 PROC_N_BIG=5
quick=0 callgrind=0 install_dsh=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1 STEPS=5000 REPS=3 PROC_N=3 PROC_N_BIG=2 ;;
    --callgrind) callgrind=1 ;;
    --install-dsh) install_dsh=1 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$WORK"
: >"$OUT"
have_bench=0
[ -f "$BENCH_DIR/workload.py" ] && have_bench=1

say() { printf '%s\n' "$*" >&2; }
record() { tee -a "$OUT"; }

say "# machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
say "# $(rustc -V); $(command -v python3 >/dev/null && python3 -V 2>&1); node $(command -v node >/dev/null && node -v)"
if [ $have_bench = 1 ]; then
  say "# baselines: $BENCH_DIR"
else
  say "# baselines: SKIPPED ($BENCH_DIR not found; set BENCH_DIR to the shared bench folder)"
fi

# ---------------------------------------------------------------- build
say "## building (release)"
(cd "$root" && $CARGO build --release --quiet)
bin=$root/target/release/agent-presets
bench_exe=$(cd "$root" && $CARGO bench --bench workload --no-run --message-format=json 2>/dev/null \
  | grep '"kind":\["bench"\]' | grep '"name":"workload"' \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$bench_exe" ] || { say "compare.sh: could not build benches/workload.rs"; exit 1; }

# ---------------------------------------------------------------- whole-process timer
# proc_time: N runs after one warm-up; prints {"wall_s":[min,median,max],"peak_rss_kib":[...],...}.
proc_time() {
  local n=$1; shift
  if [ $have_bench = 1 ]; then
    python3 "$BENCH_DIR/proc_time.py" -n "$n" --json -- "$@"
  else
    # Fallback without the shared timer: GNU time, one warm-up, median of N.
    "$@" >/dev/null 2>&1 || true
    local i walls=() rss=() codes=()
    for ((i = 0; i < n; i++)); do
      local line
      /usr/bin/time -o "$WORK/time" -f '%e %M %x' "$@" >/dev/null 2>&1 || true
      line=$(tail -1 "$WORK/time")
      walls+=("$(cut -d' ' -f1 <<<"$line")"); rss+=("$(cut -d' ' -f2 <<<"$line")"); codes+=("$(cut -d' ' -f3 <<<"$line")")
    done
    local w r
    w=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[1] "," a[int((NR+1)/2)] "," a[NR]}')
    r=$(printf '%s\n' "${rss[@]}" | sort -g | awk '{a[NR]=$1} END {print a[1] "," a[int((NR+1)/2)] "," a[NR]}')
    printf '{"cmd":"%s","n":%d,"exit_codes":[%s],"wall_s":[%s],"peak_rss_kib":[%s]}\n' \
      "$*" "$n" "$(printf '%s\n' "${codes[@]}" | sort -u | paste -sd,)" "$w" "$r"
  fi
}

# ---------------------------------------------------------------- per step
say "## per step, in-process (median of $REPS x $STEPS steps)"
"$bench_exe" --loop --steps "$STEPS" --reps "$REPS" | record
if [ $callgrind = 1 ]; then
  if command -v valgrind >/dev/null; then
    say "## instructions per step (callgrind, 1,000 steps + 100 warm-up per loop)"
    for kind in unchanged model date; do
      fn=steps_unchanged; [ $kind = model ] && fn=steps_model_changes
      [ $kind = date ] && fn=steps_date_changes
      cg=$WORK/callgrind.$kind.out
      valgrind --tool=callgrind --callgrind-out-file="$cg" --collect-atstart=no \
        "--toggle-collect=*workload::$fn*" "$bench_exe" --loop --only "$kind" --steps 1000 --reps 1 \
        >/dev/null 2>"$WORK/callgrind.$kind.log"
      ir=$(sed -n 's/^summary: *//p' "$cg" | awk '{print $1}')
      printf '{"callgrind":"%s","instructions_per_step":%d}\n' "$kind" $((ir / 1100)) | record
    done
  else
    say "(--callgrind: valgrind not installed, skipped)"
  fi
fi
if [ $have_bench = 1 ]; then
  (cd "$BENCH_DIR" && python3 py_seed_assembler.py --mode seed --steps "$STEPS" --reps "$REPS" --json) | record
  (cd "$BENCH_DIR" && python3 py_seed_assembler.py --mode jinja2 --steps "$STEPS" --reps "$REPS" --json) | record
  node "$BENCH_DIR/dsh_assembler.mjs" --mode plainjs --steps "$STEPS" --reps "$REPS" --json | record
  if [ $install_dsh = 1 ] && [ ! -d "$DSH_DIR/node_modules/@deepseek-ai/dsh-system-prompt" ]; then
    case $(cd "$(dirname "$DSH_DIR")" 2>/dev/null && pwd)/ in
      "$root"/*) say "compare.sh: DSH_DIR must be outside the repository"; exit 2 ;;
    esac
    mkdir -p "$DSH_DIR"
    (cd "$DSH_DIR" && npm init -y >/dev/null && npm install --no-audit --no-fund \
      @deepseek-ai/dsh-system-prompt@0.1.0-rc.8 @deepseek-ai/cordis@4.0.4 \
      @deepseek-ai/dsh-scope@0.1.0-rc.8 @deepseek-ai/dsh-llm@0.1.0-rc.8 \
      @deepseek-ai/dsh-invariants@0.1.0-rc.8 >/dev/null)
  fi
  if [ -d "$DSH_DIR/node_modules/@deepseek-ai/dsh-system-prompt" ]; then
    DSH_DIR="$DSH_DIR" node "$BENCH_DIR/dsh_assembler.mjs" --mode dsh --steps "$STEPS" --reps "$REPS" --json | record
  else
    say "(DSH: not installed in $DSH_DIR; run with --install-dsh, see ../shared/bench/README.md)"
  fi
fi

# ---------------------------------------------------------------- validate
# Every run in an empty directory with an empty config dir: no project or user presets.
empty=$WORK/empty-project
mkdir -p "$empty/config"
run_validate() { (cd "$empty" && AGENT_PRESETS_CONFIG_DIR="$empty/config" proc_time "$@"); }
if [ $have_bench = 1 ]; then
  [ -f "$PRESETS_DIR/gen-standard.yaml" ] ||
    python3 "$BENCH_DIR/gen_presets.py" 1000 "$PRESETS_DIR" --roots gen-standard,gen-minimal >/dev/null
fi
if [ -f "$PRESETS_DIR/gen-standard.yaml" ]; then
  say "## validate 1,000 presets ($PRESETS_DIR), whole process"
  run_validate "$PROC_N_BIG" "$bin" --preset-dir "$PRESETS_DIR" validate --format json | sed 's/^{/{"what":"ours-validate-1000",/' | record
  if [ $have_bench = 1 ]; then
    (cd "$BENCH_DIR" && proc_time "$PROC_N_BIG" python3 py_validate_baseline.py "$PRESETS_DIR" --quiet --loader csafe) |
      sed 's/^{/{"what":"python-validate-1000-csafe",/' | record
  fi
else
  say "(validate 1,000: no generated presets; needs gen_presets.py from the shared bench folder)"
fi
say "## validate the built-ins, whole process"
run_validate "$PROC_N" "$bin" validate | sed 's/^{/{"what":"ours-validate-builtins",/' | record
if [ $have_bench = 1 ]; then
  proc_time "$PROC_N" node -e '' | sed 's/^{/{"what":"node-e",/' | record
fi

# ---------------------------------------------------------------- ratios
say "## ratios against the targets (issue 10)"
python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    by[r.get("baseline") or r.get("what") or r.get("callgrind")] = r
ours = by.get("rust-agent-presets", {})
def ns(key, field):
    v = by.get(key, {}).get(field)
    return float(v) if v is not None else None
def wall(key):
    r = by.get(key)
    return r["wall_s"][1] if r else None
def rss(key):
    r = by.get(key)
    return r["peak_rss_kib"][1] / 1024 if r else None
def fmt_ns(v):
    return "—" if v is None else (f"{v/1000:.2f} µs" if v >= 1000 else f"{v:.0f} ns")
def fmt_s(v):
    return "—" if v is None else (f"{v*1000:.1f} ms" if v < 1 else f"{v:.2f} s")
lines = []
def row(work, mine, theirs, yard, target, fmt):
    if mine is None or theirs is None:
        lines.append((work, fmt(mine), yard, fmt(theirs), "skipped", f"{target}", "SKIPPED"))
        return
    ratio = theirs / mine
    ok = ratio >= target
    lines.append((work, fmt(mine), yard, fmt(theirs), f"{ratio:.1f}x", f">= {target}x", "met" if ok else "NOT MET"))
if not ours.get("same_bytes_as_baselines", False):
    print("WARNING: our bytes differ from the baselines' (see the JSON line above)")
step = ns("rust-agent-presets", "step_ns_median")
model = ns("rust-agent-presets", "model_change_ns_median")
date = ns("rust-agent-presets", "standard_date_change_ns_median")
seed = ns("python-seed", "step_ns_median")
dsh = ns("node-dsh", "step_ns_median")
row("unchanged step (workload)", step, seed, "Python seed", 100, fmt_ns)
row("unchanged step (workload)", step, dsh, "DSH npm", 300, fmt_ns)
row("model changes (workload, all re-rendered + fingerprint)", model, seed, "Python seed", 4, fmt_ns)
row("only the date changes (standard)", date, seed, "Python seed", 8.9, fmt_ns)
row("validate 1,000 presets, whole process", wall("ours-validate-1000"), wall("python-validate-1000-csafe"), "Python + libyaml", 20, fmt_s)
row("validate the built-ins, whole process", wall("ours-validate-builtins"), wall("node-e"), "node -e ''", 12, fmt_s)
w = max(len(l[0]) for l in lines)
print(f"{'work':{w}}  {'ours':>10}  {'yardstick':17} {'theirs':>10}  {'ratio':>7}  {'target':>8}  status")
for l in lines:
    print(f"{l[0]:{w}}  {l[1]:>10}  {l[2]:17} {l[3]:>10}  {l[4]:>7}  {l[5]:>8}  {l[6]}")
def cpu(key):
    r = by.get(key)
    return r["cpu_s"][1] if r and "cpu_s" in r else None
for mine, theirs, what in (("ours-validate-1000", "python-validate-1000-csafe", "validate 1,000"),
                           ("ours-validate-builtins", "node-e", "validate the built-ins vs node -e ''")):
    if cpu(mine) and cpu(theirs):
        print(f"CPU time (user+sys, steadier under load), {what}: ours {fmt_s(cpu(mine))}, theirs {fmt_s(cpu(theirs))}: {cpu(theirs) / cpu(mine):.1f}x")
mem = rss("ours-validate-1000")
if mem is not None:
    print(f"peak RSS, validate 1,000: {mem:.1f} MiB (target < 64 MB: {'met' if mem * 1.048576 < 64 else 'NOT MET'})")
for k in ("ours-validate-builtins", "python-validate-1000-csafe", "node-e"):
    if by.get(k):
        print(f"peak RSS, {k}: {rss(k):.1f} MiB")
for k in ("python-jinja2", "node-plainjs"):
    if by.get(k) and step:
        print(f"unchanged step vs {k}: {by[k]['step_ns_median'] / step:.0f}x (model change: {by[k]['step_ns_median'] / model:.1f}x)")
for k in ("unchanged", "model", "date"):
    if by.get(k):
        print(f"instructions per step ({k}): {by[k]['instructions_per_step']:,}")
codes = {k: by[k].get("exit_codes") for k in ("ours-validate-1000", "ours-validate-builtins") if by.get(k)}
if any(c != [0] for c in codes.values()):
    print(f"WARNING: validate exit codes {codes} (every preset should be valid)")
PY
say "(JSON lines: $OUT)"
