//! A [`SuiteReport`] in the output formats of `agent-presets test`: human text, JSON,
//! GitHub workflow commands, SARIF 2.1.0 and JUnit XML. Diagnostics go through the
//! validation report's renderers (`report/`: snippets, the per-file cap, masking), so a
//! failed expectation looks like any other finding; JUnit is this module's own. Every
//! renderer returns a `String`.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::suite::{CaseResult, CaseStatus, SuiteReport, percent};
use crate::diagnostic::Diagnostic;
use crate::report::{
    HumanRenderer, SarifRun, Style, ValidationReport, diagnostic_json, mask, pretty,
};

/// The formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestFormat {
    /// A line per case, then its diagnostics with snippets, then the summary.
    Human,
    /// `{"cases": [...], "diagnostics": [...], "summary": {...}}`.
    Json,
    /// GitHub workflow commands: an annotation per diagnostic, the summary as a notice.
    Github,
    /// SARIF 2.1.0: a result per diagnostic.
    Sarif,
    /// JUnit XML: a `testcase` per case, a `failure` or an `error` when it did not pass.
    Junit,
}

impl SuiteReport {
    /// The report in `format`. `style` colours the human format; `srcroot` is where
    /// SARIF's relative paths start.
    pub fn render(&self, format: TestFormat, style: Style, srcroot: Option<&Path>) -> String {
        match format {
            TestFormat::Human => self.human(style),
            TestFormat::Json => self.json(),
            TestFormat::Github => self.github(),
            TestFormat::Sarif => self.sarif(srcroot),
            TestFormat::Junit => self.junit(),
        }
    }

    fn validation_report(&self) -> ValidationReport {
        let mut report = ValidationReport::default();
        report.add_diagnostics(self.diagnostics());
        report
    }

    /// `PASS`/`FAIL`/`DRIFT`/`INVALID` and the case per line, each case's diagnostics
    /// after it, then the summary.
    pub fn human(&self, style: Style) -> String {
        let mut out = String::new();
        if !self.problems.is_empty() {
            let renderer = HumanRenderer::new(style, &self.sources, &self.problems);
            out.push_str(&renderer.render_all(&self.problems));
        }
        for r in &self.results {
            let word = match r.status {
                CaseStatus::Passed => style.bold("PASS"),
                CaseStatus::Failed => style.bold("FAIL"),
                CaseStatus::Drifted => style.bold("DRIFT"),
                CaseStatus::Invalid => style.bold("INVALID"),
            };
            let mut about = Vec::new();
            if let Some(p) = &r.preset {
                about.push(format!("preset `{p}`"));
            }
            if let Some(live) = &r.live {
                about.push(format!(
                    "{} of {} runs passed ({}, at least {} needed)",
                    live.passed,
                    live.runs,
                    percent(live.pass_rate()),
                    percent(live.min_pass_rate)
                ));
            } else if let Some(steps) = r.steps {
                about.push(format!("{steps} step{}", if steps == 1 { "" } else { "s" }));
            }
            let about = if about.is_empty() {
                String::new()
            } else {
                format!(" ({})", about.join(", "))
            };
            let _ = writeln!(out, "{word} {}{}", mask(&r.id), mask(&about));
            if !r.diagnostics.is_empty() {
                let renderer = HumanRenderer::new(style, &self.sources, &r.diagnostics);
                out.push_str(&renderer.render_all(&r.diagnostics));
            }
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// The JSON report (pretty, with a final newline): each case with its status,
    /// failures and diagnostics; every diagnostic again at the top level (the shape
    /// `validate --format json` has); the counts.
    pub fn json(&self) -> String {
        let cases: Vec<Value> = self.results.iter().map(case_json).collect();
        let diagnostics: Vec<Value> = self.diagnostics().iter().map(diagnostic_json).collect();
        let mut summary = json!({
            "cases": self.results.len(),
            "passed": self.count(CaseStatus::Passed),
            "failed": self.count(CaseStatus::Failed),
            "drifted": self.count(CaseStatus::Drifted),
            "invalid": self.count(CaseStatus::Invalid),
            "exit": self.exit().code(),
        });
        if let Some(shard) = self.shard {
            summary["shard"] = Value::String(shard.to_string());
        }
        pretty(&json!({
            "cases": cases,
            "diagnostics": diagnostics,
            "summary": summary,
        }))
    }

    /// An `::error`/`::warning` per diagnostic (at its file and line), then the summary
    /// as a `::notice`.
    pub fn github(&self) -> String {
        let mut out = self.validation_report().github_annotations(false);
        let _ = writeln!(out, "::notice title=agent-presets test::{}", self.summary());
        out
    }

    /// A SARIF 2.1.0 log: a result per diagnostic; the invocation records the exit code.
    pub fn sarif(&self, srcroot: Option<&Path>) -> String {
        self.validation_report().sarif(&SarifRun {
            exit: self.exit(),
            deny_warnings: false,
            srcroot,
            sources: &self.sources,
        })
    }

    /// JUnit XML (the shape CI test reports read): one `testsuite`, a `testcase` per case
    /// (named by its file stem, `classname` its preset, `file` its path); a case that
    /// failed or drifted holds a `failure`, an invalid one an `error`, each with the
    /// diagnostics as text. Problems not of one case are an `error` of a `testcase`
    /// named `(suite)`.
    pub fn junit(&self) -> String {
        let failures = self.count(CaseStatus::Failed) + self.count(CaseStatus::Drifted);
        let errors = self.count(CaseStatus::Invalid) + usize::from(!self.problems.is_empty());
        let tests = self.results.len() + usize::from(!self.problems.is_empty());
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"agent-presets test\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">"
        );
        let name = match self.shard {
            Some(shard) => format!("agent-presets (shard {shard})"),
            None => "agent-presets".to_owned(),
        };
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\">",
            xml_escape(&name)
        );
        if !self.problems.is_empty() {
            out.push_str("    <testcase name=\"(suite)\" classname=\"agent-presets\">\n");
            push_problem(
                &mut out,
                "error",
                "the suite could not run as asked",
                &self.problems,
            );
            out.push_str("    </testcase>\n");
        }
        for r in &self.results {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\"",
                xml_escape(r.name()),
                xml_escape(r.preset.as_deref().unwrap_or("agent-presets")),
                xml_escape(&r.id)
            );
            let (element, message) = match r.status {
                CaseStatus::Passed => {
                    out.push_str("/>\n");
                    continue;
                }
                CaseStatus::Failed => ("failure", failure_message(r)),
                CaseStatus::Drifted => ("failure", "the run drifted from its recording".to_owned()),
                CaseStatus::Invalid => ("error", "the case could not be used".to_owned()),
            };
            out.push_str(">\n");
            push_problem(&mut out, element, &message, &r.diagnostics);
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n</testsuites>\n");
        out
    }
}

fn failure_message(r: &CaseResult) -> String {
    match (&r.live, r.failures.len()) {
        (Some(live), _) => format!(
            "{} of {} runs passed ({}), fewer than {}",
            live.passed,
            live.runs,
            percent(live.pass_rate()),
            percent(live.min_pass_rate)
        ),
        (None, 1) => "1 expectation failed".to_owned(),
        (None, n) => format!("{n} expectations failed"),
    }
}

/// `<failure message=… type=…>` with one line per diagnostic
/// (`file:line:column: error[P0630]: message (help)`).
fn push_problem(out: &mut String, element: &str, message: &str, diagnostics: &[Diagnostic]) {
    let kind = diagnostics
        .iter()
        .find(|d| d.is_error())
        .or(diagnostics.first())
        .map_or("error", |d| d.kind.name());
    let _ = write!(
        out,
        "      <{element} message=\"{}\" type=\"{}\">",
        xml_escape(message),
        xml_escape(kind)
    );
    for d in diagnostics {
        let at = d
            .span
            .as_ref()
            .map(|s| format!("{}:{}:{}: ", s.file, s.line, s.column))
            .unwrap_or_default();
        let help = d
            .help
            .as_deref()
            .map(|h| format!(" (help: {h})"))
            .unwrap_or_default();
        let line = format!("{at}{}[{}]: {}{help}", d.severity, d.code(), d.message);
        out.push_str(&xml_escape(&mask(&line)));
        out.push('\n');
    }
    let _ = writeln!(out, "</{element}>");
}

/// Text for XML 1.0 content and attribute values: `&`, `<`, `>`, `"` and `'` escaped;
/// the characters XML 1.0 cannot hold (control characters other than tab, line feed
/// and carriage return, lone surrogates cannot occur in a `str`, U+FFFE, U+FFFF) shown
/// as `\u{…}`. Line feeds are kept in text and written `&#10;` in attributes by
/// [`xml_escape`] alike, so an attribute value keeps its lines.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn case_json(r: &CaseResult) -> Value {
    let failures: Vec<Value> = r
        .failures
        .iter()
        .map(|f| {
            json!({
                "name": f.name,
                "expected": mask(&f.expected),
                "found": mask(&f.found),
                "file": &*f.span.file,
                "line": f.span.line,
                "column": f.span.column,
            })
        })
        .collect();
    let mut case = json!({
        "case": r.id,
        "name": r.name(),
        "preset": r.preset,
        "status": r.status.as_str(),
        "steps": r.steps,
        "failures": failures,
        "diagnostics": r.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
    });
    if let Some(live) = &r.live {
        case["live"] = json!({
            "runs": live.runs,
            "passed": live.passed,
            "passRate": live.pass_rate(),
            "minPassRate": live.min_pass_rate,
        });
    }
    case
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{DiagnosticKind, Span};
    use crate::testing::suite::Shard;

    fn report() -> SuiteReport {
        let failure = Diagnostic::new(
            DiagnosticKind::ExpectationFailed,
            "expectation `tools.used` failed: expected a call to `<bash>` & \"more\"; found no tool calls",
        )
        .at(Span::new(".agent-presets/tests/b.yaml".into(), 5, 11));
        let passed = CaseResult {
            status: CaseStatus::Passed,
            steps: Some(2),
            preset: Some("reviewer".into()),
            ..CaseResult::invalid(".agent-presets/tests/a.yaml".into(), None, Vec::new())
        };
        let failed = CaseResult {
            status: CaseStatus::Failed,
            steps: Some(1),
            diagnostics: vec![failure],
            ..passed.clone()
        };
        let failed = CaseResult {
            id: ".agent-presets/tests/b.yaml".into(),
            ..failed
        };
        let invalid = CaseResult::invalid(
            ".agent-presets/tests/c\u{1}.yaml".into(),
            None,
            vec![
                Diagnostic::new(DiagnosticKind::UnknownKey, "unknown key `usd`")
                    .at(Span::new(".agent-presets/tests/c.yaml".into(), 3, 1))
                    .help("did you mean `used`?"),
            ],
        );
        SuiteReport {
            results: vec![passed, failed, invalid],
            shard: Some(Shard { index: 1, count: 2 }),
            ..SuiteReport::default()
        }
    }

    /// A small well-formedness check of XML: every tag closed in order, attributes
    /// quoted, no raw `<` or `&` outside markup and entities, no control characters.
    fn well_formed(xml: &str) -> Result<Vec<String>, String> {
        let body = xml
            .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
            .ok_or("no XML declaration")?;
        let mut stack: Vec<String> = Vec::new();
        let mut seen = Vec::new();
        let mut rest = body;
        while let Some(start) = rest.find('<') {
            check_text(&rest[..start])?;
            let end = rest[start..].find('>').ok_or("unclosed tag")? + start;
            let tag = &rest[start + 1..end];
            if let Some(name) = tag.strip_prefix('/') {
                let open = stack.pop().ok_or("close without open")?;
                if open != name {
                    return Err(format!("</{name}> closes <{open}>"));
                }
            } else {
                let self_closing = tag.ends_with('/');
                let tag = tag.trim_end_matches('/');
                let (name, attrs) = tag.split_once(' ').unwrap_or((tag, ""));
                check_attributes(attrs)?;
                seen.push(name.to_owned());
                if !self_closing {
                    stack.push(name.to_owned());
                }
            }
            rest = &rest[end + 1..];
        }
        check_text(rest)?;
        if !stack.is_empty() {
            return Err(format!("unclosed: {stack:?}"));
        }
        Ok(seen)
    }

    fn check_text(text: &str) -> Result<(), String> {
        for (i, _) in text.match_indices('&') {
            let entity = &text[i..text[i..].find(';').map_or(text.len(), |e| i + e + 1)];
            if ![
                "&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#10;", "&#13;", "&#9;",
            ]
            .contains(&entity)
            {
                return Err(format!("bad entity {entity:?}"));
            }
        }
        if text.chars().any(|c| (c as u32) < 0x20 && c != '\n') {
            return Err("a control character".into());
        }
        Ok(())
    }

    fn check_attributes(mut attrs: &str) -> Result<(), String> {
        loop {
            attrs = attrs.trim_start();
            if attrs.is_empty() {
                return Ok(());
            }
            let eq = attrs
                .find("=\"")
                .ok_or(format!("unquoted attribute in {attrs:?}"))?;
            let value_end = attrs[eq + 2..].find('"').ok_or("unterminated attribute")? + eq + 2;
            let value = &attrs[eq + 2..value_end];
            if value.contains('<') || value.contains('\n') {
                return Err(format!("raw markup in attribute {value:?}"));
            }
            check_text(value)?;
            attrs = &attrs[value_end + 1..];
        }
    }

    #[test]
    fn junit_is_well_formed_and_counts_right() {
        let xml = report().junit();
        let tags = well_formed(&xml).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
        assert_eq!(
            tags,
            [
                "testsuites",
                "testsuite",
                "testcase",
                "testcase",
                "failure",
                "testcase",
                "error"
            ]
        );
        assert!(
            xml.contains(
                "<testsuites name=\"agent-presets test\" tests=\"3\" failures=\"1\" errors=\"1\">"
            ),
            "{xml}"
        );
        assert!(
            xml.contains("`&lt;bash&gt;` &amp; &quot;more&quot;"),
            "{xml}"
        );
        assert!(
            xml.contains("file=\".agent-presets/tests/c\\u{1}.yaml\""),
            "{xml}"
        );
        assert!(
            xml.contains(".agent-presets/tests/b.yaml:5:11: error[P0630]"),
            "{xml}"
        );
        assert!(xml.contains("name=\"agent-presets (shard 1/2)\""), "{xml}");
        // Problems of the suite itself are an error too.
        let mut r = report();
        r.problems
            .push(Diagnostic::new(DiagnosticKind::Io, "no such dir"));
        let xml = r.junit();
        well_formed(&xml).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
        assert!(
            xml.contains("tests=\"4\" failures=\"1\" errors=\"2\""),
            "{xml}"
        );
    }

    #[test]
    fn the_checker_refuses_bad_xml() {
        for bad in [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a><b></a>",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a x=\"<\"></a>",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a>&</a>",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a>\u{1}</a>",
            "<a></a>",
        ] {
            assert!(well_formed(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn xml_escape_covers_markup_and_controls() {
        assert_eq!(
            xml_escape("a<b>&\"'\n\u{0}\u{7f}é"),
            "a&lt;b&gt;&amp;&quot;&apos;&#10;\\u{0}\u{7f}é"
        );
    }

    #[test]
    fn json_has_cases_diagnostics_and_summary() {
        let v: Value = serde_json::from_str(&report().json()).unwrap();
        assert_eq!(v["cases"].as_array().unwrap().len(), 3);
        assert_eq!(v["cases"][1]["status"], "failed");
        assert_eq!(v["cases"][1]["name"], "b");
        assert_eq!(v["diagnostics"].as_array().unwrap().len(), 2);
        assert_eq!(v["diagnostics"][0]["code"], "P0630");
        assert_eq!(
            v["summary"],
            json!({"cases": 3, "passed": 1, "failed": 1, "drifted": 0, "invalid": 1, "exit": 2, "shard": "1/2"})
        );
    }

    #[test]
    fn github_and_human_and_sarif() {
        let r = report();
        let gh = r.github();
        assert!(
            gh.starts_with("::error file=.agent-presets/tests/b.yaml,line=5,endLine=5,col=11"),
            "{gh}"
        );
        assert!(gh.ends_with(
            "::notice title=agent-presets test::3 test cases: 1 passed, 1 failed, 0 drifted, 1 invalid (shard 1/2)\n"
        ));
        let human = r.human(Style::plain());
        assert!(
            human.starts_with("PASS .agent-presets/tests/a.yaml (preset `reviewer`, 2 steps)\n"),
            "{human}"
        );
        assert!(
            human.contains("FAIL .agent-presets/tests/b.yaml"),
            "{human}"
        );
        assert!(
            human.contains("error[P0630]: expectation `tools.used` failed"),
            "{human}"
        );
        assert!(human.contains("INVALID .agent-presets/tests/c"), "{human}");
        let sarif: Value = serde_json::from_str(&r.sarif(None)).unwrap();
        let results = sarif["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["ruleId"], "P0630");
    }
}
