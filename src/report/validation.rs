//! The outcome of validating presets: every diagnostic (each kept once), every preset's
//! verdict and the summary line. The renderings live one file each beside it:
//! [`human`](super::human), [`json`](super::json), [`github`](super::github) and
//! [`sarif`](super::sarif).

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};

use serde::Serialize;

use super::shown::{Shown, cap_per_file};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity};

/// One validated preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PresetOutcome {
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
    pub fn judged(
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
    pub fn parent_note(&self) -> Option<String> {
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
pub struct ValidationReport {
    diagnostics: Vec<Diagnostic>,
    /// Where each diagnostic is in `diagnostics`, by its hash: finding a duplicate costs
    /// a hash, not a scan of everything found so far.
    positions: HashMap<u64, Vec<usize>>,
    hasher: RandomState,
    presets: Vec<PresetOutcome>,
    /// Each `prefix-drift` diagnostic with its changes, one short diagnostic each: the
    /// GitHub and SARIF renderings show these in its place (a lock drift split per changed section or tool).
    drift_changes: Vec<(Diagnostic, Vec<Diagnostic>)>,
    /// One edit that drifted several presets, reported once: see
    /// [`Self::add_shared_drift`].
    shared_drifts: Vec<SharedDrift>,
}

/// One edit that drifted several presets ([`ValidationReport::add_shared_drift`]).
#[derive(Debug)]
struct SharedDrift {
    summary: Diagnostic,
    annotation: Diagnostic,
    covers: Vec<Diagnostic>,
    replaces: Vec<Diagnostic>,
    of: Vec<Diagnostic>,
}

impl ValidationReport {
    /// Add diagnostics; one identical to an earlier one (a parent's error found again
    /// while validating a child) is kept once.
    pub fn add_diagnostics(&mut self, list: impl IntoIterator<Item = Diagnostic>) {
        for d in list {
            let same_hash = self.positions.entry(self.key(&d)).or_default();
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
    pub fn add_drift_changes(&mut self, whole: Diagnostic, changes: Vec<Diagnostic>) {
        self.drift_changes.push((whole, changes));
    }

    /// Report one edit that drifted several presets once, at the line that changed:
    /// `annotation` (`summary` with a short diff) is shown instead of the per-change
    /// findings it `covers` (GitHub, SARIF) and `summary` instead of the whole drifts it
    /// `replaces` (human), before the first of the
    /// whole drifts it is `of`. The JSON report keeps one entry per preset.
    pub fn add_shared_drift(
        &mut self,
        (summary, annotation): (Diagnostic, Diagnostic),
        covers: Vec<Diagnostic>,
        replaces: Vec<Diagnostic>,
        of: Vec<Diagnostic>,
    ) {
        self.shared_drifts.push(SharedDrift {
            summary,
            annotation,
            covers,
            replaces,
            of,
        });
    }

    /// The diagnostics as people read them: each shared drift once, before the first
    /// drift it is of, in place of the drifts it explains entirely.
    pub(crate) fn shown_for_people(&self) -> std::borrow::Cow<'_, [Diagnostic]> {
        if self.shared_drifts.is_empty() {
            return std::borrow::Cow::Borrowed(&self.diagnostics);
        }
        let mut first_of: HashMap<&Diagnostic, Vec<usize>> = HashMap::new();
        let mut replaced: std::collections::HashSet<&Diagnostic> = Default::default();
        for (i, shared) in self.shared_drifts.iter().enumerate() {
            replaced.extend(&shared.replaces);
            for d in &shared.of {
                first_of.entry(d).or_default().push(i);
            }
        }
        let mut emitted = vec![false; self.shared_drifts.len()];
        let mut out = Vec::with_capacity(self.diagnostics.len());
        for d in &self.diagnostics {
            if d.kind == DiagnosticKind::PrefixDrift {
                for &i in first_of.get(d).map(Vec::as_slice).unwrap_or_default() {
                    if !std::mem::replace(&mut emitted[i], true) {
                        out.push(self.shared_drifts[i].summary.clone());
                    }
                }
                if replaced.contains(d) {
                    continue;
                }
            }
            out.push(d.clone());
        }
        std::borrow::Cow::Owned(out)
    }

    /// The capped list with each drift replaced by its changes, and the changes one edit
    /// made to several presets by that edit's shared drift, once.
    pub(crate) fn shown_for_annotations(&self) -> Vec<Shown<'_>> {
        let by_drift: HashMap<&Diagnostic, &Vec<Diagnostic>> = self
            .drift_changes
            .iter()
            .map(|(whole, changes)| (whole, changes))
            .collect();
        let mut covered: HashMap<&Diagnostic, usize> = HashMap::new();
        for (i, shared) in self.shared_drifts.iter().enumerate() {
            for c in &shared.covers {
                covered.entry(c).or_insert(i);
            }
        }
        let mut emitted = vec![false; self.shared_drifts.len()];
        let mut out = Vec::new();
        for item in cap_per_file(&self.diagnostics) {
            let changes = match item {
                Shown::Diagnostic(d) if d.kind == DiagnosticKind::PrefixDrift => {
                    by_drift.get(d).copied()
                }
                _ => None,
            };
            let Some(changes) = changes else {
                out.push(item);
                continue;
            };
            for c in changes {
                match covered.get(c) {
                    Some(&i) => {
                        if !std::mem::replace(&mut emitted[i], true) {
                            out.push(Shown::Diagnostic(&self.shared_drifts[i].annotation));
                        }
                    }
                    None => out.push(Shown::Diagnostic(c)),
                }
            }
        }
        out
    }

    /// Record a preset's verdict.
    pub fn add_preset(&mut self, outcome: PresetOutcome) {
        self.presets.push(outcome);
    }

    /// The diagnostics, deduplicated, in the order found (in file order once
    /// [`sort_in_file_order`](Self::sort_in_file_order) ran).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Order the diagnostics for reading: the files in the order they were first
    /// reported, each file's diagnostics by line and column (a preset's checks run in
    /// several passes, each finding problems in its own order). Diagnostics without a
    /// file keep their place among the files.
    pub fn sort_in_file_order(&mut self) {
        let mut rank: HashMap<&str, usize> = HashMap::new();
        // Diagnostics of one file mostly come together: the last file's rank saves a hash.
        let mut last: Option<(&str, usize)> = None;
        let mut keys = Vec::with_capacity(self.diagnostics.len());
        for (i, d) in self.diagnostics.iter().enumerate() {
            let key = match &d.span {
                Some(span) => {
                    let file = &*span.file;
                    let r = match last {
                        Some((f, r)) if f == file => r,
                        _ => *rank.entry(file).or_insert(i),
                    };
                    last = Some((file, r));
                    (r, span.line, span.column)
                }
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
        // The same diagnostics at new places: renumber, no need to hash them again.
        let mut new_place = vec![0; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_place[old] = new;
        }
        for places in self.positions.values_mut() {
            for i in places.iter_mut() {
                *i = new_place[*i];
            }
        }
    }

    /// What [`Self::add_diagnostics`] finds duplicates by: the kind, the position and
    /// the message (two diagnostics alike in these and different in their file or help
    /// are told apart by comparing them whole). Hashing the whole diagnostic, a field at
    /// a time, cost a sixth of a 1,000-preset report's printing.
    fn key(&self, d: &Diagnostic) -> u64 {
        let position = d.span.as_ref().map_or((0, 0), |s| (s.line, s.column));
        self.hasher
            .hash_one((d.kind.code(), position, d.message.as_str()))
    }

    /// The verdicts.
    pub fn presets(&self) -> &[PresetOutcome] {
        &self.presets
    }

    fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }

    /// `2 presets valid, 1 invalid (3 errors, 1 warning)`.
    pub fn summary(&self) -> String {
        let valid = self.presets.iter().filter(|p| p.valid).count();
        let invalid = self.presets.len() - valid;
        format!(
            "{} valid, {invalid} invalid ({}, {})",
            plural(valid, "preset"),
            plural(self.count(Severity::Error), "error"),
            plural(self.count(Severity::Warning), "warning"),
        )
    }
}

/// The message with its help appended: `message (help)`.
pub fn message_with_help(d: &Diagnostic, label: &str) -> String {
    match &d.help {
        Some(help) => format!("{} ({label}{help})", d.message),
        None => d.message.clone(),
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
