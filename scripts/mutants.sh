#!/usr/bin/env bash
# Mutation testing (cargo-mutants) of the security- and cache-critical files, each with
# only the test binaries that exercise it, so one file fits in minutes on two cores.
#
#   scripts/mutants.sh                 # every file below
#   scripts/mutants.sh step_cache      # the files whose path contains `step_cache`
#   scripts/mutants.sh containment 1   # only the first part of a file run in parts
#
# Environment:
#   MUTANTS_JOBS        parallel builds (default 1: each build already uses every core)
#   MUTANTS_TARGET_DIR  where the mutated trees build (default target/mutants-build): one
#                       directory shared by every run, so dependencies build once and
#                       the worktree's own target/ is never touched
#   MUTANTS_OUT         where the reports go (default target/mutants-out/<file>)
#   MUTANTS_ARGS        more cargo-mutants arguments for every file, e.g. `--iterate` to test
#                       only what the last run in MUTANTS_OUT did not catch
#   MUTANTS_MAX_KIB     address space per process, in KiB (default 8 GiB): a mutant that
#                       turns a loop into an endless one that allocates (`from = start + 1`
#                       → `start * 1` in the redactor's search) fails its test at the limit
#                       instead of filling the shared machine's memory
#
# cargo-mutants copies the tree to a scratch directory and mutates the copy (never
# `--in-place`), so the worktree can be edited while a run goes on.
#
# Survivors that are equivalent (no test can tell them from the original) are listed
# with why in scripts/mutants.md; anything else that survives is a missing test.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo-mutants >/dev/null 2>&1; then
    cargo install cargo-mutants --locked
fi

jobs=${MUTANTS_JOBS:-1}
ulimit -v "${MUTANTS_MAX_KIB:-8388608}"
export CARGO_TARGET_DIR=${MUTANTS_TARGET_DIR:-$PWD/target/mutants-build}
out_root=${MUTANTS_OUT:-target/mutants-out}

# file | cargo arguments for the build and the run (which test targets) | test name
# filters (any of them; space-separated) | more cargo-mutants arguments (which mutants)
#
# The containment (src/process/containment/, one file per strategy) runs in two parts: the functions that unit tests in the file reach
# (fast: the lib alone), and the rest (spawning, killing, cgroups, the supervisor) with
# the integration tests that run commands, filtered to those that exercise containment
# (without --lib: the crate then builds once per mutant, not twice; the filter words
# select them among every integration test); cli_run's tests
# run the agent itself, the only place commands are spawned from the main thread (the
# death signal). The `cgroup` tests check which containment ran against what the host
# allows, found out without the code (tests/integration/support/cgroup_host.rs): every
# containment passes the others, so a cgroup silently not used would go unnoticed.
# Two mutants are left out of both: `i += 1` → `i *= 1` in `cgroup::unescape` loops
# forever while pushing bytes (memory, not just time, on a shared machine), and so does
# `i += 4` → `i *= 4` on an escape at the start of a field; cargo-mutants names the two
# alike. `mountinfo_escapes_are_undone_and_nothing_else_changes` checks that loop.
containment_unit='Containment|CommandLimits|half_of_physical_memory|describe|unique_suffix|owner_gone|remove_dir_blocking|wait_until|first_that_starts|cgroup::own_dir|cgroup::usable|cgroup::killable|cgroup::remove_stale|cgroup::enable_controllers|cgroup::populated|cgroup::unescape|subreaper::pipe|subreaper::wait_for_eof|subreaper::parse_pid|subreaper::live_descendants|subreaper::survivors|subreaper::kill_tree'
containment_skip='replace.\+=.with.\*=.in.cgroup::unescape'
containment_tests='timeout background dropped fork_past allocates_past exit_status supervisor leaves_the_process_group sigkill stops_its_subreaper containment cgroup'
files=(
    "src/tools/restriction.rs|--lib --test integration|tools:: preset:: prompt:: core_registry:: conformance_core:: properties:: preset_validate::|"
    "src/prompt/step_cache.rs|--lib||"
    "src/secrets.rs|--lib|secrets|"
    "src/redact.rs|--lib|redact::|--timeout 20"
    "src/confine/beneath.rs|--lib|confine::|"
    "src/confine/file.rs|--lib|confine::|"
    "src/process/env.rs|--lib|process::env|--timeout 30"
    "src/process/containment/*.rs|--lib|containment::|--timeout 30 --re $containment_unit --exclude-re $containment_skip"
    "src/process/containment/*.rs|--test integration|$containment_tests|--timeout 60 --exclude-re $containment_unit --exclude-re $containment_skip"
)

status=0
declare -A parts
for entry in "${files[@]}"; do
    IFS='|' read -r file targets filters extra <<<"$entry"
    parts[$file]=$((${parts[$file]:-0} + 1))
    part=${parts[$file]}
    if [[ $# -gt 0 && $file != *"$1"* ]] || [[ $# -gt 1 && $part != "$2" ]]; then
        continue
    fi
    name=$(basename "$file" .rs)
    if [[ $file == *'*'* ]]; then
        name=$(basename "$(dirname "$file")") # a directory's files, by a glob
    fi
    if [[ $(printf '%s\n' "${files[@]}" | grep -cF "$file|") -gt 1 ]]; then
        name="$name-$part" # a file run in parts: one report each
    fi
    echo "== $file (cargo test $targets -- $filters) $extra"
    mkdir -p "$out_root/$name"
    cargo_args=()
    for arg in $targets; do
        cargo_args+=("--cargo-arg=$arg")
    done
    test_args=()
    if [[ -n $filters ]]; then
        read -r -a words <<<"$filters"
        test_args=(-- -- "${words[@]}")
    fi
    read -r -a extra_args <<<"$extra ${MUTANTS_ARGS:-}"
    if [[ $extra != *--timeout* ]]; then
        extra_args+=(--timeout 120)
    fi
    cargo mutants --file "$file" --jobs "$jobs" --output "$out_root/$name" \
        --build-timeout 1200 --baseline "${MUTANTS_BASELINE:-run}" --no-shuffle \
        "${extra_args[@]}" "${cargo_args[@]}" "${test_args[@]}" || status=$?
done
exit "$status"
