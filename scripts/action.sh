#!/usr/bin/env bash
# The steps of the GitHub Action (action.yml): action.yml calls this script, and
# scripts/test-action.sh runs the same script locally, so what CI tests is what users run.
#
#   scripts/action.sh key       print the cache key of the installed binary
#   scripts/action.sh install   cargo install agent-presets (profile `dist`) into $AGENT_PRESETS_ROOT
#   scripts/action.sh validate  run `agent-presets validate` with the Action's inputs
#
# Inputs come as environment variables, as action.yml passes them:
#   AGENT_PRESETS_ROOT       where the binary is installed (bin/agent-presets under it;
#                            default ~/.agent-presets, the directory action.yml caches)
#   AGENT_PRESETS_BIN        (tests) the binary to run instead of the installed one
#   INPUT_PRESET_DIRS        preset directories besides .agent-presets/, one per line or space separated
#   INPUT_TARGETS            preset names or files to validate (default: every preset on offer)
#   INPUT_LOCKED             `true` (default): also check presets.lock (--locked)
#   INPUT_DENY_WARNINGS      `true`: warnings fail the check too (--deny-warnings)
#   INPUT_SARIF_FILE         when set, also write a SARIF log there (for upload-sarif)
#   INPUT_WORKING_DIRECTORY  the project directory (default: the current directory)
#   GITHUB_OUTPUT            (GitHub sets it) where step outputs go
set -euo pipefail

root_default="$HOME/.agent-presets"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

fail() {
    echo "::error title=agent-presets action::$*" >&2
    exit 2
}

is_true() {
    case "${1:-}" in
        true | TRUE | True | 1 | yes) return 0 ;;
        false | FALSE | False | 0 | no | '') return 1 ;;
        *) fail "expected true or false, got \`$1\`" ;;
    esac
}

output() {
    if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
        echo "$1=$2" >>"$GITHUB_OUTPUT"
    fi
}

# The binary changes when the manifest, the lock file or any source the build reads
# changes; the Rust version and the runner's OS and architecture matter too.
key() {
    command -v cargo >/dev/null || fail "cargo is not installed: add a Rust toolchain step (e.g. dtolnay/rust-toolchain@stable) before this action"
    local sources
    sources="$(cd "$here" && find Cargo.toml Cargo.lock src presets docs/diagnostics -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)"
    local rust
    rust="rustc$(rustc --version | cut -d' ' -f2)"
    local k="agent-presets-$(uname -s)-$(uname -m)-${rust}-${sources}"
    echo "$k"
    output key "$k"
}

install() {
    local root="${AGENT_PRESETS_ROOT:-$root_default}"
    command -v cargo >/dev/null || fail "cargo is not installed: add a Rust toolchain step (e.g. dtolnay/rust-toolchain@stable) before this action"
    if [[ -x "$root/bin/agent-presets" ]]; then
        echo "agent-presets already installed in $root"
    else
        cargo install --locked --profile dist --path "$here" --root "$root" --no-track
    fi
    "$root/bin/agent-presets" --version
    output bin "$root/bin/agent-presets"
}

validate() {
    local bin="${AGENT_PRESETS_BIN:-${AGENT_PRESETS_ROOT:-$root_default}/bin/agent-presets}"
    local -a global=() flags=(validate) targets=()
    local dir
    # One directory per line or per word (paths with spaces: one per line).
    while IFS= read -r line; do
        [[ -z "${line// /}" ]] && continue
        if [[ "$line" == *" "* && ! -d "$line" ]]; then
            for dir in $line; do global+=(--preset-dir "$dir"); done
        else
            global+=(--preset-dir "$line")
        fi
    done <<<"${INPUT_PRESET_DIRS:-}"
    if [[ -n "${INPUT_TARGETS:-}" ]]; then
        read -r -a targets <<<"${INPUT_TARGETS//$'\n'/ }"
    fi
    if is_true "${INPUT_LOCKED:-true}"; then flags+=(--locked); fi
    if is_true "${INPUT_DENY_WARNINGS:-false}"; then flags+=(--deny-warnings); fi
    if [[ -n "${INPUT_WORKING_DIRECTORY:-}" ]]; then
        cd "$INPUT_WORKING_DIRECTORY" || fail "no directory \`$INPUT_WORKING_DIRECTORY\`"
    fi
    local status=0
    if [[ -n "${INPUT_SARIF_FILE:-}" ]]; then
        # The SARIF log is written whatever the verdict (exit 1 = invalid presets, which
        # the upload should show); exit 2 (a usage or I/O problem) fails the step below.
        "$bin" "${global[@]}" "${flags[@]}" --format sarif "${targets[@]}" >"$INPUT_SARIF_FILE" || status=$?
        if [[ $status -ge 2 ]]; then
            echo "agent-presets could not write a complete SARIF log (exit $status): not uploading it" >&2
        else
            output sarif-file "$INPUT_SARIF_FILE"
        fi
    fi
    local gate=0
    "$bin" "${global[@]}" "${flags[@]}" --format github "${targets[@]}" || gate=$?
    if [[ $status -ge 2 && $gate -lt 2 ]]; then gate=$status; fi
    return "$gate"
}

case "${1:-}" in
    key) key ;;
    install) install ;;
    validate) validate ;;
    *) fail "usage: $0 key|install|validate" ;;
esac
