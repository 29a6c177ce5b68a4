//! How many diagnostics a report shows: at most [`MAX_SHOWN_PER_FILE`] per file, then
//! one "N more" item for the rest of that file. A hostile file can hold a hundred
//! thousand problems; printing them all helps nobody and costs megabytes. Every output
//! format applies the same cut (the counts in summaries and exit codes still cover
//! every diagnostic).

use std::collections::HashMap;

use crate::diagnostic::Diagnostic;

/// Most diagnostics shown for one file (diagnostics without a file count as one more
/// "file").
pub const MAX_SHOWN_PER_FILE: usize = 200;

/// One item of a capped report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown<'a> {
    /// A diagnostic to show.
    Diagnostic(&'a Diagnostic),
    /// `count` more diagnostics of `file` (`None`: without a file) are left out. Comes
    /// right after the last one shown for that file.
    More {
        /// The file, as spans show it.
        file: Option<&'a str>,
        /// How many were left out.
        count: usize,
    },
}

/// The "N more" sentence, e.g. ``3 more diagnostics in `a.yaml` are not shown (at most
/// 200 are shown per file)``.
pub fn more_text(file: Option<&str>, count: usize) -> String {
    let what = if count == 1 {
        "1 more diagnostic".to_owned()
    } else {
        format!("{count} more diagnostics")
    };
    let verb = if count == 1 { "is" } else { "are" };
    let place = match file {
        Some(file) => format!("in `{file}`"),
        None => "without a file".to_owned(),
    };
    format!("{what} {place} {verb} not shown (at most {MAX_SHOWN_PER_FILE} are shown per file)")
}

/// `list` in order, with at most [`MAX_SHOWN_PER_FILE`] diagnostics per file, each
/// file's overflow counted in one [`Shown::More`] after its last shown diagnostic.
pub fn cap_per_file(list: &[Diagnostic]) -> Vec<Shown<'_>> {
    cap(list, MAX_SHOWN_PER_FILE)
}

fn cap(list: &[Diagnostic], max: usize) -> Vec<Shown<'_>> {
    // A file's diagnostics mostly come one after another: each run of one file is counted
    // locally and hashed once, not once per diagnostic (a thousand presets' report holds
    // thousands).
    let mut totals: HashMap<Option<&str>, usize> = HashMap::new();
    let mut run: Option<(Option<&str>, usize)> = None;
    for d in list {
        let key = file_of(d);
        match &mut run {
            Some((file, n)) if *file == key => *n += 1,
            _ => {
                if let Some((file, n)) = run.replace((key, 1)) {
                    *totals.entry(file).or_default() += n;
                }
            }
        }
    }
    if let Some((file, n)) = run {
        *totals.entry(file).or_default() += n;
    }
    let mut shown: HashMap<Option<&str>, usize> = HashMap::new();
    // The current run's file, how many of it are shown so far, and its total.
    let mut current: Option<(Option<&str>, usize, usize)> = None;
    let mut out = Vec::with_capacity(list.len().min(max.saturating_mul(totals.len())) + 1);
    for d in list {
        let key = file_of(d);
        let (_, n, total) = match current {
            Some(c) if c.0 == key => c,
            _ => {
                if let Some((file, n, _)) = current {
                    shown.insert(file, n);
                }
                let n = shown.get(&key).copied().unwrap_or(0);
                (key, n, totals.get(&key).copied().unwrap_or(0))
            }
        };
        current = Some((key, n.saturating_add(1).min(max), total));
        if n >= max {
            continue;
        }
        let n = n + 1;
        out.push(Shown::Diagnostic(d));
        if n == max && total > max {
            out.push(Shown::More {
                file: key,
                count: total - max,
            });
        }
    }
    out
}

fn file_of(d: &Diagnostic) -> Option<&str> {
    d.span.as_ref().map(|s| &*s.file)
}

/// `unknown-key` diagnostics at lines `lines` of `file`, messages `key LINE` (tests).
#[cfg(test)]
pub(crate) fn unknown_keys(file: &str, lines: std::ops::RangeInclusive<u32>) -> Vec<Diagnostic> {
    use crate::diagnostic::{DiagnosticKind, Span};
    lines
        .map(|line| {
            Diagnostic::new(DiagnosticKind::UnknownKey, format!("key {line}")).at(Span::new(
                file.into(),
                line,
                1,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::DiagnosticKind;

    #[test]
    fn each_file_is_cut_after_max_and_counted() {
        let (a, b) = (unknown_keys("a.yaml", 1..=5), unknown_keys("b.yaml", 1..=5));
        let mut list: Vec<Diagnostic> = a.into_iter().zip(b).flat_map(|(a, b)| [a, b]).collect();
        list.push(Diagnostic::new(DiagnosticKind::Io, "one"));
        list.push(Diagnostic::new(DiagnosticKind::Io, "two"));
        list.push(Diagnostic::new(DiagnosticKind::Io, "three"));
        let shown = cap(&list, 2);
        let text: Vec<String> = shown
            .iter()
            .map(|s| match s {
                Shown::Diagnostic(d) => match &d.span {
                    Some(span) => format!("{}:{}", span.file, d.message),
                    None => d.message.clone(),
                },
                Shown::More { file, count } => format!("+{count} {file:?}"),
            })
            .collect();
        assert_eq!(
            text,
            [
                "a.yaml:key 1",
                "b.yaml:key 1",
                "a.yaml:key 2",
                "+3 Some(\"a.yaml\")",
                "b.yaml:key 2",
                "+3 Some(\"b.yaml\")",
                "one",
                "two",
                "+1 None",
            ]
        );
        // Exactly at the limit: nothing is left out, so no note.
        assert_eq!(cap(&list[..4], 2).len(), 4);
    }

    #[test]
    fn sentences() {
        assert_eq!(
            more_text(Some("a.yaml"), 89_800),
            "89800 more diagnostics in `a.yaml` are not shown (at most 200 are shown per file)"
        );
        assert_eq!(
            more_text(None, 1),
            "1 more diagnostic without a file is not shown (at most 200 are shown per file)"
        );
    }
}
