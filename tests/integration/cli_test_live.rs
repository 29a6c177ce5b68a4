//! `test --record [CASE...]` and `test --live [--repeat N] [--min-pass-rate R]` against a
//! scripted model on 127.0.0.1: a case is recorded through the run journey (its
//! workspace copied), the cassette lands beside it without the key, and `test` replays
//! it offline and passes (and thirteen cases, replayed over every core, report the same
//! in path order on one thread or four); recording is refused under `CI`; a model that answers
//! differently on different tries fails a case below the pass rate and passes it at a
//! lower one.
#![cfg(feature = "cli")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use tempfile::TempDir;

use crate::support::mock_provider::{self as mock, MockProvider, Reply};
use crate::support::project::Run;

const KEY: &str = "sk-live/test+0123456789:abcdefghij";

struct Project {
    dir: TempDir,
    config: TempDir,
}

impl Project {
    /// A user preset `agent` (trusted: the user's own) talking to `url`, and a project
    /// with a case `notes` whose workspace holds `notes.txt`.
    fn new(url: &str, case: &str) -> Self {
        let p = Project {
            dir: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
        };
        p.write_in(
            p.config.path(),
            "presets/agent.yaml",
            &format!(
                "version: 1\nname: agent\nextends: standard\nmodel:\n  provider: deepseek\n  name: test-model\n  baseUrl: {url}\n  apiKeyEnv: TEST_MODEL_KEY\ntools:\n  allow: [read_file]\n"
            ),
        );
        p.write(".agent-presets/tests/notes.yaml", case);
        p.write(".agent-presets/tests/repo/notes.txt", "the notes\n");
        p
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn write_in(&self, root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn write(&self, relative: &str, text: &str) {
        self.write_in(&self.path(), relative, text);
    }

    fn run_with(&self, args: &[&str], setup: impl FnOnce(&mut Command)) -> Run {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agent-presets"));
        c.args(args)
            .current_dir(self.path())
            .env("AGENT_PRESETS_CONFIG_DIR", self.config.path())
            .env("NO_COLOR", "1")
            .env("SHELL", "/bin/bash")
            .env("TEST_MODEL_KEY", KEY)
            .env_remove("CI")
            .env_remove("DEEPSEEK_API_KEY")
            .stdin(Stdio::null());
        setup(&mut c);
        let output = c.output().unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, |_| {})
    }
}

const CASE: &str = "preset: agent\nprompt: Read the notes.\nworkspace: repo\ncassette: rec/notes.jsonl\n\
expect:\n  tools:\n    used: [read_file]\n    args: [{tool: read_file, match: {path: notes.txt}}]\n\
\x20 answer: {contains: [notes]}\n";

#[test]
fn a_case_is_recorded_live_and_then_replays_offline() {
    let server = MockProvider::start(vec![
        Reply::json(mock::openai_call(
            "c0",
            "read_file",
            "{\"path\":\"notes.txt\"}",
        )),
        Reply::json(mock::openai_text("I read the notes.")),
    ]);
    let p = Project::new(&server.url(""), CASE);
    let cassette = p.path().join(".agent-presets/tests/rec/notes.jsonl");

    // Refused under CI: nothing sent, nothing written.
    let refused = p.run_with(&["test", "--record"], |c| {
        c.env("CI", "true");
    });
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("refused under CI"), "{refused:?}");
    assert!(server.requests().is_empty());
    assert!(!cassette.exists());

    // Before it is recorded, `test` says how to record it.
    let missing = p.run(&["test"]);
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(
        missing.stdout.contains("agent-presets test --record"),
        "{missing:?}"
    );

    let recorded = p.run(&["test", "--record", ".agent-presets/tests/notes.yaml"]);
    if recorded.stderr.contains("Landlock") {
        eprintln!("skipped: this kernel cannot sandbox ({})", recorded.stderr);
        return;
    }
    assert_eq!(recorded.code, 0, "{recorded:?}");
    assert!(
        recorded.stdout.contains(
            "recorded .agent-presets/tests/notes.yaml (2 steps) to .agent-presets/tests/rec/notes.jsonl"
        ),
        "{recorded:?}"
    );
    assert_eq!(server.requests().len(), 2);
    let text = fs::read_to_string(&cassette).unwrap();
    assert!(!text.contains(KEY), "the key in the cassette:\n{text}");
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["event"], "header");
    assert_eq!(events[0]["prompt"], "Read the notes.");
    // The tool ran in a copy of the case's workspace: it read the file.
    let result = events
        .iter()
        .find(|e| e["event"] == "toolResult")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        result["content"].as_str().unwrap().contains("the notes"),
        "{text}"
    );
    // The copy is gone; the workspace itself is unchanged.
    let cwd = events[0]["runtime"]["cwd"].as_str().unwrap();
    assert!(!Path::new(cwd).exists(), "{cwd}");

    // Replayed offline: no key, the model server gone.
    drop(server);
    let replayed = p.run_with(&["test"], |c| {
        c.env_remove("TEST_MODEL_KEY");
    });
    assert_eq!(replayed.code, 0, "{replayed:?}");
    assert!(replayed.stdout.contains("1 passed"), "{replayed:?}");

    // A model that is gone: re-recording fails, located, and keeps the old cassette.
    let again = p.run(&["test", "--record"]);
    assert_ne!(again.code, 0, "{again:?}");
    assert_eq!(fs::read_to_string(&cassette).unwrap(), text);

    // Many cases replay over every core and report in path order, the same on one
    // thread or four: twelve copies of the case, one whose cassette is cut short (invalid)
    // and one whose expectation fails.
    for i in 0..12 {
        let case = match i {
            5 => CASE.replace("rec/notes.jsonl", "rec/cut.jsonl"),
            8 => CASE.replace("contains: [notes]", "contains: [absent]"),
            _ => CASE.to_owned(),
        };
        p.write(&format!(".agent-presets/tests/many-{i:02}.yaml"), &case);
    }
    fs::write(
        p.path().join(".agent-presets/tests/rec/cut.jsonl"),
        &text[..text.len() / 2],
    )
    .unwrap();
    let reports: Vec<Run> = ["1", "4", ""]
        .iter()
        .map(|threads| {
            p.run_with(&["test", "--format", "json"], |c| {
                c.env_remove("TEST_MODEL_KEY");
                if !threads.is_empty() {
                    c.env("RAYON_NUM_THREADS", threads);
                }
            })
        })
        .collect();
    for r in &reports {
        assert_eq!(r.code, 2, "{r:?}");
        assert_eq!(r.stdout, reports[0].stdout);
    }
    let report: Value = serde_json::from_str(&reports[0].stdout).unwrap();
    let cases: Vec<(String, String)> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["case"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(cases.len(), 13, "{cases:?}");
    let mut sorted = cases.clone();
    sorted.sort();
    assert_eq!(cases, sorted, "reported in path order");
    let status = |name: &str| {
        cases
            .iter()
            .find(|(f, _)| f.contains(name))
            .map(|(_, s)| s.as_str())
    };
    assert_eq!(status("many-05"), Some("invalid"), "{cases:?}");
    assert_eq!(status("many-08"), Some("failed"), "{cases:?}");
    assert_eq!(status("many-11"), Some("passed"), "{cases:?}");
    assert_eq!(status("notes"), Some("passed"), "{cases:?}");
}

#[test]
fn live_runs_are_judged_by_their_pass_rate() {
    // Three tries answer "notes", "nothing", "notes"; then three more the same way.
    let answers = ["notes", "nothing", "notes", "notes", "nothing", "notes"];
    let server = MockProvider::start(
        answers
            .iter()
            .map(|a| Reply::json(mock::openai_text(&format!("I found {a}."))))
            .collect(),
    );
    let case = "preset: agent\nprompt: What is there?\nexpect:\n  answer: {contains: [notes]}\n";
    let p = Project::new(&server.url(""), case);

    // Every run must pass by default: 2 of 3 is not enough.
    let strict = p.run(&["test", "--live", "--repeat", "3", "--format", "json"]);
    assert_eq!(strict.code, 1, "{strict:?}");
    let report: Value = serde_json::from_str(&strict.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("pass-rate-below"), "{text}");
    assert!(text.contains("passed 2 of 3 runs"), "{text}");
    assert_eq!(server.requests().len(), 3);

    // At 60 %, 2 of 3 pass it; the failed run is still shown.
    let lenient = p.run(&["test", "--live", "--repeat", "3", "--min-pass-rate", "60%"]);
    assert_eq!(lenient.code, 0, "{lenient:?}");
    assert!(lenient.stdout.contains("1 passed"), "{lenient:?}");
    assert!(lenient.stdout.contains("(in 1 of 3 runs)"), "{lenient:?}");
    assert_eq!(server.requests().len(), 6);

    // No key: the case cannot run (exit 2), and nothing is sent.
    let keyless = p.run_with(&["test", "--live"], |c| {
        c.env_remove("TEST_MODEL_KEY");
    });
    assert_eq!(keyless.code, 2, "{keyless:?}");
    assert!(keyless.stdout.contains("TEST_MODEL_KEY"), "{keyless:?}");
    assert_eq!(server.requests().len(), 6);

    // `--repeat` and `--min-pass-rate` belong to `--live`; a rate is between 0 and 1.
    let usage = p.run(&["test", "--repeat", "3"]);
    assert_eq!(usage.code, 2, "{usage:?}");
    let usage = p.run(&["test", "--live", "--min-pass-rate", "1.5"]);
    assert_eq!(usage.code, 2, "{usage:?}");
}
