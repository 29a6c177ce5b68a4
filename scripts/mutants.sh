#!/usr/bin/env bash
# Mutation testing (cargo-mutants) of the security- and cache-critical files, each with
# only the test binaries that exercise it, so one file fits in minutes on two cores.
#
#   scripts/mutants.sh                 # every file below
#   scripts/mutants.sh step_cache      # the files whose path contains `step_cache`
#
# Environment:
#   MUTANTS_JOBS        parallel builds (default 1: each build already uses every core)
#   MUTANTS_TARGET_DIR  where the mutated trees build (default target/mutants-build): one
#                       directory shared by every run, so dependencies build once and
#                       the worktree's own target/ is never touched
#   MUTANTS_OUT         where the reports go (default target/mutants-out/<file>)
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
export CARGO_TARGET_DIR=${MUTANTS_TARGET_DIR:-$PWD/target/mutants-build}
out_root=${MUTANTS_OUT:-target/mutants-out}

# file | cargo arguments for the build and the run (which test targets) | test filter
files=(
    "src/tools/restriction.rs|--lib --test core_registry --test conformance_core --test properties --test preset_validate|"
    "src/prompt/step_cache.rs|--lib|"
    "src/secrets.rs|--lib|secrets"
    "src/redact.rs|--lib --test security_tools|"
    "src/confine/beneath.rs|--lib|confine::"
    "src/confine/file.rs|--lib|confine::"
    "src/tools/builtin/containment.rs|--test builtin_bash --test builtin_hardening|"
)

status=0
for entry in "${files[@]}"; do
    IFS='|' read -r file targets filter <<<"$entry"
    if [[ $# -gt 0 && $file != *"$1"* ]]; then
        continue
    fi
    name=$(basename "$file" .rs)
    echo "== $file (cargo test $targets -- $filter)"
    mkdir -p "$out_root/$name"
    cargo_args=()
    for arg in $targets; do
        cargo_args+=("--cargo-arg=$arg")
    done
    test_args=()
    if [[ -n $filter ]]; then
        test_args=(-- -- "$filter")
    fi
    cargo mutants --file "$file" --jobs "$jobs" --output "$out_root/$name" \
        --timeout 120 --build-timeout 1200 --baseline "${MUTANTS_BASELINE:-run}" --no-shuffle \
        "${cargo_args[@]}" "${test_args[@]}" || status=$?
done
exit "$status"
