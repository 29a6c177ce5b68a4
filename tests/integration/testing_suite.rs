//! `testing::suite` end to end through the library: a project with a preset, test cases
//! and their cassettes, each case's replay fed from an `Observed` written as JSON beside
//! it (`<stem>.observed.json`; the real replay belongs to `testing::replay`). Checks the
//! verdicts, the exit code, sharding over the real files and the report formats.

use std::path::{Path, PathBuf};

use agent_presets::preset::ValidPreset;
use agent_presets::project::{Project, ProjectOptions};
use agent_presets::report::Style;
use agent_presets::testing::output::TestFormat;
use agent_presets::testing::suite::{CaseStatus, Replay, Shard, run_live_suite, run_suite};
use agent_presets::testing::{Observed, TestCase};
use agent_presets::{Diagnostic, DiagnosticKind};

use crate::support::sarif_schema;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The project: preset `reviewer` (read_file, grep, list_dir), four cases.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        ".agent-presets/reviewer.yaml",
        "version: 1\nname: reviewer\nextends: standard\ntools:\n  allow: [read_file, grep, list_dir]\n",
    );
    let observed = |calls: &[(&str, &str)], answer: &str| {
        let calls: Vec<serde_json::Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (tool, path))| {
                serde_json::json!({
                    "step": i + 1, "tool": tool, "arguments": {"path": path},
                    "result": "…", "isError": false
                })
            })
            .collect();
        serde_json::json!({
            "steps": calls.len() + 1, "calls": calls, "answer": answer,
            "outcome": {"kind": "answered"}
        })
        .to_string()
    };
    let t = ".agent-presets/tests";
    // Passes.
    write(
        root,
        &format!("{t}/typos.yaml"),
        "preset: reviewer\nprompt: Review src/lib.rs for typos.\nworkspace: fixtures/repo\n\
         expect:\n  tools:\n    used: [read_file]\n    notUsed: [grep]\n\
         \x20   args: [{tool: read_file, match: {path: src/lib.rs}}]\n  maxSteps: 4\n\
         \x20 answer: {contains: [typo], matches: 'line \\d+'}\n",
    );
    std::fs::create_dir_all(root.join(format!("{t}/fixtures/repo"))).unwrap();
    write(root, &format!("{t}/typos.jsonl"), "{}\n");
    write(
        root,
        &format!("{t}/typos.observed.json"),
        &observed(&[("read_file", "src/lib.rs")], "One typo, line 3."),
    );
    // Fails two assertions.
    write(
        root,
        &format!("{t}/order.yaml"),
        "preset: reviewer\nprompt: List, then read.\ncassette: rec/order.jsonl\nexpect:\n  tools:\n\
         \x20   sequence: {exact: [list_dir, read_file]}\n  answer:\n    contains: [done]\n",
    );
    write(root, &format!("{t}/rec/order.jsonl"), "{}\n");
    write(
        root,
        &format!("{t}/order.observed.json"),
        &observed(&[("read_file", "a"), ("list_dir", ".")], "finished"),
    );
    // Drifts.
    write(
        root,
        &format!("{t}/drift.yaml"),
        "preset: reviewer\nprompt: p\n",
    );
    write(root, &format!("{t}/drift.jsonl"), "{}\n");
    // Never recorded.
    write(
        root,
        &format!("{t}/new.yaml"),
        "preset: reviewer\nprompt: p\n",
    );
    dir
}

fn open(root: &Path) -> Project {
    let options = ProjectOptions {
        project_dir: Some(root.to_path_buf()),
        preset_dirs: Vec::new(),
        no_user: true,
        no_project_config: true,
    };
    Project::discover(&options).unwrap().0
}

/// The replay of the tests: the `Observed` beside the case; `drift.yaml` drifts.
fn replay(case: &TestCase, preset: &ValidPreset) -> Result<Replay, Vec<Diagnostic>> {
    assert_eq!(
        preset.name(),
        case.preset(),
        "the case's own preset is replayed"
    );
    observed(case)
}

/// What a run of `case` observed (the `Observed` beside it; `drift.yaml` drifts).
fn observed(case: &TestCase) -> Result<Replay, Vec<Diagnostic>> {
    if case.name() == "drift" {
        return Ok(Replay {
            observed: Observed::default(),
            diagnostics: vec![
                Diagnostic::new(DiagnosticKind::InvalidValue, "step 1's request differs")
                    .at(case.cassette_span()),
            ],
        });
    }
    let path = case.path.with_extension("observed.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        vec![Diagnostic::new(
            DiagnosticKind::Io,
            format!("{}: {e}", path.display()),
        )]
    })?;
    let observed: Observed = serde_json::from_str(&text).unwrap();
    Ok(Replay {
        observed,
        diagnostics: Vec::new(),
    })
}

fn statuses(report: &agent_presets::testing::SuiteReport) -> Vec<(String, CaseStatus)> {
    report
        .results
        .iter()
        .map(|r| (r.name().to_owned(), r.status))
        .collect()
}

#[test]
fn a_suite_is_judged_case_by_case_from_its_replays() {
    let dir = project();
    let project = open(dir.path());
    let report = run_suite(&project, &[], None, replay);
    assert_eq!(
        statuses(&report),
        [
            ("drift".to_owned(), CaseStatus::Drifted),
            ("new".to_owned(), CaseStatus::Invalid),
            ("order".to_owned(), CaseStatus::Failed),
            ("typos".to_owned(), CaseStatus::Passed),
        ]
    );
    assert_eq!(report.exit().code(), 2);
    let order = &report.results[2];
    let names: Vec<&str> = order.failures.iter().map(|f| f.name).collect();
    assert_eq!(names, ["tools.sequence", "answer.contains"]);
    assert_eq!(order.failures[0].span.line, 6);
    assert_eq!(
        order.failures[0].found, "calls: read_file, list_dir",
        "{:?}",
        order.failures[0]
    );
    assert_eq!(
        report.results[1].diagnostics[0].kind,
        DiagnosticKind::MissingCassette
    );
    // Without the case that was never recorded: a failure is exit 1.
    let t = dir.path().join(".agent-presets/tests");
    let some: Vec<PathBuf> = ["typos.yaml", "order.yaml", "drift.yaml"]
        .iter()
        .map(|f| t.join(f))
        .collect();
    let report = run_suite(&project, &some, None, replay);
    assert_eq!(report.exit().code(), 1);
    let report = run_suite(&project, &some[..1], None, replay);
    assert_eq!(report.exit().code(), 0);
    assert_eq!(
        report.summary(),
        "1 test case: 1 passed, 0 failed, 0 drifted, 0 invalid"
    );
}

#[test]
fn the_shards_of_a_suite_run_each_case_once() {
    let dir = project();
    let project = open(dir.path());
    let mut seen: Vec<String> = Vec::new();
    for index in 1..=3 {
        let report = run_suite(&project, &[], Some(Shard { index, count: 3 }), replay);
        seen.extend(report.results.iter().map(|r| r.id.clone()));
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            ".agent-presets/tests/drift.yaml",
            ".agent-presets/tests/new.yaml",
            ".agent-presets/tests/order.yaml",
            ".agent-presets/tests/typos.yaml",
        ]
    );
}

#[test]
fn the_formats_of_a_suite_report() {
    let dir = project();
    let project = open(dir.path());
    let report = run_suite(&project, &[], None, replay);
    let human = report.render(TestFormat::Human, Style::plain(), None);
    insta::assert_snapshot!("testing_suite_human", human);
    let json: serde_json::Value =
        serde_json::from_str(&report.render(TestFormat::Json, Style::plain(), None)).unwrap();
    assert_eq!(json["cases"][2]["failures"][0]["name"], "tools.sequence");
    assert_eq!(json["summary"]["exit"], 2);
    let sarif: serde_json::Value =
        serde_json::from_str(&report.render(TestFormat::Sarif, Style::plain(), Some(dir.path())))
            .unwrap();
    let errors = sarif_schema::errors(&sarif_schema::validator(), &sarif);
    assert!(errors.is_empty(), "{errors:?}");
    let junit = report.render(TestFormat::Junit, Style::plain(), None);
    assert!(
        junit.contains("tests=\"4\" failures=\"2\" errors=\"1\""),
        "{junit}"
    );
    let github = report.render(TestFormat::Github, Style::plain(), None);
    assert!(
        github.contains("::error file=.agent-presets/tests/order.yaml,line=6,"),
        "{github}"
    );
}

#[test]
fn live_runs_are_judged_by_their_pass_rate() {
    let dir = project();
    let project = open(dir.path());
    let typos = [dir.path().join(".agent-presets/tests/typos.yaml")];
    // Every second run the model forgets to read the file.
    let mut n = 0;
    let mut run = |case: &TestCase| -> Result<Replay, Vec<Diagnostic>> {
        n += 1;
        let mut r = observed(case)?;
        if n % 2 == 0 {
            r.observed.calls.clear();
        }
        Ok(r)
    };
    let report = run_live_suite(&project, &typos, None, 4, 0.5, &mut run);
    assert_eq!(report.results[0].status, CaseStatus::Passed);
    let live = report.results[0].live.unwrap();
    assert_eq!((live.runs, live.passed), (4, 2));
    let report = run_live_suite(&project, &typos, None, 4, 0.75, &mut run);
    assert_eq!(report.results[0].status, CaseStatus::Failed);
    assert_eq!(
        report.results[0].diagnostics[0].kind,
        DiagnosticKind::PassRateBelow
    );
    assert_eq!(report.exit().code(), 1);
}
