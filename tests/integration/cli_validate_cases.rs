//! Data-driven CLI cases: every folder under `tests/cli/<group>/` (`validate`, `render`,
//! `show`, `list`, `schema`, ...) is one case (format: `tests/cli/README.md`). Adding a
//! case means adding a folder, no Rust.
#![cfg(feature = "cli")]

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Expected {
    description: String,
    #[serde(default)]
    args: Option<Vec<String>>,
    exit: i32,
    #[serde(default)]
    diagnostics: Option<Vec<ExpectedDiagnostic>>,
    #[serde(default)]
    invalid: Option<Vec<String>>,
    #[serde(default)]
    stderr_contains: Vec<String>,
    #[serde(default)]
    stderr_lacks: Vec<String>,
    #[serde(default)]
    stdout_contains: Vec<String>,
    #[serde(default)]
    stdout_lacks: Vec<String>,
    #[serde(default)]
    stdout_json: Option<Value>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    stdin: Option<String>,
    #[serde(default)]
    stdin_file: Option<String>,
    #[serde(default)]
    files_contain: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectedDiagnostic {
    code: String,
    kind: String,
    file: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
    #[serde(default)]
    help_contains: Option<String>,
    #[serde(default)]
    message_contains: Option<String>,
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else if entry.file_name() != "expected.json" {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Run one case; `Err` describes every way it differs from `expected.json`.
fn run_case(dir: &Path) -> Result<(), String> {
    let expected: Expected = serde_json::from_str(
        &fs::read_to_string(dir.join("expected.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| format!("bad expected.json: {e}"))?;
    assert!(!expected.description.is_empty());
    let project = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    copy_dir(dir, project.path());
    let args = expected
        .args
        .clone()
        .unwrap_or_else(|| vec!["validate".into(), "--format".into(), "json".into()]);
    let root = project.path().to_string_lossy().into_owned();
    let cwd = match &expected.cwd {
        Some(sub) => project.path().join(sub),
        None => project.path().to_path_buf(),
    };
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-presets"));
    command
        .args(&args)
        .current_dir(&cwd)
        .env("AGENT_PRESETS_CONFIG_DIR", config.path())
        .env_remove("AGENT_PRESETS_NO_USER")
        .env("NO_COLOR", "1")
        .env("SHELL", "/bin/bash")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in &expected.env {
        command.env(key, value.replace("{project}", &root));
    }
    let input: Vec<u8> = match (&expected.stdin, &expected.stdin_file) {
        (Some(text), _) => text.clone().into_bytes(),
        (None, Some(file)) => fs::read(dir.join(file)).map_err(|e| e.to_string())?,
        (None, None) => Vec::new(),
    };
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read stdin may close it first; that is fine.
        let _ = stdin.write_all(&input);
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut problems = Vec::new();
    if output.status.code() != Some(expected.exit) {
        problems.push(format!(
            "exit {:?}, expected {}",
            output.status.code(),
            expected.exit
        ));
    }
    for needle in &expected.stderr_contains {
        if !stderr.contains(needle.as_str()) {
            problems.push(format!("stderr lacks {needle:?}"));
        }
    }
    for needle in &expected.stderr_lacks {
        if stderr.contains(needle.as_str()) {
            problems.push(format!("stderr contains {needle:?}"));
        }
    }
    for needle in &expected.stdout_contains {
        if !stdout.contains(needle.as_str()) {
            problems.push(format!("stdout lacks {needle:?}"));
        }
    }
    for needle in &expected.stdout_lacks {
        if stdout.contains(needle.as_str()) {
            problems.push(format!("stdout contains {needle:?}"));
        }
    }
    for (file, needles) in &expected.files_contain {
        let text = fs::read_to_string(project.path().join(file)).unwrap_or_default();
        for needle in needles {
            if !text.contains(needle.as_str()) {
                problems.push(format!("{file} lacks {needle:?}"));
            }
        }
    }
    if let Some(want) = &expected.stdout_json {
        match serde_json::from_str::<Value>(&stdout) {
            Ok(got) => {
                if let Err(e) = json_subset(want, &got, "$") {
                    problems.push(format!("stdout JSON differs: {e}"));
                }
            }
            Err(e) => problems.push(format!("stdout is not JSON ({e})")),
        }
    }
    if let Some(want) = &expected.diagnostics {
        let report: Value = serde_json::from_str(&stdout)
            .map_err(|e| format!("stdout is not JSON ({e}):\n{stdout}\n{stderr}"))?;
        let got: Vec<&Value> = report["diagnostics"].as_array().unwrap().iter().collect();
        let mut got_keys: Vec<ExpectedDiagnostic> = got
            .iter()
            .map(|d| ExpectedDiagnostic {
                code: d["code"].as_str().unwrap().to_owned(),
                kind: d["kind"].as_str().unwrap().to_owned(),
                file: d["file"].as_str().map(str::to_owned),
                line: d["line"].as_u64().map(|n| n as u32),
                column: d["column"].as_u64().map(|n| n as u32),
                help_contains: None,
                message_contains: None,
            })
            .collect();
        let mut want_keys: Vec<ExpectedDiagnostic> = want
            .iter()
            .map(|d| ExpectedDiagnostic {
                help_contains: None,
                message_contains: None,
                ..d.clone()
            })
            .collect();
        got_keys.sort();
        want_keys.sort();
        if got_keys != want_keys {
            problems.push(format!(
                "diagnostics differ:\n  got:      {got_keys:?}\n  expected: {want_keys:?}"
            ));
        }
        for w in want {
            for (field, needle) in [("help", &w.help_contains), ("message", &w.message_contains)] {
                let Some(needle) = needle else {
                    continue;
                };
                let found = got.iter().any(|d| {
                    d["code"] == w.code.as_str()
                        && d["line"].as_u64() == w.line.map(u64::from)
                        && d["column"].as_u64() == w.column.map(u64::from)
                        && d[field]
                            .as_str()
                            .is_some_and(|h| h.contains(needle.as_str()))
                });
                if !found {
                    problems.push(format!(
                        "no {} diagnostic at {:?}:{:?} with {field} {needle:?}",
                        w.code, w.line, w.column
                    ));
                }
            }
        }
        if let Some(invalid) = &expected.invalid {
            let mut got_invalid: Vec<String> = report["presets"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["valid"] == false)
                .map(|p| p["name"].as_str().unwrap().to_owned())
                .collect();
            got_invalid.sort();
            if &got_invalid != invalid {
                problems.push(format!(
                    "invalid presets {got_invalid:?}, expected {invalid:?}"
                ));
            }
        }
        // The built-ins stay valid whatever a project does.
        // (`test`'s report has cases, not presets.)
        for builtin in ["minimal", "standard"] {
            let entry = report["presets"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["name"] == builtin && p["file"] == format!("<builtin>/{builtin}.yaml"));
            if let Some(entry) = entry
                && entry["valid"] != true
            {
                problems.push(format!("built-in {builtin} reported invalid"));
            }
        }
    } else if expected.stdout_contains.is_empty()
        && expected.stdout_json.is_none()
        && !stdout.is_empty()
    {
        problems.push(format!("expected no stdout, got:\n{stdout}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\nstderr:\n{stderr}", problems.join("\n")))
    }
}

/// Every object key of `want` is in `got` with a matching value; arrays match element
/// by element and have the same length; other values are equal.
fn json_subset(want: &Value, got: &Value, at: &str) -> Result<(), String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (key, value) in w {
                let path = format!("{at}.{key}");
                match g.get(key) {
                    Some(v) => json_subset(value, v, &path)?,
                    None => return Err(format!("{path} is missing")),
                }
            }
            Ok(())
        }
        (Value::Array(w), Value::Array(g)) => {
            if w.len() != g.len() {
                return Err(format!(
                    "{at} has {} items, expected {}: {got}",
                    g.len(),
                    w.len()
                ));
            }
            for (i, (w, g)) in w.iter().zip(g).enumerate() {
                json_subset(w, g, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        _ if want == got => Ok(()),
        _ => Err(format!("{at} is {got}, expected {want}")),
    }
}

/// Every case folder: `tests/cli/<group>/<case>/`.
fn case_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    let mut dirs: Vec<PathBuf> = Vec::new();
    for group in fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()) {
        if !group.is_dir() {
            continue;
        }
        dirs.extend(
            fs::read_dir(&group)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.join("expected.json").is_file()),
        );
    }
    dirs.sort();
    dirs
}

#[test]
fn cli_cases() {
    let dirs = case_dirs();
    let mut failures = Vec::new();
    for dir in &dirs {
        if let Err(e) = run_case(dir) {
            let name = dir
                .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli"))
                .unwrap_or(dir);
            failures.push(format!("{}: {e}", name.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n\n")
    );
}

/// The issue asks for at least 25 distinct bad presets.
#[test]
fn there_are_enough_bad_cases() {
    let bad = case_dirs()
        .iter()
        .filter(|d| {
            let text = fs::read_to_string(d.join("expected.json")).unwrap();
            let expected: Expected = serde_json::from_str(&text).unwrap();
            expected.exit == 1
        })
        .count();
    assert!(bad >= 25, "only {bad} bad cases");
}
