#!/usr/bin/env bash
# The CI recipes of docs/ci.md (the README's "In CI" links there), copied as is into a
# fresh Git repository and run there, with a local clone of this repository (its
# committed HEAD, tagged with the release tag the recipes name) standing in for the
# public one:
#
#   - the GitHub workflow (.github/workflows/presets.yml): its steps run as a runner
#     would (scripts/action_runner.py); `uses: <this repository>@<tag>` runs the clone's
#     action.yml at that tag;
#   - the Git hook (.git/hooks/pre-commit): `git commit` passes, then refuses a drifted
#     prompt;
#   - with --pre-commit, the pre-commit configuration (.pre-commit-config.yaml), its
#     `repo:` pointed at the clone: `pre-commit run` builds agent-presets from the clone
#     with cargo (a cold release build: minutes; PRE_COMMIT_HOME reuses a warm one).
#
#   scripts/test-readme-ci.sh [--pre-commit] [--install]
#
# By default the Action finds target/debug/agent-presets in its cache directory (built if
# missing); --install lets it `cargo install` from the clone, cold.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
with_pre_commit=false
install=false
for arg in "$@"; do
    case "$arg" in
        --pre-commit) with_pre_commit=true ;;
        --install) install=true ;;
        *)
            echo "usage: $0 [--pre-commit] [--install]" >&2
            exit 2
            ;;
    esac
done

if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "== installing PyYAML (to read the workflow)"
    python3 -m pip install --quiet --user pyyaml || python3 -m pip install --quiet --user --break-system-packages pyyaml
fi
bin="$repo/target/debug/agent-presets"
[[ -x "$bin" ]] || (cd "$repo" && cargo build --locked --quiet)
export PATH="$repo/target/debug:$PATH" AGENT_PRESETS_NO_USER=1
git_id=(-c user.name=ci -c user.email=ci@example.invalid -c commit.gpgsign=false -c init.defaultBranch=main)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n1)"
url="$(sed -n 's/^repository = "\(.*\)"$/\1/p' "$repo/Cargo.toml")"
tag="v$version"

echo "== a local clone of $repo (HEAD $(git -C "$repo" rev-parse --short HEAD)) standing in for $url, tagged $tag"
git clone --quiet --no-hardlinks "$repo" "$work/action"
git -C "$work/action" "${git_id[@]}" tag -f "$tag" >/dev/null

echo "== a fresh repository with a preset and its lock"
project="$work/project"
mkdir -p "$project/.agent-presets"
git -C "$project" "${git_id[@]}" init --quiet
cat >"$project/.agent-presets/reviewer.yaml" <<'EOF'
version: 1
name: reviewer
extends: standard
persona:
  sections:
    - name: rules
      order: 150
      text: Cite file and line.
tools:
  allow: [read_file, grep]
EOF
(cd "$project" && agent-presets lock)

echo "== the CI snippets of docs/ci.md, copied as written"
REPO="$repo" PROJECT="$project" python3 - <<'PY'
import os, re
page = open(os.path.join(os.environ["REPO"], "docs", "ci.md")).read()
# The recipes: everything before the prompt-drift lock.
section = page[:page.index("\n## Prompt-drift lock\n")]
def block(fence, first_line):
    m = re.search(r"```" + fence + r"\n(" + re.escape(first_line) + r"\n.*?)```\n", section, re.S)
    assert m, f"no ```{fence} block starting {first_line!r} in docs/ci.md"
    return m.group(1)
files = {
    ".github/workflows/presets.yml": block("yaml", "# .github/workflows/presets.yml"),
    ".pre-commit-config.yaml": block("yaml", "# .pre-commit-config.yaml"),
    ".git/hooks/pre-commit": block("sh", "#!/bin/sh"),
}
for rel, text in files.items():
    path = os.path.join(os.environ["PROJECT"], rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(text)
    print(f"   {rel}: {len(text.splitlines())} lines")
PY
chmod +x "$project/.git/hooks/pre-commit"
# The Git hook runs on this commit already.
git -C "$project" "${git_id[@]}" add -A
git -C "$project" "${git_id[@]}" commit --quiet -m "presets, lock and CI"
echo "   committed through the Git hook"

drift() {
    sed -i "s/Cite file and line./Cite the file and line./" "$project/.agent-presets/reviewer.yaml"
}
undrift() {
    git -C "$project" checkout --quiet -- .agent-presets/reviewer.yaml
}

echo "== the workflow"
home="$work/home"
mkdir -p "$home/.agent-presets/bin"
if ! $install; then
    ln -s "$bin" "$home/.agent-presets/bin/agent-presets"
fi
run_workflow() {
    REPO="$repo" PROJECT="$project" ACTION="$work/action" HOME_DIR="$home" URL="$url" python3 - "$@" <<'PY'
import os, shutil, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["REPO"], "scripts"))
import yaml
from action_runner import run_action
project, action, url = os.environ["PROJECT"], os.environ["ACTION"], os.environ["URL"]
expect = int(sys.argv[1])
needle = sys.argv[2] if len(sys.argv) > 2 else None
workflow = yaml.safe_load(open(os.path.join(project, ".github/workflows/presets.yml")))
ours = url.removeprefix("https://github.com/")
gate = None
for step in workflow["jobs"]["presets"]["steps"]:
    uses = step.get("uses", "")
    if uses.startswith("actions/checkout@"):
        continue  # the project is the checkout
    if uses.startswith("dtolnay/rust-toolchain@"):
        assert shutil.which("cargo"), "no cargo"
        continue
    if uses.startswith(ours + "@"):
        ref = uses.split("@", 1)[1]
        subprocess.run(["git", "-C", action, "checkout", "--quiet", ref], check=True)
        given = {k: ("true" if v is True else "false" if v is False else str(v))
                 for k, v in (step.get("with") or {}).items()}
        out = run_action(action, project, given, os.environ["HOME_DIR"])
        gate = out["_validate"]
        continue
    if "run" in step:
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=project)
        assert p.returncode == 0, step
        continue
    sys.exit(f"a step this script cannot run: {step}")
assert gate is not None, "the workflow does not use this repository's Action"
if gate.returncode != expect or (needle and needle not in gate.stdout):
    sys.exit(f"validate: exit {gate.returncode} (expected {expect}), looking for {needle!r}:\n{gate.stdout}\n{gate.stderr}")
print(f"   validate exit {gate.returncode} as expected")
PY
}
run_workflow 0
drift
run_workflow 1 "::error file=.agent-presets/reviewer.yaml,line=6,"
undrift

echo "== the Git hook refuses a drifted prompt"
drift
git -C "$project" add -A
if git -C "$project" "${git_id[@]}" commit --quiet -m "drift" 2>"$work/hook.err"; then
    echo "the Git hook let a drifted prompt through" >&2
    exit 1
fi
grep -q "prefix-drift\|P0302" "$work/hook.err" || (cat "$work/hook.err"; exit 1)
echo "   refused"
git -C "$project" reset --quiet --hard

if $with_pre_commit; then
    echo "== pre-commit, the hook built from the clone"
    command -v pre-commit >/dev/null || python3 -m pip install --quiet --user pre-commit
    sed -i "s|repo: $url\$|repo: $work/action|" "$project/.pre-commit-config.yaml"
    grep -q "repo: $work/action" "$project/.pre-commit-config.yaml"
    export PRE_COMMIT_HOME="${PRE_COMMIT_HOME:-$work/pre-commit-home}"
    start=$(date +%s)
    (cd "$project" && pre-commit run --all-files)
    echo "   passed; install and run took $(($(date +%s) - start)) s"
    drift
    if (cd "$project" && pre-commit run --all-files >"$work/pc.out" 2>&1); then
        cat "$work/pc.out"
        echo "pre-commit let a drifted prompt through" >&2
        exit 1
    fi
    grep -q "P0302" "$work/pc.out" || (cat "$work/pc.out"; exit 1)
    echo "   refused a drifted prompt"
    undrift
fi
echo "docs/ci.md recipes: work as written"
