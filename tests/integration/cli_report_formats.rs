//! Every output format of `validate`, snapshot-tested over one shared set of broken
//! presets (`tests/fixtures/broken-presets/`), and the SARIF log validated against the
//! official SARIF 2.1.0 JSON Schema (`tests/fixtures/sarif-schema-2.1.0.json`).
#![cfg(feature = "cli")]

use std::fs;

use agent_presets::DiagnosticKind;
use agent_presets::codes::CodePage;
use serde_json::Value;

use crate::support::project;
use crate::support::sarif_schema;

use project::{Project, Run};

fn broken() -> Project {
    Project::copy_of("tests/fixtures/broken-presets")
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

#[test]
fn human() {
    let run = broken().run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn json_report() {
    let run = broken().run(&["validate", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn github() {
    let run = broken().run(&["validate", "--format", "github"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn github_deny_warnings_makes_every_annotation_an_error() {
    let project = broken();
    let allowed = project.run(&["validate", "--format", "github"]);
    let denied = project.run(&["validate", "--format", "github", "--deny-warnings"]);
    assert_eq!(denied.code, 1);
    assert!(allowed.stdout.contains("::warning "), "{}", allowed.stdout);
    assert!(!denied.stdout.contains("::warning "), "{}", denied.stdout);
    // The same annotations otherwise (the summary counts `dated` as invalid now).
    let annotations = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("::"))
            .map(|l| l.replacen("::warning ", "::error ", 1))
            .collect()
    };
    assert_eq!(annotations(&allowed.stdout), annotations(&denied.stdout));
    assert!(
        denied
            .stdout
            .ends_with("3 presets valid, 6 invalid (7 errors, 2 warnings)\n"),
        "{}",
        denied.stdout
    );
}

/// The SARIF log with what differs between machines replaced: the project directory.
fn sarif(project: &Project, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["validate", "--format", "sarif"];
    args.extend_from_slice(extra);
    let run = project.run(&args);
    let log = json(&run.stdout);
    (run, log)
}

#[test]
fn sarif_validates_against_the_official_schema() {
    let validator = sarif_schema::validator();
    let project = broken();
    for extra in [&[][..], &["--deny-warnings"], &["tidy"], &["missing.yaml"]] {
        let (run, log) = sarif(&project, extra);
        let errors = sarif_schema::errors(&validator, &log);
        assert!(errors.is_empty(), "{extra:?}: {errors:#?}\n{}", run.stdout);
    }
    // More than 200 diagnostics in one file: the rest are counted in a notification.
    let keys: String = (0..210).map(|i| format!("key{i}: x\n")).collect();
    project.write(
        ".agent-presets/many.yaml",
        &format!("version: 1\nname: many\n{keys}"),
    );
    let (run, log) = sarif(&project, &["many"]);
    assert_eq!(
        sarif_schema::errors(&validator, &log),
        Vec::<String>::new(),
        "{}",
        run.stdout
    );
    let notes = &log["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    assert_eq!(notes.as_array().map(Vec::len), Some(1), "{notes:#}");
    assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 200);
    // The validator does reject a broken log.
    let (_, mut log) = sarif(&project, &[]);
    log["runs"][0]["results"][0]["level"] = Value::from("fatal");
    assert!(!validator.is_valid(&log));
}

#[test]
fn sarif_snapshot() {
    let project = broken();
    let (run, mut log) = sarif(&project, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let root = &mut log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"];
    let srcroot = root.as_str().unwrap().to_owned();
    let canonical = fs::canonicalize(project.path()).unwrap();
    assert!(
        srcroot == format!("file://{}/", project.path().display())
            || srcroot == format!("file://{}/", canonical.display()),
        "{srcroot}"
    );
    *root = Value::from("file:///[project]/");
    // The rules are the diagnostic pages, checked below; the snapshot keeps their ids.
    let rules = log["runs"][0]["tool"]["driver"]["rules"].take();
    log["runs"][0]["tool"]["driver"]["rules"] = rules
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    insta::assert_json_snapshot!(log);
}

#[test]
fn sarif_rules_are_the_diagnostic_pages() {
    let (_, log) = sarif(&broken(), &[]);
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules.len(), DiagnosticKind::ALL.len());
    for (rule, kind) in rules.iter().zip(DiagnosticKind::ALL) {
        let page = CodePage::of(*kind).unwrap();
        assert_eq!(rule["id"], kind.code());
        assert_eq!(rule["name"], kind.name());
        assert_eq!(rule["shortDescription"]["text"], page.summary());
        assert_eq!(rule["fullDescription"]["text"], page.meaning());
        assert_eq!(rule["help"]["markdown"], page.markdown());
        assert!(
            rule["help"]["text"]
                .as_str()
                .unwrap()
                .ends_with(&format!("Fix: {}", page.fix()))
        );
        assert_eq!(rule["helpUri"], page.url());
        let level = if kind.severity() == agent_presets::Severity::Warning {
            "warning"
        } else {
            "error"
        };
        assert_eq!(rule["defaultConfiguration"]["level"], level);
    }
    // Every result's rule is in the list, at its index.
    for result in log["runs"][0]["results"].as_array().unwrap() {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
    }
}

#[test]
fn sarif_invocation_carries_the_exit_status() {
    let project = broken();
    let cases: [(&[&str], i32, bool); 4] = [
        (&["tidy"], 0, true),
        (&[], 1, true),
        (&["dated", "--deny-warnings"], 1, true),
        (&["missing.yaml"], 2, false),
    ];
    for (extra, exit, successful) in cases {
        let (run, log) = sarif(&project, extra);
        assert_eq!(run.code, exit, "{extra:?}");
        let invocation = &log["runs"][0]["invocations"][0];
        assert_eq!(invocation["exitCode"], exit, "{extra:?}");
        assert_eq!(invocation["executionSuccessful"], successful, "{extra:?}");
    }
}

#[test]
fn sarif_deny_warnings_makes_warnings_errors() {
    let project = broken();
    let (_, log) = sarif(&project, &["dated", "--deny-warnings"]);
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["ruleId"], "P0044");
    assert_eq!(results[0]["level"], "error");
    // Every warning kind is configured as an error, at its rule's index.
    let overrides = log["runs"][0]["invocations"][0]["ruleConfigurationOverrides"]
        .as_array()
        .unwrap();
    let warnings: Vec<(usize, &DiagnosticKind)> = DiagnosticKind::ALL
        .iter()
        .enumerate()
        .filter(|(_, k)| k.severity() == agent_presets::Severity::Warning)
        .collect();
    assert_eq!(overrides.len(), warnings.len());
    for (o, (index, kind)) in overrides.iter().zip(warnings) {
        assert_eq!(o["descriptor"]["id"], kind.code());
        assert_eq!(o["descriptor"]["index"], index);
        assert_eq!(o["configuration"]["level"], "error");
    }
    let (_, log) = sarif(&project, &["dated"]);
    assert_eq!(log["runs"][0]["results"][0]["level"], "warning");
    assert!(log["runs"][0]["invocations"][0]["ruleConfigurationOverrides"].is_null());
}

fn fingerprints(log: &Value) -> Vec<(String, String)> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap().to_owned(),
                r["partialFingerprints"]["agentPresets/v1"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect()
}

#[test]
fn sarif_fingerprints_are_stable_across_runs_and_unrelated_edits() {
    let project = broken();
    let (_, first) = sarif(&project, &[]);
    let (_, second) = sarif(&project, &[]);
    let before = fingerprints(&first);
    assert_eq!(before, fingerprints(&second));
    let mut unique: Vec<&String> = before.iter().map(|(_, f)| f).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), before.len(), "{before:?}");

    // Lines added above the findings of `reviewer`: its results move, their
    // fingerprints stay.
    let file = project.path().join(".agent-presets/reviewer.yaml");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, format!("# A comment.\n\n{text}")).unwrap();
    let (_, moved) = sarif(&project, &[]);
    assert_eq!(before, fingerprints(&moved));
    let line_of = |log: &Value, rule: &str| {
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["ruleId"] == rule)
            .map(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"].clone())
            .unwrap()
    };
    assert_eq!(line_of(&moved, "P0103"), 19);
    assert_eq!(line_of(&first, "P0103"), 17);

    // Another finding on the line changes that result's fingerprint only.
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, text.replace("read_fiel, grep", "read_fiel, grepp")).unwrap();
    let (_, edited) = sarif(&project, &[]);
    let after = fingerprints(&edited);
    let changed: Vec<&(String, String)> = after.iter().filter(|f| !before.contains(f)).collect();
    assert_eq!(changed.len(), 2, "{changed:?}");
    assert!(
        changed.iter().all(|(rule, _)| rule == "P0103"),
        "{changed:?}"
    );
}

#[test]
fn sarif_paths_are_relative_to_srcroot() {
    let project = broken();
    let (_, log) = sarif(&project, &[]);
    for result in log["runs"][0]["results"].as_array().unwrap() {
        let artifact = &result["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(artifact["uriBaseId"], "%SRCROOT%", "{result:#}");
        assert!(
            artifact["uri"]
                .as_str()
                .unwrap()
                .starts_with(".agent-presets/"),
            "{result:#}"
        );
    }
    let base = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
}

// ---- prefix-drift: one annotation per change, in the repository, bounded ----

const DOCS_WRITER: &str = "version: 1
name: docs-writer
description: Writes docs.
extends: standard
persona:
  sections:
    - name: docs-rules
      order: 150
      text: |
        Write docs in plain English.
        Keep every page short.
tools:
  allow: [read_file, write_file, grep]
";

const STRICT_DOCS: &str = "version: 1
name: strict-docs
description: Writes docs, strictly.
extends: docs-writer
persona:
  sections:
    - name: strict
      order: 160
      text: Be strict.
";

/// A project of a parent and its child, locked, then the parent edited: its own section
/// reworded, `glob` allowed.
fn parent_edited() -> Project {
    let project = Project::new();
    project.write(".agent-presets/docs-writer.yaml", DOCS_WRITER);
    project.write(".agent-presets/strict-docs.yaml", STRICT_DOCS);
    let run = project.run(&["lock"]);
    assert_eq!(run.code, 0, "{run:?}");
    project.write(
        ".agent-presets/docs-writer.yaml",
        &DOCS_WRITER
            .replace("plain English.", "plain English, in short sentences.")
            .replace("write_file, grep]", "write_file, grep, glob]"),
    );
    project
}

fn annotations(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|l| l.starts_with("::")).collect()
}

#[test]
fn drift_after_a_parent_edit_is_one_annotation_per_change_in_the_repository() {
    let project = parent_edited();
    let run = project.run(&["validate", "--locked", "--format", "github"]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines = annotations(&run.stdout);
    // The parent's three changes (its section, the guidance of `glob`, the tool `glob`),
    // each drifting both presets: one annotation each, on the parent's line that changed,
    // none on the child's file (the pull request did not touch it).
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    for line in &lines {
        assert!(!line.contains("<builtin>"), "{line}");
        assert!(!line.contains("strict-docs.yaml"), "{line}");
        assert!(line.len() < 1200, "{} characters: {line}", line.len());
        assert!(
            line.ends_with(
                "(presets drifting: `docs-writer`, `strict-docs`; if the change is intended, \
                 re-lock them with `agent-presets lock docs-writer strict-docs` and commit presets.lock)"
            ),
            "{line}"
        );
    }
    // The parent's own section, on its name, with its diff.
    assert!(lines[0].starts_with(
        "::error file=.agent-presets/docs-writer.yaml,line=7,endLine=7,col=13,endColumn=22,\
         title=P0302 prefix-drift::`docs-writer`'s section `docs-rules` changed: 2 presets drift\
         %0A@@ -1 +1 @@%0A-Write docs in plain English.%0A+Write docs in plain English, in short sentences. ("
    ), "{}", lines[0]);
    // The new tool, on its entry of the allow list, its schema summarised.
    assert!(
        lines.iter().any(|l| l.starts_with(
            "::error file=.agent-presets/docs-writer.yaml,line=13,endLine=13,col=40,endColumn=43,\
             title=P0302 prefix-drift::`docs-writer`'s tool `glob` added: 2 presets drift (parameters `pattern`, `path`) ("
        )),
        "{}",
        run.stdout
    );

    // The human and JSON outputs keep the whole diff, tool schema included.
    let json_run = project.run(&["validate", "--locked", "--format", "json"]);
    let v = json(&json_run.stdout);
    let message = v["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.contains("+++ now: tool `glob`\n"), "{message}");
    assert!(
        message.contains("\"additionalProperties\": false"),
        "{message}"
    );
    let human = project.run(&["validate", "--locked"]);
    assert!(
        human.stdout.contains("+++ now: tool `glob`\n"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("re-lock them with `agent-presets lock docs-writer strict-docs`"),
        "{}",
        human.stdout
    );

    // The one command re-locks both: nothing left failing.
    let relock = project.run(&["lock", "docs-writer", "strict-docs"]);
    assert_eq!(relock.code, 0, "{relock:?}");
    let after = project.run(&["validate", "--locked", "--format", "github"]);
    assert_eq!(after.code, 0, "{after:?}");
}

#[test]
fn drift_after_a_parent_edit_github_snapshot() {
    // Sections only: the snapshot holds no text of the built-in tools.
    let project = Project::new();
    project.write(".agent-presets/docs-writer.yaml", DOCS_WRITER);
    project.write(".agent-presets/strict-docs.yaml", STRICT_DOCS);
    assert_eq!(project.run(&["lock"]).code, 0);
    project.write(
        ".agent-presets/docs-writer.yaml",
        &DOCS_WRITER.replace("Keep every page short.", "Keep every page under a screen."),
    );
    let run = project.run(&["validate", "--locked", "--format", "github"]);
    assert_eq!(run.code, 1, "{run:?}");
    insta::assert_snapshot!(run.stdout);
}

/// A lock written by "another release": a section of the built-in `standard` and the
/// schema of the built-in tool `read_file` differ from what this build renders.
fn builtin_changed() -> Project {
    let project = Project::new();
    project.write(".agent-presets/docs-writer.yaml", DOCS_WRITER);
    project.write(".agent-presets/strict-docs.yaml", STRICT_DOCS);
    assert_eq!(project.run(&["lock"]).code, 0);
    let path = project.path().join("presets.lock");
    let mut lock = json(&fs::read_to_string(&path).unwrap());
    for (_, entry) in lock["presets"].as_object_mut().unwrap().iter_mut() {
        for section in entry["sections"].as_array_mut().unwrap() {
            if section["name"] == "scope" {
                let first = section["text"][0]
                    .as_str()
                    .unwrap()
                    .replace("smallest", "tiniest");
                section["text"][0] = Value::from(first);
            }
        }
        for tool in entry["tools"].as_array_mut().unwrap() {
            if tool["name"] == "read_file" {
                let definition = &mut tool["definition"];
                definition["description"] = Value::from("An older description.");
                let properties = definition["parameters"]["properties"]
                    .as_object_mut()
                    .unwrap();
                properties.insert("legacy".into(), serde_json::json!({ "type": "string" }));
            }
        }
    }
    fs::write(&path, serde_json::to_string_pretty(&lock).unwrap()).unwrap();
    project
}

#[test]
fn drift_from_a_builtin_is_pinned_on_the_extends_line_not_the_builtin_file() {
    let project = builtin_changed();
    let run = project.run(&["validate", "--locked", "--format", "github"]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines = annotations(&run.stdout);
    for line in &lines {
        assert!(!line.contains("<builtin>"), "{line}");
        assert!(line.len() < 1200, "{} characters: {line}", line.len());
    }
    assert!(
        lines.iter().any(|l| l.starts_with(
            "::error file=.agent-presets/docs-writer.yaml,line=4,endLine=4,col=10,endColumn=17,\
             title=P0302 prefix-drift::`docs-writer`: section `scope` changed, inherited from the \
             built-in preset `standard` (the lock was written with another version of it, by \
             another agent-presets release?)%0A@@ -1 +1 @@%0A-Make the tiniest change"
        )),
        "{}",
        run.stdout
    );
    // The tool's schema change, summarised, on the preset's `tools:` entry.
    assert!(
        lines.iter().any(|l| l.contains(
            "file=.agent-presets/docs-writer.yaml,line=13,endLine=13,col=3,endColumn=7,\
             title=P0302 prefix-drift::`docs-writer`: tool `read_file` changed: `description` \
             changed, parameter `legacy` removed (`read_file` is a built-in tool"
        )),
        "{}",
        run.stdout
    );
    // The built-in itself drifted too: an annotation without a file.
    assert!(
        lines.iter().any(|l| l.starts_with(
            "::error title=P0302 prefix-drift::the built-in preset `standard` differs from presets.lock"
        )),
        "{}",
        run.stdout
    );
    // Every drifted preset in the one command.
    assert!(
        run.stdout.contains(
            "re-lock them all with `agent-presets lock docs-writer standard strict-docs`"
        ),
        "{}",
        run.stdout
    );

    // SARIF: one result per change, none in a built-in file; the log is valid.
    let (_, log) = sarif(&project, &["--locked"]);
    assert_eq!(
        sarif_schema::errors(&sarif_schema::validator(), &log),
        Vec::<String>::new()
    );
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(results.len() > 3, "{results:#?}");
    for result in results {
        assert_eq!(result["ruleId"], "P0302");
        let base = &result["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"];
        assert_ne!(base, "BUILTIN", "{result:#}");
    }
}

#[test]
fn a_section_a_parent_drops_is_grouped_with_the_parent_not_blamed_on_a_builtin() {
    let project = Project::new();
    project.write(".agent-presets/docs-writer.yaml", DOCS_WRITER);
    project.write(".agent-presets/strict-docs.yaml", STRICT_DOCS);
    assert_eq!(project.run(&["lock"]).code, 0);
    let start = DOCS_WRITER.find("persona:").unwrap();
    let end = DOCS_WRITER.find("tools:").unwrap();
    project.write(
        ".agent-presets/docs-writer.yaml",
        &format!("{}{}", &DOCS_WRITER[..start], &DOCS_WRITER[end..]),
    );
    let run = project.run(&["validate", "--locked", "--format", "github"]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines = annotations(&run.stdout);
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert!(lines[1].starts_with(
        "::error file=.agent-presets/strict-docs.yaml,line=4,endLine=4,col=10,endColumn=20,\
         title=P0302 prefix-drift::`strict-docs`: section `docs-rules` removed, declared by \
         neither `strict-docs` nor the presets it extends (`docs-writer`, …) any more%0A"
    ));
    for line in lines {
        assert!(
            line.ends_with(
                "(2 presets drifted through a change of `.agent-presets/docs-writer.yaml`: \
                 `docs-writer`, `strict-docs`; if the change is intended, re-lock them all \
                 with `agent-presets lock docs-writer strict-docs` and commit presets.lock)"
            ),
            "{line}"
        );
    }
}

/// A host that validates with library calls and renders with `agent_presets::report`
/// gets the bytes the CLI prints, in every format.
#[test]
fn the_library_renders_what_the_cli_prints() {
    use agent_presets::preset::{CatalogOptions, PresetCatalog, validate_in_catalog};
    use agent_presets::report::{Exit, PresetOutcome, SarifRun, Style, ValidationReport};
    use agent_presets::tools::ToolCatalog;

    let project = Project::new();
    project.write(
        ".agent-presets/base.yaml",
        "version: 1\nname: base\nextends: standard\ntools:\n  allow: [read_fiel, grep]\n",
    );
    project.write(
        ".agent-presets/child.yaml",
        "version: 1\nname: child\nextends: base\npersona:\n  sections:\n    - name: today\n      \
         order: 150\n      text: Today is {{ date }}.\n",
    );
    let dir = project.path().canonicalize().unwrap();
    let (catalog, problems) = PresetCatalog::discover(&CatalogOptions::isolated(&dir));
    assert!(problems.is_empty(), "{problems:?}");
    let tools = ToolCatalog::builtin();
    let mut report = ValidationReport::default();
    for name in ["base", "child"] {
        let entry = catalog.get(name).unwrap();
        let file = entry.display().to_string();
        let validation = validate_in_catalog(&catalog, name, &tools);
        let valid = validation.preset.is_some();
        let outcome =
            PresetOutcome::judged(name.into(), file, valid, &validation.diagnostics, || {
                vec![("base".into(), ".agent-presets/base.yaml".into())]
            });
        report.add_diagnostics(validation.diagnostics);
        report.add_preset(outcome);
    }
    report.sort_in_file_order();
    let sources = catalog.source_files();

    let cli = |format: &str| {
        let run = project.run(&["validate", "base", "child", "--format", format]);
        assert_eq!(run.code, 1, "{run:?}");
        run.stdout
    };
    let human = report.human(Style::plain(), &sources);
    assert!(
        human.contains("note: `child` is invalid because"),
        "{human}"
    );
    assert_eq!(cli("human"), human);
    assert_eq!(cli("json"), report.json());
    assert_eq!(cli("github"), report.github(false));
    let sarif = report.sarif(&SarifRun {
        exit: Exit::Invalid,
        deny_warnings: false,
        srcroot: Some(&dir),
        sources: &sources,
    });
    assert_eq!(cli("sarif"), sarif);
}
