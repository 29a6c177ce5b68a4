//! `test --record [CASE...]` and `test --live [--repeat N] [--min-pass-rate R]`: each
//! case run live, through the run journey (`crate::run`) as `run` makes it, in a
//! temporary copy of its `workspace`: `--record` writes the case's cassette from the run,
//! `--live` checks its `expect` against `repeat` runs (`testing::suite::run_live_suite`).
//! This file asks (the trust gate, the approver) and prints; the journey and the suite
//! are the library's.

use std::path::PathBuf;

use super::run::{Reaper, StopSignals, TerminalApproval, approval_policy};
use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::agent::{ApprovalPolicy, ApproveAll, RefuseChanges, ToolApproval};
use crate::client::ClientOptions;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::endpoint::Overrides;
use crate::project::values::{ValueInputs, ValuesError, explain_missing, runtime_values};
use crate::redact::Redactor;
use crate::report::HumanRenderer;
use crate::run::{Finished, Model, PrepareError, RunError, ServerOptions, Setup, prepare};
use crate::source_files::SourceFiles;
use crate::testing::TestCase;
use crate::testing::record::check_recording_allowed;
use crate::testing::replay::TempCopy;
use crate::testing::suite::{Replay, Shard, SuiteReport, discover, load_all, run_live_suite};
use crate::transcript::StopSignal;

/// `--live`'s options.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LiveOptions {
    /// Runs per case.
    pub repeat: usize,
    /// The least fraction of runs that must pass.
    pub min_pass_rate: f64,
    /// `--yes`.
    pub yes: bool,
}

/// What one live run of a case could not be: problems to show (the case is invalid), or
/// a signal that ends the whole command.
enum LiveError {
    Problems(Vec<Diagnostic>),
    Stopped(StopSignal),
}

/// What the live runs of one invocation share: the async runtime and the signals that
/// end them.
struct Driver {
    runtime: tokio::runtime::Runtime,
    signals: StopSignals,
    /// The signal that ended a run: no further run is made.
    stopped: Option<StopSignal>,
}

impl Driver {
    fn new() -> Result<Driver, CliError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CliError::usage(format!("cannot start the async runtime: {e}")))?;
        let signals = {
            let _entered = runtime.enter();
            StopSignals::new()
        };
        Ok(Driver {
            runtime,
            signals,
            stopped: None,
        })
    }

    /// One live run of `case` through the journey (its trust gate may ask on the
    /// terminal). `record`: its cassette is made. The case runs in a temporary copy of
    /// its `workspace` (an empty directory without one), removed after.
    fn run_case(
        &mut self,
        global: &GlobalArgs,
        project: &Workspace,
        case: &TestCase,
        (record, yes): (bool, bool),
        io: &mut Io<'_>,
    ) -> Result<(Finished, Redactor), LiveError> {
        if let Some(signal) = self.stopped {
            return Err(LiveError::Stopped(signal));
        }
        let problem = |message: String, help: &str| {
            LiveError::Problems(vec![
                Diagnostic::new(DiagnosticKind::Io, message)
                    .at(case.preset_span())
                    .help(help.to_owned()),
            ])
        };
        let preset = super::test::case_preset(project, case).map_err(LiveError::Problems)?;
        let settings = match crate::project::endpoint::settings(&preset, &Overrides::default()) {
            Ok(Some(settings)) => settings,
            Ok(None) => {
                return Err(problem(
                    format!(
                        "test case `{}` cannot run live: preset `{}` names no model",
                        case.id,
                        case.preset()
                    ),
                    "add a `model` block to the preset",
                ));
            }
            Err(e) => return Err(problem(e.to_string(), e.help())),
        };
        let linted = crate::project::endpoint::lint(&preset, &settings, &project.presets);
        if linted.refused() {
            return Err(LiveError::Problems(linted.diagnostics().to_vec()));
        }
        let copy = match &case.workspace {
            Some(dir) => TempCopy::of(dir),
            None => TempCopy::empty(),
        }
        .map_err(|e| {
            problem(
                format!(
                    "test case `{}`: cannot make a temporary copy of its workspace: {e}",
                    case.id
                ),
                "check the case's `workspace` directory",
            )
        })?;
        let cwd = copy
            .path()
            .canonicalize()
            .unwrap_or_else(|_| copy.path().to_owned());
        let policy = approval_policy(yes);
        let setup = Setup {
            project,
            preset,
            settings,
            linted,
            cwd,
            sandbox: None,
            approval: policy,
            max_steps: None,
            max_tool_calls: None,
            pin_date: false,
            record,
        };
        let vars: Vec<(String, String)> = case
            .vars
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let prepared = prepare(
            setup,
            |preset, settings, cwd| {
                let gate = super::trust::RunGate {
                    arg: case.preset(),
                    allow_insecure: false,
                    json: false,
                    cwd,
                };
                match super::trust::admit_run(global, project, preset, settings, gate, io) {
                    Ok(None) => Ok(true),
                    // The gate said why on stderr.
                    Ok(Some(_)) => Ok(false),
                    Err(e) => Err(cli_problems(e)),
                }
            },
            |preset, cwd| {
                let inputs = ValueInputs {
                    cwd: &cwd,
                    model: None,
                    provider: None,
                    var_files: &[],
                    vars: &vars,
                };
                runtime_values(preset, &inputs).map_err(|e| match e {
                    ValuesError::Usage { message, help } => vec![
                        Diagnostic::new(DiagnosticKind::InvalidValue, message)
                            .at(case.preset_span())
                            .maybe_help(help),
                    ],
                    ValuesError::Invalid { diagnostics, .. } => diagnostics,
                })
            },
        );
        let prepared = match prepared {
            Ok(Some(prepared)) => prepared,
            Ok(None) => {
                return Err(problem(
                    format!(
                        "test case `{}` was not run: preset `{}` did not pass the run gate",
                        case.id,
                        case.preset()
                    ),
                    "see above; trust the preset with `agent-presets trust`",
                ));
            }
            Err(PrepareError::Caller(list)) => return Err(LiveError::Problems(list)),
            Err(PrepareError::Run(e)) => return Err(LiveError::Problems(run_problems(e, case))),
        };
        let connected = prepared
            .connect(Model::Live(ClientOptions::default()))
            .map_err(|e| LiveError::Problems(run_problems(e, case)))?;
        let redactor = connected.redactor().clone();
        let texts = connected.preset().assembler().texts();
        let mut approval: Box<dyn ToolApproval> = match policy {
            ApprovalPolicy::Yes => Box::new(ApproveAll),
            ApprovalPolicy::Ask => Box::new(TerminalApproval::new(
                redactor.clone(),
                std::sync::Arc::clone(texts),
            )),
            ApprovalPolicy::Refuse => Box::new(RefuseChanges::no_terminal(texts)),
        };
        let held = super::connect::HeldLines::default();
        let sink = held.sink();
        let Driver {
            runtime,
            signals,
            stopped,
        } = self;
        let start = connected.start(ServerOptions {
            allow_drift: false,
            stderr: &sink,
        });
        let started = runtime.block_on(async {
            tokio::select! {
                result = start => Ok(result),
                signal = signals.recv() => Err(signal),
            }
        });
        held.flush(&mut *io.err);
        let mut started = match started {
            Ok(Ok(started)) => started,
            Ok(Err(e)) => return Err(LiveError::Problems(run_problems(e, case))),
            Err(signal) => {
                *stopped = Some(signal);
                return Err(LiveError::Stopped(signal));
            }
        };
        let prompt = case.file.prompt.clone();
        let mut quiet = |_: crate::agent::AgentEvent<'_>| {};
        let finished = runtime.block_on(async {
            let run = started.run(&prompt, approval.as_mut(), &mut quiet);
            tokio::select! {
                result = run => Ok(result),
                signal = signals.recv() => Err(signal),
            }
        });
        runtime.block_on(started.shutdown());
        held.flush(&mut *io.err);
        drop(copy);
        match finished {
            Ok(finished) => Ok((finished, redactor)),
            Err(signal) => {
                *stopped = Some(signal);
                Err(LiveError::Stopped(signal))
            }
        }
    }
}

/// A CLI refusal (from the gate) as diagnostics of the case.
fn cli_problems(e: CliError) -> Vec<Diagnostic> {
    match e {
        CliError::Usage { message, help } => {
            vec![Diagnostic::new(DiagnosticKind::Io, message).maybe_help(help)]
        }
        CliError::Diagnostics { list, .. } => list,
        CliError::Output(e) => vec![Diagnostic::new(
            DiagnosticKind::Io,
            format!("cannot write output: {e}"),
        )],
    }
}

/// A refusal of the journey as diagnostics of `case`.
fn run_problems(e: RunError, case: &TestCase) -> Vec<Diagnostic> {
    match e {
        RunError::Usage(u) => vec![
            Diagnostic::new(DiagnosticKind::Io, u.message)
                .at(case.preset_span())
                .maybe_help(u.help),
        ],
        RunError::Render(ds) => explain_missing(ds),
        RunError::Invalid(list) => list,
        RunError::Client(e) => vec![
            Diagnostic::new(
                DiagnosticKind::Io,
                format!("test case `{}` cannot run live: {e}", case.id),
            )
            .at(case.preset_span())
            .help(
                "a live run needs the model's key in the variable the preset names \
                 (`model.apiKeyEnv`)",
            ),
        ],
    }
}

/// The cases `paths` name (default: the project's), the shard's, read and checked:
/// the usable ones, and the diagnostics of the rest (with the texts they point into).
fn cases(
    project: &Workspace,
    paths: &[PathBuf],
    shard: Option<Shard>,
) -> (Vec<TestCase>, Vec<Diagnostic>, SourceFiles) {
    let root = &project.project_dir;
    let (mut files, mut problems) = discover(root, paths);
    if let Some(shard) = shard {
        let ids: Vec<String> = files
            .iter()
            .map(|f| crate::testing::case::case_id(root, f))
            .collect();
        let keep = shard.select(ids.iter().map(String::as_str));
        files.retain(|f| keep.contains(crate::testing::case::case_id(root, f).as_str()));
    }
    let mut sources = project.presets.source_files();
    let mut usable = Vec::new();
    for loaded in load_all(project, &files) {
        match loaded {
            Ok(case) => {
                sources.insert(case.id.as_str(), case.source.source_text());
                usable.push(case);
            }
            Err(result) => problems.extend(result.diagnostics),
        }
    }
    (usable, problems, sources)
}

/// `test --record [CASE...]`: each case run live and its cassette written. Exit 0 every
/// case recorded, 1 a run ended in an error (nothing written for it), 2 a case could not
/// be run (unreadable, invalid, no key, not trusted).
pub(crate) fn record(
    global: &GlobalArgs,
    shard: Option<Shard>,
    yes: bool,
    paths: &[PathBuf],
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    check_recording_allowed().map_err(CliError::usage)?;
    // Orphans of what the runs start come to the agent, and nothing is left at the end.
    let _reaper = Reaper::adopt();
    let project = Workspace::discover(global)?;
    let (cases, problems, mut sources) = cases(&project, paths, shard);
    let mut exit = if problems.is_empty() {
        Exit::Ok
    } else {
        Exit::Usage
    };
    show(&problems, &sources, io)?;
    let mut driver = Driver::new()?;
    let mut recorded = 0usize;
    for case in &cases {
        let (finished, redactor) = match driver.run_case(global, &project, case, (true, yes), io) {
            Ok(done) => done,
            Err(LiveError::Problems(list)) => {
                sources.extend(project.presets.source_files());
                show(&list, &sources, io)?;
                writeln!(io.out, "error {}: not recorded", case.id)?;
                exit = Exit::Usage;
                continue;
            }
            Err(LiveError::Stopped(signal)) => {
                writeln!(
                    io.err,
                    "{}: interrupted ({}): `{}` was not recorded",
                    io.err_style.error("error"),
                    signal.name(),
                    case.id
                )?;
                return Ok(signal.exit());
            }
        };
        if let Err(e) = &finished.outcome {
            writeln!(
                io.err,
                "{}: test case `{}`: the run failed: {}",
                io.err_style.error("error"),
                case.id,
                redactor.redact(&e.to_string())
            )?;
            writeln!(io.out, "FAILED {}: not recorded", case.id)?;
            if exit == Exit::Ok {
                exit = Exit::Invalid;
            }
            continue;
        }
        let Some(mut cassette) = finished.cassette else {
            continue;
        };
        // Beside the case and inside its directory, as the case's check found it: a link
        // that leads out is refused here too, not followed.
        let root = case.path.parent().unwrap_or(&project.project_dir);
        let text = cassette.to_text();
        if let Err(e) = crate::confine::write_confined(
            root,
            &case.cassette,
            &case.cassette_shown,
            text.as_bytes(),
        ) {
            writeln!(
                io.err,
                "{}: cannot write the cassette: {}",
                io.err_style.error("error"),
                e.message
            )?;
            if let Some(help) = &e.help {
                writeln!(io.err, "  = {}: {help}", io.err_style.bold("help"))?;
            }
            exit = Exit::Usage;
            continue;
        }
        recorded += 1;
        let steps = cassette.steps.len();
        writeln!(
            io.out,
            "recorded {} ({steps} step{}) to {}",
            case.id,
            if steps == 1 { "" } else { "s" },
            case.cassette_shown
        )?;
    }
    writeln!(
        io.out,
        "{recorded} recorded, {} not",
        cases.len() - recorded
    )?;
    Ok(exit)
}

/// `test --live`: the suite, each case run live `repeat` times and judged by its pass
/// rate. The second value: the exit of a signal that ended it.
pub(crate) fn live(
    global: &GlobalArgs,
    shard: Option<Shard>,
    options: &LiveOptions,
    paths: &[PathBuf],
    io: &mut Io<'_>,
) -> Result<(SuiteReport, Option<Exit>), CliError> {
    let _reaper = Reaper::adopt();
    let project = Workspace::discover(global)?;
    let mut driver = Driver::new()?;
    let report = run_live_suite(
        &project,
        paths,
        shard,
        options.repeat,
        options.min_pass_rate,
        |case| match driver.run_case(global, &project, case, (false, options.yes), io) {
            Ok((finished, redactor)) => Ok(Replay {
                observed: finished.observed(&redactor),
                diagnostics: Vec::new(),
            }),
            Err(LiveError::Problems(list)) => Err(list),
            Err(LiveError::Stopped(signal)) => Err(vec![Diagnostic::new(
                DiagnosticKind::Io,
                format!(
                    "test case `{}` was not run: interrupted ({})",
                    case.id,
                    signal.name()
                ),
            )]),
        },
    );
    Ok((report, driver.stopped.map(StopSignal::exit)))
}

fn show(list: &[Diagnostic], sources: &SourceFiles, io: &mut Io<'_>) -> Result<(), CliError> {
    if list.is_empty() {
        return Ok(());
    }
    let renderer = HumanRenderer::new(io.err_style, sources, list);
    io.err.write_all(renderer.render_all(list).as_bytes())?;
    Ok(())
}
