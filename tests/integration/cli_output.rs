//! What the agent must deliver (issue 32) through `agent-presets run` against a scripted
//! model on 127.0.0.1: an output contract whose answers are refused until one fits (the
//! object alone on stdout, `--output FILE`, the `done` event), one that never fits (exit
//! 3), a success check that fails once and sends the agent back to work, and one that
//! hangs and is killed at its timeout (exit 4).
#![cfg(feature = "cli")]

use crate::support;
use crate::support::project::Run;

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mock_provider::{self as mock, MockProvider, Reply};
use tempfile::TempDir;

const SCHEMA: &str = "  schema:\n    type: object\n    properties:\n      verdict: {enum: [pass, fail]}\n      reasons: {type: array, items: {type: string}}\n    required: [verdict, reasons]\n";

struct Project {
    dir: TempDir,
    config: TempDir,
}

impl Project {
    /// A user preset `agent` extending `standard`, talking to `server`, with `extra`
    /// (top-level YAML: `output:`, `checks:`).
    fn new(server: &MockProvider, extra: &str) -> Self {
        let p = Project {
            dir: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
        };
        let path = p.config.path().join("presets/agent.yaml");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(
            path,
            format!(
                "version: 1\nname: agent\nextends: standard\nmodel:\n  provider: deepseek\n  name: test-model\n  baseUrl: {}\n  apiKeyEnv: TEST_MODEL_KEY\n{extra}",
                server.url("")
            ),
        )
        .unwrap();
        p
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn run(&self, args: &[&str]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
            .args(args)
            .current_dir(self.dir.path())
            .env("AGENT_PRESETS_CONFIG_DIR", self.config.path())
            .env("NO_COLOR", "1")
            .env("SHELL", "/bin/bash")
            .env("TEST_MODEL_KEY", "sk-output-test-0123456789abcdefghij")
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

/// The last user message of request `i`.
fn last_user_message(server: &MockProvider, i: usize) -> String {
    server.requests()[i].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap_or_else(|| panic!("no user message in request {i}"))["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn json_lines(stdout: &str, kind: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == kind)
        .collect()
}

fn three_answers() -> MockProvider {
    MockProvider::start(vec![
        Reply::json(mock::openai_text("The build passes, I think.")),
        Reply::json(mock::openai_text(r#"{"verdict": "maybe", "reasons": []}"#)),
        Reply::json(mock::openai_text(
            r#"{"verdict": "pass", "reasons": ["all 12 tests pass"]}"#,
        )),
    ])
}

#[test]
fn answers_that_break_the_contract_go_back_until_one_fits_and_stdout_holds_only_the_object() {
    let server = three_answers();
    let p = Project::new(&server, &format!("output:\n{SCHEMA}  retries: 2\n"));
    let run = p.run(&[
        "run",
        "agent",
        "Triage the build.",
        "--output",
        "verdict.json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    eprintln!("{}", run.stderr);
    let want = json!({"verdict": "pass", "reasons": ["all 12 tests pass"]});
    // stdout is the object alone, as JSON: `run … > verdict.json` works.
    let stdout: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    assert_eq!(stdout, want);
    // The answers are transcript, on stderr, with each verdict of the contract.
    assert!(
        run.stderr.contains("The build passes, I think."),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("✗ the answer breaks the output schema (attempt 1 of 3)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("✓ the answer matches the output schema (attempt 3 of 3)"),
        "{}",
        run.stderr
    );
    // `--output FILE` holds the same object.
    let written: Value =
        serde_json::from_str(&fs::read_to_string(p.path().join("verdict.json")).unwrap()).unwrap();
    assert_eq!(written, want);
    // The model was told what was wrong, located in its answer.
    assert_eq!(server.requests().len(), 3);
    let first = last_user_message(&server, 1);
    assert!(first.contains("is not one JSON object"), "{first}");
    let second = last_user_message(&server, 2);
    assert!(second.contains("/verdict"), "{second}");
    assert!(second.contains("maybe"), "{second}");
    // DeepSeek gets its JSON mode on every request.
    for r in server.requests() {
        assert_eq!(r.body["response_format"], json!({"type": "json_object"}));
    }
}

#[test]
fn the_done_event_carries_the_validated_object() {
    let server = three_answers();
    let p = Project::new(&server, &format!("output:\n{SCHEMA}"));
    let run = p.run(&["run", "agent", "Triage the build.", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let checked = json_lines(&run.stdout, "output");
    assert_eq!(checked.len(), 3, "{}", run.stdout);
    assert_eq!(checked[0]["valid"], false);
    assert_eq!(checked[1]["problems"][0]["pointer"], "/verdict");
    assert_eq!(checked[2]["valid"], true);
    let done = json_lines(&run.stdout, "done");
    assert_eq!(done.len(), 1);
    assert_eq!(done[0]["outcome"], "answered");
    assert_eq!(
        done[0]["output"],
        json!({"verdict": "pass", "reasons": ["all 12 tests pass"]})
    );
}

#[test]
fn an_answer_that_still_breaks_the_contract_after_its_retries_exits_3_with_the_problems() {
    let server = three_answers();
    let p = Project::new(&server, &format!("output:\n{SCHEMA}  retries: 1\n"));
    let run = p.run(&[
        "run",
        "agent",
        "Triage the build.",
        "--output",
        "verdict.json",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(server.requests().len(), 2, "one retry, then stop");
    assert!(run.stdout.is_empty(), "no object on stdout: {run:?}");
    assert!(!p.path().join("verdict.json").exists());
    assert!(
        run.stderr
            .contains("breaks the output contract after 2 attempts"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("/verdict"), "{}", run.stderr);
    assert!(
        run.stderr.contains(r#"last answer: {"verdict": "maybe""#),
        "{}",
        run.stderr
    );

    let server = three_answers();
    let p = Project::new(&server, &format!("output:\n{SCHEMA}  retries: 0\n"));
    let run = p.run(&["run", "agent", "Triage the build.", "--json"]);
    assert_eq!(run.code, 3, "{run:?}");
    let done = json_lines(&run.stdout, "done");
    assert_eq!(done[0]["outcome"], "output-invalid");
    assert_eq!(done[0]["answer"], "The build passes, I think.");
    assert!(
        done[0]["problems"][0]["expected"].is_string(),
        "{}",
        done[0]
    );
}

#[test]
fn output_without_a_contract_is_a_usage_error_before_anything_is_sent() {
    let server = MockProvider::start(vec![Reply::json(mock::openai_text("hi"))]);
    let p = Project::new(&server, "");
    let run = p.run(&["run", "agent", "Hi.", "--output", "out.json"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("declares no output contract"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_failing_check_sends_the_agent_back_to_work_and_a_passing_one_ends_the_run() {
    let server = MockProvider::start(vec![
        Reply::json(mock::openai_text("All done.")),
        Reply::json(mock::openai_call(
            "call_w",
            "write_file",
            r#"{"path": "ok.txt", "content": "fixed\n"}"#,
        )),
        Reply::json(mock::openai_text("Now it is really done.")),
    ]);
    let p = Project::new(
        &server,
        "checks:\n  - run: [sh, -c, 'test -f ok.txt || { echo \"ok.txt is missing\"; exit 1; }']\n    retries: 1\n",
    );
    let run = p.run(&["run", "agent", "Make ok.txt.", "--yes", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.requests().len(), 3);
    let told = last_user_message(&server, 1);
    assert!(told.contains("exit code 1"), "{told}");
    assert!(told.contains("ok.txt is missing"), "{told}");
    let checks = json_lines(&run.stdout, "check");
    assert_eq!(checks.len(), 2, "{}", run.stdout);
    assert_eq!(checks[0]["passed"], false);
    assert_eq!(checks[0]["attempt"], 1);
    assert_eq!(checks[1]["passed"], true);
    assert_eq!(checks[1]["attempt"], 2);
    assert_eq!(json_lines(&run.stdout, "done")[0]["outcome"], "answered");
}

#[test]
fn a_hanging_check_is_killed_at_its_timeout_and_the_run_exits_4() {
    let server = MockProvider::start(vec![Reply::json(mock::openai_text("Done."))]);
    let p = Project::new(
        &server,
        "checks:\n  - run: [sh, -c, 'echo starting; sleep 30']\n    timeout: 500ms\n    retries: 0\n",
    );
    let started = Instant::now();
    let run = p.run(&["run", "agent", "Do it."]);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the check was not killed"
    );
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.stderr.contains("timed out"), "{}", run.stderr);
    assert!(run.stderr.contains("starting"), "{}", run.stderr);
    // The answer is still transcript on stdout without a contract.
    assert!(run.stdout.contains("Done."), "{run:?}");
}

#[test]
fn a_recorded_run_replays_its_output_retries_and_check_results_without_running_the_checks() {
    let server = MockProvider::start(vec![
        Reply::json(mock::openai_text(r#"{"verdict": "maybe", "reasons": []}"#)),
        Reply::json(mock::openai_text(r#"{"verdict": "pass", "reasons": []}"#)),
        Reply::json(mock::openai_call(
            "call_w",
            "write_file",
            r#"{"path": "ok.txt", "content": "fixed\n"}"#,
        )),
        Reply::json(mock::openai_text(
            r#"{"verdict": "pass", "reasons": ["ok.txt"]}"#,
        )),
    ]);
    let checks =
        "checks:\n  - run: [sh, -c, 'test -f ok.txt || { echo \"ok.txt is missing\"; exit 1; }']\n";
    let p = Project::new(&server, &format!("output:\n{SCHEMA}{checks}"));
    let cassette = p.path().join("run.jsonl");
    let cassette = cassette.to_str().unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_agent-presets"));
    run.args(["run", "agent", "Fix it.", "--yes", "--record", cassette])
        .current_dir(p.dir.path())
        .env("AGENT_PRESETS_CONFIG_DIR", p.config.path())
        .env("NO_COLOR", "1")
        .env("SHELL", "/bin/bash")
        .env("TEST_MODEL_KEY", "sk-output-test-0123456789abcdefghij")
        .env_remove("CI")
        .env_remove("DEEPSEEK_API_KEY")
        .stdin(Stdio::null());
    let out = run.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = fs::read_to_string(p.path().join("run.jsonl")).unwrap();
    let check_lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == "checkResult")
        .collect();
    assert_eq!(check_lines.len(), 2, "{text}");
    assert_eq!(check_lines[0]["step"], 2);
    assert_eq!(check_lines[0]["ending"], json!({"exited": 1}));
    assert_eq!(check_lines[1]["step"], 4);
    assert_eq!(check_lines[1]["ending"], json!({"exited": 0}));
    assert!(text.contains(r#""kind":"answered","steps":4"#), "{text}");

    // The replay feeds the recorded results back: the check's file is gone, the model
    // server too, and it still passes.
    fs::remove_file(p.path().join("ok.txt")).unwrap();
    drop(server);
    let replay = p.run(&["test", cassette]);
    assert_eq!(replay.code, 0, "{replay:?}");

    // A changed check is drift, named.
    let preset = p.config.path().join("presets/agent.yaml");
    let yaml = fs::read_to_string(&preset).unwrap();
    fs::write(&preset, yaml.replace("test -f ok.txt", "test -s ok.txt")).unwrap();
    let replay = p.run(&["test", cassette]);
    assert_eq!(replay.code, 1, "{replay:?}");
    let all = format!("{}{}", replay.stdout, replay.stderr);
    assert!(
        all.contains("the success check `sh -c test -s ok.txt"),
        "{all}"
    );
}

#[test]
fn a_check_in_a_project_preset_needs_trust_before_anything_runs() {
    let server = MockProvider::start(vec![Reply::json(mock::openai_text("Done."))]);
    let p = Project::new(&server, "");
    fs::remove_file(p.config.path().join("presets/agent.yaml")).unwrap();
    let marker = p.path().join("ran.txt");
    fs::create_dir_all(p.path().join(".agent-presets")).unwrap();
    fs::write(
        p.path().join(".agent-presets/checked.yaml"),
        format!(
            "version: 1\nname: checked\nextends: standard\nmodel:\n  provider: deepseek\n  name: test-model\n  baseUrl: {}\n  apiKeyEnv: TEST_MODEL_KEY\nchecks:\n  - run: [touch, {}]\n",
            server.url(""),
            marker.display()
        ),
    )
    .unwrap();
    let run = p.run(&["run", "checked", "Do it."]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("checks"), "{}", run.stderr);
    assert!(run.stderr.contains("trust"), "{}", run.stderr);
    assert!(server.requests().is_empty(), "nothing is sent before trust");
    assert!(!marker.exists(), "the check ran");

    let trusted = p.run(&["trust", "checked"]);
    assert_eq!(trusted.code, 0, "{trusted:?}");
    let run = p.run(&["run", "checked", "Do it."]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(marker.exists(), "the trusted check ran");
}
