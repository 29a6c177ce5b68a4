//! The diagnostic pages (`docs/diagnostics/<CODE>.md`, [`CodePage`]) are the one source
//! of `explain`, the table in `docs/diagnostics.md` and SARIF's rule descriptions. These
//! tests keep that table equal to the pages, and run every page's example to check it triggers
//! its code (and no other error): through the real binary, or, when the example has host
//! tools (`# tool: NAME` blocks holding a parameter schema), through the library with
//! those tools registered.
#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;

use agent_presets::codes::CodePage;
use agent_presets::preset::{CatalogOptions, PresetCatalog, validate_in_catalog};
use agent_presets::{DiagnosticKind, ToolCatalog};
use serde_json::Value;

use crate::support::host_tool;
use crate::support::project;

use project::Project;

/// Pages whose example cannot be run: bytes YAML text cannot hold, a host program's
/// code, and a wire schema the strict projection never produces.
const NOT_RUNNABLE: &[DiagnosticKind] = &[
    DiagnosticKind::Encoding,
    DiagnosticKind::DuplicateTool,
    DiagnosticKind::StrictOptionalProperty,
    // Need a server to start (and, for drift, one that changed since it was locked).
    DiagnosticKind::ToolDrift,
    DiagnosticKind::ServerUnavailable,
    // Needs a lock written by `lock --connect`, then the preset edited.
    DiagnosticKind::ServerChanged,
    // Needs a lock listing the server's tools (tests/cli/validate/unknown-server-tool/).
    DiagnosticKind::UnknownServerTool,
    // Needs a preset in the user directory, which the example runner does not write.
    DiagnosticKind::LocalePackNotApplied,
    // Need a recorded cassette (a model to record against); `cli_record.rs` and the
    // `tests/cli/test/` cases trigger each of them.
    DiagnosticKind::BehaviourDrift,
    DiagnosticKind::RecordedCallHidden,
    DiagnosticKind::CassetteCorrupt,
    DiagnosticKind::CassetteVersion,
    // Need a cassette replayed (or live runs of a model).
    DiagnosticKind::ExpectationFailed,
    DiagnosticKind::PassRateBelow,
];

/// Problems of a test case file: `agent-presets test` exits 2 (unreadable or invalid
/// input), as for `io`.
const TEST_INPUT: &[DiagnosticKind] = &[
    DiagnosticKind::CaseUnknownPreset,
    DiagnosticKind::CaseUnknownTool,
    DiagnosticKind::CaseBadPattern,
    DiagnosticKind::CasePath,
    DiagnosticKind::MissingCassette,
    DiagnosticKind::CaseUnknownVariable,
];

fn diagnostics_page() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/diagnostics.md")).unwrap()
}

/// The rows the table of `docs/diagnostics.md` must hold, in order.
fn expected_rows() -> Vec<String> {
    CodePage::all()
        .iter()
        .map(|p| {
            let code = p.kind().code();
            format!(
                "| [`{code}`](diagnostics/{code}.md) | `{}` | {} |",
                p.kind().name(),
                p.summary()
            )
        })
        .collect()
}

#[test]
fn diagnostics_table_is_the_pages() {
    let page = diagnostics_page();
    let header = "| Code | Kind | Meaning |\n|---|---|---|\n";
    let start = page
        .find(header)
        .expect("docs/diagnostics.md has the diagnostics table")
        + header.len();
    let table: Vec<&str> = page[start..]
        .lines()
        .take_while(|l| l.starts_with('|'))
        .collect();
    let expected = expected_rows();
    assert_eq!(
        table,
        expected,
        "the table of docs/diagnostics.md differs from docs/diagnostics/*.md; it should read:\n{}",
        expected.join("\n")
    );
}

#[test]
fn every_kind_has_a_page_with_a_link_that_exists() {
    for kind in DiagnosticKind::ALL {
        let page = CodePage::of(*kind).unwrap_or_else(|| panic!("{kind} has no page"));
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs/diagnostics")
            .join(format!("{}.md", kind.code()));
        assert_eq!(fs::read_to_string(&file).unwrap(), page.markdown());
    }
}

/// One example: the host tools it registers, and its steps in order — files to write and
/// `agent-presets` commands to run (the last command is the one whose report counts;
/// without one, `validate`).
struct Example {
    tools: Vec<(String, Value)>,
    steps: Vec<Step>,
    runnable: bool,
}

enum Step {
    Write(String, String),
    Run(Vec<String>),
}

impl Example {
    /// The files written before the first command.
    fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.steps.iter().map_while(|s| match s {
            Step::Write(path, text) => Some((path.as_str(), text.as_str())),
            Step::Run(_) => None,
        })
    }
}

fn parse_example(page: &CodePage) -> Example {
    let mut example = Example {
        tools: Vec::new(),
        steps: Vec::new(),
        runnable: true,
    };
    let text = page.example();
    let mut lines = text.lines();
    let mut saw_block = false;
    while let Some(line) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            continue;
        };
        saw_block = true;
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        match lang {
            "yaml" if body.first().is_some_and(|l| l.starts_with("# tool: ")) => {
                let name = body[0].trim_start_matches("# tool: ").to_owned();
                let schema: Value = serde_saphyr::from_str(&body[1..].join("\n"))
                    .unwrap_or_else(|e| panic!("{}: tool `{name}`: {e}", page.title()));
                example.tools.push((name, schema));
            }
            "yaml" => {
                let path = body
                    .first()
                    .and_then(|l| l.strip_prefix("# file: "))
                    .unwrap_or_else(|| {
                        panic!(
                            "{}: a yaml example starts with `# file: PATH`",
                            page.title()
                        )
                    });
                example.steps.push(Step::Write(
                    path.to_owned(),
                    format!("{}\n", body.join("\n")),
                ));
            }
            "console" => {
                for command in body.iter().filter_map(|l| l.strip_prefix("$ ")) {
                    match command.strip_prefix("agent-presets ") {
                        Some(args) => example.steps.push(Step::Run(
                            args.split_whitespace().map(str::to_owned).collect(),
                        )),
                        // Set-up the test cannot repeat (bytes YAML cannot hold).
                        None => example.runnable = false,
                    }
                }
            }
            _ => example.runnable = false,
        }
    }
    assert!(saw_block, "{}: the example has no code block", page.title());
    if !example.steps.iter().any(|s| matches!(s, Step::Run(_))) {
        example.steps.push(Step::Run(vec!["validate".to_owned()]));
    }
    example
}

#[test]
fn every_example_triggers_its_code_and_no_other_error() {
    for page in CodePage::all() {
        let kind = page.kind();
        let example = parse_example(page);
        assert_eq!(
            !example.runnable,
            NOT_RUNNABLE.contains(&kind),
            "{}: runnable examples are preset files and `agent-presets` commands",
            page.title()
        );
        if !example.runnable {
            continue;
        }
        let report = if example.tools.is_empty() {
            run_binary(page, &example)
        } else {
            run_library(&example)
        };
        let codes: Vec<&str> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["code"].as_str())
            .collect();
        assert!(
            codes.contains(&kind.code()),
            "{}: the example does not trigger its code: {report:#}",
            page.title()
        );
        let others: Vec<&Value> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] != kind.code() && d["severity"] == "error")
            .collect();
        // A missing (invalid) parent is reported with the parent's own errors.
        if kind != DiagnosticKind::MissingParent {
            assert!(
                others.is_empty(),
                "{}: the example triggers other errors too: {others:#?}",
                page.title()
            );
        }
        let expected_exit = match kind {
            DiagnosticKind::Io => 2,
            k if TEST_INPUT.contains(&k) => 2,
            k if k.severity() == agent_presets::Severity::Warning => 0,
            _ => 1,
        };
        assert_eq!(
            report["exit"],
            expected_exit,
            "{}: {report:#}",
            page.title()
        );
    }
}

/// The example's steps in a fresh project; every command but the last must succeed, the
/// last runs with `--format json`: its report, with the exit code added as `exit`.
fn run_binary(page: &CodePage, example: &Example) -> Value {
    let project = Project::new();
    let last = example
        .steps
        .iter()
        .rposition(|s| matches!(s, Step::Run(_)))
        .unwrap_or_default();
    for (i, step) in example.steps.iter().enumerate() {
        match step {
            Step::Write(path, text) => {
                project.write(path, text);
            }
            Step::Run(args) if i < last => {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let run = project.run(&args);
                assert_eq!(run.code, 0, "{}: {args:?}: {run:?}", page.title());
            }
            Step::Run(_) => {}
        }
    }
    let Some(Step::Run(args)) = example.steps.get(last) else {
        unreachable!("parse_example adds a command")
    };
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--format", "json"]);
    let run = project.run(&args);
    let mut report: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "{}: `agent-presets {}` printed no JSON ({e}): {run:?}",
            page.title(),
            args.join(" "),
        )
    });
    report["exit"] = Value::from(run.code);
    report
}

/// Every preset of a project holding the example's files, validated with the example's
/// host tools registered next to the built-ins: `{"diagnostics": [...], "exit": 0|1}`.
fn run_library(example: &Example) -> Value {
    let mut tools = ToolCatalog::builtin();
    for (name, schema) in &example.tools {
        host_tool::register(&mut tools, name, schema.clone());
    }
    let project = Project::new();
    for (path, text) in example.files() {
        project.write(path, text);
    }
    let (presets, mut diagnostics) =
        PresetCatalog::discover(&CatalogOptions::isolated(project.path()));
    for name in presets.names() {
        diagnostics.extend(validate_in_catalog(&presets, name, &tools).diagnostics);
    }
    let diagnostics: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            serde_json::json!({
                "code": d.code(),
                "severity": d.severity.as_str(),
                "message": d.message,
            })
        })
        .collect();
    let exit = i32::from(diagnostics.iter().any(|d| d["severity"] == "error"));
    serde_json::json!({ "diagnostics": diagnostics, "exit": exit })
}

/// `agent-presets explain ARGS`: exit code, stdout, stderr.
fn explain(args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["explain"];
    all.extend_from_slice(args);
    let run = Project::new().run(&all);
    (Some(run.code), run.stdout, run.stderr)
}

#[test]
fn explain_prints_the_page_by_code_or_kind() {
    let (code, page, err) = explain(&["P0103"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    insta::assert_snapshot!(page);
    let unknown_tool = CodePage::of(DiagnosticKind::UnknownTool).unwrap();
    assert!(page.starts_with(unknown_tool.markdown()));
    assert!(page.ends_with(&format!("\nOnline: {}\n", unknown_tool.url())));
    for query in ["p0103", "unknown-tool", "UNKNOWN-TOOL"] {
        assert_eq!(explain(&[query]).1, page, "{query}");
    }
}

#[test]
fn explain_unknown_code_is_a_usage_error_with_a_suggestion() {
    let (code, out, err) = explain(&["unknown-tol"]);
    assert_eq!(code, Some(2));
    assert_eq!(out, "");
    assert_eq!(
        err,
        "error: no diagnostic code or kind `unknown-tol`\n  = help: did you mean `unknown-tool`?\n"
    );
    let (code, _, err) = explain(&["P9999"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("did you mean `P0999`") || err.contains("run `agent-presets explain`"),
        "{err}"
    );
}

#[test]
fn explain_without_a_code_lists_every_code() {
    let (code, out, _) = explain(&[]);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().take(CodePage::all().len()).collect();
    for (line, page) in lines.iter().zip(CodePage::all()) {
        assert!(
            line.starts_with(&format!("{}  {}", page.kind().code(), page.kind().name())),
            "{line}"
        );
        assert!(line.ends_with(page.summary()), "{line}");
    }
    assert!(
        out.ends_with("\nRun `agent-presets explain CODE` for a code's page.\n"),
        "{out}"
    );
}

#[test]
fn explain_json() {
    let (code, out, _) = explain(&["P0044", "--format", "json"]);
    assert_eq!(code, Some(0));
    let page: Value = serde_json::from_str(&out).unwrap();
    let expected = CodePage::of(DiagnosticKind::VolatileInPrefix).unwrap();
    assert_eq!(page["code"], "P0044");
    assert_eq!(page["kind"], "volatile-in-prefix");
    assert_eq!(page["severity"], "warning");
    assert_eq!(page["summary"], expected.summary());
    assert_eq!(page["meaning"], expected.meaning());
    assert_eq!(page["example"], expected.example());
    assert_eq!(page["fix"], expected.fix());
    assert_eq!(page["url"], expected.url());
    let (_, out, _) = explain(&["--format", "json"]);
    let all: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        all["codes"].as_array().unwrap().len(),
        DiagnosticKind::ALL.len()
    );
}
