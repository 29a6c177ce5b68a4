//! The outcome of `validate` and its four renderings: human (rustc-style), JSON, GitHub
//! workflow commands and SARIF 2.1.0. Every rendering shows at most
//! [`MAX_SHOWN_PER_FILE`](super::shown::MAX_SHOWN_PER_FILE) diagnostics per file and
//! says how many more there are (see [`super::shown`]); counts and exit codes cover all.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};

use serde::Serialize;
use serde_json::{Value, json};

use super::sarif::{self, SarifRun};
use super::secrets::mask;
use super::shown::{Shown, cap_per_file, more_text};
use super::snippet::HumanRenderer;
use super::style::Style;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity};
pub(crate) use crate::project::lock::{order_json, pretty};
use crate::source_files::SourceFiles;

/// An output format a program reads. Whatever goes wrong — a usage or I/O error
/// included — is reported in it on stdout, so a pipeline never receives an empty file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MachineFormat {
    /// `{"diagnostics": [...], ...}`.
    Json,
    /// GitHub workflow commands.
    Github,
    /// SARIF 2.1.0.
    Sarif,
}

impl MachineFormat {
    /// The report of a command that failed with `diagnostics`, in this format: JSON
    /// `{"diagnostics": [...]}`, one `::error` per diagnostic, or a SARIF log whose
    /// invocation did not succeed.
    pub(crate) fn error_report(self, diagnostics: Vec<Diagnostic>) -> String {
        let mut report = ValidationReport::default();
        report.add_diagnostics(diagnostics);
        match self {
            MachineFormat::Json => {
                let list: Vec<Value> = report.diagnostics.iter().map(diagnostic_json).collect();
                pretty(&json!({ "diagnostics": list }))
            }
            MachineFormat::Github => report.github(false),
            MachineFormat::Sarif => {
                let sources = SourceFiles::new();
                let cwd = std::env::current_dir().ok();
                report.sarif(&SarifRun {
                    exit: super::Exit::Usage,
                    deny_warnings: false,
                    srcroot: cwd.as_deref(),
                    sources: &sources,
                })
            }
        }
    }
}

/// One validated preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct PresetOutcome {
    /// Its name.
    pub name: String,
    /// Its file as shown to users.
    pub file: String,
    /// No errors (and, with `--deny-warnings`, no warnings)?
    pub valid: bool,
    /// Invalid only because of presets it extends: their names and files, nearest
    /// first (for the human output's note; JSON consumers see the errors' files).
    #[serde(skip)]
    pub blamed_parents: Vec<(String, String)>,
}

impl PresetOutcome {
    /// The verdict on a preset: `diagnostics` are what validating it found, `ancestors`
    /// the presets it extends (name and file, nearest first). An invalid preset whose
    /// errors are all in the files of presets it extends is invalid because of them.
    pub(crate) fn judged(
        name: String,
        file: String,
        valid: bool,
        diagnostics: &[Diagnostic],
        ancestors: impl FnOnce() -> Vec<(String, String)>,
    ) -> PresetOutcome {
        let mut outcome = PresetOutcome {
            name,
            file,
            valid,
            blamed_parents: Vec::new(),
        };
        let error_files: Vec<&str> = diagnostics
            .iter()
            .filter(|d| d.is_error())
            .filter_map(|d| d.span.as_ref().map(|s| &*s.file))
            .collect();
        if valid || error_files.is_empty() || error_files.contains(&outcome.file.as_str()) {
            return outcome;
        }
        let ancestors = ancestors();
        if error_files
            .iter()
            .all(|f| ancestors.iter().any(|(_, file)| file == f))
        {
            outcome.blamed_parents = ancestors
                .into_iter()
                .filter(|(_, file)| error_files.contains(&file.as_str()))
                .collect();
        }
        outcome
    }

    /// `note: `child` is invalid because the preset it extends, `base`
    /// (`.agent-presets/base.yaml`), is invalid`, for a preset invalid only because of
    /// its parents.
    fn parent_note(&self) -> Option<String> {
        if self.blamed_parents.is_empty() {
            return None;
        }
        let parents: Vec<String> = self
            .blamed_parents
            .iter()
            .map(|(name, file)| format!("`{name}` (`{file}`)"))
            .collect();
        let (what, verb) = if parents.len() == 1 {
            ("the preset it extends", "is")
        } else {
            ("presets it extends", "are")
        };
        Some(format!(
            "`{}` is invalid because {what}, {}, {verb} invalid: fix the errors above there",
            self.name,
            parents.join(", ")
        ))
    }
}

/// Every diagnostic (each printed once) and every preset's verdict.
#[derive(Debug, Default)]
pub(crate) struct ValidationReport {
    diagnostics: Vec<Diagnostic>,
    /// Where each diagnostic is in `diagnostics`, by its hash: finding a duplicate costs
    /// a hash, not a scan of everything found so far.
    positions: HashMap<u64, Vec<usize>>,
    hasher: RandomState,
    presets: Vec<PresetOutcome>,
    /// Each `prefix-drift` diagnostic with its changes, one short diagnostic each: the
    /// GitHub and SARIF renderings show these in its place (see [`crate::project::lock::Drift`]).
    drift_changes: Vec<(Diagnostic, Vec<Diagnostic>)>,
}

impl ValidationReport {
    /// Add diagnostics; one identical to an earlier one (a parent's error found again
    /// while validating a child) is kept once.
    pub(crate) fn add_diagnostics(&mut self, list: impl IntoIterator<Item = Diagnostic>) {
        for d in list {
            let same_hash = self.positions.entry(self.hasher.hash_one(&d)).or_default();
            if same_hash.iter().any(|&i| self.diagnostics[i] == d) {
                continue;
            }
            same_hash.push(self.diagnostics.len());
            self.diagnostics.push(d);
        }
    }

    /// Show `changes` instead of the `prefix-drift` diagnostic `whole` (added with
    /// [`Self::add_diagnostics`]) in the GitHub and SARIF renderings: one annotation per
    /// change, on a line of the repository, with a bounded diff.
    pub(crate) fn add_drift_changes(&mut self, whole: Diagnostic, changes: Vec<Diagnostic>) {
        self.drift_changes.push((whole, changes));
    }

    /// The capped list with each drift replaced by its changes.
    fn shown_for_annotations(&self) -> Vec<Shown<'_>> {
        let by_drift: HashMap<&Diagnostic, &Vec<Diagnostic>> = self
            .drift_changes
            .iter()
            .map(|(whole, changes)| (whole, changes))
            .collect();
        let mut out = Vec::new();
        for item in cap_per_file(&self.diagnostics) {
            let changes = match item {
                Shown::Diagnostic(d) if d.kind == DiagnosticKind::PrefixDrift => {
                    by_drift.get(d).copied()
                }
                _ => None,
            };
            match changes {
                Some(changes) => out.extend(changes.iter().map(Shown::Diagnostic)),
                None => out.push(item),
            }
        }
        out
    }

    /// Record a preset's verdict.
    pub(crate) fn add_preset(&mut self, outcome: PresetOutcome) {
        self.presets.push(outcome);
    }

    /// The diagnostics, deduplicated, in the order found (in file order once
    /// [`sort_in_file_order`](Self::sort_in_file_order) ran).
    pub(crate) fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Order the diagnostics for reading: the files in the order they were first
    /// reported, each file's diagnostics by line and column (a preset's checks run in
    /// several passes, each finding problems in its own order). Diagnostics without a
    /// file keep their place among the files.
    pub(crate) fn sort_in_file_order(&mut self) {
        let mut rank: HashMap<&str, usize> = HashMap::new();
        let mut keys = Vec::with_capacity(self.diagnostics.len());
        for (i, d) in self.diagnostics.iter().enumerate() {
            let key = match &d.span {
                Some(span) => (
                    *rank.entry(&*span.file).or_insert(i),
                    span.line,
                    span.column,
                ),
                None => (i, 0, 0),
            };
            keys.push(key);
        }
        drop(rank);
        let mut order: Vec<usize> = (0..self.diagnostics.len()).collect();
        // Stable: diagnostics at one position keep the order they were found in.
        order.sort_by_key(|&i| keys[i]);
        let mut slots: Vec<Option<Diagnostic>> = std::mem::take(&mut self.diagnostics)
            .into_iter()
            .map(Some)
            .collect();
        self.diagnostics = order.iter().filter_map(|&i| slots[i].take()).collect();
        self.positions.clear();
        for (i, d) in self.diagnostics.iter().enumerate() {
            self.positions
                .entry(self.hasher.hash_one(d))
                .or_default()
                .push(i);
        }
    }

    /// The verdicts.
    pub(crate) fn presets(&self) -> &[PresetOutcome] {
        &self.presets
    }

    fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }

    /// `2 presets valid, 1 invalid (3 errors, 1 warning)`.
    pub(crate) fn summary(&self) -> String {
        let valid = self.presets.iter().filter(|p| p.valid).count();
        let invalid = self.presets.len() - valid;
        format!(
            "{} valid, {invalid} invalid ({}, {})",
            plural(valid, "preset"),
            plural(self.count(Severity::Error), "error"),
            plural(self.count(Severity::Warning), "warning"),
        )
    }

    /// rustc-style diagnostics (with snippets from `sources`; a note for each file's
    /// diagnostics beyond the cap), then the summary line.
    pub(crate) fn human(&self, style: Style, sources: &SourceFiles) -> String {
        let renderer = HumanRenderer::new(style, sources, &self.diagnostics);
        let mut out = renderer.render_all(&self.diagnostics);
        for note in self.presets.iter().filter_map(PresetOutcome::parent_note) {
            out.push_str(&format!("{}: {}\n\n", style.bold("note"), mask(&note)));
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// `{"diagnostics": [...], "presets": [...]}`, pretty-printed, with a final newline.
    /// When a file has more diagnostics than are shown, a third key follows:
    /// `"omitted": [{"file": F or null, "count": N}]`.
    pub(crate) fn json(&self) -> String {
        let mut diagnostics = Vec::new();
        let mut omitted = Vec::new();
        for item in cap_per_file(&self.diagnostics) {
            match item {
                Shown::Diagnostic(d) => diagnostics.push(diagnostic_json(d)),
                Shown::More { file, count } => {
                    omitted.push(json!({ "file": file, "count": count }));
                }
            }
        }
        let mut value = json!({ "diagnostics": diagnostics, "presets": self.presets });
        if !omitted.is_empty() {
            value["omitted"] = Value::Array(omitted);
        }
        pretty(&value)
    }

    /// One `::error`/`::warning` workflow command per diagnostic (a `::notice` for each
    /// file's diagnostics beyond the cap), then the summary. With `deny_warnings`,
    /// warnings are `::error`s: they fail the run like errors do.
    pub(crate) fn github(&self, deny_warnings: bool) -> String {
        let mut out = String::new();
        for item in self.shown_for_annotations() {
            let d = match item {
                Shown::Diagnostic(d) => d,
                Shown::More { file, count } => {
                    let location = file
                        .map(|f| format!(" file={}", escape_property(f)))
                        .unwrap_or_default();
                    let text = mask(&more_text(file, count)).into_owned();
                    out.push_str(&format!("::notice{location}::{}\n", escape_data(&text)));
                    continue;
                }
            };
            let level = match d.severity {
                Severity::Warning if !deny_warnings => "warning",
                _ => "error",
            };
            let mut properties = Vec::new();
            if let Some(span) = &d.span {
                properties.push(format!("file={}", escape_property(&span.file)));
                properties.push(format!("line={}", span.line));
                properties.push(format!("endLine={}", span.line));
                properties.push(format!("col={}", span.column));
                // The last column the annotation covers (GitHub's end column is inclusive).
                let end = span.column.saturating_add(span.len.max(1) - 1);
                properties.push(format!("endColumn={end}"));
            }
            properties.push(format!(
                "title={}",
                escape_property(&format!("{} {}", d.code(), d.kind.name()))
            ));
            let message = mask(&message_with_help(d, "")).into_owned();
            out.push_str(&format!(
                "::{level} {}::{}\n",
                properties.join(","),
                escape_data(&message)
            ));
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// A SARIF 2.1.0 log for code scanning (see [`sarif::log`]); a file's diagnostics
    /// beyond the cap are counted in a tool execution notification.
    pub(crate) fn sarif(&self, run: &SarifRun<'_>) -> String {
        pretty(&sarif::log(&self.shown_for_annotations(), run))
    }
}

/// The message with its help appended: `message (help)`.
pub(crate) fn message_with_help(d: &Diagnostic, label: &str) -> String {
    match &d.help {
        Some(help) => format!("{} ({label}{help})", d.message),
        None => d.message.clone(),
    }
}

/// The JSON shape of one diagnostic (stable; documented in the README).
pub(crate) fn diagnostic_json(d: &Diagnostic) -> Value {
    json!({
        "code": d.code(),
        "kind": d.kind.name(),
        "severity": d.severity.as_str(),
        "message": mask(&d.message),
        "file": d.span.as_ref().map(|s| s.file.to_string()),
        "line": d.span.as_ref().map(|s| s.line),
        "column": d.span.as_ref().map(|s| s.column),
        "help": d.help.as_deref().map(mask),
    })
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Workflow command data: `%`, CR and LF escaped.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow command property values: also `:` and `,`.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::shown::unknown_keys;
    use crate::diagnostic::Span;

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
            exit: crate::cli::Exit::Invalid,
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
            exit: crate::cli::Exit::Invalid,
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
}
