//! Hooks (`hooks:` in a preset, issue 33) through `agent-presets run` against a scripted
//! model on 127.0.0.1: a pre hook that blocks, one that rewrites the arguments (and one
//! whose rewrite the schema refuses), a failing post hook, a stop hook that sends the
//! agent back to work, a hook that hangs (killed at its timeout, so it blocks), a prompt
//! hook that adds context, and a guard written to Claude Code's documentation.
#![cfg(feature = "cli")]

use crate::support;
use crate::support::project::Run;

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::mock_provider::{self as mock, MockProvider, Reply};
use tempfile::TempDir;

struct Project {
    dir: TempDir,
    config: TempDir,
}

impl Project {
    /// A user preset `agent` extending `standard`, talking to `server`, with `hooks`
    /// (YAML under `hooks:`).
    fn new(server: &MockProvider, hooks: &str) -> Self {
        let p = Project {
            dir: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
        };
        let path = p.config.path().join("presets/agent.yaml");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(
            path,
            format!(
                "version: 1\nname: agent\nextends: standard\nmodel:\n  provider: deepseek\n  name: test-model\n  baseUrl: {}\n  apiKeyEnv: TEST_MODEL_KEY\nhooks:\n{hooks}",
                server.url("")
            ),
        )
        .unwrap();
        p
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.dir.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, |_| {})
    }

    /// `run` outside CI (where recording is allowed).
    fn record(&self, args: &[&str]) -> Run {
        self.run_with(args, |c| {
            c.env_remove("CI");
        })
    }

    fn run_with(&self, args: &[&str], tweak: impl FnOnce(&mut Command)) -> Run {
        let mut command = Command::new(env!("CARGO_BIN_EXE_agent-presets"));
        tweak(&mut command);
        let output = command
            .args(args)
            .current_dir(self.dir.path())
            .env("AGENT_PRESETS_CONFIG_DIR", self.config.path())
            .env("NO_COLOR", "1")
            .env("SHELL", "/bin/bash")
            .env("TEST_MODEL_KEY", "sk-hooks-test-0123456789abcdefghij")
            .env_remove("DEEPSEEK_API_KEY")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }
}

/// The content of the first tool result the model was sent in request `i`.
fn tool_result(server: &MockProvider, i: usize) -> String {
    server.requests()[i].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool result in request {i}"))["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn hook_events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "hook")
        .collect()
}

fn bash_then_done(command: &str) -> MockProvider {
    let args = serde_json::json!({ "command": command }).to_string();
    MockProvider::start(vec![
        Reply::json(mock::openai_call("call_b", "bash", &args)),
        Reply::json(mock::openai_text("done")),
    ])
}

#[test]
fn a_pre_hook_that_exits_2_blocks_the_call_and_the_model_reads_its_reason() {
    let server = bash_then_done("rm -f keep.txt");
    let p = Project::new(
        &server,
        "  preToolUse:\n    - match: bash\n      run: [sh, -c, 'cat >/dev/null; echo \"no rm in this repository\" >&2; exit 2']\n",
    );
    p.write("keep.txt", "x");
    let run = p.run(&["run", "agent", "Clean up.", "--yes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(p.path().join("keep.txt").exists(), "the call ran: {run:?}");
    let result = tool_result(&server, 1);
    assert!(
        result.starts_with("Error: `bash` was not run: the preset's hook")
            && result.contains("no rm in this repository"),
        "{result}"
    );
    let events = hook_events(&run.stdout);
    assert_eq!(events.len(), 1, "{}", run.stdout);
    assert_eq!(events[0]["event"], "PreToolUse");
    assert_eq!(events[0]["verdict"], "block");
    assert_eq!(events[0]["tool"], "bash");
}

#[test]
fn a_pre_hook_may_rewrite_the_arguments_which_are_checked_again() {
    // Claude Code's form: exit 0, `hookSpecificOutput.updatedInput`.
    let rewrite = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "echo rewritten > out.txt"}}}"#;
    let server = bash_then_done("echo original > out.txt");
    let p = Project::new(
        &server,
        &format!(
            "  preToolUse:\n    - match: bash\n      run: [sh, -c, 'cat >/dev/null; printf \"%s\" ''{rewrite}''']\n"
        ),
    );
    let run = p.run(&["run", "agent", "Write out.txt.", "--yes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let written = fs::read_to_string(p.path().join("out.txt")).unwrap();
    assert_eq!(written, "rewritten\n", "{run:?}");
    assert_eq!(hook_events(&run.stdout)[0]["rewritten"], true);

    // A rewrite the tool's schema refuses does not run.
    let bad = r#"{"hookSpecificOutput": {"updatedInput": {"cmd": "ls"}}}"#;
    let server = bash_then_done("echo original > out.txt");
    let p = Project::new(
        &server,
        &format!(
            "  preToolUse:\n    - match: bash\n      run: [sh, -c, 'cat >/dev/null; printf \"%s\" ''{bad}''']\n"
        ),
    );
    let run = p.run(&["run", "agent", "Write out.txt.", "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!p.path().join("out.txt").exists(), "{run:?}");
    let result = tool_result(&server, 1);
    assert!(
        result.contains("do not fit the tool's parameters") && result.contains("command"),
        "{result}"
    );
}

#[test]
fn a_failing_post_hook_turns_the_result_into_an_error_the_model_reads() {
    let server = MockProvider::start(vec![
        Reply::json(mock::openai_call(
            "call_w",
            "write_file",
            r#"{"path": "src.txt", "content": "badly formatted\n"}"#,
        )),
        Reply::json(mock::openai_text("done")),
    ]);
    let p = Project::new(
        &server,
        "  postToolUse:\n    - match: \"write_file|edit_file\"\n      run: [sh, -c, 'cat >/dev/null; echo \"src.txt: not formatted\" >&2; exit 1']\n",
    );
    let run = p.run(&["run", "agent", "Write src.txt.", "--yes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    // The call ran; its result is now an error carrying what the hook said.
    assert!(p.path().join("src.txt").exists());
    let result = tool_result(&server, 1);
    assert!(
        result.contains("reported a problem afterwards")
            && result.contains("src.txt: not formatted"),
        "{result}"
    );
    let tool_message = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert!(tool_message["content"].as_str().unwrap().contains("Error:"));
    let events = hook_events(&run.stdout);
    assert_eq!(events[0]["event"], "PostToolUse");
    assert_eq!(events[0]["verdict"], "block");
    assert!(
        events[0]["failure"]
            .as_str()
            .unwrap()
            .contains("exited with 1")
    );
}

#[test]
fn a_stop_hook_sends_the_agent_back_to_work_until_it_is_satisfied() {
    let server = MockProvider::start(vec![
        Reply::json(mock::openai_text("finished")),
        Reply::json(mock::openai_call(
            "call_w",
            "write_file",
            r#"{"path": "done.txt", "content": "ok\n"}"#,
        )),
        Reply::json(mock::openai_text("finished, really")),
    ]);
    let p = Project::new(
        &server,
        "  stop:\n    - run: [sh, -c, 'cat >/dev/null; test -f done.txt || { echo \"done.txt is missing\" >&2; exit 2; }']\n",
    );
    let run = p.run(&["run", "agent", "Finish the job.", "--yes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests().len(), 3, "{run:?}");
    let second = &server.requests()[1].body["messages"];
    let told = second
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .to_string();
    assert!(told.contains("done.txt is missing"), "{told}");
    assert!(run.stdout.contains("finished, really"), "{}", run.stdout);
    let verdicts: Vec<Value> = hook_events(&run.stdout)
        .iter()
        .map(|e| e["verdict"].clone())
        .collect();
    assert_eq!(verdicts, ["block", "continue"]);
}

#[test]
fn a_stop_hook_sends_the_agent_back_at_most_three_times() {
    let mut replies: Vec<Reply> = (0..5)
        .map(|_| Reply::json(mock::openai_text("finished")))
        .collect();
    replies.push(Reply::json(mock::openai_text("unreachable")));
    let server = MockProvider::start(replies);
    let p = Project::new(
        &server,
        "  stop:\n    - run: [sh, -c, 'echo never satisfied >&2; exit 2']\n",
    );
    let run = p.run(&["run", "agent", "Finish.", "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests().len(), 4, "{run:?}");
}

#[test]
fn a_hook_that_hangs_is_killed_at_its_timeout_and_blocks() {
    let server = bash_then_done("echo ran > ran.txt");
    let p = Project::new(
        &server,
        "  preToolUse:\n    - run: [sh, -c, 'sleep 30']\n      timeout: 300ms\n",
    );
    let started = Instant::now();
    let run = p.run(&["run", "agent", "Go.", "--yes", "--json"]);
    assert!(started.elapsed() < Duration::from_secs(20), "{run:?}");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!p.path().join("ran.txt").exists(), "{run:?}");
    let result = tool_result(&server, 1);
    assert!(result.contains("timeout"), "{result}");
    let events = hook_events(&run.stdout);
    assert_eq!(events[0]["verdict"], "block");

    // `onError: continue` opts out of failing closed.
    let server = bash_then_done("echo ran > ran.txt");
    let p = Project::new(
        &server,
        "  preToolUse:\n    - run: [sh, -c, 'sleep 30']\n      timeout: 300ms\n      onError: continue\n",
    );
    let run = p.run(&["run", "agent", "Go.", "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(p.path().join("ran.txt").exists(), "{run:?}");
}

#[test]
fn a_prompt_hook_adds_context_or_blocks_the_prompt() {
    let server = MockProvider::start(vec![Reply::json(mock::openai_text("ok"))]);
    let p = Project::new(
        &server,
        "  userPromptSubmit:\n    - run: [sh, -c, 'cat >/dev/null; echo \"the release branch is frozen\"']\n",
    );
    let run = p.run(&["run", "agent", "Ship it.", "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    let first = server.requests()[0].body["messages"].to_string();
    assert!(
        first.contains("Ship it.") && first.contains("the release branch is frozen"),
        "{first}"
    );

    let server = MockProvider::start(vec![Reply::json(mock::openai_text("ok"))]);
    let p = Project::new(
        &server,
        "  userPromptSubmit:\n    - run: [sh, -c, 'echo \"no secrets in prompts\" >&2; exit 2']\n",
    );
    let run = p.run(&["run", "agent", "Ship it.", "--yes", "--json"]);
    assert!(server.requests().is_empty(), "{run:?}");
    assert_eq!(hook_events(&run.stdout)[0]["verdict"], "block");
    // A blocked prompt is its own outcome and fails the run (exit 1), saying why.
    assert_eq!(run.code, 1, "{run:?}");
    let done: Vec<Value> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "done")
        .collect();
    assert_eq!(done.len(), 1, "{run:?}");
    assert_eq!(done[0]["outcome"], "prompt-blocked-by-hook", "{run:?}");
    assert!(
        run.stderr
            .contains("`userPromptSubmit` hook blocked the prompt"),
        "{run:?}"
    );
}

/// The command validator of Claude Code's hooks reference, unchanged (it checks
/// `tool_name == "Bash"`, reads `tool_input.command` and exits 2 with its reasons).
const CLAUDE_CODE_GUARD: &str = r#"#!/usr/bin/env python3
import json
import re
import sys

# Define validation rules as a list of (regex pattern, message) tuples
VALIDATION_RULES = [
    (
        r"\bgrep\b(?!.*\|)",
        "Use 'rg' (ripgrep) instead of 'grep' for better performance and features",
    ),
    (
        r"\bfind\s+\S+\s+-name\b",
        "Use 'rg --files | rg pattern' or 'rg --files -g pattern' instead of 'find -name' for better performance",
    ),
]


def validate_command(command: str) -> list[str]:
    issues = []
    for pattern, message in VALIDATION_RULES:
        if re.search(pattern, command):
            issues.append(message)
    return issues


try:
    input_data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

tool_name = input_data.get("tool_name", "")
tool_input = input_data.get("tool_input", {})
command = tool_input.get("command", "")

if tool_name != "Bash" or not command:
    sys.exit(1)

# Validate the command
issues = validate_command(command)

if issues:
    for message in issues:
        print(f"• {message}", file=sys.stderr)
    # Exit code 2 blocks tool call and shows stderr to Claude
    sys.exit(2)
"#;

#[test]
fn a_guard_written_to_claude_code_s_documentation_works_unchanged() {
    let python = Command::new("python3").arg("--version").output();
    if python.is_err() {
        eprintln!("skipped: no python3");
        return;
    }
    let hooks =
        "  preToolUse:\n    - match: bash\n      run: [python3, .agent-presets/hooks/guard.py]\n";
    // A command it objects to is blocked with its message.
    let server = bash_then_done("grep -r TODO . > found.txt");
    let p = Project::new(&server, hooks);
    p.write(".agent-presets/hooks/guard.py", CLAUDE_CODE_GUARD);
    let run = p.run(&["run", "agent", "Find the TODOs.", "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!p.path().join("found.txt").exists(), "{run:?}");
    let result = tool_result(&server, 1);
    assert!(
        result.contains("Use 'rg' (ripgrep) instead of 'grep'"),
        "{result}"
    );
    // One it accepts runs.
    let server = bash_then_done("rg TODO . > found.txt; true");
    let p = Project::new(&server, hooks);
    p.write(".agent-presets/hooks/guard.py", CLAUDE_CODE_GUARD);
    let run = p.run(&["run", "agent", "Find the TODOs.", "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(p.path().join("found.txt").exists(), "{run:?}");
}

/// The lock pins each hook's script (issue 33): a script changed after locking is
/// refused by `run` (before the model is asked) and by `validate --locked`, each naming
/// the hook and the script; re-locking accepts it.
#[test]
fn a_hook_whose_script_changed_after_locking_is_refused() {
    let server = bash_then_done("echo hi > out.txt");
    let p = Project::new(
        &server,
        "  preToolUse:\n    - match: bash\n      run: [sh, .agent-presets/hooks/guard.sh]\n",
    );
    p.write(".agent-presets/hooks/guard.sh", "cat >/dev/null\nexit 0\n");
    let locked = p.run(&["lock", "agent"]);
    assert_eq!(locked.code, 0, "{locked:?}");
    let lock: Value =
        serde_json::from_str(&fs::read_to_string(p.path().join("presets.lock")).unwrap()).unwrap();
    let pinned = &lock["presets"]["agent"]["hookScripts"]["agent.preToolUse[0]"];
    assert_eq!(pinned["path"], ".agent-presets/hooks/guard.sh", "{lock}");
    assert!(
        pinned["sha256"].as_str().unwrap().starts_with("sha256:"),
        "{lock}"
    );
    assert_eq!(p.run(&["validate", "--locked", "agent"]).code, 0);

    // The script now blocks everything: not the script that was reviewed and locked.
    p.write(".agent-presets/hooks/guard.sh", "cat >/dev/null\nexit 2\n");
    let run = p.run(&["run", "agent", "Write out.txt.", "--yes"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains(
            "hook `agent.preToolUse[0]` of `agent`: script `.agent-presets/hooks/guard.sh` changed since locking"
        ),
        "{run:?}"
    );
    assert!(run.stderr.contains("agent-presets lock agent"), "{run:?}");
    assert!(!run.stderr.contains("prefix"), "{run:?}");
    assert!(server.requests().is_empty(), "the model was asked");

    let validate = p.run(&["validate", "--locked", "agent", "--format", "json"]);
    assert_eq!(validate.code, 1, "{validate:?}");
    let v: Value = serde_json::from_str(&validate.stdout).unwrap();
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "P0302")
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("script `.agent-presets/hooks/guard.sh` changed since locking"),
        "{d}"
    );

    // Re-locked, the new script is the pinned one: the run goes ahead.
    assert_eq!(p.run(&["lock", "agent"]).code, 0);
    let run = p.run(&["run", "agent", "Write out.txt.", "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        !p.path().join("out.txt").exists(),
        "the hook did not block: {run:?}"
    );
}

/// Issue 33 with issue 28: a recorded run keeps what each hook did (prompt, pre, post and
/// stop hooks, in the order they ran), and `test` replays it without starting any hook:
/// today's code decides again from the recorded runs. A hook removed or changed since
/// the recording is `behaviour-drift` naming it.
#[test]
fn a_recorded_run_replays_its_hooks_without_running_them() {
    let server = MockProvider::start(vec![
        Reply::json(mock::openai_call(
            "call_b",
            "bash",
            r#"{"command": "echo hi > a.txt"}"#,
        )),
        Reply::json(mock::openai_text("finished")),
        Reply::json(mock::openai_call(
            "call_w",
            "write_file",
            r#"{"path": "done.txt", "content": "ok\n"}"#,
        )),
        Reply::json(mock::openai_text("finished, really")),
    ]);
    let log = "cat >/dev/null; echo ran >> hooks.log";
    let hooks = [
        format!("  userPromptSubmit:\n    - run: [sh, -c, '{log}; echo \"the release branch is frozen\"']\n"),
        format!("  preToolUse:\n    - match: bash\n      run: [sh, -c, '{log}; echo \"no bash here\" >&2; exit 2']\n"),
        format!("  postToolUse:\n    - match: write_file\n      run: [sh, -c, '{log}']\n"),
        format!("  stop:\n    - run: [sh, -c, '{log}; test -f done.txt || {{ echo \"done.txt is missing\" >&2; exit 2; }}']\n"),
    ]
    .concat();
    let p = Project::new(&server, &hooks);
    let cassette = p.path().join("run.jsonl");
    let cassette = cassette.to_str().unwrap();
    let run = p.record(&[
        "run",
        "agent",
        "Finish the job.",
        "--yes",
        "--record",
        cassette,
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests().len(), 4, "{run:?}");
    let ran = |p: &Project| {
        fs::read_to_string(p.path().join("hooks.log"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    // prompt, pre (bash), stop (blocks), post (write_file), stop (passes).
    assert_eq!(ran(&p), 5, "{run:?}");
    assert!(
        !p.path().join("a.txt").exists(),
        "the pre hook did not block"
    );

    let text = fs::read_to_string(cassette).unwrap();
    let order: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == "hookResult")
        .map(|v| {
            format!(
                "{}:{}:{}",
                v["step"],
                v["hookEvent"].as_str().unwrap(),
                v["ending"]["exited"]
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            "1:userPromptSubmit:0",
            "1:preToolUse:2",
            "2:stop:2",
            "3:postToolUse:0",
            "4:stop:0"
        ],
        "{text}"
    );
    assert!(text.contains("no bash here"), "{text}");

    // Offline, with the hooks' inputs gone: the replay decides from the recorded runs
    // and starts none of them.
    drop(server);
    fs::remove_file(p.path().join("done.txt")).unwrap();
    let replay = p.run(&["test", cassette]);
    assert_eq!(replay.code, 0, "{replay:?}");
    assert_eq!(ran(&p), 5, "a hook ran during the replay: {replay:?}");

    // A hook removed since the recording is drift, named.
    let preset = p.config.path().join("presets/agent.yaml");
    let yaml = fs::read_to_string(&preset).unwrap();
    let without_post = yaml.replace(
        &format!("  postToolUse:\n    - match: write_file\n      run: [sh, -c, '{log}']\n"),
        "",
    );
    assert_ne!(without_post, yaml);
    fs::write(&preset, &without_post).unwrap();
    let replay = p.run(&["test", cassette]);
    assert_eq!(replay.code, 1, "{replay:?}");
    let all = format!("{}{}", replay.stdout, replay.stderr);
    assert!(
        all.contains("the recording ran the `postToolUse` hook `sh -c cat >/dev/null; echo ran >> hooks.log` for call `call_w`"),
        "{all}"
    );

    // A changed hook is drift too: it ran where the recording holds no run of it.
    fs::write(&preset, yaml.replace("no bash here", "no shell here")).unwrap();
    let replay = p.run(&["test", cassette]);
    assert_eq!(replay.code, 1, "{replay:?}");
    let all = format!("{}{}", replay.stdout, replay.stderr);
    assert!(
        all.contains("the `preToolUse` hook `sh -c cat >/dev/null; echo ran >> hooks.log; echo \"no shell here\"")
            && all.contains("but the recording holds no run of it there"),
        "{all}"
    );
    assert_eq!(ran(&p), 5, "{replay:?}");
}
