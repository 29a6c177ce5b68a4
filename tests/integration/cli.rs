//! The CLI through the built binary: every subcommand and every exit code. Each test runs
//! in its own temporary project directory, with the user preset directory pointed at an
//! empty temporary directory (so the machine's configuration never leaks in) and
//! `NO_COLOR=1`. Data-driven `validate` cases live in `tests/integration/cli_validate_cases.rs`.
#![cfg(feature = "cli")]

use crate::support::project;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use project::Run;
use serde_json::Value;
use tempfile::TempDir;

/// The flags that pin every built-in variable, so output is the same on every machine.
const PINNED: &[&str] = &[
    "--var",
    "date=2030-01-01",
    "--model",
    "deepseek-v4-flash",
    "--provider",
    "deepseek",
    "--var",
    "cwd=/workspace/demo",
    "--var",
    "os=linux",
    "--var",
    "shell=bash",
];

/// A fake key that matches the API-key pattern (and is no one's key).
const FAKE_KEY: &str = "sk-test0000000000000000000000000000";

/// A temporary project (the current directory of every run) and an empty user config.
struct Project {
    dir: TempDir,
    config: TempDir,
}

impl Project {
    fn new() -> Self {
        Project {
            dir: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    /// Copy a file of this repository into the project.
    fn copy_from_repo(&self, from: &str, to: &str) {
        let text = fs::read_to_string(repo(from)).unwrap();
        self.write(to, &text);
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_in(self.path(), args)
    }

    fn run_in(&self, cwd: &Path, args: &[&str]) -> Run {
        let mut command = Command::new(env!("CARGO_BIN_EXE_agent-presets"));
        command.args(args).current_dir(cwd);
        self.run_command(command)
    }

    /// Run `command` in the project's environment.
    fn run_command(&self, mut command: Command) -> Run {
        let output = command
            .env("AGENT_PRESETS_CONFIG_DIR", self.config.path())
            .env("NO_COLOR", "1")
            .env("SHELL", "/bin/bash")
            .output()
            .unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }
}

fn repo(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn with_pinned<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend_from_slice(PINNED);
    all
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

// ---------------------------------------------------------------- render

#[test]
fn render_standard_text() {
    let p = Project::new();
    let run = p.run(&with_pinned(&["render", "standard"]));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!("render_standard_text", run.stdout);
}

/// The output contract in each dialect's request body (issue 32): OpenAI's strict
/// `response_format`, Anthropic's `output_config.format`, DeepSeek's JSON mode with the
/// schema as an instruction. Only the parts the contract adds are snapshotted.
#[test]
fn render_output_contract_per_dialect() {
    let p = Project::new();
    for (provider, model, format) in [
        ("openai", "gpt-5-mini", "openai"),
        ("anthropic", "claude-sonnet-4-5", "anthropic"),
        ("deepseek", "deepseek-v4-flash", "openai"),
    ] {
        p.write(
            &format!(".agent-presets/{provider}.yaml"),
            &format!(
                "version: 1\nname: {provider}\nextends: minimal\nmodel: {{provider: {provider}, name: {model}}}\noutput:\n  schema: {{type: object, properties: {{verdict: {{enum: [pass, fail]}}, note: {{type: string, maxLength: 200}}}}, required: [verdict]}}\n"
            ),
        );
        let run = p.run(&with_pinned(&["render", provider, "--format", format]));
        assert_eq!(run.code, 0, "{run:?}");
        let body = json(&run.stdout);
        let picked: serde_json::Map<String, Value> =
            ["response_format", "output_config", "messages", "system"]
                .into_iter()
                .filter_map(|k| body.get(k).map(|v| (k.to_owned(), v.clone())))
                .collect();
        insta::assert_json_snapshot!(format!("render_output_contract_{provider}"), picked);
    }
}

#[test]
fn render_standard_json() {
    let p = Project::new();
    let run = p.run(&with_pinned(&["render", "standard", "--format", "json"]));
    assert_eq!(run.code, 0, "{run:?}");
    let v = json(&run.stdout);
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "preset",
            "model",
            "system",
            "tools",
            "context",
            "fingerprint",
            "tokens"
        ]
    );
    assert_eq!(
        v["model"],
        serde_json::json!({"provider": "deepseek", "name": "deepseek-v4-flash",
                           "baseUrl": "https://api.deepseek.com", "maxTokens": null})
    );
    assert_eq!(v["tokens"]["encoding"], "o200k_base");
    for part in ["system", "tools", "context"] {
        assert!(v["tokens"][part].as_u64().is_some_and(|n| n > 0), "{part}");
    }
    for tool in v["tools"].as_array().unwrap() {
        let keys: Vec<&String> = tool.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["name", "description", "parameters"]);
    }
    insta::assert_snapshot!("render_standard_json", run.stdout);
}

#[test]
fn render_minimal_is_one_sentence_two_tools_no_context() {
    let p = Project::new();
    let run = p.run(&with_pinned(&["render", "minimal"]));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with(
        "=== system ===\nYou are a helpful software engineer assistant.\n\n=== tools (2) ===\nbash\nedit_file\n\n=== context ===\n(none)\n\n=== fingerprint ===\nsha256:"
    ), "{run:?}");
    insta::assert_snapshot!("render_minimal_text", run.stdout);

    let run = p.run(&with_pinned(&["render", "minimal", "--format", "json"]));
    assert_eq!(run.code, 0, "{run:?}");
    let v = json(&run.stdout);
    assert_eq!(v["preset"], "minimal");
    assert_eq!(
        v["system"],
        "You are a helpful software engineer assistant."
    );
    assert_eq!(v["context"], Value::Null);
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bash", "edit_file"]);
    insta::assert_snapshot!("render_minimal_json", run.stdout);
}

#[test]
fn render_is_byte_identical_across_runs() {
    let p = Project::new();
    for format in ["text", "json"] {
        let args = with_pinned(&["render", "standard", "--format", format]);
        let a = p.run(&args);
        let b = p.run(&args);
        assert_eq!(a.code, 0, "{a:?}");
        assert_eq!(a.stdout.as_bytes(), b.stdout.as_bytes(), "{format}");
    }
}

/// `cargo run -- render standard` works on a fresh machine: no flags, no key, no network.
#[test]
fn render_standard_without_flags_uses_the_environment_and_model_block() {
    let p = Project::new();
    let run = p.run(&["render", "standard"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("powered by the deepseek-v4-flash model")
    );
    let cwd = p.path().canonicalize().unwrap();
    assert!(
        run.stdout
            .contains(&format!("Working directory: {}", cwd.display()))
            || run
                .stdout
                .contains(&format!("Working directory: {}", p.path().display())),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains(&format!("Operating system: {}", std::env::consts::OS))
    );
    assert!(run.stdout.contains("Shell: bash"));
    let date = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Today's date: "))
        .unwrap();
    assert!(
        date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-',
        "{date}"
    );
}

#[test]
fn render_var_overrides_builtins_and_flags() {
    let p = Project::new();
    let mut args = with_pinned(&["render", "standard"]);
    args.extend(["--var", "model=other-model", "--var", "cwd=/elsewhere"]);
    let run = p.run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("powered by the other-model model. Your working directory is /elsewhere.")
    );
}

#[test]
fn render_unknown_variable_is_a_usage_error_with_suggestion() {
    let p = Project::new();
    let run = p.run(&["render", "standard", "--var", "modle=x"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("unknown variable `modle`"), "{run:?}");
    assert!(run.stderr.contains("did you mean `model`?"), "{run:?}");
}

#[test]
fn render_tools_cannot_be_set() {
    let p = Project::new();
    let run = p.run(&["render", "standard", "--var", "tools=bash"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("`tools` cannot be set"), "{run:?}");
}

#[test]
fn render_bad_var_syntax_and_bad_provider_are_usage_errors() {
    let p = Project::new();
    let run = p.run(&["render", "standard", "--var", "novalue"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("expected KEY=VALUE"), "{run:?}");
    let run = p.run(&["render", "standard", "--provider", "deepsek"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("did you mean `deepseek`?"), "{run:?}");
}

#[test]
fn render_unknown_preset_is_a_usage_error() {
    let p = Project::new();
    let run = p.run(&["render", "standrd"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no preset named `standrd`"), "{run:?}");
    assert!(run.stderr.contains("did you mean `standard`?"), "{run:?}");
}

#[test]
fn render_invalid_preset_exits_1_with_diagnostics() {
    let p = Project::new();
    p.write(
        ".agent-presets/broken.yaml",
        "version: 1\nname: broken\nextends: standard\ntools:\n  allow: [read_fiel]\n",
    );
    let run = p.run(&["render", "broken"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .contains("error[P0103]: unknown tool `read_fiel`"),
        "{run:?}"
    );
    assert!(
        run.stderr.contains(" --> .agent-presets/broken.yaml:5:11"),
        "{run:?}"
    );
}

#[test]
fn render_without_a_model_says_to_pass_model() {
    let p = Project::new();
    p.write(
        ".agent-presets/bare.yaml",
        "version: 1\nname: bare\npersona:\n  sections:\n    - name: persona\n      order: 0\n      text: You are {{ model }}.\n",
    );
    let run = p.run(&["render", "bare"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("error[P0042]: variable `model` has no value"),
        "{run:?}"
    );
    assert!(run.stderr.contains("pass `--model NAME`"), "{run:?}");
    let run = p.run(&["render", "bare", "--model", "m1"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("=== system ===\nYou are m1.\n"),
        "{run:?}"
    );
}

#[test]
fn render_required_variable_must_be_given() {
    let p = Project::new();
    p.copy_from_repo(
        "presets/examples/ci-triage.yaml",
        ".agent-presets/ci-triage.yaml",
    );
    let run = p.run(&with_pinned(&["render", "ci-triage"]));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("required variable `job` has no value"),
        "{run:?}"
    );
    let mut args = with_pinned(&["render", "ci-triage"]);
    args.extend(["--var", "job=test-linux"]);
    let run = p.run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("failed CI job `test-linux`"), "{run:?}");
    assert!(
        run.stdout
            .contains("=== tools (5) ===\nread_file\ngrep\nbash\nglob\nlist_dir\n"),
        "{run:?}"
    );
    assert!(run.stdout.contains("CI log: ci.log"), "{run:?}");
    assert!(
        !run.stdout.contains("When you are done, reply briefly"),
        "removed section"
    );
}

#[test]
fn render_warnings_go_to_stderr_and_output_still_renders() {
    let p = Project::new();
    p.write(
        ".agent-presets/dated.yaml",
        "version: 1\nname: dated\nextends: minimal\npersona:\n  sections:\n    - name: persona\n      order: 0\n      complete: true\n      text: Today is {{ date }}.\n",
    );
    let run = p.run(&["render", "dated", "--var", "date=2030-01-01"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .starts_with("=== system ===\nToday is 2030-01-01.\n"),
        "{run:?}"
    );
    assert!(run.stderr.contains("warning[P0044]"), "{run:?}");
}

// ---------------------------------------------------------------- validate

fn bad_project() -> Project {
    let p = Project::new();
    p.write(
        ".agent-presets/reviewer.yaml",
        "version: 1
name: reviewer
description: Read-only reviewer with three mistakes.
extends: standard
persona:
  sections:
    - name: review-rules
      order: 150
      text: |
        Review the {{ projct }} project.
        Today is {{ date }}.
variables:
  project:
    description: The project's name.
    default: demo
tools:
  allow: [read_fiel, grep]
",
    );
    p
}

#[test]
fn validate_default_is_every_preset_and_exits_0() {
    let p = Project::new();
    let run = p.run(&["validate"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "2 presets valid, 0 invalid (0 errors, 0 warnings)\n"
    );
}

#[test]
fn validate_human_report() {
    let p = bad_project();
    let run = p.run(&["validate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!("validate_human", run.stdout);
}

#[test]
fn validate_json_report() {
    let p = bad_project();
    let run = p.run(&["validate", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v = json(&run.stdout);
    for d in v["diagnostics"].as_array().unwrap() {
        let keys: Vec<&String> = d.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "code", "kind", "severity", "message", "file", "line", "column", "help"
            ]
        );
    }
    insta::assert_snapshot!("validate_json", run.stdout);
}

#[test]
fn validate_github_format() {
    let p = bad_project();
    let run = p.run(&["validate", "--format", "github"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains(
        "::error file=.agent-presets/reviewer.yaml,line=17,endLine=17,col=11,endColumn=19,title=P0103 unknown-tool::unknown tool `read_fiel` (did you mean `read_file`?)\n"
    ), "{run:?}");
    assert!(run.stdout.contains("::warning file=.agent-presets/reviewer.yaml,line=11,endLine=11,col=21,endColumn=24,title=P0044 volatile-in-prefix::"), "{run:?}");
    assert!(
        run.stdout
            .ends_with("2 presets valid, 1 invalid (2 errors, 1 warning)\n"),
        "{run:?}"
    );
}

#[test]
fn validate_sarif_format() {
    let p = bad_project();
    let run = p.run(&["validate", "--format", "sarif"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v = json(&run.stdout);
    assert_eq!(v["version"], "2.1.0");
    let sarif_run = &v["runs"][0];
    assert_eq!(sarif_run["tool"]["driver"]["name"], "agent-presets");
    let rules = sarif_run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), agent_presets::DiagnosticKind::ALL.len());
    let results = sarif_run["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let unknown_tool = results.iter().find(|r| r["ruleId"] == "P0103").unwrap();
    assert_eq!(unknown_tool["level"], "error");
    let index = unknown_tool["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[index]["id"], "P0103");
    let region = &unknown_tool["locations"][0]["physicalLocation"]["region"];
    assert_eq!(
        (region["startLine"].as_u64(), region["startColumn"].as_u64()),
        (Some(17), Some(11))
    );
    assert_eq!(
        unknown_tool["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        ".agent-presets/reviewer.yaml"
    );
    let warning = results.iter().find(|r| r["ruleId"] == "P0044").unwrap();
    assert_eq!(warning["level"], "warning");
}

#[test]
fn validate_names_and_paths() {
    let p = bad_project();
    p.write(
        "elsewhere/tidy.yaml",
        "version: 1\nname: tidy\nextends: minimal\n",
    );
    let run = p.run(&["validate", "standard", "elsewhere/tidy.yaml", "standard"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "2 presets valid, 0 invalid (0 errors, 0 warnings)\n"
    );
    let run = p.run(&["validate", "reviewer", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v = json(&run.stdout);
    assert_eq!(v["presets"].as_array().unwrap().len(), 1);
    assert_eq!(v["presets"][0]["file"], ".agent-presets/reviewer.yaml");
}

#[test]
fn validate_deny_warnings() {
    let p = Project::new();
    p.write(
        ".agent-presets/dated.yaml",
        "version: 1\nname: dated\nextends: standard\npersona:\n  sections:\n    - name: today\n      order: 150\n      text: Today is {{ date }}.\n",
    );
    let run = p.run(&["validate"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .ends_with("3 presets valid, 0 invalid (0 errors, 1 warning)\n"),
        "{run:?}"
    );
    let run = p.run(&["validate", "--deny-warnings"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .ends_with("2 presets valid, 1 invalid (0 errors, 1 warning)\n"),
        "{run:?}"
    );
}

#[test]
fn validate_missing_path_and_unreadable_dir_exit_2() {
    let p = Project::new();
    let run = p.run(&["validate", "nope/missing.yaml"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stdout
            .contains("cannot read preset file `nope/missing.yaml`"),
        "{run:?}"
    );
    // Machine-readable formats carry the I/O error too, on stdout.
    let run = p.run(&["validate", "nope/missing.yaml", "--format", "json"]);
    assert_eq!(run.code, 2, "{run:?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("json on stdout");
    assert_eq!(json["diagnostics"][0]["kind"], "io", "{json}");
    assert_eq!(json["presets"][0]["valid"], false, "{json}");
    // An unreadable `--preset-dir` is reported with the rest (exit 2); what could be
    // found is still validated.
    let run = p.run(&["--preset-dir", "no-such-dir", "validate"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stdout
            .contains("cannot read preset directory `no-such-dir`"),
        "{run:?}"
    );
    assert!(run.stdout.contains("2 presets valid"), "{run:?}");
}

#[cfg(unix)]
#[test]
fn validate_unreadable_project_file_exits_2() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    let path = p.write(".agent-presets/locked.yaml", "version: 1\nname: locked\n");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&path).is_ok() {
        // Running as root: permissions do not stop reads, nothing to test.
        return;
    }
    let run = p.run(&["validate"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stdout.contains("error[P0009]"), "{run:?}");
}

/// A secret is never printed: the snippet masks it, in every format.
#[test]
fn validate_never_prints_a_secret() {
    let p = Project::new();
    p.write(
        ".agent-presets/leaky.yaml",
        &format!(
            "version: 1\nname: leaky\nextends: standard\nmodel:\n  provider: deepseek\n  name: deepseek-v4-flash\n  apiKeyEnv: {FAKE_KEY}\npersona:\n  sections:\n    - name: access\n      order: 150\n      descripton: use {FAKE_KEY} here\n      text: Use the key {FAKE_KEY} for staging.\n"
        ),
    );
    for format in ["human", "json", "github", "sarif"] {
        let run = p.run(&["validate", "--format", format]);
        assert_eq!(run.code, 1, "{format}: {run:?}");
        assert!(!run.stdout.contains("sk-test"), "{format}: {run:?}");
        assert!(!run.stderr.contains("sk-test"), "{format}: {run:?}");
    }
    let run = p.run(&["validate", "leaky"]);
    // The parse error on line 12 shows its line: the key on it is masked too.
    assert!(
        run.stdout
            .contains("error[P0003]: unknown key `descripton`"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("descripton: use *********************************** here"),
        "{run:?}"
    );
    let p = Project::new();
    p.write(
        ".agent-presets/leaky.yaml",
        &format!(
            "version: 1\nname: leaky\nextends: standard\nmodel:\n  provider: deepseek\n  name: deepseek-v4-flash\n  apiKeyEnv: {FAKE_KEY}\n"
        ),
    );
    let run = p.run(&["validate", "leaky"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(!run.stdout.contains("sk-test"), "{run:?}");
    assert!(run.stdout.contains("error[P0201]"), "{run:?}");
    assert!(
        run.stdout.contains("7 |   apiKeyEnv: ***********************************\n  |              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"),
        "{run:?}"
    );
}

#[test]
fn plain_http_to_another_host_needs_allow_insecure_and_is_warned_about() {
    let p = Project::new();
    let lan = |extra: &str| {
        format!(
            "version: 1\nname: lan\nextends: standard\nmodel:\n  provider: openai-compatible\n  name: m\n  baseUrl: http://192.168.1.20:8080/v1\n{extra}"
        )
    };
    p.write(".agent-presets/lan.yaml", &lan(""));
    let run = p.run(&["validate", "lan"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("error[P0202]")
            && run.stdout.contains("lan.yaml:7:12")
            && run.stdout.contains("allowInsecure: true"),
        "{run:?}"
    );
    p.write(".agent-presets/lan.yaml", &lan("  allowInsecure: true\n"));
    let run = p.run(&["validate", "lan"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("warning[P0203]") && run.stdout.contains("lan.yaml:8:18"),
        "{run:?}"
    );
    // The loopback is fine over plain http, without a word.
    p.write(
        ".agent-presets/lan.yaml",
        &lan("").replace("192.168.1.20", "127.0.0.1"),
    );
    let run = p.run(&["validate", "lan"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("P020"), "{run:?}");
}

#[test]
fn validate_the_example_presets_by_path_and_by_directory() {
    let p = Project::new();
    let examples: Vec<String> = fs::read_dir(repo("presets/examples"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    assert!(examples.len() >= 3);
    let mut args = vec!["validate", "--deny-warnings"];
    args.extend(examples.iter().map(String::as_str));
    let run = p.run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    let dir = repo("presets/examples");
    let run = p.run(&[
        "--preset-dir",
        dir.to_str().unwrap(),
        "validate",
        "--deny-warnings",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "{} presets valid, 0 invalid (0 errors, 0 warnings)\n",
            examples.len() + 2
        )
    );
}

// ---------------------------------------------------------------- show

#[test]
fn show_reviewer() {
    let p = Project::new();
    p.copy_from_repo(
        "presets/examples/reviewer.yaml",
        ".agent-presets/reviewer.yaml",
    );
    let run = p.run(&["show", "reviewer"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stderr, "");
    insta::assert_snapshot!("show_reviewer", run.stdout);
}

/// `show` prints a flattened preset: saved as a file of its own (no `extends`), it
/// renders to exactly the same request.
#[test]
fn show_output_is_an_equivalent_flat_preset() {
    for name in [
        "standard",
        "minimal",
        "reviewer",
        "ci-triage",
        "shell-helper",
    ] {
        let p = Project::new();
        let examples = repo("presets/examples");
        let examples = examples.to_str().unwrap();
        let shown = p.run(&["--preset-dir", examples, "show", name]);
        assert_eq!(shown.code, 0, "{name}: {shown:?}");
        let flat = Project::new();
        let flat_name = format!("flat-{name}");
        let text = shown
            .stdout
            .replace(&format!("name: {name}\n"), &format!("name: {flat_name}\n"));
        flat.write(&format!(".agent-presets/{flat_name}.yaml"), &text);
        let mut original = with_pinned(&["--preset-dir", examples, "render", name]);
        let mut copy = with_pinned(&["render", &flat_name]);
        for args in [&mut original, &mut copy] {
            args.extend(["--format", "json"]);
            if name == "ci-triage" {
                args.extend(["--var", "job=build"]);
            }
        }
        let a = p.run(&original);
        let b = flat.run(&copy);
        assert_eq!(a.code, 0, "{name}: {a:?}");
        assert_eq!(b.code, 0, "{name}: {b:?}\n{text}");
        let (a, b) = (json(&a.stdout), json(&b.stdout));
        assert_eq!(a["system"], b["system"], "{name}");
        assert_eq!(a["tools"], b["tools"], "{name}");
        assert_eq!(a["context"], b["context"], "{name}");
        assert_eq!(a["fingerprint"], b["fingerprint"], "{name}");
    }
}

#[test]
fn show_notes_origins_removals_and_wire_order() {
    let p = Project::new();
    p.copy_from_repo(
        "presets/examples/ci-triage.yaml",
        ".agent-presets/ci-triage.yaml",
    );
    let run = p.run(&["show", "ci-triage"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("  # removed: communication (.agent-presets/ci-triage.yaml:12)\n"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("    - name: triage  # .agent-presets/ci-triage.yaml:14\n"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("model:  # <builtin>/standard.yaml:11\n"),
        "{run:?}"
    );
    assert!(run.stdout.contains("  order:  # the wire order is not name order\n    - read_file\n    - grep\n    - bash\n"), "{run:?}");
    let run = p.run(&["show", "minimal"]);
    assert!(
        run.stdout
            .contains("  includeRuntimeContext: false  # <builtin>/minimal.yaml:14\n"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("contexts"), "{run:?}");
}

#[test]
fn show_errors() {
    let p = bad_project();
    let run = p.run(&["show", "reviewer"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("error[P0103]"), "{run:?}");
    let run = p.run(&["show", "reviewr"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("did you mean `reviewer`?"), "{run:?}");
}

// ---------------------------------------------------------------- list

#[test]
fn list_human_and_json() {
    let p = Project::new();
    p.copy_from_repo(
        "presets/examples/reviewer.yaml",
        ".agent-presets/reviewer.yaml",
    );
    p.write(
        ".agent-presets/broken.yaml",
        "version: 1\nname: broken\nnope: 1\n",
    );
    fs::create_dir_all(p.config.path().join("presets")).unwrap();
    fs::write(
        p.config.path().join("presets/mine.yaml"),
        "version: 1\nname: mine\nextends: minimal\ndescription: From the user directory.\n",
    )
    .unwrap();
    let run = p.run(&["list"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "NAME      SOURCE   DESCRIPTION
broken    project  (invalid: run `agent-presets validate broken`)
mine      user     From the user directory.
minimal   builtin  One-sentence system prompt with bash and edit_file; no runtime context.
reviewer  project  Read-only code reviewer; reports findings with file and line, changes nothing.
standard  builtin  General-purpose coding agent with every built-in tool and runtime context.
"
    );
    let run = p.run(&["list", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let v = json(&run.stdout);
    let first = &v["presets"][0];
    assert_eq!(first["name"], "broken");
    assert_eq!(first["source"], "project");
    assert_eq!(first["file"], ".agent-presets/broken.yaml");
    assert_eq!(first["description"], Value::Null);
    assert_eq!(v["presets"][2]["file"], "<builtin>/minimal.yaml");
}

#[test]
fn list_reports_refused_files_on_stderr() {
    let p = Project::new();
    p.write(
        ".agent-presets/standard.yaml",
        "version: 1\nname: standard\n",
    );
    let run = p.run(&["list"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("error[P0013]"), "{run:?}");
    let run = p.run(&["--preset-dir", "missing", "list"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn project_dir_option() {
    let p = Project::new();
    p.copy_from_repo(
        "presets/examples/reviewer.yaml",
        "proj/.agent-presets/reviewer.yaml",
    );
    let run = p.run(&["--project-dir", "proj", "list"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("reviewer  project"), "{run:?}");
    let run = p.run(&["validate", "--project-dir", "proj", "--format", "json"]);
    let v = json(&run.stdout);
    assert!(
        v["presets"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["file"] == "proj/.agent-presets/reviewer.yaml"),
        "{run:?}"
    );
    let run = p.run(&["--project-dir", "nowhere", "list"]);
    assert_eq!(run.code, 2, "{run:?}");
}

// ---------------------------------------------------------------- --var-file streams

/// `--var-file` takes what the user hands it: a process substitution `<(cmd)` (a pipe
/// under `/dev/fd`) and a named FIFO whose writer comes later are read, bounded by the
/// size limit; preset discovery still skips a FIFO (it never blocks on one).
#[cfg(unix)]
#[test]
fn var_file_reads_pipes_the_user_names() {
    let p = Project::new();
    let pinned = "--var os=linux --var shell=bash --var cwd=/w --model m --provider deepseek";
    let bin = env!("CARGO_BIN_EXE_agent-presets");
    let bash = |script: &str| {
        let mut command = Command::new("bash");
        command.arg("-c").arg(script).current_dir(p.path());
        p.run_command(command)
    };
    let run = bash(&format!(
        "'{bin}' render standard {pinned} --var-file <(printf 'date: 2031-01-02\\n') --format json"
    ));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        json(&run.stdout)["context"]
            .as_str()
            .unwrap()
            .contains("Today's date: 2031-01-02"),
        "{run:?}"
    );
    // More than a preset may hold, through a pipe: refused at the limit, not read whole.
    let run = bash(&format!(
        "'{bin}' render standard {pinned} --var-file <(head -c 3000000 /dev/zero | tr '\\0' a) --format json"
    ));
    assert_eq!(run.code, 2, "{run:?}");
    let report = json(&run.stdout);
    assert_eq!(
        report["diagnostics"][0]["kind"], "limit-exceeded",
        "{run:?}"
    );

    // A named FIFO, its writer a little late.
    let fifo = p.path().join("values.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            fs::write(fifo, "date: 2031-03-04\n")
        })
    };
    let mut args = vec!["render", "standard", "--var-file", "values.fifo"];
    args.extend(pinned.split(' '));
    let run = p.run(&args);
    writer.join().unwrap().unwrap();
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("Today's date: 2031-03-04"), "{run:?}");

    // Discovery never opens it for reading: a FIFO among the presets is refused at once.
    fs::create_dir_all(p.path().join(".agent-presets")).unwrap();
    fs::rename(&fifo, p.path().join(".agent-presets/piped.yaml")).unwrap();
    let run = p.run(&["validate", "--format", "json"]);
    assert!(run.stdout.contains("FIFO"), "{run:?}");
    assert_ne!(run.code, 0, "{run:?}");
}

/// A `--var-file` larger than a preset may be is `limit-exceeded`, at the file.
#[test]
fn var_file_too_large_is_limit_exceeded() {
    let p = Project::new();
    p.write(
        "big.yaml",
        &format!("date: '{}'\n", "x".repeat(1024 * 1024)),
    );
    let mut args = vec![
        "render",
        "standard",
        "--var-file",
        "big.yaml",
        "--format",
        "json",
    ];
    args.extend_from_slice(PINNED);
    let run = p.run(&args);
    assert_eq!(run.code, 2, "{run:?}");
    let d = &json(&run.stdout)["diagnostics"][0];
    assert_eq!(d["code"], "P0008", "{run:?}");
    assert_eq!(d["file"], "big.yaml", "{run:?}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("more than the limit of 1 MiB"),
        "{run:?}"
    );
}

// ---------------------------------------------------------------- schema

#[test]
fn schema_prints_the_preset_schema() {
    let p = Project::new();
    let run = p.run(&["schema"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        json(&run.stdout),
        agent_presets::preset::preset_json_schema()
    );
    assert!(run.stdout.ends_with("}\n"));
}

#[test]
fn schema_write_then_check() {
    let p = Project::new();
    // A project without schema files: nothing to check (usage, exit 2); `--write`
    // writes the one `init` would.
    let run = p.run(&["schema", "--check"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("schema --write"), "{run:?}");
    let run = p.run(&["schema", "--write"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "wrote .agent-presets/preset.schema.json\n");
    assert!(!p.path().join("schemas").exists());
    let run = p.run(&["schema", "--check"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        ".agent-presets/preset.schema.json is up to date\n"
    );

    // A repository that keeps the tool schemas (like this crate): all of them.
    fs::create_dir_all(p.path().join("schemas/tools")).unwrap();
    let run = p.run(&["schema", "--check"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("drifted: schemas/preset.schema.json: missing"),
        "{run:?}"
    );
    let run = p.run(&["schema", "--write"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("wrote schemas/preset.schema.json\n"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("wrote schemas/tools/read_file.json\n"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("unchanged .agent-presets/preset.schema.json\n"),
        "{run:?}"
    );
    let run = p.run(&["schema", "--check"]);
    assert_eq!(run.code, 0, "{run:?}");

    p.write("schemas/tools/read_file.json", "{}\n");
    p.write("schemas/tools/retired_tool.json", "{}\n");
    let run = p.run(&["schema", "--check"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("drifted: schemas/tools/read_file.json: differs"),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("drifted: schemas/tools/retired_tool.json: belongs to no built-in tool"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("preset.schema.json"), "{run:?}");

    let run = p.run(&["schema", "--write"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("unchanged schemas/preset.schema.json\n"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("removed schemas/tools/retired_tool.json"),
        "{run:?}"
    );
    assert_eq!(p.run(&["schema", "--check"]).code, 0);

    let run = p.run(&["schema", "--write", "--check"]);
    assert_eq!(run.code, 2, "{run:?}");
}

/// A committed symbolic link must not make `schema --write` or `lock` write outside the
/// project: a link to a file outside, a link leading nowhere, a linked directory.
#[cfg(unix)]
#[test]
fn schema_write_and_lock_refuse_links_out_of_the_project() {
    use std::os::unix::fs::symlink;
    let p = Project::new();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.json");
    fs::write(&victim, "keep\n").unwrap();
    fs::create_dir_all(p.path().join(".agent-presets")).unwrap();
    let local = p.path().join(".agent-presets/preset.schema.json");
    symlink(&victim, &local).unwrap();
    let run = p.run(&["schema", "--write"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(
            "not writing `.agent-presets/preset.schema.json`: it is a symbolic link to a file outside"
        ),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("help: replace the symbolic link"),
        "{run:?}"
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep\n");

    // A link leading nowhere: nothing is created where it points.
    fs::remove_file(&local).unwrap();
    let created = outside.path().join("created.json");
    symlink(&created, &local).unwrap();
    let run = p.run(&["schema", "--write"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("a symbolic link to nothing"), "{run:?}");
    assert!(!created.exists());
    fs::remove_file(&local).unwrap();

    // A linked `schemas` directory (with tool schemas, so the files are the project's).
    fs::create_dir_all(outside.path().join("tools")).unwrap();
    fs::write(outside.path().join("tools/retired.json"), "{}\n").unwrap();
    symlink(outside.path(), p.path().join("schemas")).unwrap();
    let run = p.run(&["schema", "--write"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("a symbolic link on its path leads outside"),
        "{run:?}"
    );
    assert!(!outside.path().join("preset.schema.json").exists());
    assert!(!outside.path().join("tools/read_file.json").exists());
    assert!(outside.path().join("tools/retired.json").exists());
    fs::remove_file(p.path().join("schemas")).unwrap();

    // `lock` writes presets.lock the same way.
    let lock = p.path().join("presets.lock");
    symlink(&victim, &lock).unwrap();
    let run = p.run(&["lock"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("not writing `presets.lock`"), "{run:?}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep\n");

    // A link that stays inside the project is followed.
    fs::remove_file(&lock).unwrap();
    fs::write(p.path().join("real.lock"), "").unwrap();
    symlink("real.lock", &lock).unwrap();
    let run = p.run(&["lock"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        fs::read_to_string(p.path().join("real.lock"))
            .unwrap()
            .contains("standard"),
    );
}

/// The committed files of this repository are what the code generates.
#[test]
fn schema_check_passes_on_this_repository() {
    let p = Project::new();
    let run = p.run(&[
        "--project-dir",
        repo("").to_str().unwrap(),
        "schema",
        "--check",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
}

// ---------------------------------------------------------------- init

#[test]
fn init_writes_a_starter_that_validates_and_renders() {
    let p = Project::new();
    let run = p.run(&["init", "my-agent"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .starts_with("created .agent-presets/my-agent.yaml (extends standard)\n"),
        "{run:?}"
    );
    let text = fs::read_to_string(p.path().join(".agent-presets/my-agent.yaml")).unwrap();
    assert!(
        text.starts_with("# yaml-language-server: $schema=preset.schema.json\n"),
        "{text}"
    );
    assert!(p.path().join(".agent-presets/preset.schema.json").is_file());
    let run = p.run(&["validate", "--deny-warnings"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = p.run(&with_pinned(&["render", "my-agent"]));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("This is the my-project project."),
        "{run:?}"
    );

    let run = p.run(&["init", "my-agent"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("already exists"), "{run:?}");
}

#[test]
fn init_on_minimal_replaces_its_complete_section() {
    let p = Project::new();
    let run = p.run(&["init", "tiny", "--extends", "minimal", "--dir", "presets"]);
    assert_eq!(run.code, 0, "{run:?}");
    // No project config yet: `init` writes one naming the directory, so every command
    // sees the new preset without `--preset-dir`.
    assert!(
        run.stdout.contains(
            "created agent-presets.yaml (presetDirs: [presets]): every command in the project now sees the presets in presets"
        ),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("\n  agent-presets validate tiny\n"),
        "{run:?}"
    );
    let run = p.run(&["validate", "tiny", "--deny-warnings"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = p.run(&[
        "--preset-dir",
        "presets",
        "validate",
        "tiny",
        "--deny-warnings",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = p.run(&with_pinned(&["--preset-dir", "presets", "render", "tiny"]));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("=== system ===\nYou are a software engineering assistant for the my-project project. Follow its conventions.\n\n=== tools (2) ===\n"),
        "{run:?}"
    );
}

#[test]
fn init_points_at_the_project_schema_when_there_is_one() {
    let p = Project::new();
    p.write("schemas/preset.schema.json", "{}\n");
    let run = p.run(&["init", "my-agent"]);
    assert_eq!(run.code, 0, "{run:?}");
    let text = fs::read_to_string(p.path().join(".agent-presets/my-agent.yaml")).unwrap();
    assert!(
        text.starts_with("# yaml-language-server: $schema=../schemas/preset.schema.json\n"),
        "{text}"
    );
    assert!(!p.path().join(".agent-presets/preset.schema.json").exists());
}

#[test]
fn init_refusals() {
    let p = Project::new();
    for (args, needle) in [
        (
            vec!["init", "My_Agent"],
            "`My_Agent` is not a valid preset name",
        ),
        (vec!["init", "standard"], "`standard` is a built-in preset"),
        (
            vec!["init", "x", "--extends", "standrd"],
            "did you mean `standard`?",
        ),
        (vec!["init", "x", "--extends", "x"], "cannot extend itself"),
    ] {
        let run = p.run(&args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stderr.contains(needle), "{args:?}: {run:?}");
    }
    // A name in the same directory is taken...
    p.write("elsewhere/taken.yaml", "version: 1\nname: taken\n");
    let run = p.run(&[
        "--preset-dir",
        "elsewhere",
        "init",
        "taken",
        "--dir",
        "elsewhere",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("a preset named `taken` already exists"),
        "{run:?}"
    );
    assert!(!p.path().join(".agent-presets").exists());
    // ... but a project preset may take the name of a lower source's: it wins there.
    let run = p.run(&["--preset-dir", "elsewhere", "init", "taken"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("note: it shadows elsewhere/taken.yaml (path), which is no longer used here"),
        "{run:?}"
    );
    let run = p.run(&["--preset-dir", "elsewhere", "validate", "taken"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("1 preset valid"), "{run:?}");
}

// ---------------------------------------------------------------- usage

#[test]
fn help_version_and_usage_errors() {
    let p = Project::new();
    let run = p.run(&["--help"]);
    assert_eq!(run.code, 0, "{run:?}");
    for command in [
        "list", "show", "validate", "render", "run", "schema", "init",
    ] {
        assert!(run.stdout.contains(command), "{command}: {run:?}");
    }
    let run = p.run(&["--version"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("agent-presets "), "{run:?}");
    let run = p.run(&[]);
    assert_eq!(run.code, 2, "{run:?}");
    let run = p.run(&["run", "standard"]);
    assert_eq!(run.code, 2, "a prompt is required: {run:?}");
    let run = p.run(&["validate", "--format", "xml"]);
    assert_eq!(run.code, 2, "{run:?}");
}

// ---------------------------------------------------------------- README

#[test]
fn readme_starts_with_the_two_commands() {
    // The diagnostics table is checked against the pages in `tests/integration/diagnostic_pages.rs`.
    let readme = fs::read_to_string(repo("README.md")).unwrap();
    assert!(
        readme.contains("```\ncargo run --release -- render standard\ncargo test\n```\n"),
        "README lacks the two first commands"
    );
}

/// The library example of `docs/library.md`, verbatim apart from printing: keep the two in
/// sync (the README's short version shares its key line).
#[test]
fn library_example_compiles_and_runs() {
    use agent_presets::preset::{CatalogOptions, PresetCatalog, validate_in_catalog};
    use agent_presets::prompt::Values;
    use agent_presets::request::Fingerprint;
    use agent_presets::tools::ToolCatalog;

    let (presets, _problems) = PresetCatalog::discover(&CatalogOptions::isolated("."));
    let tools = ToolCatalog::builtin();

    let validation = validate_in_catalog(&presets, "standard", &tools);
    let Some(preset) = validation.preset else {
        panic!("{:?}", validation.diagnostics);
    };

    let values = Values::new()
        .with("model", "deepseek-v4-flash")
        .with("provider", "deepseek")
        .with("cwd", "/workspace/demo")
        .with("os", "linux")
        .with("shell", "bash")
        .with("date", "2030-01-01");
    let assembly = preset
        .assembler()
        .assemble(&values)
        .expect("all values given");

    for page in ["docs/library.md", "README.md"] {
        let text = fs::read_to_string(repo(page)).unwrap();
        assert!(
            text.contains(
                "let assembly = preset.assembler().assemble(&values).expect(\"all values given\");"
            ),
            "{page} lost the library example"
        );
    }
    let p = Project::new();
    let run = p.run(&with_pinned(&["render", "standard", "--format", "json"]));
    let v = json(&run.stdout);
    assert_eq!(v["system"], assembly.system.as_str());
    assert_eq!(
        v["fingerprint"],
        Fingerprint::of(
            Some("deepseek"),
            Some("deepseek-v4-flash"),
            &assembly.system,
            &assembly.tools
        )
        .to_string()
    );
}

/// Markdown files the README leads to: the README and everything under `docs/`.
fn markdown_docs() -> Vec<PathBuf> {
    let mut files = vec![repo("README.md")];
    let mut dirs = vec![repo("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The lines of a Markdown text outside fenced code blocks, numbered from 1.
fn unfenced_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// The lines outside fenced code blocks with inline code blanked (no links in there).
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    unfenced_lines(text)
        .into_iter()
        .map(|(n, line)| (n, line.split('`').step_by(2).collect::<Vec<_>>().join(" ")))
        .collect()
}

/// GitHub's anchors for the headings of a Markdown text (`## The `model` block` →
/// `the-model-block`; a repeated heading gets `-1`, `-2`, …).
fn anchors(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut anchors = Vec::new();
    for (_, line) in unfenced_lines(text) {
        let line = line.replace('`', "");
        let hashes = line.chars().take_while(|&c| c == '#').count();
        let Some(title) = line[hashes..].strip_prefix(' ') else {
            continue;
        };
        if hashes == 0 || hashes > 6 {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.iter().filter(|s| **s == slug).count();
        anchors.push(if n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        seen.push(slug);
    }
    anchors
}

/// The targets of the links in a line: `[text](target)` and `[label]: target`.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = &rest[..end];
            if !target.is_empty() && !target.contains(char::is_whitespace) {
                targets.push(target.to_owned());
            }
        }
    }
    if line.starts_with('[')
        && let Some(at) = line.find("]: ")
    {
        targets.push(line[at + 3..].trim().to_owned());
    }
    targets
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_docs() {
        let text = fs::read_to_string(&file).unwrap();
        for (number, line) in prose_lines(&text) {
            for target in link_targets(&line) {
                let scheme = target.split_once(':').map(|(s, _)| s);
                if scheme
                    .is_some_and(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic()))
                {
                    continue; // https:, mailto:
                }
                checked += 1;
                let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let dest = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                let place = format!("{}:{number}: {target}", file.display());
                if !dest.exists() {
                    broken.push(format!("{place} (no such file)"));
                } else if !anchor.is_empty()
                    && dest.extension().is_some_and(|e| e == "md")
                    && !anchors(&fs::read_to_string(&dest).unwrap()).contains(&anchor.to_owned())
                {
                    broken.push(format!("{place} (no such heading)"));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} links found: is the scan broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn link_check_sees_a_broken_anchor_and_a_missing_file() {
    let text = "# Top\n\n## The `model` block\n\nSee [m](#the-model-block), [x](#nowhere).\n";
    assert_eq!(anchors(text), ["top", "the-model-block"]);
    let (_, line) = &prose_lines(text)[4];
    assert_eq!(link_targets(line), ["#the-model-block", "#nowhere"]);
    assert_eq!(
        link_targets("[`Containment`]: src/tools/builtin/containment.rs"),
        ["src/tools/builtin/containment.rs"]
    );
    assert!(prose_lines("```\n[a](b)\n```\n").is_empty());
}

#[test]
fn list_never_prints_a_secret_or_control_characters() {
    let p = Project::new();
    p.write(
        ".agent-presets/leaky.yaml",
        &format!("version: 1\nname: leaky\ndescription: \"my {FAKE_KEY} \\e]0;pwned\\a\"\n"),
    );
    for args in [&["list"][..], &["list", "--format", "json"][..]] {
        let run = p.run(args);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(!run.stdout.contains("sk-test"), "{args:?}: {run:?}");
        assert!(!run.stdout.contains('\u{1b}'), "{args:?}: {run:?}");
        assert!(!run.stdout.contains('\u{7}'), "{args:?}: {run:?}");
        assert!(run.stdout.contains("leaky"), "{run:?}");
    }
}

#[test]
fn a_name_two_files_of_one_directory_offer_is_invalid_everywhere() {
    let p = Project::new();
    p.write(".agent-presets/a.yaml", "version: 1\nname: a\n");
    p.write(".agent-presets/a.yml", "version: 1\nname: a\n");
    for args in [&["validate", "a"][..], &["validate"][..]] {
        let run = p.run(args);
        assert_eq!(run.code, 1, "{args:?}: {run:?}");
        assert!(run.stdout.contains("P0014"), "{run:?}");
        assert!(
            !run.stdout.contains("\n1 preset valid, 0 invalid"),
            "{run:?}"
        );
        assert!(
            run.stdout.contains(".agent-presets/a.yaml")
                && run.stdout.contains(".agent-presets/a.yml"),
            "{run:?}"
        );
    }
    let run = p.run(&["render", "a"]);
    assert_eq!(run.code, 1, "{run:?}");
}

/// Two sources offering one name: the higher one is used, silently; `list` and `show`
/// say which file and what it hides.
#[test]
fn a_name_two_sources_offer_goes_to_the_higher_one() {
    let p = Project::new();
    p.write(
        ".agent-presets/a.yaml",
        "version: 1\nname: a\nextends: minimal\ndescription: project\n",
    );
    p.write("more/a.yaml", "version: 1\nname: a\nnope: broken\n");
    let run = p.run(&["--preset-dir", "more", "validate"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("3 presets valid, 0 invalid"), "{run:?}");
    let run = p.run(&["--preset-dir", "more", "list"]);
    assert!(
        run.stdout
            .contains("uses .agent-presets/a.yaml, shadows more/a.yaml (path)"),
        "{run:?}"
    );
    let run = p.run(&["--preset-dir", "more", "show", "a"]);
    assert!(
        run.stdout.contains("# `a` shadows more/a.yaml (path)"),
        "{run:?}"
    );
}

/// `textFile` through a symbolic link that leads out of the preset's directory is
/// refused before it is read; one larger than a preset file may be is `limit-exceeded`.
#[cfg(unix)]
#[test]
fn text_file_links_out_and_giants_are_refused() {
    let p = Project::new();
    p.write("secret.md", "top secret\n");
    p.write(".agent-presets/inside.md", "fine\n");
    std::os::unix::fs::symlink(
        p.path().join("secret.md"),
        p.path().join(".agent-presets/link.md"),
    )
    .unwrap();
    // A link that stays inside is fine.
    std::os::unix::fs::symlink("inside.md", p.path().join(".agent-presets/near.md")).unwrap();
    let giant = p.path().join(".agent-presets/giant.md");
    fs::File::create(&giant)
        .unwrap()
        .set_len(2 * 1024 * 1024)
        .unwrap();
    let section = |name: &str, file: &str| {
        format!("    - name: {name}\n      order: 1\n      textFile: {file}\n")
    };
    p.write(
        ".agent-presets/notes.yaml",
        &format!(
            "version: 1\nname: notes\npersona:\n  sections:\n{}{}{}",
            section("a", "link.md"),
            section("b", "near.md"),
            section("c", "giant.md")
        ),
    );
    let run = p.run(&["validate", "--format", "json", "notes"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v = json(&run.stdout);
    let found: Vec<(String, u64, String)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap().to_owned(),
                d["line"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!((found[0].0.as_str(), found[0].1), ("invalid-value", 7));
    assert!(found[0].2.contains("symbolic link"), "{found:?}");
    assert_eq!((found[1].0.as_str(), found[1].1), ("limit-exceeded", 13));
    assert!(!run.stdout.contains("top secret"));
}

/// `-` reads at most a preset file's worth from standard input.
#[test]
fn stdin_is_bounded() {
    use std::io::Write as _;
    let p = Project::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
        .args(["validate", "--format", "json", "-"])
        .current_dir(p.path())
        .env("AGENT_PRESETS_CONFIG_DIR", p.config.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'#'; 64 * 1024];
        // Far more than the limit; the reader stops early, so writes may fail.
        for _ in 0..64 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let v = json(&String::from_utf8(output.stdout).unwrap());
    assert_eq!(v["diagnostics"][0]["kind"], "limit-exceeded", "{v}");
    assert_eq!(v["diagnostics"][0]["file"], "<stdin>", "{v}");
}
