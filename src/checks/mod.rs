//! Success checks (`checks:` in a preset, docs/format.md "Success checks"): programs run
//! after the model's final answer (and a valid output object). A check that fails sends
//! its ending and the tail of its output back to the model as the reason to go on, up to
//! its `retries`; then the run ends with `Outcome::CheckFailed` (feature `client`).
//! A check runs like a command tool ([`crate::tools::external::run_check`]): in the
//! workspace, in the run's sandbox, with the command environment, killed with everything
//! it started at its timeout (which counts as a failure).

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::hooks::HookEnding as CheckEnding;

/// How long a check may run when its `timeout` is not set.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(300);

/// The longest `timeout` a check may set.
pub const MAX_CHECK_TIMEOUT: Duration = Duration::from_secs(3600);

/// How many more answers a failing check allows when its `retries` is not set.
pub const DEFAULT_CHECK_RETRIES: u32 = 2;

/// The most characters of a check's output the model reads (the end of it: a test
/// runner's summary and failures come last).
pub const MAX_CHECK_OUTPUT_CHARS: usize = 8_000;

/// One success check of a preset, compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// The program and its arguments.
    pub run: Vec<String>,
    /// How long it may run before it is killed (a failure).
    pub timeout: Duration,
    /// How many more answers it allows after one it fails.
    pub retries: u32,
}

impl Check {
    /// The argv as one line, for messages and the transcript.
    pub fn label(&self) -> String {
        self.run.join(" ")
    }

    /// How `run` of this check ended, in words, its timeout named when it was killed at
    /// it (`timed out after 10m and was killed`).
    pub fn ending_text(&self, run: &CheckRun) -> String {
        self.ending_text_in(run, &crate::texts::Texts::english())
    }

    /// [`Check::ending_text`] in the words of `texts` (the preset's language: what the
    /// model reads when the check sends it back to work).
    pub fn ending_text_in(&self, run: &CheckRun, texts: &crate::texts::Texts) -> String {
        use crate::texts::{
            CHECKS_ENDING_EXIT, CHECKS_ENDING_NOT_STARTED, CHECKS_ENDING_SIGNAL,
            CHECKS_ENDING_TIMED_OUT,
        };
        match &run.ending {
            CheckEnding::TimedOut => texts.render(
                &CHECKS_ENDING_TIMED_OUT,
                &[("after", &duration_text(self.timeout))],
            ),
            CheckEnding::Exited(code) => {
                texts.render(&CHECKS_ENDING_EXIT, &[("code", &code.to_string())])
            }
            CheckEnding::Signalled(how) => texts.render(&CHECKS_ENDING_SIGNAL, &[("signal", how)]),
            CheckEnding::NotStarted(why) => {
                texts.render(&CHECKS_ENDING_NOT_STARTED, &[("reason", why)])
            }
        }
    }
}

/// `500ms`, `30s`, `10m`, `1h`: a duration as a preset writes it.
fn duration_text(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        _ if ms < 1000 || !ms.is_multiple_of(1000) => format!("{ms}ms"),
        _ if ms.is_multiple_of(3_600_000) => format!("{}h", ms / 3_600_000),
        _ if ms.is_multiple_of(60_000) => format!("{}m", ms / 60_000),
        _ => format!("{}s", ms / 1000),
    }
}

/// What running a check produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckRun {
    /// How it ended.
    pub ending: CheckEnding,
    /// Its standard output and standard error, labelled when both have text, cut to the
    /// last [`MAX_CHECK_OUTPUT_CHARS`].
    pub output: String,
    /// How long it ran, in milliseconds.
    #[serde(default)]
    pub elapsed_ms: u64,
}

impl CheckRun {
    /// It exited with code 0.
    pub fn passed(&self) -> bool {
        self.ending == CheckEnding::Exited(0)
    }

    /// How it ended, in words (`exit code 1`, `timed out and was killed`, …).
    pub fn ending_text(&self) -> String {
        ending_text(&self.ending)
    }
}

/// `ending` in words.
pub fn ending_text(ending: &CheckEnding) -> String {
    match ending {
        CheckEnding::Exited(code) => format!("exit code {code}"),
        CheckEnding::Signalled(how) => format!("killed by {how}"),
        CheckEnding::TimedOut => "timed out and was killed".to_owned(),
        CheckEnding::NotStarted(why) => format!("could not start: {why}"),
    }
}

/// A check's two streams as the model reads them: stdout alone, stderr alone, or both
/// labelled; `(no output)` when both are empty; the last [`MAX_CHECK_OUTPUT_CHARS`]
/// characters, with how much was cut before them.
pub fn model_output(stdout: &str, stderr: &str) -> String {
    let (out, err) = (stdout.trim_end(), stderr.trim_end());
    let joined = match (out.is_empty(), err.is_empty()) {
        (true, true) => return "(no output)".to_owned(),
        (false, true) => out.to_owned(),
        (true, false) => err.to_owned(),
        (false, false) => format!("--- stdout ---\n{out}\n--- stderr ---\n{err}"),
    };
    tail(&joined, MAX_CHECK_OUTPUT_CHARS)
}

/// The last `max` characters of `text`, after a line that says how many came before.
fn tail(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let cut = total - max;
    let start = text.char_indices().nth(cut).map_or(text.len(), |(i, _)| i);
    format!("… ({cut} characters cut)\n{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_killed_at_its_timeout_names_it() {
        let check = |ms| Check {
            run: vec!["cargo".into(), "test".into()],
            timeout: Duration::from_millis(ms),
            retries: 2,
        };
        let run = |ending| CheckRun {
            ending,
            output: String::new(),
            elapsed_ms: 0,
        };
        let timed_out = run(CheckEnding::TimedOut);
        assert_eq!(
            check(500).ending_text(&timed_out),
            "timed out after 500ms and was killed"
        );
        assert_eq!(
            check(600_000).ending_text(&timed_out),
            "timed out after 10m and was killed"
        );
        assert_eq!(
            check(3_600_000).ending_text(&timed_out),
            "timed out after 1h and was killed"
        );
        assert_eq!(
            check(45_000).ending_text(&timed_out),
            "timed out after 45s and was killed"
        );
        let mut de = crate::texts::Texts::new(Some("de".into()));
        de.set(
            "checks.ending.timed-out",
            "nach {{ after }} nicht fertig",
            crate::texts::TextSource::Builtin,
        );
        de.set(
            "checks.ending.exit",
            "Exit-Code {{ code }}",
            crate::texts::TextSource::Builtin,
        );
        assert_eq!(
            check(45_000).ending_text_in(&timed_out, &de),
            "nach 45s nicht fertig"
        );
        assert_eq!(
            check(45_000).ending_text_in(&run(CheckEnding::Exited(1)), &de),
            "Exit-Code 1"
        );
        assert_eq!(
            check(45_000).ending_text(&run(CheckEnding::Exited(1))),
            "exit code 1"
        );
        assert_eq!(
            check(500).ending_text(&run(CheckEnding::Exited(1))),
            "exit code 1"
        );
    }

    #[test]
    fn output_is_labelled_only_when_both_streams_speak_and_keeps_the_end() {
        assert_eq!(model_output("", ""), "(no output)");
        assert_eq!(model_output("ok\n", ""), "ok");
        assert_eq!(model_output("", "boom\n"), "boom");
        assert_eq!(
            model_output("1 passed", "warning: x"),
            "--- stdout ---\n1 passed\n--- stderr ---\nwarning: x"
        );
        let long = format!("{}END", "é".repeat(MAX_CHECK_OUTPUT_CHARS + 10));
        let shown = model_output(&long, "");
        assert!(shown.starts_with("… (13 characters cut)\n"), "{shown:.40}");
        assert!(shown.ends_with("END"));
        assert_eq!(
            shown.lines().nth(1).map(|l| l.chars().count()),
            Some(MAX_CHECK_OUTPUT_CHARS)
        );
    }

    #[test]
    fn only_exit_code_zero_passes() {
        let run = |ending| CheckRun {
            ending,
            output: String::new(),
            elapsed_ms: 0,
        };
        assert!(run(CheckEnding::Exited(0)).passed());
        assert!(!run(CheckEnding::Exited(1)).passed());
        assert!(!run(CheckEnding::TimedOut).passed());
        assert_eq!(
            run(CheckEnding::TimedOut).ending_text(),
            "timed out and was killed"
        );
    }
}
