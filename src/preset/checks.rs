//! `checks:` along a chain: the success checks a run uses ([`checks_of`]: the lists
//! append, root first), and what `validate` says about the leaf's own checks ([`check`]):
//! an empty `run` (`check-empty-run`) and a timeout that is not a duration of at most an
//! hour (`check-bad-timeout`).

use std::time::Duration;

use super::source::ParsedPreset;
use super::spec::{CheckSpec, parse_duration};
use crate::checks::{Check, DEFAULT_CHECK_RETRIES, DEFAULT_CHECK_TIMEOUT, MAX_CHECK_TIMEOUT};
use crate::diagnostic::{Diagnostic, DiagnosticKind};

/// `PRESET.checks[i]`: how trust and the lock name the `i`th check of `preset`.
pub fn check_key(preset: &str, i: usize) -> String {
    format!("{preset}.checks[{i}]")
}

/// Every check the chain declares, root first, with its key ([`check_key`]), the index
/// of its preset in the chain, and its declaration.
pub fn declared<'a>(chain: &[&'a ParsedPreset]) -> Vec<(String, usize, &'a CheckSpec)> {
    let mut out = Vec::new();
    for (at, preset) in chain.iter().enumerate() {
        for (i, c) in preset.file.checks.iter().flatten().enumerate() {
            out.push((check_key(preset.name(), i), at, c));
        }
    }
    out
}

/// The timeout a check runs with (`None`: not a usable duration).
pub fn timeout_of(spec: &CheckSpec) -> Option<Duration> {
    match &spec.timeout {
        None => Some(DEFAULT_CHECK_TIMEOUT),
        Some(t) => parse_duration(&t.value).filter(|d| *d <= MAX_CHECK_TIMEOUT),
    }
}

/// The checks in force at the chain's leaf, root first. Checks `validate` refuses (an
/// empty `run`, a bad timeout) are left out; a valid preset has none.
pub fn checks_of(chain: &[&ParsedPreset]) -> Vec<Check> {
    let mut out = Vec::new();
    for (_, _, c) in declared(chain) {
        let run: Vec<String> = c.run.value.iter().map(|a| a.value.clone()).collect();
        if run.first().is_none_or(|p| p.trim().is_empty()) {
            continue;
        }
        let Some(timeout) = timeout_of(c) else {
            continue;
        };
        out.push(Check {
            run,
            timeout,
            retries: c
                .retries
                .as_ref()
                .map_or(DEFAULT_CHECK_RETRIES, |r| r.value),
        });
    }
    out
}

/// `validate`'s findings on the leaf's own checks.
pub fn check(chain: &[&ParsedPreset]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(leaf) = chain.last() else { return out };
    for c in leaf.file.checks.iter().flatten() {
        match c.run.value.first() {
            None => out.push(
                Diagnostic::new(
                    DiagnosticKind::CheckEmptyRun,
                    "a check has an empty `run`: it has no program to run, so it could never pass",
                )
                .at(leaf.span_of(&c.run))
                .help(
                    "give the program and its arguments as a list: `run: [cargo, test, --quiet]`",
                ),
            ),
            Some(p) if p.value.trim().is_empty() => out.push(
                Diagnostic::new(
                    DiagnosticKind::CheckEmptyRun,
                    "a check's `run` starts with an empty program name",
                )
                .at(leaf.span_of(p))
                .help("the first entry is the program to run: `run: [cargo, test, --quiet]`"),
            ),
            Some(_) => {}
        }
        if let Some(t) = &c.timeout
            && timeout_of(c).is_none()
        {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::CheckBadTimeout,
                    format!(
                        "`{}` is not a check timeout: checks run while the agent waits, for at most 1h",
                        t.value
                    ),
                )
                .at(leaf.span_of(t))
                .help("write a whole number and a unit, between 1ms and 1h: `30s`, `10m` (the default is 5m)"),
            );
        }
    }
    out
}
