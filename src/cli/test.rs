//! `test [PATH...]`: the project's test cases (`.agent-presets/tests/*.yaml`, or the
//! files and directories given), each replayed from its cassette and checked against its
//! `expect` block; reported as human text, JSON, GitHub workflow commands, SARIF or
//! JUnit XML. Exit 0 all passed, 1 a case failed or drifted, 2 unreadable or invalid
//! input. A PATH ending in `.jsonl` is a cassette (written by `run --record FILE`),
//! replayed on its own: it passes when nothing drifted. The suite logic is
//! `testing::suite`, the replay `testing::replay`; this file parses, calls and prints.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::report::MachineFormat;
use crate::testing::TestCase;
use crate::testing::output::TestFormat;
use crate::testing::replay::{self, ReplayOptions, ToolsMode};
use crate::testing::suite::{Shard, run_suite};

/// Arguments of `test`.
#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    /// Test case files, or directories whose `*.yaml` files are cases. Default: the
    /// project's `.agent-presets/tests/`.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TestOutput::Human)]
    format: TestOutput,
    /// Run only the K-th of N parts of the suite (`--shard 2/4`), for a CI matrix: the
    /// cases sorted by path, every N-th from the K-th on. The N shards together run every
    /// case once.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<Shard>,
    /// `recorded`: feed back the recorded tool results; `live`: re-run the read-only
    /// tools (file tools, read-only command tools) on a temporary copy of the case's
    /// `workspace` (or `--workspace`) and compare their results with the recording.
    #[arg(long, value_enum, default_value_t = Tools::Recorded)]
    tools: Tools,
    /// The directory `--tools live` copies and runs the tools in, for cassettes given
    /// directly and cases that name no `workspace`.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// (Re)record the cases: a live run of each case's preset, prompt and `vars` (in a
    /// temporary copy of its `workspace`) that writes its `cassette` beside it. The
    /// model's key is needed; refused under `CI`.
    #[arg(long, conflicts_with_all = ["live", "tools", "format"])]
    record: bool,
    /// Run the cases against the real model instead of their cassettes (the model's key
    /// is needed; each in a temporary copy of its `workspace`) and check their `expect`.
    #[arg(long, conflicts_with = "tools")]
    live: bool,
    /// With `--live`: run each case N times (nondeterministic models).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "live",
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    repeat: u64,
    /// With `--live`: the least fraction of a case's runs that must pass, `0.8` or `80%`
    /// [default: 1, every run].
    #[arg(long, value_name = "RATE", requires = "live", value_parser = parse_pass_rate)]
    min_pass_rate: Option<f64>,
    /// With `--record` or `--live`: run tools that change files or run commands without
    /// asking (they work in the temporary copy; commands in the preset's sandbox).
    #[arg(long, short = 'y')]
    yes: bool,
}

/// Which tools answer the replayed calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Tools {
    /// Every result comes from the cassette.
    Recorded,
    /// Read-only built-in and command tools run again on a copy of the workspace.
    Live,
}

/// How `test` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TestOutput {
    /// A line per case, its diagnostics with snippets, then a summary.
    Human,
    /// `{"cases": [...], "diagnostics": [...], "summary": {...}}`.
    Json,
    /// GitHub Actions workflow commands (`::error file=...`).
    Github,
    /// SARIF 2.1.0 (code scanning).
    Sarif,
    /// JUnit XML (CI test reports).
    Junit,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    text.parse()
}

fn parse_pass_rate(text: &str) -> Result<f64, String> {
    crate::testing::suite::parse_pass_rate(text)
}

impl TestArgs {
    /// `--format json|github|sarif` (errors before the report are given in it too).
    pub(crate) fn machine_format(&self) -> Option<MachineFormat> {
        match self.format {
            TestOutput::Json => Some(MachineFormat::Json),
            TestOutput::Github => Some(MachineFormat::Github),
            TestOutput::Sarif => Some(MachineFormat::Sarif),
            TestOutput::Human | TestOutput::Junit => None,
        }
    }
}

pub(crate) fn run(global: &GlobalArgs, args: &TestArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    let cwd = std::env::current_dir().ok();
    let paths: Vec<PathBuf> = args
        .paths
        .iter()
        .map(|p| match &cwd {
            Some(cwd) => crate::project::absolute(cwd, p),
            None => p.clone(),
        })
        .collect();
    let workspace_dir = args.workspace.as_ref().map(|p| match &cwd {
        Some(cwd) => crate::project::absolute(cwd, p),
        None => p.clone(),
    });
    if args.record {
        return super::test_live::record(global, args.shard, args.yes, &paths, io);
    }
    if args.live {
        let options = super::test_live::LiveOptions {
            repeat: usize::try_from(args.repeat).unwrap_or(1),
            min_pass_rate: args.min_pass_rate.unwrap_or(1.0),
            yes: args.yes,
        };
        let report = super::test_live::live(global, args.shard, &options, &paths, io)?;
        let text = report
            .0
            .render(test_format(args.format), io.out_style, cwd.as_deref());
        io.out.write_all(text.as_bytes())?;
        return Ok(report.1.unwrap_or_else(|| report.0.exit()));
    }
    if !paths.is_empty() && paths.iter().all(|p| is_cassette(p)) {
        // As given (relative paths stay relative to the current directory): how they
        // are shown.
        return replay_cassettes(global, args, &args.paths, workspace_dir, io);
    }
    let workspace = Workspace::discover(global)?;
    let tools = args.tools;
    let report = run_suite(&workspace, &paths, args.shard, |case, preset| {
        let dir = case.workspace.clone().or_else(|| workspace_dir.clone());
        let options = match (tools, dir) {
            (Tools::Recorded, _) => ReplayOptions {
                tools: ToolsMode::Recorded,
            },
            (Tools::Live, Some(dir)) => ReplayOptions {
                tools: ToolsMode::Live { workspace: dir },
            },
            (Tools::Live, None) => {
                return Err(vec![
                    Diagnostic::new(
                        DiagnosticKind::CasePath,
                        format!(
                            "`--tools live` re-runs the tools of test case `{}` in its workspace, and it names none",
                            case.id
                        ),
                    )
                    .at(case.preset_span())
                    .help("add `workspace: DIR` to the case (a directory beside it), or pass `--workspace DIR`"),
                ]);
            }
        };
        replay::replay_case(case, preset, &options)
    });
    let text = report.render(test_format(args.format), io.out_style, cwd.as_deref());
    io.out.write_all(text.as_bytes())?;
    Ok(report.exit())
}

fn test_format(format: TestOutput) -> TestFormat {
    match format {
        TestOutput::Human => TestFormat::Human,
        TestOutput::Json => TestFormat::Json,
        TestOutput::Github => TestFormat::Github,
        TestOutput::Sarif => TestFormat::Sarif,
        TestOutput::Junit => TestFormat::Junit,
    }
}

/// A cassette given directly rather than a test case.
fn is_cassette(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// The case's preset, validated; else its errors and a `case-unknown-preset` at the
/// case's `preset:` saying the preset is invalid.
pub(super) fn case_preset(
    project: &crate::project::Project,
    case: &TestCase,
) -> Result<crate::preset::validate::ValidPreset, Vec<Diagnostic>> {
    let validation = project.validate(case.preset());
    let Some(preset) = validation.preset else {
        let mut problems: Vec<Diagnostic> = validation
            .diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect();
        problems.push(
            Diagnostic::new(
                DiagnosticKind::CaseUnknownPreset,
                format!(
                    "test case `{}` runs preset `{}`, which is invalid",
                    case.id,
                    case.preset()
                ),
            )
            .at(case.preset_span())
            .help("fix the preset (`agent-presets validate` shows every problem)"),
        );
        return Err(problems);
    };
    Ok(preset)
}

/// `test CASSETTE...`: each cassette replayed on its own (no expectations: it passes
/// when nothing drifted).
fn replay_cassettes(
    global: &GlobalArgs,
    args: &TestArgs,
    paths: &[PathBuf],
    workspace_dir: Option<PathBuf>,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    let tools = match (args.tools, workspace_dir) {
        (Tools::Recorded, _) => ToolsMode::Recorded,
        (Tools::Live, Some(dir)) => ToolsMode::Live { workspace: dir },
        (Tools::Live, None) => {
            return Err(CliError::usage_with(
                "--tools live needs the workspace the tools run in",
                Some("pass `--workspace DIR` (it is copied; the copy is removed after)".into()),
            ));
        }
    };
    let options = ReplayOptions { tools };
    let mut workspace = Workspace::discover(global)?;
    let mut unreadable = 0usize;
    let mut failed = 0usize;
    for path in paths {
        let shown = path.display().to_string();
        let cassette = match replay::load(path) {
            Ok(c) => c,
            Err(d) => {
                unreadable += 1;
                let sources = workspace.presets.source_files();
                let list = [d];
                let renderer = crate::report::HumanRenderer::new(io.err_style, &sources, &list);
                io.err.write_all(renderer.render_all(&list).as_bytes())?;
                writeln!(io.out, "error {shown}: unreadable")?;
                continue;
            }
        };
        let preset = workspace.valid_preset(&cassette.header.preset, io)?;
        let result = replay::replay(&preset, &cassette, &shown, &options);
        if result.passed() {
            writeln!(
                io.out,
                "ok {shown} ({} step{})",
                result.observed.steps,
                if result.observed.steps == 1 { "" } else { "s" }
            )?;
        } else {
            failed += 1;
            let sources = workspace.presets.source_files();
            let renderer =
                crate::report::HumanRenderer::new(io.err_style, &sources, &result.diagnostics);
            io.err
                .write_all(renderer.render_all(&result.diagnostics).as_bytes())?;
            writeln!(io.out, "FAILED {shown}")?;
        }
    }
    let passed = paths.len() - failed - unreadable;
    writeln!(io.out, "{passed} passed, {failed} failed")?;
    Ok(if unreadable > 0 {
        Exit::Usage
    } else if failed > 0 {
        Exit::Invalid
    } else {
        Exit::Ok
    })
}
