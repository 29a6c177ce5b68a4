//! `lock --connect` and `validate --connect` start servers as `run` does: the preset's
//! sandbox (default `workspace-write`), the same environment rules (no provider key,
//! whatever `passEnv` says), one spawn path and one profile, with the reads the program
//! itself needs derived from it (a virtualenv works without `allowRead`).

use crate::support::mcp_fixture;
use crate::support::mock_provider::{self as mock, MockProvider, Reply};

use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tempfile::TempDir;

const KEY: &str = "sk-connect-test-0123456789abcdefghij";

struct Project {
    dir: TempDir,
    config: TempDir,
}

#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Project {
    /// A project whose `agent` preset (the user's own: no trust asked) extends `standard`,
    /// talks to `server` and adds `extra`.
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
            .env("TEST_MODEL_KEY", KEY)
            .env("DEEPSEEK_API_KEY", "sk-deepseek-never-passed-0123456789")
            .env("OPENAI_API_KEY", "sk-openai-never-passed-0123456789")
            .env("LOOKS_FINE", "passed")
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

/// A kernel that cannot sandbox refuses every sandboxed start: nothing to compare.
fn cannot_sandbox(run: &Run) -> bool {
    let no = run.stderr.contains("cannot be enforced here");
    if no {
        eprintln!("skipped: this kernel cannot sandbox ({})", run.stderr);
    }
    no
}

/// The line of `stderr` that says what the sandbox may have stopped.
fn sandbox_line(stderr: &str) -> String {
    let at = stderr
        .find("the `workspace-write` sandbox may be what stopped it")
        .unwrap_or_else(|| panic!("no sandbox help: {stderr}"));
    stderr[at..].lines().next().unwrap().to_owned()
}

/// `lock --connect` and `validate --connect` start a server in the preset's sandbox
/// (it writes the workspace, not `/tmp`) with no provider key in its environment, even
/// one its `passEnv` lists (today: unconfined, and the keys passed).
#[test]
fn connect_starts_servers_in_the_presets_sandbox_without_provider_keys() {
    let server = MockProvider::start(vec![]);
    for (i, command) in [["lock", "--connect"], ["validate", "--connect"]]
        .iter()
        .enumerate()
    {
        let outside =
            std::env::temp_dir().join(format!("agent-presets-connect-{}-{i}", std::process::id()));
        let _ = fs::remove_file(&outside);
        let p = Project::new(
            &server,
            &format!(
                "mcpServers:\n  fx:\n    command: [sh, -c, 'env > env.txt; echo x > {}; exit 3']\n    passEnv: [OPENAI_API_KEY, DEEPSEEK_API_KEY, TEST_MODEL_KEY, LOOKS_FINE]\ntools:\n  allow: [read_file, \"mcp__fx__*\"]\n",
                outside.display()
            ),
        );
        let run = p.run(command);
        if cannot_sandbox(&run) {
            return;
        }
        assert_eq!(run.code, 1, "{command:?}: {run:?}");
        assert!(
            format!("{}{}", run.stdout, run.stderr).contains("P0506"),
            "{run:?}"
        );
        let env = fs::read_to_string(p.path().join("env.txt"))
            .unwrap_or_else(|e| panic!("{command:?}: the server did not run ({e}): {run:?}"));
        assert!(env.contains("LOOKS_FINE=passed"), "{env}");
        for key in [
            "OPENAI_API_KEY",
            "DEEPSEEK_API_KEY",
            "TEST_MODEL_KEY",
            "sk-",
        ] {
            assert!(
                !env.contains(key),
                "{command:?}: {key} reached the server: {env}"
            );
        }
        assert!(
            !outside.exists(),
            "{command:?}: the server wrote outside the workspace"
        );
        // The preset is told why it cannot have them.
        let run = p.run(&["validate", "agent", "--format", "json"]);
        let v: Value = serde_json::from_str(&run.stdout).unwrap();
        let exposed = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == "P0507")
            .count();
        assert_eq!(exposed, 3, "{v:#}");
    }
}

/// The argv of the MCP fixture with the test binary hidden from the sandbox's derivation
/// (named by a variable, not an argument): the sandbox cannot read it.
fn hidden_fixture_yaml() -> String {
    let exe = std::env::current_exe().unwrap();
    format!(
        "mcpServers:\n  fx:\n    command: [/bin/sh, -c, 'exec 3>&1 1>/dev/null; exec \"$FX_BIN\" {} --exact --nocapture --test-threads=1 -q']\n    env: {{FX_BIN: '{}', AGENT_PRESETS_MCP_FIXTURE: ''}}\n    startupTimeout: 30s\n    readOnly: true\ntools:\n  allow: [read_file, mcp__fx__echo]\n",
        mcp_fixture::ENTRY_TEST,
        exe.display()
    )
}

/// One spawn path, one profile: a server the sandbox refuses fails `lock --connect`
/// exactly as it fails `run` (today `lock --connect` starts it unconfined and locks, and
/// only `run` says "Permission denied").
#[test]
fn a_server_the_sandbox_refuses_fails_alike_in_lock_connect_and_run() {
    let server = MockProvider::start(vec![Reply::json(mock::openai_text("Unused."))]);
    let p = Project::new(&server, &hidden_fixture_yaml());
    let lock = p.run(&["lock", "--connect"]);
    if cannot_sandbox(&lock) {
        return;
    }
    assert_eq!(lock.code, 1, "{lock:?}");
    assert!(
        lock.stderr.contains("MCP server `fx` did not start"),
        "{lock:?}"
    );
    assert!(!p.path().join("presets.lock").exists());
    let validate = p.run(&["validate", "--connect", "agent"]);
    assert_eq!(validate.code, 1, "{validate:?}");
    assert!(
        validate.stdout.contains("sandbox may be what stopped it"),
        "{validate:?}"
    );
    // `run` needs the server locked: its listing from the same preset run unconfined.
    let q = Project::new(
        &server,
        &format!("sandbox: full-access\n{}", hidden_fixture_yaml()),
    );
    assert_eq!(q.run(&["lock", "--connect"]).code, 0);
    fs::copy(q.path().join("presets.lock"), p.path().join("presets.lock")).unwrap();
    let run = p.run(&["run", "agent", "Use your tools."]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("MCP server `fx` did not start"),
        "{run:?}"
    );
    assert_eq!(sandbox_line(&lock.stderr), sandbox_line(&run.stderr));
}

/// The same server with the binary as an argument: the sandbox derives the read, and
/// both `lock --connect` and `run` start it without `allowRead` (today `run` is denied).
#[test]
fn a_server_whose_program_the_sandbox_derives_starts_alike_in_lock_connect_and_run() {
    let argv = serde_json::to_string(&mcp_fixture::stdio_argv()).unwrap();
    let calls = json!([{"id": "c1", "type": "function", "function": {"name": "mcp__fx__echo", "arguments": "{\"text\":\"hello sandbox\"}"}}]);
    let server = MockProvider::start(vec![
        Reply::json(json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": calls}, "finish_reason": "tool_calls"}]
        })),
        Reply::json(mock::openai_text("Done.")),
    ]);
    let p = Project::new(
        &server,
        &format!(
            "mcpServers:\n  fx:\n    command: {argv}\n    env: {{AGENT_PRESETS_MCP_FIXTURE: ''}}\n    startupTimeout: 30s\n    readOnly: true\ntools:\n  allow: [read_file, mcp__fx__echo]\n"
        ),
    );
    let lock = p.run(&["lock", "--connect"]);
    if cannot_sandbox(&lock) {
        return;
    }
    assert_eq!(lock.code, 0, "{lock:?}");
    let run = p.run(&["run", "agent", "Use your tools."]);
    assert_eq!(run.code, 0, "{run:?}");
    let result = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .clone();
    assert!(result.to_string().contains("hello sandbox"), "{result}");
}

/// `mcp-server-time` installed in a virtualenv (the one .ci/run makes): `lock --connect`
/// and `run` under the default sandbox, no `allowRead` (today: "Permission denied").
#[test]
fn a_virtualenv_server_runs_under_the_default_sandbox_without_allow_read() {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv");
    let program = venv.join("bin/mcp-server-time");
    if !program.is_file() {
        assert!(
            std::env::var("AGENT_PRESETS_REQUIRE_THIRD_PARTY_MCP").is_err(),
            "mcp-server-time is not installed in target/mcp-venv"
        );
        eprintln!("skipped: target/mcp-venv/bin/mcp-server-time is not installed");
        return;
    }
    let calls = json!([{"id": "c1", "type": "function", "function": {"name": "mcp__time__get_current_time", "arguments": "{\"timezone\":\"UTC\"}"}}]);
    let server = MockProvider::start(vec![
        Reply::json(json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": calls}, "finish_reason": "tool_calls"}]
        })),
        Reply::json(mock::openai_text("Done.")),
    ]);
    let p = Project::new(
        &server,
        &format!(
            "mcpServers:\n  time:\n    command: [{}, --local-timezone, UTC]\n    startupTimeout: 30s\n    readOnly: true\ntools:\n  allow: [read_file, \"mcp__time__*\"]\n",
            program.display()
        ),
    );
    let lock = p.run(&["lock", "--connect"]);
    if cannot_sandbox(&lock) {
        return;
    }
    assert_eq!(lock.code, 0, "{lock:?}");
    let run = p.run(&["run", "agent", "What time is it?"]);
    assert_eq!(run.code, 0, "{run:?}");
    let result = server.requests()[1].body["messages"].to_string();
    assert!(result.contains("UTC"), "{result}");
}

/// The lock binds what runs: `lock --connect` records each server's argv, its program's
/// resolved path and digest (and its scripts'); `validate --locked` and `run` refuse a
/// preset whose command now starts something else, or whose program changed (today both
/// stay green: the prefix and the pinned tools are the same).
#[test]
fn the_lock_binds_a_servers_command_and_program() {
    let server = MockProvider::start(vec![Reply::json(mock::openai_text("Unused."))]);
    let mut argv = mcp_fixture::stdio_argv();
    // A copy of the shell in the workspace: a program whose bytes the test can change.
    argv[0] = "./bin/fxsh".to_owned();
    let yaml = |argv: &[String]| {
        format!(
            "mcpServers:\n  fx:\n    command: {}\n    env: {{AGENT_PRESETS_MCP_FIXTURE: ''}}\n    startupTimeout: 30s\n    readOnly: true\ntools:\n  allow: [read_file, mcp__fx__echo]\n",
            serde_json::to_string(argv).unwrap()
        )
    };
    let p = Project::new(&server, &yaml(&argv));
    let sh = p.path().join("bin/fxsh");
    fs::create_dir_all(sh.parent().unwrap()).unwrap();
    fs::copy("/bin/sh", &sh).unwrap();
    let lock = p.run(&["lock", "--connect"]);
    if cannot_sandbox(&lock) {
        return;
    }
    assert_eq!(lock.code, 0, "{lock:?}");
    let text = fs::read_to_string(p.path().join("presets.lock")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let fx = &v["presets"]["agent"]["servers"]["fx"];
    assert_eq!(fx["command"], json!(argv), "{fx:#}");
    assert_eq!(fx["program"]["path"], json!(sh.to_string_lossy()), "{fx:#}");
    assert!(
        fx["program"]["sha256"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let exe = fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
    assert_eq!(
        fx["scripts"][0]["path"],
        json!(exe.to_string_lossy()),
        "{fx:#}"
    );
    // What ran comes before what it listed, for a readable diff.
    let keys: Vec<&String> = fx.as_object().unwrap().keys().collect();
    assert_eq!(keys[..3], ["command", "program", "scripts"]);
    assert_eq!(p.run(&["validate", "--locked"]).code, 0);
    // `lock` without `--connect` keeps what `--connect` bound.
    assert_eq!(p.run(&["lock"]).code, 0);
    assert_eq!(
        fs::read_to_string(p.path().join("presets.lock")).unwrap(),
        text
    );

    // Another package swapped in: the prefix and the pinned tools are the same.
    let preset = p.config.path().join("presets/agent.yaml");
    let original = fs::read_to_string(&preset).unwrap();
    let evil = ["npx", "-y", "@evil/deploy-mcp"].map(str::to_owned);
    fs::write(&preset, original.replace(&yaml(&argv), &yaml(&evil))).unwrap();
    let run = p.run(&["validate", "--locked", "agent", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "P0508")
        .unwrap_or_else(|| panic!("{v:#}"));
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("\"./bin/fxsh\""), "{message}");
    assert!(
        message.contains("→ `[\"npx\",\"-y\",\"@evil/deploy-mcp\"]`"),
        "{message}"
    );
    assert_eq!(d["line"], 11, "{d:#}");
    assert!(d["help"].as_str().unwrap().contains("lock --connect agent"));
    let run = p.run(&["run", "agent", "Use your tools."]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("error[P0508]"), "{run:?}");
    assert!(server.requests().is_empty(), "the run went on");

    // The program itself changed (an upgrade, a replaced file).
    fs::write(&preset, &original).unwrap();
    let mut bytes = fs::read(&sh).unwrap();
    bytes.extend_from_slice(b"\0upgraded");
    fs::write(&sh, bytes).unwrap();
    let run = p.run(&["validate", "--locked", "agent"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains(&format!("program `{}` changed (sha256:", sh.display())),
        "{run:?}"
    );
    // Re-locking accepts it.
    assert_eq!(p.run(&["lock", "--connect"]).code, 0);
    assert_eq!(p.run(&["validate", "--locked"]).code, 0);
}

/// The consent `--connect` asks for shows what each server gets (argv or URL, `passEnv`,
/// `env`, header sources by name, the sandbox); a preset trusted for exactly that
/// (`agent-presets trust`) is not asked about again (today: only the argv, and asked
/// every time).
#[test]
fn connect_consent_shows_what_a_server_gets_and_a_trusted_preset_is_not_asked_again() {
    let server = MockProvider::start(vec![]);
    let p = Project::new(&server, "");
    let file = p.path().join(".agent-presets/triage.yaml");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(
        &file,
        "version: 1\nname: triage\nextends: standard\nmcpServers:\n  fx:\n    command: [sh, -c, exit 1]\n    passEnv: [LOOKS_FINE]\n    env: {LOG_LEVEL: warn}\n  web:\n    url: https://mcp.example.com/mcp\n    headers: {Authorization: {fromEnv: WEB_TOKEN, prefix: \"Bearer \"}}\ntools:\n  allow: [read_file, \"mcp__fx__*\"]\n",
    )
    .unwrap();
    let run = p.run(&["lock", "--connect", "triage"]);
    assert_eq!(run.code, 2, "{run:?}");
    for needle in [
        "fx (preset `triage`, .agent-presets/triage.yaml): sh -c exit 1",
        "      passEnv: LOOKS_FINE",
        "      env: LOG_LEVEL=warn",
        "web (preset `triage`, .agent-presets/triage.yaml): https://mcp.example.com/mcp",
        "      header Authorization: from $WEB_TOKEN",
        "      sandbox: workspace-write",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {run:?}");
    }
    assert!(!run.stderr.contains("Bearer"), "{run:?}");
    // `trust` takes a valid preset: its servers' listings pinned (as an earlier
    // `lock --connect` would have).
    let listing = json!({"serverName": "x", "serverVersion": "1", "protocolVersion": "2025-06-18",
        "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]});
    let lock = json!({"version": 1, "encoding": "o200k_base", "values": {}, "presets": {"triage": {
        "provider": null, "model": null, "fingerprint": "sha256:0",
        "tokens": {"system": 0, "tools": 0, "prefix": 0}, "sections": [], "tools": [],
        "servers": {"fx": listing, "web": listing}}}});
    fs::write(p.path().join("presets.lock"), lock.to_string()).unwrap();
    let trust = p.run(&["trust", ".agent-presets/triage.yaml"]);
    assert_eq!(trust.code, 0, "{trust:?}");
    // Trusted: it starts (and fails: `exit 1` is no server) without asking.
    let run = p.run(&["lock", "--connect", "triage"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(!run.stderr.contains("you have not trusted yet"), "{run:?}");
    // Changed since: asked again.
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, text.replace("exit 1", "exit 2")).unwrap();
    assert_eq!(p.run(&["lock", "--connect", "triage"]).code, 2);
}
