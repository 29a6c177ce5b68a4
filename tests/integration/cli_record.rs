//! `run --record FILE` and `test CASSETTE`: a run against the scripted provider on
//! 127.0.0.1 with a built-in tool, a command tool and two MCP servers (the fixtures) is
//! recorded, then replayed offline: without the key, with the model server gone and the
//! MCP servers' program removed, from another directory. One changed word of a section,
//! a narrowed allowlist and a changed command-tool description each fail, located; no
//! cassette holds a secret in any encoding; damaged cassettes are exit 2.
#![cfg(feature = "cli")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::mcp_fixture;
use crate::support::mock_provider::{self as mock, MockProvider, Reply};
use crate::support::project::Run;

/// The key: `/`, `+` and `:` so that its percent-encoding differs from it.
const KEY: &str = "sk-rec/test+0123456789:abcdefghij";
/// A `passEnv` value.
const PASSED: &str = "passed-secret-9f8e7d6c5b4a";
/// An MCP server's header secret.
const HEADER: &str = "header-secret-1a2b3c4d5e6f";

struct Project {
    dir: TempDir,
    config: TempDir,
    out: TempDir,
}

impl Project {
    fn new() -> Self {
        Project {
            dir: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
            out: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn cassette(&self) -> PathBuf {
        self.out.path().join("run.jsonl")
    }

    fn write_preset(&self, text: &str) {
        let path = self.config.path().join("presets/agent.yaml");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agent-presets"));
        c.args(args)
            .current_dir(dir)
            .env("AGENT_PRESETS_CONFIG_DIR", self.config.path())
            .env("NO_COLOR", "1")
            .env("SHELL", "/bin/bash")
            .env("TEST_MODEL_KEY", KEY)
            .env("PASSED_SETTING", PASSED)
            .env("WEB_TOKEN", HEADER)
            .env_remove("CI")
            .env_remove("DEEPSEEK_API_KEY")
            .stdin(Stdio::null());
        c
    }

    fn run_in(&self, dir: &Path, args: &[&str], setup: impl FnOnce(&mut Command)) -> Run {
        let mut c = self.command(dir, args);
        setup(&mut c);
        let output = c.output().unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_in(&self.path(), args, |_| {})
    }
}

/// The preset: `standard` plus a section of its own, a stdio fixture `fx`, an HTTP
/// fixture `web` (its header from `WEB_TOKEN`), a command tool, and `passEnv`.
struct Preset<'a> {
    url: &'a str,
    fx_argv: String,
    web_url: String,
    focus: &'a str,
    allow: &'a str,
    count_description: &'a str,
    log: &'a Path,
}

impl Preset<'_> {
    fn yaml(&self) -> String {
        let env: serde_json::Map<String, Value> = mcp_fixture::stdio_env("", self.log)
            .into_iter()
            .map(|(k, v)| (k, Value::from(v)))
            .collect();
        let exe_dir = std::env::current_exe()
            .unwrap()
            .parent()
            .unwrap()
            .to_owned();
        format!(
            "version: 1\nname: agent\nextends: standard\nmodel:\n  provider: deepseek\n  name: test-model\n  baseUrl: {url}\n  apiKeyEnv: TEST_MODEL_KEY\npassEnv: [PASSED_SETTING]\npersona:\n  sections:\n    - name: focus\n      order: 15\n      text: {focus}\nallowRead: [{exe}]\nmcpServers:\n  fx:\n    command: {argv}\n    env: {env}\n    startupTimeout: 30s\n    readOnly: true\n  web:\n    url: {web}\n    headers: {{Authorization: {{fromEnv: WEB_TOKEN, prefix: \"Bearer \"}}}}\n    readOnly: true\ncommands:\n  word_count:\n    description: {count}\n    parameters: {{type: object, properties: {{text: {{type: string}}}}, required: [text]}}\n    run: [wc, -w]\n    readOnly: true\ntools:\n  allow: [{allow}]\n",
            url = self.url,
            focus = self.focus,
            exe = exe_dir.display(),
            argv = self.fx_argv,
            env = Value::Object(env),
            web = self.web_url,
            count = self.count_description,
            allow = self.allow,
        )
    }
}

const ALLOW: &str = "read_file, mcp__fx__echo, mcp__web__add, word_count";

fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Every form of `secret` the model sends back (`cut`: as the cassette must not hold
/// any part of it: base64 without the characters at either end, which the redactor
/// may leave visible).
fn forms_of(secret: &str, cut: bool) -> Vec<String> {
    let b64 = base64(secret.as_bytes());
    vec![
        secret.to_owned(),
        if cut {
            b64[4..b64.len() - 4].to_owned()
        } else {
            b64
        },
        hex(secret.as_bytes()),
        hex(secret.as_bytes()).to_uppercase(),
        percent(secret),
    ]
}

fn forms(secret: &str) -> Vec<String> {
    forms_of(secret, true)
}

#[test]
fn a_recorded_run_replays_offline_and_drift_is_located() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let fx_log = logs.path().join("fx.log");
    let web_url = rt.block_on(mcp_fixture::serve_http(
        mcp_fixture::Script::default(),
        None,
    ));
    let leaks = forms_of(KEY, false)
        .into_iter()
        .chain(forms_of(PASSED, false))
        .chain(forms_of(HEADER, false))
        .collect::<Vec<_>>()
        .join(" ");
    let calls = json!([
        {"id": "c0", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"notes.txt\"}"}},
        {"id": "c1", "type": "function", "function": {"name": "mcp__fx__echo", "arguments": "{\"text\":\"hello fixture\"}"}},
        {"id": "c2", "type": "function", "function": {"name": "mcp__web__add", "arguments": "{\"a\":2,\"b\":3}"}},
        {"id": "c3", "type": "function", "function": {"name": "word_count", "arguments": "{\"text\":\"one two three\"}"}}
    ]);
    let server = MockProvider::start(vec![
        Reply::json(json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant",
                "content": format!("Let me look. {leaks}"),
                "tool_calls": calls}, "finish_reason": "tool_calls"}]
        })),
        Reply::json(mock::openai_text("Done.")),
    ]);
    let url = server.url("");
    let p = Project::new();
    fs::write(p.path().join("notes.txt"), "the notes\n").unwrap();
    let preset = Preset {
        url: &url,
        fx_argv: serde_json::to_string(&mcp_fixture::stdio_argv()).unwrap(),
        web_url: web_url.clone(),
        focus: "Review for typos only.",
        allow: ALLOW,
        count_description: "Count the words of the arguments.",
        log: &fx_log,
    };
    p.write_preset(&preset.yaml());
    let lock = p.run(&["lock", "--connect"]);
    assert_eq!(lock.code, 0, "{lock:?}");

    // Recording is refused under CI.
    let cassette = p.cassette();
    let cassette_arg = cassette.to_str().unwrap();
    let refused = p.run_in(
        &p.path(),
        &["run", "agent", "Use your tools.", "--record", cassette_arg],
        |c| {
            c.env("CI", "true");
        },
    );
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("refused under CI"), "{refused:?}");
    assert!(server.requests().is_empty());
    assert!(!cassette.exists());

    let run = p.run(&["run", "agent", "Use your tools.", "--record", cassette_arg]);
    if run.stderr.contains("Landlock") {
        eprintln!("skipped: this kernel cannot sandbox ({})", run.stderr);
        return;
    }
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.ends_with("Done.\n"), "{run:?}");
    assert!(run.stderr.contains("recorded 2 steps"), "{run:?}");
    let text = fs::read_to_string(&cassette).unwrap();
    // One event a line, in order; the header first, the outcome last.
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["event"], "header");
    assert_eq!(events[0]["format"], 2);
    assert_eq!(events[0]["runtime"]["cwd"], p.path().to_str().unwrap());
    assert_eq!(events.last().unwrap()["event"], "outcome");
    let results: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["event"] == "toolResult")
        .map(|e| (e["tool"].as_str().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        results,
        [
            ("read_file", "builtin"),
            ("mcp__fx__echo", "mcp"),
            ("mcp__web__add", "mcp"),
            ("word_count", "command")
        ]
    );
    assert!(
        events.iter().any(|e| e["event"] == "toolResult"
            && e["content"].as_str().unwrap().contains("hello fixture")),
        "{text}"
    );
    // No secret in any form.
    for form in forms(KEY)
        .iter()
        .chain(&forms(PASSED))
        .chain(&forms(HEADER))
    {
        assert!(
            !text.contains(form.as_str()),
            "`{form}` in the cassette:\n{text}"
        );
    }
    // The recorded bodies are the bodies the server got: the first whole, the second as
    // the messages it added (the tools and system prompt are not written again).
    let requests: Vec<&Value> = events.iter().filter(|e| e["event"] == "request").collect();
    let first = &server.requests()[0].body;
    assert_eq!(&requests[0]["body"], first);
    let sent = &server.requests()[1].body;
    assert!(requests[1].get("body").is_none(), "{}", requests[1]);
    assert!(requests[1].get("changed").is_none(), "{}", requests[1]);
    let from = requests[1]["messagesFrom"].as_u64().unwrap() as usize;
    let mut rebuilt = first["messages"].as_array().unwrap()[..from].to_vec();
    rebuilt.extend(requests[1]["messages"].as_array().unwrap().iter().cloned());
    let sent_messages = sent["messages"].as_array().unwrap();
    assert_eq!(
        rebuilt.len(),
        sent_messages.len(),
        "from {from}: {}",
        requests[1]
    );
    // Equal but for what the redactor masked (the model's answer quotes the secrets).
    for (i, (a, b)) in rebuilt.iter().zip(sent_messages).enumerate() {
        assert!(
            a == b || (a["role"] == b["role"] && a.to_string().contains("*****")),
            "message {i} (from {from}): {a} / {b}"
        );
    }
    assert_eq!(&first["tools"], &sent["tools"]);

    // Offline: no key, no model server, no MCP program, another directory (with the
    // project's lock), the cassette passes.
    drop(server);
    let elsewhere = tempfile::tempdir().unwrap();
    fs::copy(
        p.path().join("presets.lock"),
        elsewhere.path().join("presets.lock"),
    )
    .unwrap();
    let gone = Preset {
        fx_argv: "[/nonexistent/mcp-fixture]".into(),
        web_url: "http://127.0.0.1:9/mcp".into(),
        ..preset
    };
    p.write_preset(&gone.yaml());
    let offline = |p: &Project| {
        p.run_in(elsewhere.path(), &["test", cassette_arg], |c| {
            c.env_remove("TEST_MODEL_KEY")
                .env_remove("PASSED_SETTING")
                .env_remove("WEB_TOKEN");
        })
    };
    let replay = offline(&p);
    assert_eq!(replay.code, 0, "{replay:?}");
    assert!(
        replay.stdout.contains("ok ") && replay.stdout.contains("(2 steps)"),
        "{replay:?}"
    );
    assert!(replay.stdout.contains("1 passed, 0 failed"), "{replay:?}");

    // One word of a section: drift at the system prompt, located at the section.
    let focus = Preset {
        focus: "Review for typos and style.",
        ..gone
    };
    p.write_preset(&focus.yaml());
    let drift = offline(&p);
    assert_eq!(drift.code, 1, "{drift:?}");
    for needle in [
        "error[P0601]",
        "step 1's request differs from the recording at `/messages/0/content`",
        "section `focus` changed",
        "agent.yaml:12:",
        "-Review for typos only.",
        "+Review for typos and style.",
    ] {
        assert!(drift.stderr.contains(needle), "{needle}: {drift:?}");
    }
    assert!(
        drift.stderr.contains(&format!("{cassette_arg}:")),
        "{drift:?}"
    );
    assert!(drift.stdout.contains("FAILED"), "{drift:?}");

    // A narrowed allowlist: the recorded call is named.
    let narrow = Preset {
        allow: "read_file, mcp__fx__echo, mcp__web__add",
        focus: "Review for typos only.",
        ..focus
    };
    p.write_preset(&narrow.yaml());
    let hidden = offline(&p);
    assert_eq!(hidden.code, 1, "{hidden:?}");
    assert!(hidden.stderr.contains("error[P0602]"), "{hidden:?}");
    assert!(
        hidden
            .stderr
            .contains("recorded call to `word_count` is now hidden"),
        "{hidden:?}"
    );

    // A command tool's description: drift naming the tool.
    let described = Preset {
        allow: ALLOW,
        count_description: "Count the words, quickly.",
        ..narrow
    };
    p.write_preset(&described.yaml());
    let changed = offline(&p);
    assert_eq!(changed.code, 1, "{changed:?}");
    assert!(changed.stderr.contains("error[P0601]"), "{changed:?}");
    assert!(
        changed.stderr.contains("tool `word_count` changed"),
        "{changed:?}"
    );
    assert!(
        changed.stderr.contains("/function/description`"),
        "{changed:?}"
    );

    // Back as recorded: it passes again.
    let back = Preset {
        count_description: "Count the words of the arguments.",
        ..described
    };
    p.write_preset(&back.yaml());
    assert_eq!(offline(&p).code, 0);

    // Live tools: read_file and the command tool run again on a copy of the workspace.
    let workspace = p.path();
    let live = |p: &Project| {
        p.run_in(
            elsewhere.path(),
            &[
                "test",
                cassette_arg,
                "--tools",
                "live",
                "--workspace",
                workspace.to_str().unwrap(),
            ],
            |c| {
                c.env_remove("TEST_MODEL_KEY");
            },
        )
    };
    let same = live(&p);
    assert_eq!(same.code, 0, "{same:?}");
    fs::write(p.path().join("notes.txt"), "other notes\n").unwrap();
    let other = live(&p);
    assert_eq!(other.code, 1, "{other:?}");
    assert!(
        other
            .stderr
            .contains("tool `read_file` (call `c0`) now returns another result"),
        "{other:?}"
    );
    assert!(
        other.stderr.contains("the notes") && other.stderr.contains("other notes"),
        "{other:?}"
    );
    assert!(!other.stderr.contains("word_count"), "{other:?}");
    // The copy is gone; the recorded tools still pass.
    assert_eq!(offline(&p).code, 0);
    let no_dir = p.run_in(
        elsewhere.path(),
        &["test", cassette_arg, "--tools", "live"],
        |_| {},
    );
    assert_eq!(no_dir.code, 2, "{no_dir:?}");
}

#[test]
fn a_damaged_or_unknown_cassette_is_exit_2_with_its_line() {
    let p = Project::new();
    let dir = p.out.path();
    let header = json!({"event": "header", "format": 1, "preset": "standard"}).to_string();
    let cases = [
        ("empty.jsonl", String::new(), "empty"),
        ("garbage.jsonl", "{not json\n".to_owned(), ":1:"),
        (
            "future.jsonl",
            header.replace("\"format\":1", "\"format\":9") + "\n",
            "cassette format 9",
        ),
        ("cut.jsonl", format!("{header}\n"), "line 1"),
    ];
    for (name, text, needle) in cases {
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        let run = p.run(&["test", path.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{name}: {run:?}");
        assert!(run.stderr.contains(needle), "{name} {needle}: {run:?}");
        assert!(!run.stderr.contains("panicked"), "{run:?}");
        let code = if name == "future.jsonl" {
            "P0604"
        } else {
            "P0603"
        };
        assert!(run.stderr.contains(code), "{name}: {run:?}");
    }
    let run = p.run(&["test", dir.join("missing.jsonl").to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("cannot read the cassette"), "{run:?}");
}
