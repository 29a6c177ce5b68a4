#!/usr/bin/env bash
# Runs the GitHub Action (action.yml) locally, step by step, as a runner would: its
# `run:` steps with bash and their `env:` (the `${{ ... }}` expressions evaluated), with
# sample inputs against sample projects, and checks the outcome of each case. The
# `uses:` steps are stood in for: actions/cache (nothing restored), and
# github/codeql-action/upload-sarif (the log must exist and be SARIF 2.1.0).
#
#   scripts/test-action.sh            reuse target/debug/agent-presets (built if missing)
#                                     as the "cached" binary: the install step finds it
#   scripts/test-action.sh --install  a real, cold `cargo install` (profile `dist`) into a
#                                     temporary root, timed: minutes, not for every CI run
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-cached}"

if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "== installing PyYAML (to read action.yml)"
    python3 -m pip install --quiet --user pyyaml || python3 -m pip install --quiet --user --break-system-packages pyyaml
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Where action.yml installs and caches the binary: ~/.agent-presets (HOME is $work).
root="$work/.agent-presets"
mkdir -p "$root/bin"
case "$mode" in
    cached)
        bin="$repo/target/debug/agent-presets"
        [[ -x "$bin" ]] || (cd "$repo" && cargo build --locked --quiet)
        ln -s "$bin" "$root/bin/agent-presets"
        ;;
    --install)
        rmdir "$root/bin"
        ;;
    *)
        echo "usage: $0 [--install]" >&2
        exit 2
        ;;
esac

REPO="$repo" ROOT="$root" WORK="$work" MODE="$mode" python3 - <<'PY'
import os, subprocess, sys, time

sys.path.insert(0, os.path.join(os.environ["REPO"], "scripts"))
from action_runner import load
from action_runner import run_action as run_in

repo, root, work, mode = (os.environ[k] for k in ("REPO", "ROOT", "WORK", "MODE"))
steps = load(repo)["runs"]["steps"]
uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
assert uses == ["actions/cache", "github/codeql-action/upload-sarif"], uses
agent = os.path.join(repo, "target", "debug", "agent-presets")


def run_action(project, given):
    return run_in(repo, project, given, work)



def project(name, files, lock=True):
    path = os.path.join(work, name)
    for rel, text in files.items():
        full = os.path.join(path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    if lock:
        subprocess.run([agent, "lock"], cwd=path, check=True, capture_output=True,
                       env=dict(os.environ, AGENT_PRESETS_NO_USER="1"))
    return path


REVIEWER = """version: 1
name: reviewer
extends: standard
persona:
  sections:
    - name: rules
      order: 150
      text: Cite file and line.
tools:
  allow: [read_file, grep]
"""

os.environ["AGENT_PRESETS_NO_USER"] = "1"
if mode == "--install":
    valid = project("install", {".agent-presets/reviewer.yaml": REVIEWER})
    start = time.time()
    out = run_action(valid, {})
    print(f"== cold install and validate: {time.time() - start:.0f} s")
    assert out["_validate"].returncode == 0, out["_validate"]
    sys.exit(0)

failures = []


def case(title, path, given, exit_code, contains=(), lacks=(), sarif=None):
    print(f"== {title}")
    out = run_action(path, given)
    p = out["_validate"]
    problems = []
    if p.returncode != exit_code:
        problems.append(f"exit {p.returncode}, expected {exit_code}")
    for text in contains:
        if text not in p.stdout:
            problems.append(f"stdout lacks {text!r}")
    for text in lacks:
        if text in p.stdout:
            problems.append(f"stdout holds {text!r}")
    if sarif is not None and ("upload" in out) != sarif:
        problems.append(f"SARIF upload {'not ' if sarif else ''}done")
    if problems:
        failures.append(title)
        print("   FAILED: " + "; ".join(problems) + f"\n{p.stdout}\n{p.stderr}")


valid = project("valid", {".agent-presets/reviewer.yaml": REVIEWER})
case("a valid, locked project passes", valid, {}, 0, ["valid, 0 invalid"])

drifted = project("drifted", {".agent-presets/reviewer.yaml": REVIEWER})
with open(os.path.join(drifted, ".agent-presets/reviewer.yaml"), "w") as f:
    f.write(REVIEWER.replace("Cite file", "Cite the file"))
case("a drifted prompt fails with an annotation on the preset (SARIF uploaded all the same)",
     drifted, {"sarif": "true"}, 1,
     ["::error file=.agent-presets/reviewer.yaml,line=6,", "title=P0302 prefix-drift::`reviewer`: section `rules` changed"],
     sarif=True)
case("locked: false ignores the lock", drifted, {"locked": "false"}, 0)

warned = project("warned", {".agent-presets/dated.yaml": """version: 1
name: dated
extends: standard
persona:
  sections:
    - name: today
      order: 150
      text: Today is {{ date }}.
"""})
case("a warning passes", warned, {}, 0, ["::warning file=.agent-presets/dated.yaml"])
case("deny-warnings: true makes it fail", warned, {"deny-warnings": "true"}, 1, ["::error file=.agent-presets/dated.yaml"])

extra = project("extra", {".agent-presets/reviewer.yaml": REVIEWER,
                          "more presets/helper.yaml": "version: 1\nname: helper\nextends: minimal\ntools:\n  allow: [read_fiel]\n"}, lock=False)
subprocess.run([agent, "--preset-dir", "more presets", "lock", "reviewer"], cwd=extra, check=True, capture_output=True)
case("preset-dirs (a path with a space, one per line) are validated", extra,
     {"preset-dirs": "more presets\n", "locked": "false"}, 1,
     ["::error file=more presets/helper.yaml,line=5,", "P0103 unknown-tool"])
case("targets narrow the check", extra,
     {"preset-dirs": "more presets", "locked": "false", "targets": "reviewer"}, 0, lacks=["helper"])

nested = project("nested/sub", {".agent-presets/reviewer.yaml": REVIEWER})
case("working-directory", os.path.dirname(nested), {"working-directory": "sub"}, 0)

case("an unreadable target fails the step (exit 2), SARIF upload skipped", valid,
     {"targets": "missing.yaml", "sarif": "true"}, 2, sarif=False)

if failures:
    sys.exit(f"{len(failures)} case(s) failed: {failures}")
print("action.yml: every case passed")
PY
