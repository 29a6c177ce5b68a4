//! The SARIF 2.1.0 rendering of a validation report, complete for code scanning: every rule with
//! its descriptions, help and help URI (from the diagnostic pages), results with stable
//! `partialFingerprints`, the invocation with its exit code, and paths relative to
//! `%SRCROOT%`. `tests/fixtures/sarif-schema-2.1.0.json` checks the shape in a test.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::commands::displayed;
use super::exit::Exit;
use super::json::pretty;
use super::mask::mask;
use super::shown::{Shown, more_text};
use super::validation::{ValidationReport, message_with_help};
use crate::codes::CodePage;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity, Span};
use crate::source_files::SourceFiles;

/// The base id of paths relative to the directory `validate` ran in.
pub const SRCROOT: &str = "%SRCROOT%";

/// The base id of the presets compiled into the binary (`<builtin>/standard.yaml`).
const BUILTIN: &str = "BUILTIN";

/// The `partialFingerprints` key of our own fingerprint scheme (see [`fingerprints`]).
const FINGERPRINT_KEY: &str = "agentPresets/v1";

/// What the log says besides the diagnostics.
pub struct SarifRun<'a> {
    /// The exit code `validate` ends with.
    pub exit: Exit,
    /// `--deny-warnings`: warnings are errors (results and rule configuration say so).
    pub deny_warnings: bool,
    /// The directory relative paths are relative to (`%SRCROOT%`); `None` leaves the
    /// root for the consumer to decide.
    pub srcroot: Option<&'a Path>,
    /// The text of the files the diagnostics point into (for fingerprints and snippets).
    pub sources: &'a SourceFiles,
}

/// The whole log of a capped report: a result per diagnostic shown, and a tool
/// execution notification per file whose further diagnostics were left out.
pub(crate) fn log(shown: &[Shown<'_>], run: &SarifRun<'_>) -> Value {
    let rules: Vec<Value> = DiagnosticKind::ALL.iter().map(|k| rule(*k)).collect();
    // A usage or I/O problem without a place in a file is not a finding about a
    // preset: it is reported as a tool execution notification (see `invocation`).
    let diagnostics: Vec<&Diagnostic> = shown
        .iter()
        .filter_map(|item| match item {
            Shown::Diagnostic(d) => Some(*d),
            Shown::More { .. } => None,
        })
        .filter(|d| d.kind != DiagnosticKind::Io || d.span.is_some())
        .collect();
    let fingerprints = fingerprints(&diagnostics, run.sources);
    let results: Vec<Value> = diagnostics
        .iter()
        .zip(fingerprints)
        .map(|(d, fingerprint)| result(d, fingerprint, run))
        .collect();
    let mut base_ids = Map::new();
    let mut srcroot = json!({
        "description": { "text": "The directory agent-presets validate ran in." }
    });
    if let Some(dir) = run.srcroot {
        srcroot["uri"] = Value::String(directory_uri(dir));
    }
    base_ids.insert(SRCROOT.to_owned(), srcroot);
    base_ids.insert(
        BUILTIN.to_owned(),
        json!({ "description": { "text": "The presets built into the agent-presets binary." } }),
    );
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "agent-presets",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "informationUri": format!("https://docs.rs/{}", env!("CARGO_PKG_NAME")),
                    "rules": rules,
                }
            },
            "invocations": [invocation(shown, run)],
            "originalUriBaseIds": base_ids,
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}

impl ValidationReport {
    /// A SARIF 2.1.0 log for code scanning (see [the module](self)); a file's diagnostics beyond
    /// the cap are counted in a tool execution notification.
    pub fn sarif(&self, run: &SarifRun<'_>) -> String {
        pretty(&log(&self.shown_for_annotations(), run))
    }
}

/// A rule per diagnostic kind, described by its page.
fn rule(kind: DiagnosticKind) -> Value {
    let page = CodePage::of(kind);
    let summary = page.map_or(kind.name(), |p| p.summary());
    let mut rule = json!({
        "id": kind.code(),
        "name": kind.name(),
        "shortDescription": { "text": summary },
        "defaultConfiguration": { "level": level(kind.severity()) },
        "properties": {
            "tags": ["agent-presets"],
            "precision": "very-high",
            "problem.severity": level(kind.severity()),
        },
    });
    if let Some(page) = page {
        rule["fullDescription"] = json!({ "text": page.meaning(), "markdown": page.meaning() });
        rule["help"] = json!({
            "text": format!("{}\n\nFix: {}", page.meaning(), page.fix()),
            "markdown": page.markdown(),
        });
        rule["helpUri"] = Value::String(page.url());
    }
    rule
}

/// The run's one invocation: how it ended, the warnings `--deny-warnings` made errors,
/// and how many diagnostics of a file were left out.
fn invocation(shown: &[Shown<'_>], run: &SarifRun<'_>) -> Value {
    // What kept the tool from doing its whole job: the `io` problems (an unreadable
    // path, a usage error), each a notification of its own.
    let failures: Vec<&Diagnostic> = shown
        .iter()
        .filter_map(|item| match item {
            Shown::Diagnostic(d) if d.kind == DiagnosticKind::Io => Some(*d),
            _ => None,
        })
        .collect();
    let description = match run.exit {
        Exit::Ok => "every preset is valid",
        Exit::Invalid => "at least one preset is invalid",
        _ => "a usage or I/O problem stopped part of the work",
    };
    let successful = failures.is_empty() && run.exit <= Exit::Invalid;
    let mut invocation = json!({
        "executionSuccessful": successful,
        "exitCode": run.exit.code(),
        "exitCodeDescription": description,
    });
    if run.deny_warnings {
        let overrides: Vec<Value> = DiagnosticKind::ALL
            .iter()
            .enumerate()
            .filter(|(_, k)| k.severity() == Severity::Warning)
            .map(|(index, k)| {
                json!({
                    "descriptor": { "id": k.code(), "index": index },
                    "configuration": { "level": "error" },
                })
            })
            .collect();
        invocation["ruleConfigurationOverrides"] = Value::Array(overrides);
    }
    let mut notifications: Vec<Value> = failures
        .iter()
        .map(|d| {
            let mut note = json!({
                "level": "error",
                "message": { "text": displayed(&message_with_help(d, "help: ")) },
                "descriptor": { "id": d.code() },
            });
            if let Some(span) = &d.span {
                note["locations"] =
                    json!([{ "physicalLocation": physical_location(span, run.sources) }]);
            }
            note
        })
        .collect();
    notifications.extend(shown.iter().filter_map(|item| match item {
        Shown::More { file, count } => {
            let mut note = json!({
                "level": "note",
                "message": { "text": mask(&more_text(*file, *count)) },
            });
            if let Some(file) = file {
                note["locations"] = json!([{
                    "physicalLocation": { "artifactLocation": artifact_location(file) }
                }]);
            }
            Some(note)
        }
        Shown::Diagnostic(_) => None,
    }));
    invocation["toolExecutionNotifications"] = Value::Array(notifications);
    invocation
}

fn result(d: &Diagnostic, fingerprint: String, run: &SarifRun<'_>) -> Value {
    let index = DiagnosticKind::ALL.iter().position(|k| *k == d.kind);
    let text = message_with_help(d, "help: ");
    let severity = if run.deny_warnings {
        Severity::Error
    } else {
        d.severity
    };
    let mut result = json!({
        "ruleId": d.code(),
        "ruleIndex": index,
        "level": level(severity),
        "message": { "text": displayed(&text) },
        "partialFingerprints": { FINGERPRINT_KEY: fingerprint },
    });
    if let Some(span) = &d.span {
        result["locations"] = json!([{ "physicalLocation": physical_location(span, run.sources) }]);
    }
    result
}

fn physical_location(span: &Span, sources: &SourceFiles) -> Value {
    let mut region = json!({
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.line,
        // SARIF's end column is the one after the last character.
        "endColumn": span.column.saturating_add(span.len.max(1)),
    });
    if let Some(line) = sources.line(&span.file, span.line) {
        region["snippet"] = json!({ "text": mask(line) });
    }
    json!({ "artifactLocation": artifact_location(&span.file), "region": region })
}

/// Where a displayed file path lives: relative to `%SRCROOT%` (the current directory),
/// an absolute `file:` URI, or a built-in preset.
fn artifact_location(file: &str) -> Value {
    if let Some(name) = file.strip_prefix("<builtin>/") {
        json!({ "uri": encode_path(name), "uriBaseId": BUILTIN })
    } else if Path::new(file).is_absolute() {
        json!({ "uri": file_uri(file) })
    } else {
        json!({ "uri": encode_path(file), "uriBaseId": SRCROOT })
    }
}

/// One fingerprint per diagnostic, stable across runs and machines and insensitive to
/// lines added elsewhere in the file or re-indenting: a hash of the rule, the file, the
/// text of the flagged line and the column in it (or the message, without a location), then
/// `:N` to tell identical ones apart (as GitHub's own line hashes do).
fn fingerprints(diagnostics: &[&Diagnostic], sources: &SourceFiles) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    diagnostics
        .iter()
        .map(|d| {
            let mut hasher = Sha256::new();
            hasher.update(d.code().as_bytes());
            match &d.span {
                Some(span) => {
                    let line = sources.line(&span.file, span.line).unwrap_or_default();
                    // The column counted from the first non-blank character, so
                    // re-indenting the line keeps the fingerprint.
                    let indent = line.chars().take_while(|c| c.is_whitespace()).count();
                    let column = u64::from(span.column).saturating_sub(indent as u64);
                    for part in [
                        span.file.as_bytes(),
                        mask(line.trim()).as_bytes(),
                        column.to_string().as_bytes(),
                    ] {
                        hasher.update([0]);
                        hasher.update(part);
                    }
                }
                None => {
                    hasher.update([0]);
                    hasher.update(mask(&d.message).as_bytes());
                }
            }
            let digest = hasher.finalize();
            let hash: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
            let count = seen.entry(hash.clone()).or_insert(0);
            *count += 1;
            format!("{hash}:{count}")
        })
        .collect()
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// A relative URI reference for a displayed path: every byte a URI path may not hold
/// percent-encoded (`\` separators become `/`).
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(b));
            }
            b'\\' => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `file:///abs/path` for an absolute path (`C:\x` becomes `file:///C:/x`).
fn file_uri(path: &str) -> String {
    let encoded = encode_path(path).replace("%3A", ":");
    if encoded.starts_with('/') {
        format!("file://{encoded}")
    } else {
        format!("file:///{encoded}")
    }
}

/// The `file:` URI of a directory, ending in `/` as SARIF requires of a base URI.
fn directory_uri(dir: &Path) -> String {
    let mut uri = file_uri(&dir.to_string_lossy());
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source_files::SourceText;

    #[test]
    fn uris() {
        assert_eq!(encode_path("a b/c,d.yaml"), "a%20b/c%2Cd.yaml");
        assert_eq!(
            artifact_location("<builtin>/standard.yaml"),
            json!({ "uri": "standard.yaml", "uriBaseId": "BUILTIN" })
        );
        assert_eq!(
            artifact_location(".agent-presets/x.yaml"),
            json!({ "uri": ".agent-presets/x.yaml", "uriBaseId": "%SRCROOT%" })
        );
        assert_eq!(
            artifact_location("/tmp/my presets/x.yaml"),
            json!({ "uri": "file:///tmp/my%20presets/x.yaml" })
        );
        assert_eq!(file_uri("C:\\work\\x.yaml"), "file:///C:/work/x.yaml");
        assert_eq!(directory_uri(Path::new("/work/repo")), "file:///work/repo/");
    }

    #[test]
    fn fingerprints_follow_the_line_text_not_its_number() {
        let at = |line: u32, column: u32| {
            Diagnostic::new(DiagnosticKind::UnknownTool, "unknown tool `x`").at(Span::new(
                "a.yaml".into(),
                line,
                column,
            ))
        };
        let mut before = SourceFiles::new();
        before.insert("a.yaml", SourceText::new("tools:\n  allow: [x, x]\n"));
        let mut after = SourceFiles::new();
        after.insert(
            "a.yaml",
            SourceText::new("# a comment\n\ntools:\n    allow: [x, x]\n"),
        );
        let refs = |list: &'static [(u32, u32)]| -> Vec<Diagnostic> {
            list.iter().map(|&(l, c)| at(l, c)).collect()
        };
        let (first, moved) = (
            refs(&[(2, 11), (2, 14), (2, 14)]),
            refs(&[(4, 13), (4, 16), (4, 16)]),
        );
        let one = fingerprints(&first.iter().collect::<Vec<_>>(), &before);
        let two = fingerprints(&moved.iter().collect::<Vec<_>>(), &after);
        // The line moved and was re-indented: same fingerprints.
        assert_eq!(one, two);
        assert_ne!(one[0], one[1]);
        assert!(one[1].ends_with(":1") && one[2].ends_with(":2"), "{one:?}");
        assert_eq!(one[1][..32], one[2][..32]);
        let again = fingerprints(&first.iter().collect::<Vec<_>>(), &before);
        assert_eq!(one, again);
        let unlocated = Diagnostic::new(DiagnosticKind::Io, "cannot read `x`");
        assert_eq!(
            fingerprints(&[&unlocated], &before),
            fingerprints(&[&unlocated], &after)
        );
    }
}
