//! The assertions of a case's `expect` block, checked against an [`Observed`] run.
//!
//! Every assertion is checked (a failure does not hide the next one) and each failed one
//! is a [`Failure`]: its name (`tools.used`), what it expected, what the run did, and where
//! the assertion is written in the case file; [`Failure::diagnostic`] makes it an
//! `expectation-failed` diagnostic for the report formats.
//!
//! JSON subsets (`tools.args[].match`, `output.match`) are matched by [`json_subset`]:
//! an object matches an object that has each of its keys with a matching value (other
//! keys may be there); an array matches an array of the same length item by item; a
//! number matches an equal number (`1` and `1.0` alike); a string, a boolean and `null`
//! match only themselves. A string is never matched as a pattern.

use serde_json::Value;

use super::case::{Check, Expectation, OutcomeSpec, SequenceMode, TestCase};
use super::observed::{Observed, ObservedOutcome};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};

/// Most characters of a found value (an answer, arguments) a failure shows.
const MAX_SHOWN_CHARS: usize = 300;

/// One failed assertion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The assertion's name (`tools.used`, `answer.matches`).
    pub name: &'static str,
    /// What it expected, in words.
    pub expected: String,
    /// What the run did instead, in words.
    pub found: String,
    /// Where the assertion is written.
    pub span: Span,
}

impl Failure {
    /// The `expectation-failed` diagnostic, at the assertion.
    pub fn diagnostic(&self) -> Diagnostic {
        Diagnostic::new(
            DiagnosticKind::ExpectationFailed,
            format!(
                "expectation `{}` failed: expected {}; found {}",
                self.name, self.expected, self.found
            ),
        )
        .at(self.span.clone())
        .help(
            "if the new behaviour is right, change `expect` or re-record the case \
             (`agent-presets test --record CASE`) and review the cassette's diff",
        )
    }
}

/// Check every assertion of `case` against `observed`; the failed ones, in file order.
pub fn check_expectations(case: &TestCase, observed: &Observed) -> Vec<Failure> {
    case.expectations
        .iter()
        .filter_map(|e| check_one(e, observed))
        .collect()
}

/// `None` when `expectation` holds for `observed`.
pub fn check_one(expectation: &Expectation, observed: &Observed) -> Option<Failure> {
    let fail = |expected: String, found: String| {
        Some(Failure {
            name: expectation.name,
            expected,
            found,
            span: expectation.span.clone(),
        })
    };
    let called: Vec<&str> = observed.calls.iter().map(|c| c.tool.as_str()).collect();
    match &expectation.check {
        Check::Used(tool) => {
            if called.contains(&tool.as_str()) {
                None
            } else {
                fail(format!("a call to `{tool}`"), calls_text(&called))
            }
        }
        Check::NotUsed(tool) => {
            let n = called.iter().filter(|c| **c == tool).count();
            if n == 0 {
                None
            } else {
                let steps: Vec<String> = observed
                    .calls
                    .iter()
                    .filter(|c| c.tool == *tool)
                    .map(|c| c.step.to_string())
                    .collect();
                fail(
                    format!("no call to `{tool}`"),
                    format!("{} (step {})", times(n, tool), steps.join(", ")),
                )
            }
        }
        Check::Sequence { mode, tools } => {
            let want: Vec<&str> = tools.iter().map(String::as_str).collect();
            let holds = match mode {
                SequenceMode::Exact => called == want,
                SequenceMode::InOrder => is_subsequence(&want, &called),
                SequenceMode::AnyOrder => {
                    let mut a = called.clone();
                    let mut b = want.clone();
                    a.sort_unstable();
                    b.sort_unstable();
                    a == b
                }
            };
            if holds {
                return None;
            }
            let list = if want.is_empty() {
                "no calls".to_owned()
            } else {
                want.join(", ")
            };
            let expected = match mode {
                SequenceMode::Exact => format!("exactly these calls in this order: {list}"),
                SequenceMode::InOrder => format!("these calls in this order: {list}"),
                SequenceMode::AnyOrder => format!("exactly these calls in any order: {list}"),
            };
            fail(expected, calls_text(&called))
        }
        Check::Args { tool, pattern } => {
            let calls: Vec<&Value> = observed
                .calls
                .iter()
                .filter(|c| c.tool == *tool)
                .map(|c| &c.arguments)
                .collect();
            if calls.iter().any(|a| json_subset(pattern, a).is_ok()) {
                return None;
            }
            let expected = format!(
                "a call to `{tool}` with arguments matching {}",
                shown_json(pattern)
            );
            let found = match calls.as_slice() {
                [] => format!("no call to `{tool}` ({})", calls_text(&called)),
                [only] => format!(
                    "one call, with {} ({})",
                    shown_json(only),
                    json_subset(pattern, only).err().unwrap_or_default()
                ),
                many => {
                    let shown: Vec<String> = many.iter().map(|a| shown_json(a)).collect();
                    format!("{} calls, with {}", many.len(), shown.join("; "))
                }
            };
            fail(expected, found)
        }
        Check::MaxSteps(max) => {
            if observed.steps <= *max as usize {
                None
            } else {
                fail(
                    format!("at most {}", plural(*max as usize, "step")),
                    plural(observed.steps, "step"),
                )
            }
        }
        Check::Outcome(want) => {
            let found = match &observed.outcome {
                ObservedOutcome::Answered => OutcomeSpec::Answered,
                ObservedOutcome::StepLimit => OutcomeSpec::StepLimit,
                ObservedOutcome::OutputInvalid => OutcomeSpec::OutputInvalid,
                ObservedOutcome::CheckFailed { .. } => OutcomeSpec::CheckFailed,
                ObservedOutcome::Error { .. } => OutcomeSpec::Error,
            };
            if found == *want {
                return None;
            }
            let found = match &observed.outcome {
                ObservedOutcome::Error { message } => {
                    format!("`error`: {}", shorten(message))
                }
                ObservedOutcome::CheckFailed { check } => {
                    format!("`checkFailed` (`{}`)", shorten(check))
                }
                _ => format!("`{}`", found.as_str()),
            };
            fail(format!("the run to end `{}`", want.as_str()), found)
        }
        Check::AnswerContains(needle) => match &observed.answer {
            Some(answer) if answer.contains(needle.as_str()) => None,
            _ => fail(
                format!("an answer containing {needle:?}"),
                answer_text(observed),
            ),
        },
        Check::AnswerLacks(needle) => match &observed.answer {
            Some(answer) if answer.contains(needle.as_str()) => fail(
                format!("an answer without {needle:?}"),
                answer_text(observed),
            ),
            _ => None,
        },
        Check::AnswerMatches(re) => match &observed.answer {
            Some(answer) if re.is_match(answer) => None,
            _ => fail(
                format!("an answer matching /{}/", re.as_str()),
                answer_text(observed),
            ),
        },
        Check::AnswerEquals(want) => match &observed.answer {
            Some(answer) if answer == want => None,
            _ => fail(
                format!("the answer {:?}", shorten(want)),
                answer_text(observed),
            ),
        },
        Check::OutputMatch(pattern) => {
            let expected = format!("an output object matching {}", shown_json(pattern));
            match &observed.output {
                None => fail(expected, "no output object".to_owned()),
                Some(output) => match json_subset(pattern, output) {
                    Ok(()) => None,
                    Err(why) => fail(expected, format!("{} ({why})", shown_json(output))),
                },
            }
        }
        Check::OutputSchema(validator, _) => match &observed.output {
            None => fail(
                "an output object valid against `output.schema`".to_owned(),
                "no output object".to_owned(),
            ),
            Some(output) => {
                let errors: Vec<String> = validator
                    .iter_errors(output)
                    .take(3)
                    .map(|e| {
                        let at = e.instance_path().to_string();
                        let at = if at.is_empty() { "/".to_owned() } else { at };
                        format!("at `{at}`: {e}")
                    })
                    .collect();
                if errors.is_empty() {
                    None
                } else {
                    fail(
                        "an output object valid against `output.schema`".to_owned(),
                        format!("{} ({})", shown_json(output), errors.join("; ")),
                    )
                }
            }
        },
    }
}

/// Does `pattern` match `value` as a JSON subset (see the module docs)? `Err` says where
/// and how they first differ, as a JSON pointer into `value`.
pub fn json_subset(pattern: &Value, value: &Value) -> Result<(), String> {
    subset_at(pattern, value, &mut String::new())
}

fn subset_at(pattern: &Value, value: &Value, at: &mut String) -> Result<(), String> {
    let here = |at: &str| {
        if at.is_empty() {
            "/".to_owned()
        } else {
            at.to_owned()
        }
    };
    match (pattern, value) {
        (Value::Object(p), Value::Object(v)) => {
            for (key, want) in p {
                let len = at.len();
                at.push('/');
                at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                let result = match v.get(key) {
                    Some(got) => subset_at(want, got, at),
                    None => Err(format!("`{at}` is missing")),
                };
                at.truncate(len);
                result?;
            }
            Ok(())
        }
        (Value::Array(p), Value::Array(v)) => {
            if p.len() != v.len() {
                return Err(format!(
                    "`{}` has {}, expected {}",
                    here(at),
                    plural(v.len(), "item"),
                    p.len()
                ));
            }
            for (i, (want, got)) in p.iter().zip(v).enumerate() {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                let result = subset_at(want, got, at);
                at.truncate(len);
                result?;
            }
            Ok(())
        }
        (Value::Number(p), Value::Number(v)) if p.as_f64() == v.as_f64() => Ok(()),
        _ if pattern == value => Ok(()),
        _ => Err(format!(
            "`{}` is {}, expected {}",
            here(at),
            shown_json(value),
            shown_json(pattern)
        )),
    }
}

/// Is `want` a subsequence of `got` (in order, gaps allowed)?
fn is_subsequence(want: &[&str], got: &[&str]) -> bool {
    let mut rest = got.iter();
    want.iter().all(|w| rest.any(|g| g == w))
}

fn calls_text(called: &[&str]) -> String {
    if called.is_empty() {
        "no tool calls".to_owned()
    } else {
        format!("calls: {}", called.join(", "))
    }
}

fn answer_text(observed: &Observed) -> String {
    match &observed.answer {
        Some(a) => format!("the answer {:?}", shorten(a)),
        None => "no answer".to_owned(),
    }
}

fn times(n: usize, tool: &str) -> String {
    if n == 1 {
        format!("1 call to `{tool}`")
    } else {
        format!("{n} calls to `{tool}`")
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// At most [`MAX_SHOWN_CHARS`] characters, with `…` when cut.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn shown_json(value: &Value) -> String {
    shorten(&value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::case::load_case;
    use crate::testing::observed::ObservedCall;
    use serde_json::json;

    fn call(step: usize, tool: &str, arguments: Value) -> ObservedCall {
        ObservedCall {
            step,
            tool: tool.to_owned(),
            arguments,
            result: String::new(),
            is_error: false,
        }
    }

    /// A run: read_file(src/lib.rs), grep, read_file(README.md); answered.
    fn run() -> Observed {
        Observed {
            steps: 3,
            calls: vec![
                call(1, "read_file", json!({"path": "src/lib.rs", "limit": 10})),
                call(
                    2,
                    "grep",
                    json!({"pattern": "teh", "paths": ["src", "docs"]}),
                ),
                call(2, "read_file", json!({"path": "README.md"})),
            ],
            answer: Some("Found a typo on line 12.".to_owned()),
            output: Some(json!({"verdict": "changes", "count": 1})),
            outcome: ObservedOutcome::Answered,
        }
    }

    /// The failures of `expect` (YAML under `expect:`) against `run()`, as
    /// `(name, line)`, and their messages.
    fn failures(expect: &str) -> Vec<(&'static str, u32, String)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        let mut text = "preset: p\nprompt: q\nexpect:\n".to_owned();
        for line in expect.lines() {
            text.push_str("  ");
            text.push_str(line);
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        let case = load_case(dir.path(), &path).unwrap_or_else(|e| panic!("{e:?}"));
        check_expectations(&case, &run())
            .into_iter()
            .map(|f| {
                let message = f.diagnostic().message;
                (f.name, f.span.line, message)
            })
            .collect()
    }

    /// Each row: an `expect` block, and the names of the assertions that fail (in order).
    #[test]
    fn table_of_assertions() {
        let table: &[(&str, &[&str])] = &[
            ("tools: {used: [read_file, grep]}", &[]),
            ("tools: {used: [bash]}", &["tools.used"]),
            ("tools: {notUsed: [bash, write_file]}", &[]),
            ("tools: {notUsed: [grep]}", &["tools.notUsed"]),
            (
                "tools: {sequence: {exact: [read_file, grep, read_file]}}",
                &[],
            ),
            (
                "tools: {sequence: {exact: [read_file, grep]}}",
                &["tools.sequence"],
            ),
            ("tools: {sequence: {inOrder: [read_file, grep]}}", &[]),
            ("tools: {sequence: {inOrder: [grep, read_file]}}", &[]),
            (
                "tools: {sequence: {inOrder: [grep, grep]}}",
                &["tools.sequence"],
            ),
            ("tools: {sequence: {inOrder: []}}", &[]),
            (
                "tools: {sequence: {anyOrder: [read_file, read_file, grep]}}",
                &[],
            ),
            (
                "tools: {sequence: {anyOrder: [read_file, grep]}}",
                &["tools.sequence"],
            ),
            (
                "tools: {args: [{tool: read_file, match: {path: README.md}}]}",
                &[],
            ),
            (
                "tools: {args: [{tool: read_file, match: {path: src/lib.rs, limit: 10.0}}]}",
                &[],
            ),
            (
                "tools: {args: [{tool: read_file, match: {path: src}}]}",
                &["tools.args"],
            ),
            (
                "tools: {args: [{tool: grep, match: {paths: [src, docs]}}]}",
                &[],
            ),
            (
                "tools: {args: [{tool: grep, match: {paths: [src]}}]}",
                &["tools.args"],
            ),
            ("tools: {args: [{tool: bash, match: {}}]}", &["tools.args"]),
            ("tools: {args: [{tool: grep, match: {}}]}", &[]),
            ("maxSteps: 3", &[]),
            ("maxSteps: 2", &["maxSteps"]),
            ("outcome: answered", &[]),
            ("outcome: stepLimit", &["outcome"]),
            ("answer: {contains: [typo, line 12]}", &[]),
            (
                "answer: {contains: [Typo, typo, spelling]}",
                &["answer.contains", "answer.contains"],
            ),
            ("answer: {notContains: [error]}", &[]),
            ("answer: {notContains: [typo]}", &["answer.notContains"]),
            ("answer: {matches: 'line \\d+'}", &[]),
            ("answer: {matches: '^line'}", &["answer.matches"]),
            ("answer: {equals: Found a typo on line 12.}", &[]),
            ("answer: {equals: Found a typo.}", &["answer.equals"]),
            ("output: {match: {verdict: changes}}", &[]),
            ("output: {match: {verdict: ok}}", &["output.match"]),
            ("output: {schema: {type: object, required: [verdict]}}", &[]),
            (
                "output: {schema: {type: object, required: [score]}}",
                &["output.schema"],
            ),
            (
                "tools: {used: [bash], notUsed: [grep]}\nmaxSteps: 1\nanswer: {contains: [nope]}",
                &["tools.used", "tools.notUsed", "maxSteps", "answer.contains"],
            ),
        ];
        for (expect, want) in table {
            let got: Vec<&str> = failures(expect).iter().map(|f| f.0).collect();
            assert_eq!(&got, want, "expect: {expect}");
        }
    }

    #[test]
    fn a_failure_says_expected_and_found_at_its_line() {
        let f = failures("tools:\n  used:\n    - read_file\n    - bash\nmaxSteps: 2");
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].0, f[0].1), ("tools.used", 7));
        assert_eq!(
            f[0].2,
            "expectation `tools.used` failed: expected a call to `bash`; found calls: \
             read_file, grep, read_file"
        );
        assert_eq!((f[1].0, f[1].1), ("maxSteps", 8));
        assert_eq!(
            f[1].2,
            "expectation `maxSteps` failed: expected at most 2 steps; found 3 steps"
        );
        let f = failures("tools: {args: [{tool: grep, match: {paths: [src]}}]}");
        assert!(
            f[0].2.contains("`/paths` has 2 items, expected 1"),
            "{}",
            f[0].2
        );
        let f = failures("tools: {notUsed: [read_file]}");
        assert!(
            f[0].2.ends_with("found 2 calls to `read_file` (step 1, 2)"),
            "{}",
            f[0].2
        );
    }

    #[test]
    fn json_subset_semantics() {
        let ok = [
            (json!({}), json!({"a": 1})),
            (json!({"a": {"b": 1}}), json!({"a": {"b": 1.0, "c": 2}})),
            (json!([1, {"x": "y"}]), json!([1, {"x": "y", "z": 0}])),
            (json!("src/lib.rs"), json!("src/lib.rs")),
            (json!(null), json!(null)),
        ];
        for (p, v) in ok {
            assert_eq!(json_subset(&p, &v), Ok(()), "{p} in {v}");
        }
        let bad = [
            (json!({"a": 1}), json!({}), "`/a` is missing"),
            (
                json!({"a/b": 1}),
                json!({"a/b": 2}),
                "`/a~1b` is 2, expected 1",
            ),
            (json!([1]), json!([1, 2]), "`/` has 2 items, expected 1"),
            (
                json!("src"),
                json!("src/lib.rs"),
                "`/` is \"src/lib.rs\", expected \"src\"",
            ),
            (json!(1), json!("1"), "`/` is \"1\", expected 1"),
            (
                json!({"a": [{"b": true}]}),
                json!({"a": [{"b": false}]}),
                "`/a/0/b` is false",
            ),
        ];
        for (p, v, why) in bad {
            let err = json_subset(&p, &v).unwrap_err();
            assert!(err.contains(why), "{p} in {v}: {err}");
        }
    }

    #[test]
    fn outcome_error_shows_its_message_and_no_answer_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        std::fs::write(
            &path,
            "preset: p\nprompt: q\nexpect:\n  outcome: answered\n  answer: {contains: [x]}\n",
        )
        .unwrap();
        let case = load_case(dir.path(), &path).unwrap();
        let observed = Observed {
            steps: 1,
            outcome: ObservedOutcome::Error {
                message: "the server said 500".into(),
            },
            ..Observed::default()
        };
        let f = check_expectations(&case, &observed);
        assert_eq!(f[0].found, "`error`: the server said 500");
        assert_eq!(f[1].found, "no answer");
    }
}
