//! A test suite: which case files there are ([`discover`]), which of them one CI job
//! runs ([`Shard`]), each case judged from what replaying (or running) it observed
//! ([`judge`], [`judge_live`]), and the verdicts together ([`SuiteReport`], whose exit
//! code is 0 all passed, 1 a case failed or drifted, 2 unreadable or invalid input).
//!
//! What a case observed comes from elsewhere: the replay of its cassette (or a live run)
//! hands back a [`Replay`], or the diagnostics of a cassette that could not be used. This
//! module never reads a cassette and never runs a model.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

#[cfg(feature = "parallel")]
use rayon::prelude::*;

#[cfg(test)]
use super::case::load_case;
use super::case::{CASE_DIR, PresetFacts, TestCase, check_against_preset, read_case};
use super::expect::{Failure, check_expectations};
use super::observed::Observed;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::preset::validate::{ValidPreset, Validation};
use crate::project::Project;
use crate::source_files::SourceFiles;

/// What replaying a case's cassette (or one live run of it) gave: what the run did, and
/// what the replay found on the way. An error among `diagnostics` (a `behaviour-drift`,
/// a recorded call to a tool that is now hidden) means the run drifted: the case fails
/// and its expectations are not checked. Warnings are reported and do not fail it.
///
/// A cassette that cannot be used at all (missing, truncated, corrupt, of an unknown
/// format version) is not a `Replay` but `Err(diagnostics)`: the case is invalid input
/// (exit 2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Replay {
    /// What the run did (up to the first drift, when it drifted).
    pub observed: Observed,
    /// What the replay found: drift (errors), notes (warnings).
    pub diagnostics: Vec<Diagnostic>,
}

impl Replay {
    /// Did it pass (no error among its diagnostics)?
    pub fn passed(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// How one case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CaseStatus {
    /// Every expectation held.
    Passed,
    /// An expectation failed (or, live, too few runs passed).
    Failed,
    /// The replay found the run no longer matches its recording.
    Drifted,
    /// The case file, its preset or its cassette could not be used.
    Invalid,
}

impl CaseStatus {
    /// `passed`, `failed`, `drifted`, `invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseStatus::Passed => "passed",
            CaseStatus::Failed => "failed",
            CaseStatus::Drifted => "drifted",
            CaseStatus::Invalid => "invalid",
        }
    }
}

/// `--live --repeat N`: how many runs there were and how many passed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiveRuns {
    /// Runs made.
    pub runs: usize,
    /// Runs in which every expectation held.
    pub passed: usize,
    /// The least fraction of runs that must pass (`--min-pass-rate`).
    pub min_pass_rate: f64,
}

impl LiveRuns {
    /// `passed / runs` (0 with no runs).
    pub fn pass_rate(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.passed as f64 / self.runs as f64
        }
    }

    /// Did enough runs pass? (A rate is compared in whole runs: with 5 runs and 0.8,
    /// 4 must pass.)
    pub fn enough(&self) -> bool {
        self.runs > 0 && self.passed >= needed(self.runs, self.min_pass_rate)
    }
}

/// The fewest passing runs of `runs` that reach `rate`.
fn needed(runs: usize, rate: f64) -> usize {
    let exact = rate * runs as f64;
    // 0.7 * 10 is 7.000000000000001 in floating point: not 8 runs.
    let rounded = exact.round();
    let n = if (exact - rounded).abs() < 1e-9 {
        rounded
    } else {
        exact.ceil()
    };
    (n.max(0.0) as usize).min(runs)
}

/// The verdict on one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The case file relative to the project (`.agent-presets/tests/review.yaml`).
    pub id: String,
    /// The preset it runs, when the file could be read.
    pub preset: Option<String>,
    /// How it ended.
    pub status: CaseStatus,
    /// The failed expectations (of the first failing run, live).
    pub failures: Vec<Failure>,
    /// Everything to show about it, located: the case file's problems, the preset's, the
    /// replay's, and one `expectation-failed` per failure.
    pub diagnostics: Vec<Diagnostic>,
    /// Model requests the run made, when it ran.
    pub steps: Option<usize>,
    /// Live runs, with `--live --repeat`.
    pub live: Option<LiveRuns>,
}

impl CaseResult {
    /// A case that could not be used: `diagnostics` say why.
    pub fn invalid(id: String, preset: Option<String>, diagnostics: Vec<Diagnostic>) -> Self {
        CaseResult {
            id,
            preset,
            status: CaseStatus::Invalid,
            failures: Vec::new(),
            diagnostics,
            steps: None,
            live: None,
        }
    }

    /// The case's name: its file stem.
    pub fn name(&self) -> &str {
        Path::new(&self.id)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(&self.id)
    }
}

/// Judge `case` from its replay: invalid when the cassette could not be used, drifted
/// when the replay found an error, else passed or failed by its expectations.
pub fn judge(case: &TestCase, replay: Result<Replay, Vec<Diagnostic>>) -> CaseResult {
    let preset = Some(case.preset().to_owned());
    let replay = match replay {
        Ok(replay) => replay,
        Err(diagnostics) => return CaseResult::invalid(case.id.clone(), preset, diagnostics),
    };
    let steps = Some(replay.observed.steps);
    if replay.diagnostics.iter().any(Diagnostic::is_error) {
        return CaseResult {
            id: case.id.clone(),
            preset,
            status: CaseStatus::Drifted,
            failures: Vec::new(),
            diagnostics: replay.diagnostics,
            steps,
            live: None,
        };
    }
    let failures = check_expectations(case, &replay.observed);
    let mut diagnostics = replay.diagnostics;
    diagnostics.extend(failures.iter().map(Failure::diagnostic));
    CaseResult {
        id: case.id.clone(),
        preset,
        status: if failures.is_empty() {
            CaseStatus::Passed
        } else {
            CaseStatus::Failed
        },
        failures,
        diagnostics,
        steps,
        live: None,
    }
}

/// Judge `case` from `runs` live runs (`--live --repeat N`): a run passes when every
/// expectation holds; the case passes when at least `min_pass_rate` of the runs did. A
/// run that could not be made at all (`Err`) makes the case invalid. A failed case shows
/// a `pass-rate-below` diagnostic and each expectation that failed, once, with how many
/// runs it failed in.
pub fn judge_live(
    case: &TestCase,
    runs: Vec<Result<Replay, Vec<Diagnostic>>>,
    min_pass_rate: f64,
) -> CaseResult {
    let preset = Some(case.preset().to_owned());
    let mut passed = 0;
    let mut notes: Vec<Diagnostic> = Vec::new();
    // Each expectation that failed (by name and place): its first failure and in how
    // many runs it failed.
    let mut failed: Vec<(Failure, usize)> = Vec::new();
    let mut first_failures: Option<Vec<Failure>> = None;
    let mut steps = None;
    let total = runs.len();
    for run in runs {
        let replay = match run {
            Ok(replay) => replay,
            Err(diagnostics) => return CaseResult::invalid(case.id.clone(), preset, diagnostics),
        };
        steps = steps.max(Some(replay.observed.steps));
        let errors = replay.diagnostics.iter().any(Diagnostic::is_error);
        for d in replay.diagnostics {
            if !notes.contains(&d) {
                notes.push(d);
            }
        }
        if errors {
            continue;
        }
        let failures = check_expectations(case, &replay.observed);
        if failures.is_empty() {
            passed += 1;
            continue;
        }
        for f in &failures {
            match failed
                .iter_mut()
                .find(|(g, _)| g.name == f.name && g.span == f.span)
            {
                Some((_, n)) => *n += 1,
                None => failed.push((f.clone(), 1)),
            }
        }
        first_failures.get_or_insert(failures);
    }
    let live = LiveRuns {
        runs: total,
        passed,
        min_pass_rate,
    };
    let mut diagnostics = notes;
    let status = if live.enough() {
        CaseStatus::Passed
    } else {
        diagnostics.push(pass_rate_diagnostic(case, &live));
        CaseStatus::Failed
    };
    for (f, n) in &failed {
        let mut d = f.diagnostic();
        d.message.push_str(&format!(" (in {n} of {total} runs)"));
        if status == CaseStatus::Passed {
            // Within the pass rate: shown, not failing.
            d.severity = crate::diagnostic::Severity::Warning;
        }
        diagnostics.push(d);
    }
    CaseResult {
        id: case.id.clone(),
        preset,
        status,
        failures: first_failures.unwrap_or_default(),
        diagnostics,
        steps,
        live: Some(live),
    }
}

fn pass_rate_diagnostic(case: &TestCase, live: &LiveRuns) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::PassRateBelow,
        format!(
            "test case `{}` passed {} of {} runs ({}), below the minimum pass rate of {} \
             ({} of {} runs)",
            case.id,
            live.passed,
            live.runs,
            percent(live.pass_rate()),
            percent(live.min_pass_rate),
            needed(live.runs, live.min_pass_rate),
            live.runs
        ),
    )
    .at(case.preset_span())
    .help(
        "the failed expectations follow; make the preset's instructions clearer, relax \
         `expect`, or lower `--min-pass-rate` if the model is this unsteady by nature",
    )
}

/// `80 %`, `66.7 %`.
pub fn percent(rate: f64) -> String {
    let p = rate * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{} %", p.round())
    } else {
        format!("{p:.1} %")
    }
}

/// `--min-pass-rate`: a fraction (`0.8`) or a percentage (`80%`), from 0 to 1.
pub fn parse_pass_rate(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let (number, scale) = match trimmed.strip_suffix('%') {
        Some(p) => (p.trim(), 100.0),
        None => (trimmed, 1.0),
    };
    let value: f64 = number.parse().map_err(|_| {
        format!(
            "`{text}` is not a number: write a fraction such as 0.8 or a percentage such as 80%"
        )
    })?;
    let rate = value / scale;
    if !(0.0..=1.0).contains(&rate) || !rate.is_finite() {
        return Err(format!("`{text}` is not between 0 and 1 (0 % and 100 %)"));
    }
    Ok(rate)
}

/// `--shard K/N`: the K-th of N parts of a suite (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1 to `count`.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let usage = || format!("`{text}` is not a shard: write K/N, e.g. 2/4 (the second of four)");
        let (k, n) = text.split_once('/').ok_or_else(usage)?;
        let index: usize = k.trim().parse().map_err(|_| usage())?;
        let count: usize = n.trim().parse().map_err(|_| usage())?;
        if count == 0 || index == 0 || index > count {
            return Err(format!(
                "`{text}`: K must be from 1 to N, and N at least 1 (shards are numbered from 1)"
            ));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// The cases of this shard: `ids` (case paths relative to the project) sorted and
    /// deduplicated, then every N-th from the K-th on. Deterministic, and balanced to one
    /// case: the N shards of one suite are disjoint and together are the suite.
    pub fn select<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> BTreeSet<&'a str> {
        let sorted: BTreeSet<&str> = ids.into_iter().collect();
        sorted
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.count == self.index - 1)
            .map(|(_, id)| id)
            .collect()
    }
}

/// The case files `paths` name (files, or directories whose `*.yaml`/`*.yml` files are
/// cases; not their subdirectories, which hold workspaces and cassettes), or the
/// project's `.agent-presets/tests/` when none are given; sorted by path, each once. A
/// path that does not exist or cannot be listed is an `io` diagnostic.
pub fn discover(project: &Path, paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    let mut problems = Vec::new();
    let mut found = BTreeSet::new();
    let default = [project.join(CASE_DIR)];
    let given = paths.is_empty();
    let roots: &[PathBuf] = if given { &default } else { paths };
    for root in roots {
        let shown = super::case::case_id(project, root);
        match std::fs::metadata(root) {
            Ok(m) if m.is_dir() => match std::fs::read_dir(root) {
                Ok(entries) => {
                    for entry in entries.flatten() {
                        let path = entry.path();
                        let is_case = path
                            .extension()
                            .is_some_and(|e| e == "yaml" || e == "yml");
                        // A directory named `x.yaml` is not a case; a link to a file is.
                        if is_case && path.is_file() {
                            found.insert(path);
                        }
                    }
                }
                Err(e) => problems.push(Diagnostic::new(
                    DiagnosticKind::Io,
                    format!("cannot list test cases in `{shown}`: {e}"),
                )),
            },
            Ok(_) => {
                found.insert(root.clone());
            }
            Err(_) if given => problems.push(
                Diagnostic::new(
                    DiagnosticKind::Io,
                    format!("no test cases: `{shown}` does not exist"),
                )
                .help(format!(
                    "write a case in `{CASE_DIR}/NAME.yaml` (see docs/testing.md), or name case files or directories"
                )),
            ),
            Err(e) => problems.push(Diagnostic::new(
                DiagnosticKind::Io,
                format!("cannot read `{shown}`: {e}"),
            )),
        }
    }
    (found.into_iter().collect(), problems)
}

/// The presets a suite's cases run, each validated once however many cases run it (on
/// every core with the `parallel` feature): what the case checks read their facts from
/// and what the replays run.
#[derive(Debug, Default)]
pub struct SuitePresets {
    validated: HashMap<String, Validation>,
}

impl SuitePresets {
    /// Validate each of `names` on offer in `project` once.
    pub fn validate<'n>(project: &Project, names: impl IntoIterator<Item = &'n str>) -> Self {
        let mut wanted: Vec<&str> = names
            .into_iter()
            .filter(|n| project.presets.contains(n))
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let validate = |name: &&str| ((*name).to_owned(), project.validate(name));
        #[cfg(feature = "parallel")]
        let validated = wanted.par_iter().map(validate).collect();
        #[cfg(not(feature = "parallel"))]
        let validated = wanted.iter().map(validate).collect();
        SuitePresets { validated }
    }

    /// The preset named `name`, when it is on offer and valid.
    pub fn get(&self, name: &str) -> Option<&ValidPreset> {
        self.validated.get(name)?.preset.as_ref()
    }

    fn validation(&self, name: &str) -> Option<&Validation> {
        self.validated.get(name)
    }
}

/// Read every case file and check it against its preset (which must be on offer and
/// valid; `expect`'s tools must be ones it shows). Each preset is validated once.
/// A case that passes these checks is `Ok`; one that does not is its invalid verdict.
pub fn load_all(project: &Project, files: &[PathBuf]) -> Vec<Result<TestCase, Box<CaseResult>>> {
    load_with_presets(project, files).0
}

/// [`load_all`], and the presets the cases run, validated.
pub fn load_with_presets(
    project: &Project,
    files: &[PathBuf],
) -> (Vec<Result<TestCase, Box<CaseResult>>>, SuitePresets) {
    let read: Vec<_> = files
        .iter()
        .map(|path| {
            read_case(&project.project_dir, path).map_err(|d| {
                Box::new(CaseResult::invalid(
                    super::case::case_id(&project.project_dir, path),
                    None,
                    d,
                ))
            })
        })
        .collect();
    let presets = SuitePresets::validate(
        project,
        read.iter()
            .filter_map(|r| r.as_ref().ok())
            .map(|(case, _)| case.preset()),
    );
    let facts: HashMap<&str, Result<PresetFacts, &[Diagnostic]>> = presets
        .validated
        .iter()
        .map(|(name, v)| {
            let facts = match &v.preset {
                Some(preset) => Ok(PresetFacts::of(preset)),
                None => Err(v.diagnostics.as_slice()),
            };
            (name.as_str(), facts)
        })
        .collect();
    let preset_names: Vec<&str> = project.presets.names().collect();
    let cases = read
        .into_iter()
        .map(|read| {
            let (case, mut problems) = read?;
            let name = case.preset().to_owned();
            let (known, preset_problems): (Option<&PresetFacts>, &[Diagnostic]) =
                match facts.get(name.as_str()) {
                    Some(Ok(known)) => (Some(known), &[]),
                    Some(Err(d)) => (None, d),
                    None => (None, &[]),
                };
            problems.extend(check_against_preset(&case, &preset_names, known));
            problems.sort_by_key(|d| d.span.as_ref().map(|s| (s.line, s.column)));
            if !preset_problems.is_empty() {
                problems.push(
                    Diagnostic::new(
                        DiagnosticKind::CaseUnknownPreset,
                        format!(
                            "test case `{}` runs preset `{name}`, which is invalid",
                            case.id
                        ),
                    )
                    .at(case.preset_span())
                    .help("fix the preset's errors, shown below (`agent-presets validate NAME`)"),
                );
                problems.extend(preset_problems.iter().filter(|d| d.is_error()).cloned());
            }
            if problems.is_empty() {
                Ok(case)
            } else {
                Err(Box::new(CaseResult::invalid(
                    case.id.clone(),
                    Some(name),
                    problems,
                )))
            }
        })
        .collect();
    (cases, presets)
}

/// The `missing-cassette` diagnostic for a case whose cassette does not exist (for the
/// replay to return, or a caller to check first).
pub fn missing_cassette(case: &TestCase) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::MissingCassette,
        format!(
            "test case `{}` has no cassette: `{}` does not exist",
            case.id, case.cassette_shown
        ),
    )
    .at(case.cassette_span())
    .help(format!(
        "record it with `agent-presets test --record {}` (a live run: the model's key is \
         needed) and commit the cassette",
        case.id
    ))
}

/// Run the suite `paths` name (default: the project's `.agent-presets/tests/`), or the
/// `shard` of it: discover, keep the shard's cases, read and check each case (each
/// preset validated once), then judge each usable one from what `replay` gives for it
/// and its preset. The cases are replayed on every core (the `parallel` feature) and
/// reported in their order. A case whose cassette does not exist is invalid
/// (`missing-cassette`) without asking `replay`. `replay` is the seam where cassettes
/// are replayed (or, with `--tools live`, re-run): this module never reads one.
pub fn run_suite(
    project: &Project,
    paths: &[PathBuf],
    shard: Option<Shard>,
    replay: impl Fn(&TestCase, &ValidPreset) -> Result<Replay, Vec<Diagnostic>> + Sync,
) -> SuiteReport {
    run_with(project, paths, shard, |cases, presets| {
        let judge_case = |case: &&TestCase| {
            if !case.cassette.is_file() {
                return CaseResult::invalid(
                    case.id.clone(),
                    Some(case.preset().to_owned()),
                    vec![missing_cassette(case)],
                );
            }
            match presets.get(case.preset()) {
                Some(preset) => judge(case, replay(case, preset)),
                // Checked by `load_with_presets`: a case whose preset is not valid is
                // not judged.
                None => CaseResult::invalid(
                    case.id.clone(),
                    Some(case.preset().to_owned()),
                    presets
                        .validation(case.preset())
                        .map(|v| v.diagnostics.clone())
                        .unwrap_or_default(),
                ),
            }
        };
        #[cfg(feature = "parallel")]
        if cases.len() > 1 {
            return cases.par_iter().map(judge_case).collect();
        }
        cases.iter().map(judge_case).collect()
    })
}

/// `--live --repeat N --min-pass-rate R`: as [`run_suite`], but each case is run `repeat`
/// times by `run` (a live run against the model, which needs no cassette), one case
/// after another, and judged by [`judge_live`].
pub fn run_live_suite(
    project: &Project,
    paths: &[PathBuf],
    shard: Option<Shard>,
    repeat: usize,
    min_pass_rate: f64,
    mut run: impl FnMut(&TestCase) -> Result<Replay, Vec<Diagnostic>>,
) -> SuiteReport {
    run_with(project, paths, shard, |cases, _| {
        cases
            .iter()
            .map(|case| {
                let runs = (0..repeat).map(|_| run(case)).collect();
                judge_live(case, runs, min_pass_rate)
            })
            .collect()
    })
}

/// Discover, shard and read the cases, then `judge_all` the usable ones (one verdict
/// each, in order); the report holds every verdict in the files' order.
fn run_with(
    project: &Project,
    paths: &[PathBuf],
    shard: Option<Shard>,
    judge_all: impl FnOnce(&[&TestCase], &SuitePresets) -> Vec<CaseResult>,
) -> SuiteReport {
    let root = &project.project_dir;
    let (mut files, problems) = discover(root, paths);
    if let Some(shard) = shard {
        let ids: Vec<String> = files
            .iter()
            .map(|f| super::case::case_id(root, f))
            .collect();
        let keep = shard.select(ids.iter().map(String::as_str));
        files.retain(|f| keep.contains(super::case::case_id(root, f).as_str()));
    }
    let mut report = SuiteReport {
        problems,
        shard,
        ..SuiteReport::default()
    };
    report.sources.extend(project.presets.source_files());
    let (loaded, presets) = load_with_presets(project, files.as_slice());
    let mut judged = {
        let usable: Vec<&TestCase> = loaded.iter().filter_map(|l| l.as_ref().ok()).collect();
        judge_all(&usable, &presets).into_iter()
    };
    for (file, loaded) in files.iter().zip(loaded) {
        let result = match loaded {
            Ok(case) => {
                report.add_source(&case);
                judged.next().unwrap_or_else(|| {
                    CaseResult::invalid(
                        case.id.clone(),
                        Some(case.preset().to_owned()),
                        vec![Diagnostic::new(
                            DiagnosticKind::BehaviourDrift,
                            format!("test case `{}` was not judged", case.id),
                        )],
                    )
                })
            }
            Err(result) => {
                // The file could not be read as a case: its text, as far as it can be
                // read, for the snippets.
                if let Ok(bytes) =
                    crate::bounded::read_bounded(file, super::case::MAX_CASE_FILE_BYTES as u64)
                {
                    report.sources.insert(
                        result.id.as_str(),
                        crate::preset::SourceFile::lossy_text(&bytes),
                    );
                }
                *result
            }
        };
        report.results.push(result);
    }
    report
}

/// Every verdict of a run of the suite, and the problems of the run itself.
#[derive(Debug, Default)]
pub struct SuiteReport {
    /// The cases, in the order judged (sorted by path).
    pub results: Vec<CaseResult>,
    /// Problems not of one case (a path that does not exist).
    pub problems: Vec<Diagnostic>,
    /// The text of every file a diagnostic points into (case files, presets), for
    /// snippets.
    pub sources: SourceFiles,
    /// `--shard K/N`, when given (shown in the summary).
    pub shard: Option<Shard>,
}

impl SuiteReport {
    /// The exit code: 2 when input could not be used (a problem, an invalid case), else 1
    /// when a case failed or drifted, else 0.
    pub fn exit(&self) -> crate::report::Exit {
        use crate::report::Exit;
        if !self.problems.is_empty() || self.results.iter().any(|r| r.status == CaseStatus::Invalid)
        {
            Exit::Usage
        } else if self.results.iter().any(|r| r.status != CaseStatus::Passed) {
            Exit::Invalid
        } else {
            Exit::Ok
        }
    }

    /// How many cases ended `status`.
    pub fn count(&self, status: CaseStatus) -> usize {
        self.results.iter().filter(|r| r.status == status).count()
    }

    /// `4 cases: 2 passed, 1 failed, 1 drifted, 0 invalid` (`(shard 2/4)` after it).
    pub fn summary(&self) -> String {
        let n = self.results.len();
        let mut text = format!(
            "{n} test case{}: {} passed, {} failed, {} drifted, {} invalid",
            if n == 1 { "" } else { "s" },
            self.count(CaseStatus::Passed),
            self.count(CaseStatus::Failed),
            self.count(CaseStatus::Drifted),
            self.count(CaseStatus::Invalid),
        );
        if let Some(shard) = self.shard {
            text.push_str(&format!(" (shard {shard})"));
        }
        text
    }

    /// Every diagnostic: the run's problems, then each case's.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = self.problems.clone();
        for r in &self.results {
            out.extend(r.diagnostics.iter().cloned());
        }
        out
    }

    /// Add a case's text for snippets.
    pub fn add_source(&mut self, case: &TestCase) {
        self.sources
            .insert(case.id.as_str(), case.source.source_text());
    }
}

/// A location at the first line of a case file, for problems with it as a whole.
pub fn case_start(id: &str) -> Span {
    Span::new(id.into(), 1, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::observed::ObservedCall;

    #[test]
    fn shards_parse_and_refuse_nonsense() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "a/b", "3", "1/2/3", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_are_balanced_and_cover_the_suite() {
        let ids: Vec<String> = (0..10).map(|i| format!("t/c{i}.yaml")).collect();
        let mut all = BTreeSet::new();
        for k in 1..=3 {
            let part = Shard { index: k, count: 3 }.select(ids.iter().map(String::as_str));
            assert!((3..=4).contains(&part.len()), "{part:?}");
            for id in part {
                assert!(all.insert(id), "{id} twice");
            }
        }
        assert_eq!(all.len(), 10);
        // The order given does not matter.
        let reversed = Shard { index: 1, count: 3 }.select(ids.iter().rev().map(String::as_str));
        assert_eq!(
            reversed,
            Shard { index: 1, count: 3 }.select(ids.iter().map(String::as_str))
        );
    }

    proptest::proptest! {
        #[test]
        fn the_union_of_the_shards_is_the_suite_and_no_case_is_in_two(
            ids in proptest::collection::vec("[a-z]{1,6}(/[a-z]{1,6})?\\.yaml", 0..40),
            count in 1usize..12,
        ) {
            let suite: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
            let mut union = BTreeSet::new();
            for index in 1..=count {
                for id in (Shard { index, count }).select(ids.iter().map(String::as_str)) {
                    proptest::prop_assert!(union.insert(id), "{} in two shards", id);
                }
            }
            proptest::prop_assert_eq!(union, suite);
        }
    }

    #[test]
    fn pass_rates() {
        assert_eq!(parse_pass_rate("0.8"), Ok(0.8));
        assert_eq!(parse_pass_rate("80%"), Ok(0.8));
        assert_eq!(parse_pass_rate("100 %"), Ok(1.0));
        for bad in ["1.5", "-0.1", "x", "NaN", "120%"] {
            assert!(parse_pass_rate(bad).is_err(), "{bad}");
        }
        assert_eq!(needed(5, 0.8), 4);
        assert_eq!(needed(10, 0.7), 7);
        assert_eq!(needed(3, 0.5), 2);
        assert_eq!(needed(3, 0.0), 0);
        assert_eq!(needed(3, 1.0), 3);
        assert_eq!(percent(2.0 / 3.0), "66.7 %");
        assert_eq!(percent(0.8), "80 %");
    }

    fn case(dir: &Path, expect: &str) -> TestCase {
        let path = dir.join("c.yaml");
        std::fs::write(&path, format!("preset: p\nprompt: q\nexpect:\n{expect}")).unwrap();
        load_case(dir, &path).unwrap()
    }

    fn observed(tools: &[&str]) -> Observed {
        Observed {
            steps: tools.len() + 1,
            calls: tools
                .iter()
                .map(|t| ObservedCall {
                    step: 1,
                    tool: (*t).to_owned(),
                    arguments: serde_json::json!({}),
                    result: String::new(),
                    is_error: false,
                })
                .collect(),
            answer: Some("done".into()),
            ..Observed::default()
        }
    }

    fn replay(tools: &[&str]) -> Result<Replay, Vec<Diagnostic>> {
        Ok(Replay {
            observed: observed(tools),
            diagnostics: Vec::new(),
        })
    }

    #[test]
    fn judged_from_a_replay() {
        let dir = tempfile::tempdir().unwrap();
        let c = case(dir.path(), "  tools: {used: [grep]}\n");
        assert_eq!(judge(&c, replay(&["grep"])).status, CaseStatus::Passed);
        let failed = judge(&c, replay(&["bash"]));
        assert_eq!(failed.status, CaseStatus::Failed);
        assert_eq!(failed.diagnostics.len(), 1);
        assert_eq!(
            failed.diagnostics[0].kind,
            DiagnosticKind::ExpectationFailed
        );
        let drift = Diagnostic::new(DiagnosticKind::InvalidValue, "step 2 differs");
        let drifted = judge(
            &c,
            Ok(Replay {
                observed: observed(&["bash"]),
                diagnostics: vec![drift.clone()],
            }),
        );
        // Drift stops the case: its expectations are not checked.
        assert_eq!(drifted.status, CaseStatus::Drifted);
        assert_eq!(drifted.diagnostics, vec![drift.clone()]);
        let invalid = judge(&c, Err(vec![drift]));
        assert_eq!(invalid.status, CaseStatus::Invalid);
        let mut warning = Diagnostic::new(DiagnosticKind::InvalidValue, "a note");
        warning.severity = crate::diagnostic::Severity::Warning;
        let noted = judge(
            &c,
            Ok(Replay {
                observed: observed(&["grep"]),
                diagnostics: vec![warning],
            }),
        );
        assert_eq!(noted.status, CaseStatus::Passed);
    }

    #[test]
    fn live_runs_pass_by_rate() {
        let dir = tempfile::tempdir().unwrap();
        let c = case(dir.path(), "  tools: {used: [grep]}\n");
        let runs = |pass: usize, fail: usize| {
            let mut v: Vec<_> = (0..pass).map(|_| replay(&["grep"])).collect();
            v.extend((0..fail).map(|_| replay(&["bash"])));
            v
        };
        let r = judge_live(&c, runs(4, 1), 0.8);
        assert_eq!(r.status, CaseStatus::Passed);
        assert_eq!(
            r.live,
            Some(LiveRuns {
                runs: 5,
                passed: 4,
                min_pass_rate: 0.8
            })
        );
        // The one failure is shown as a warning, with its count.
        assert_eq!(r.diagnostics.len(), 1);
        assert!(!r.diagnostics[0].is_error());
        assert!(r.diagnostics[0].message.ends_with("(in 1 of 5 runs)"));
        let r = judge_live(&c, runs(3, 2), 0.8);
        assert_eq!(r.status, CaseStatus::Failed);
        let kinds: Vec<_> = r.diagnostics.iter().map(|d| d.kind).collect();
        assert_eq!(
            kinds,
            [
                DiagnosticKind::PassRateBelow,
                DiagnosticKind::ExpectationFailed
            ]
        );
        assert!(
            r.diagnostics[0]
                .message
                .contains("passed 3 of 5 runs (60 %)"),
            "{}",
            r.diagnostics[0].message
        );
        assert!(r.diagnostics[1].message.ends_with("(in 2 of 5 runs)"));
        assert_eq!(judge_live(&c, runs(0, 0), 0.0).status, CaseStatus::Failed);
        let mut with_error = runs(3, 0);
        with_error.push(Err(vec![Diagnostic::new(DiagnosticKind::Io, "no key")]));
        assert_eq!(judge_live(&c, with_error, 0.5).status, CaseStatus::Invalid);
    }

    #[test]
    fn exit_codes() {
        let mut report = SuiteReport::default();
        assert_eq!(report.exit().code(), 0);
        let passed = CaseResult {
            status: CaseStatus::Passed,
            ..CaseResult::invalid("a.yaml".into(), None, Vec::new())
        };
        report.results.push(passed.clone());
        assert_eq!(report.exit().code(), 0);
        report.results.push(CaseResult {
            status: CaseStatus::Drifted,
            ..passed.clone()
        });
        assert_eq!(report.exit().code(), 1);
        report
            .results
            .push(CaseResult::invalid("b.yaml".into(), None, Vec::new()));
        assert_eq!(report.exit().code(), 2);
        assert_eq!(
            report.summary(),
            "3 test cases: 1 passed, 0 failed, 1 drifted, 1 invalid"
        );
    }

    #[test]
    fn discovery_takes_the_yaml_files_of_the_tests_directory() {
        let dir = tempfile::tempdir().unwrap();
        let tests = dir.path().join(CASE_DIR);
        std::fs::create_dir_all(tests.join("fixtures")).unwrap();
        for f in ["b.yaml", "a.yml", "a.jsonl", "fixtures/x.yaml"] {
            std::fs::write(tests.join(f), "").unwrap();
        }
        let (found, problems) = discover(dir.path(), &[]);
        assert!(problems.is_empty());
        let ids: Vec<String> = found
            .iter()
            .map(|p| super::super::case::case_id(dir.path(), p))
            .collect();
        assert_eq!(
            ids,
            [".agent-presets/tests/a.yml", ".agent-presets/tests/b.yaml"]
        );
        let (found, problems) = discover(
            dir.path(),
            &[tests.join("b.yaml"), tests.clone(), dir.path().join("nope")],
        );
        assert_eq!(found.len(), 2);
        assert_eq!(problems.len(), 1);
        let empty = tempfile::tempdir().unwrap();
        let (_, problems) = discover(empty.path(), &[]);
        assert!(
            problems[0].message.contains("does not exist"),
            "{problems:?}"
        );
    }
}
