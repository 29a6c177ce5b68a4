//! The report and its formats, tested together (one small report, every format).

use serde_json::{Value, json};

use super::shown::unknown_keys;
use super::*;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::source_files::SourceFiles;

fn report() -> ValidationReport {
    let mut r = ValidationReport::default();
    let d = Diagnostic::new(DiagnosticKind::UnknownTool, "unknown tool `read_fiel`")
        .at(Span::new("a, b.yaml".into(), 3, 5).with_len(9))
        .help("did you mean `read_file`?");
    r.add_diagnostics([d.clone(), d]);
    r.add_diagnostics([Diagnostic::new(
        DiagnosticKind::VolatileInPrefix,
        "50% of\nit",
    )]);
    r.add_preset(PresetOutcome {
        name: "a".into(),
        file: "a.yaml".into(),
        valid: false,
        blamed_parents: Vec::new(),
    });
    r
}

#[test]
fn identical_diagnostics_are_kept_once() {
    assert_eq!(report().diagnostics().len(), 2);
    assert_eq!(
        report().summary(),
        "0 presets valid, 1 invalid (1 error, 1 warning)"
    );
}

#[test]
fn each_file_in_line_order_files_in_first_seen_order() {
    let at = |file: &str, line, column| {
        Diagnostic::new(
            DiagnosticKind::UnknownKey,
            format!("{file}:{line}:{column}"),
        )
        .at(Span::new(file.into(), line, column))
    };
    let mut r = ValidationReport::default();
    r.add_diagnostics([
        at("b.yaml", 9, 1),
        at("a.yaml", 4, 2),
        Diagnostic::new(DiagnosticKind::Io, "nowhere"),
        at("b.yaml", 2, 7),
        at("a.yaml", 4, 1),
        at("b.yaml", 2, 3),
    ]);
    r.sort_in_file_order();
    let order: Vec<&str> = r.diagnostics().iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        order,
        [
            "b.yaml:2:3",
            "b.yaml:2:7",
            "b.yaml:9:1",
            "a.yaml:4:1",
            "a.yaml:4:2",
            "nowhere"
        ]
    );
    // The index still finds duplicates after the sort.
    r.add_diagnostics([at("a.yaml", 4, 2)]);
    assert_eq!(r.diagnostics().len(), 6);
}

#[test]
fn github_escapes() {
    let text = report().github(false);
    assert!(text.starts_with(
        "::error file=a%2C b.yaml,line=3,endLine=3,col=5,endColumn=13,title=P0103 unknown-tool::unknown tool `read_fiel` (did you mean `read_file`?)\n"
    ), "{text}");
    assert!(text.contains("::warning title=P0044 volatile-in-prefix::50%25 of%0Ait\n"));
}

#[test]
fn github_escalates_warnings_when_they_are_denied() {
    let text = report().github(true);
    assert!(
        text.contains("::error title=P0044 volatile-in-prefix::50%25 of%0Ait\n"),
        "{text}"
    );
    assert!(!text.contains("::warning"), "{text}");
}

#[test]
fn json_has_nulls_for_unknown_locations() {
    let v: Value = serde_json::from_str(&report().json()).unwrap();
    assert_eq!(v["diagnostics"][1]["file"], Value::Null);
    assert_eq!(v["diagnostics"][1]["help"], Value::Null);
    assert_eq!(v["diagnostics"][0]["column"], 5);
    assert_eq!(v["presets"][0]["valid"], false);
}

#[test]
fn sarif_rules_cover_every_result() {
    let sources = SourceFiles::new();
    let run = SarifRun {
        exit: Exit::Invalid,
        deny_warnings: false,
        srcroot: None,
        sources: &sources,
    };
    let v: Value = serde_json::from_str(&report().sarif(&run)).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    for result in v["runs"][0]["results"].as_array().unwrap() {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
    }
    assert_eq!(
        v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"],
        json!({"uri": "a%2C%20b.yaml", "uriBaseId": "%SRCROOT%"})
    );
}

/// 250 unknown keys in one file (each twice, as a child would find its parent's
/// errors again), one in another.
fn big_report() -> ValidationReport {
    let mut r = ValidationReport::default();
    let list = unknown_keys("big.yaml", 1..=250);
    r.add_diagnostics(list.clone());
    r.add_diagnostics(list);
    r.add_diagnostics([
        Diagnostic::new(DiagnosticKind::UnknownKey, "other").at(Span::new(
            "small.yaml".into(),
            1,
            1,
        )),
    ]);
    r
}

#[test]
fn duplicates_found_by_hash_keep_the_first_order() {
    let r = big_report();
    assert_eq!(r.diagnostics().len(), 251);
    assert_eq!(r.diagnostics()[0].message, "key 1");
    assert_eq!(r.diagnostics()[250].message, "other");
    assert!(r.summary().ends_with("(251 errors, 0 warnings)"));
}

#[test]
fn every_format_shows_200_per_file_and_counts_the_rest() {
    let r = big_report();
    let v: Value = serde_json::from_str(&r.json()).unwrap();
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 201);
    assert_eq!(v["diagnostics"][200]["file"], "small.yaml");
    assert_eq!(
        v["omitted"],
        json!([{ "file": "big.yaml", "count": 50 }]),
        "{v}"
    );
    // Nothing left out: no `omitted` key at all.
    let v: Value = serde_json::from_str(&report().json()).unwrap();
    assert!(v.get("omitted").is_none());

    let text = r.github(false);
    assert_eq!(text.matches("::error ").count(), 201);
    assert!(
        text.contains(
            "::error file=big.yaml,line=200,endLine=200,col=1,endColumn=1,title=P0003 unknown-key::key 200\n::notice \
         file=big.yaml::50 more diagnostics in `big.yaml` are not shown (at most 200 are \
         shown per file)\n::error file=small.yaml"
        ),
        "{text}"
    );

    let sources = SourceFiles::new();
    let sarif_run = SarifRun {
        exit: Exit::Invalid,
        deny_warnings: false,
        srcroot: None,
        sources: &sources,
    };
    let v: Value = serde_json::from_str(&r.sarif(&sarif_run)).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), 201);
    let note = &run["invocations"][0]["toolExecutionNotifications"][0];
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    assert_eq!(note["level"], "note");
    assert_eq!(
        note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "big.yaml"
    );
    assert!(
        note["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("50 more")
    );
    let v: Value = serde_json::from_str(&report().sarif(&sarif_run)).unwrap();
    assert_eq!(
        v["runs"][0]["invocations"][0]["toolExecutionNotifications"],
        json!([])
    );

    let text = r.human(Style::plain(), &SourceFiles::new());
    assert_eq!(text.matches("error[P0003]").count(), 201);
    assert!(text.contains("note: 50 more diagnostics in `big.yaml`"));
}
