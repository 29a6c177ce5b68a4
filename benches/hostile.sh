#!/usr/bin/env bash
# Hostile inputs stay cheap: every input of the adversarial tests (tests/integration/bounded_reads.rs,
# tests/integration/preset_catalog.rs, tests/integration/preset_parse.rs, tests/integration/preset_shape.rs,
# tests/conformance/core/template-fuel.yaml, the adversarial tests/cli/validate cases and
# the large files of benches/parse.rs), written to disk and given to the release binary's
# `validate`, one whole process each. Prints wall time, CPU time (user+sys) and peak RSS
# (median of N runs) against the budget: < 1 s of CPU and < 200 MB each.
#
#   bash benches/hostile.sh [-n RUNS]        (needs python3 to write the inputs)
#   NO_BUILD=1 bash benches/hostile.sh      (use target/release/agent-presets as it is)
#
# Output: a Markdown table on stdout (pasted into BENCHMARKS.md); exit 1 if any input
# is over budget.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=3
[ "${1:-}" = "-n" ] && runs=$2
bin=$root/target/release/agent-presets
[ -n "${NO_BUILD:-}" ] || (cd "$root" && cargo build --release --quiet)
work=$(mktemp -d /tmp/agent-presets-hostile.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/config"

# Each case: a folder $work/cases/NAME holding what `validate` is pointed at, and a file
# $work/cases/NAME.args with the arguments (relative to that folder).
python3 - "$work/cases" <<'PY'
import os, socket, sys
base = sys.argv[1]
MIB = 1024 * 1024

def case(name, args, files=None):
    d = os.path.join(base, name)
    os.makedirs(d, exist_ok=True)
    for rel, data in (files or {}).items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
    with open(d + ".args", "w") as f:
        f.write("\n".join(args))
    return d

# tests/integration/bounded_reads.rs and tests/integration/preset_catalog.rs: what a path can be.
d = case("sparse-1.5GB", ["giant.yaml"])
with open(os.path.join(d, "giant.yaml"), "wb") as f:
    f.truncate(1_500_000_000)
d = case("fifo", ["fifo.yaml"]); os.mkfifo(os.path.join(d, "fifo.yaml"))
d = case("link-to-fifo", ["link.yaml"]); os.mkfifo(os.path.join(d, "fifo")); os.symlink("fifo", os.path.join(d, "link.yaml"))
for dev in ("zero", "null", "urandom"):
    d = case(f"dev-{dev}", [f"/dev/{dev}"])
d = case("link-to-dev-zero", ["zero.yaml"]); os.symlink("/dev/zero", os.path.join(d, "zero.yaml"))
d = case("socket", ["socket.yaml"])
s = socket.socket(socket.AF_UNIX); s.bind(os.path.join(d, "socket.yaml")); s.close()
d = case("dangling-link", ["dangling.yaml"]); os.symlink(os.path.join(d, "nowhere"), os.path.join(d, "dangling.yaml"))
d = case("directory", ["folder.yaml/"]); os.makedirs(os.path.join(d, "folder.yaml"))
d = case("link-to-proc-status", ["status.yaml"]); os.symlink("/proc/self/status", os.path.join(d, "status.yaml"))
d = case("link-to-proc-pagemap", ["pagemap.yaml"]); os.symlink("/proc/self/pagemap", os.path.join(d, "pagemap.yaml"))
d = case("hostile-checkout (discovery)", [], {".agent-presets/fine.yaml": "version: 1\nname: fine\n"})
os.mkfifo(os.path.join(d, ".agent-presets/fifo.yaml"))
os.symlink("/dev/zero", os.path.join(d, ".agent-presets/zero.yaml"))
os.symlink("/proc/self/pagemap", os.path.join(d, ".agent-presets/evil.yaml"))
os.makedirs(os.path.join(d, ".agent-presets/folder.yaml"))
d = case("loose-file-1MiB+1", ["big.yaml"], {"big.yaml": "#" * (MIB + 1)})

# tests/integration/preset_parse.rs
text = "version: 1\nname: big\n"
while len(text) <= MIB:
    text += "# padding padding padding padding padding padding padding padding\n"
case("oversize-file", ["big.yaml"], {"big.yaml": text})
text = "version: 1\nname: big\n"
text += "#" * (MIB - len(text) - 1) + "\n"
case("exactly-1MiB", ["big.yaml"], {"big.yaml": text})
text = "version: 1\nname: bomb\nzz:\n  - &a0 [lol, lol, lol]\n"
for i in range(1, 10):
    text += f"  - &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]\n"
case("alias-bomb-10^10", ["bomb.yaml"], {"bomb.yaml": text})
text = "version: 1\nname: bomb\ndescription: &a0 lol\ntools:\n  allow: [" + ", ".join(["*a0"] * 2000) + "]\n"
case("alias-bomb-typed-field", ["bomb.yaml"], {"bomb.yaml": text})
case("deep-nesting-100", ["foo.yaml"], {"foo.yaml": "version: 1\nname: foo\ntools:\n  allow: " + "[" * 100 + "]" * 100 + "\n"})

# tests/integration/preset_shape.rs
def aliases(n):
    t = "version: 1\nname: x\ntools:\n  allow: [&t grep]\n  deny:\n"
    return t + "    - *t\n" * n
case("aliases-1000", ["x.yaml"], {"x.yaml": aliases(1000)})
case("aliases-1001", ["x.yaml"], {"x.yaml": aliases(1001)})
names = ", ".join(["grep"] * 998)
case("alias-expansion-101x1000-events", ["x.yaml"], {"x.yaml": f"version: 1\nname: x\ntools:\n  allow: &l [{names}]\nzz:\n" + "  - *l\n" * 101})
big = "x" * 8192
case("alias-expansion-600x8KiB-text", ["x.yaml"], {"x.yaml": f"version: 1\nname: x\ndescription: &d {big}\nzz:\n" + "  - *d\n" * 600})
deep = "[" * 25 + "x" + "]" * 25
case("nesting-through-aliases", ["x.yaml"], {"x.yaml": f"version: 1\nname: x\nzz: &d {deep}\nyy:\n  a:\n    b:\n      c:\n        d:\n          e:\n            f:\n              g:\n                h:\n                  i:\n                    j:\n                      k: *d\n"})
text = "version: 1\nname: big\ntools:\n  allow:\n" + "".join(f"    - tool{i}\n" for i in range(20000))
text += "persona:\n  sections:\n" + "".join(f"    - name: s{i}\n      order: {i}\n      text: |\n        line one\n        line {{{{ two }}}}\n" for i in range(2000))
case("20k-unknown-tools+2k-sections (20k diagnostics)", ["big.yaml"], {"big.yaml": text})

# The same, scaled to the file-size limit: 80,000 unknown tools in 1 MiB (80,000 diagnostics).
case("80k-unknown-tools-in-1MiB (80k diagnostics)", ["big.yaml"], {"big.yaml": "version: 1\nname: big\ntools:\n  allow:\n" + "".join(f"    - t{i}\n" for i in range(80000))})

# benches/parse.rs's sections, scaled to the limit: 25,000 one-line sections in 1 MiB (valid).
case("25k-sections-in-1MiB", ["big.yaml"], {"big.yaml": "version: 1\nname: big\npersona:\n  sections:\n" + "".join(f"  - {{name: s{i}, order: {i}, text: x}}\n" for i in range(25000))})

# tests/conformance/core/template-fuel.yaml, as a preset
case("template-fuel", ["fuel.yaml"], {"fuel.yaml": "version: 1\nname: fuel\npersona:\n  sections:\n    - name: loops\n      order: 0\n      text: \"{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}x{% endfor %}{% endfor %}{% endfor %}\"\n"})

# benches/parse.rs, largest sizes
case("40k-list-entries", ["big.yaml"], {"big.yaml": "version: 1\nname: big\ntools:\n  allow:\n" + "    - grep\n" * 40000})
case("10k-sections", ["big.yaml"], {"big.yaml": "version: 1\nname: big\npersona:\n  sections:\n" + "".join(f"    - {{name: s{i}, order: {i}, text: \"Section {i} of the prompt.\"}}\n" for i in range(10000))})
PY
# The adversarial tests/cli/validate cases, as they are.
for c in alias-limit nul-byte invalid-utf8 duplicate-keys-all shape-all-problems-at-once; do
  mkdir -p "$work/cases/cli-$c" && cp -r "$root/tests/cli/validate/$c/." "$work/cases/cli-$c/"
  rm -f "$work/cases/cli-$c/expected.json"
  : >"$work/cases/cli-$c.args"
done

over=0
printf '| input | exit | wall (median of %d) | CPU (user+sys) | peak RSS | within budget |\n|---|---:|---:|---:|---:|---|\n' "$runs"
for args_file in "$work"/cases/*.args; do
  name=$(basename "$args_file" .args)
  dir=${args_file%.args}
  mapfile -t args <"$args_file"
  walls=() rss=() cpus=() code=0
  for ((i = 0; i < runs; i++)); do
    (cd "$dir" && AGENT_PRESETS_CONFIG_DIR="$work/config" /usr/bin/time -o "$work/time" -f '%e %M %x %U %S' \
      timeout 60 "$bin" validate --format json "${args[@]}" >/dev/null 2>&1) || true
    line=$(tail -1 "$work/time")
    walls+=("$(cut -d' ' -f1 <<<"$line")"); rss+=("$(cut -d' ' -f2 <<<"$line")"); code=$(cut -d' ' -f3 <<<"$line")
    cpus+=("$(awk '{print $4 + $5}' <<<"$line")")
  done
  wall=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  cpu=$(printf '%s\n' "${cpus[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  kib=$(printf '%s\n' "${rss[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  ok=yes
  # The budget is on CPU time (wall time on a shared machine measures the neighbours).
  if awk -v c="$cpu" -v k="$kib" 'BEGIN {exit !(c >= 1 || k >= 200 * 1000 * 1000 / 1024)}'; then ok=NO over=1; fi
  printf '| %s | %s | %s s | %s s | %.1f MiB | %s |\n' "$name" "$code" "$wall" "$cpu" "$(awk -v k="$kib" 'BEGIN {print k / 1024}')" "$ok"
done
exit $over
