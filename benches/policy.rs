//! What permission rules cost per tool call: `Policy::decide` with the rules of issue 33's
//! example (deny, ask and allow lists, a path rule, an MCP glob), on a one-command `bash`
//! line, a five-part compound line with `$(…)` and `bash -c`, and a `write_file` path,
//! beside what every call costs anyway (parsing its arguments from JSON, and the smallest
//! `bash` call: starting `true` as a process), and what hooks cost per call beyond the
//! hook processes themselves.
//!
//! Run: `cargo bench --bench policy`.

use agent_presets::policy::{Call, Policy};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

fn policy() -> Policy {
    Policy::new(
        &[
            "bash(git push *)",
            "bash(rm -rf *)",
            "write_file(path=.github/**)",
            "edit_file(path=.github/**)",
        ],
        &["bash(git commit *)"],
        &[
            "bash(cargo test *)",
            "bash(git status)",
            "bash(git diff *)",
            "bash(ls *)",
            "bash(echo *)",
            "bash(grep *)",
            "mcp__github__get_*",
            "write_file(path=src/**)",
        ],
    )
    .expect("the rules compile")
}

fn decide(policy: &Policy, tool: &str, arguments: &Value) -> agent_presets::policy::Verdict {
    policy
        .decide(&Call {
            tool,
            arguments,
            read_only: false,
            path: None,
            workspace: Some("/work/ws"),
        })
        .verdict
}

#[divan::bench]
fn simple_bash_line(bencher: divan::Bencher) {
    let p = policy();
    let args = json!({"command": "cargo test --quiet -p agent-presets"});
    bencher.bench(|| decide(&p, "bash", divan::black_box(&args)));
}

#[divan::bench]
fn compound_bash_line(bencher: divan::Bencher) {
    let p = policy();
    let args = json!({"command": "git status && git diff HEAD | grep -n fn; echo \"$(ls src)\" && bash -c 'cargo test -q'"});
    bencher.bench(|| decide(&p, "bash", divan::black_box(&args)));
}

#[divan::bench]
fn write_file_path(bencher: divan::Bencher) {
    let p = policy();
    let args = json!({"path": "src/deep/../main.rs", "content": "fn main() {}\n"});
    bencher.bench(|| decide(&p, "write_file", divan::black_box(&args)));
}

/// What hooks cost per call beyond their processes: finding the hooks of the event for
/// the tool (five hooks, three `match`es), and the event's stdin JSON, written out.
#[divan::bench]
fn hooks_match_and_event_input(bencher: divan::Bencher) {
    use agent_presets::hooks::{
        EventFacts, Hook, HookEvent, Hooks, OnError, ToolMatcher, event_input,
    };
    let hook = |event, matcher: Option<&str>| Hook {
        event,
        matcher: matcher.map(|m| ToolMatcher::new(m).expect("a matcher")),
        run: vec!["python3".into(), ".agent-presets/hooks/guard.py".into()],
        timeout: std::time::Duration::from_secs(5),
        on_error: OnError::Block,
    };
    let hooks = Hooks::new(vec![
        hook(HookEvent::PreToolUse, Some("bash")),
        hook(HookEvent::PreToolUse, Some("write_file|edit_file")),
        hook(HookEvent::PreToolUse, Some("mcp__github__*")),
        hook(HookEvent::PostToolUse, None),
        hook(HookEvent::Stop, None),
    ]);
    let args = json!({"command": "git status && git diff HEAD | grep -n fn"});
    bencher.bench(|| {
        let mut bytes = 0;
        for _ in hooks.for_event(HookEvent::PreToolUse, Some(divan::black_box("bash"))) {
            let input = event_input(
                HookEvent::PreToolUse,
                &EventFacts {
                    session_id: "run-1",
                    cwd: "/work/ws",
                    tool_name: Some("bash"),
                    tool_use_id: Some("call_1"),
                    tool_input: Some(&args),
                    ..EventFacts::default()
                },
            );
            bytes += input.to_string().len();
        }
        bytes
    });
}

/// Baseline: what every call costs before any rule: its arguments parsed from JSON.
#[divan::bench]
fn baseline_parse_arguments(bencher: divan::Bencher) {
    let text = r#"{"command": "git status && git diff HEAD | grep -n fn; echo \"$(ls src)\" && bash -c 'cargo test -q'"}"#;
    bencher.bench(|| serde_json::from_str::<Value>(divan::black_box(text)).expect("json"));
}

/// Baseline: the smallest `bash` call's process: `true`, spawned and waited for.
#[divan::bench(sample_count = 30)]
fn baseline_spawn_true(bencher: divan::Bencher) {
    bencher.bench(|| std::process::Command::new("true").status().expect("spawn"));
}
