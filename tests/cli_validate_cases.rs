//! Data-driven `validate` cases: every folder under `tests/cli/validate/` is one case
//! (format: `tests/cli/README.md`). Adding a case means adding a folder, no Rust.
#![cfg(feature = "cli")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    let output = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
        .args(&args)
        .current_dir(project.path())
        .env("AGENT_PRESETS_CONFIG_DIR", config.path())
        .env("NO_COLOR", "1")
        .output()
        .map_err(|e| e.to_string())?;
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
        for builtin in ["minimal", "standard"] {
            let entry =
                report["presets"].as_array().unwrap().iter().find(|p| {
                    p["name"] == builtin && p["file"] == format!("<builtin>/{builtin}.yaml")
                });
            if let Some(entry) = entry
                && entry["valid"] != true
            {
                problems.push(format!("built-in {builtin} reported invalid"));
            }
        }
    } else if !stdout.is_empty() {
        problems.push(format!("expected no stdout, got:\n{stdout}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\nstderr:\n{stderr}", problems.join("\n")))
    }
}

fn case_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/validate");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn validate_cases() {
    let dirs = case_dirs();
    let mut failures = Vec::new();
    for dir in &dirs {
        if let Err(e) = run_case(dir) {
            failures.push(format!(
                "{}: {e}",
                dir.file_name().unwrap().to_string_lossy()
            ));
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
