//! `test CASSETTE...`: replay recorded runs offline (no key, no socket, no server or
//! command started) and report each one that drifted. Exit codes: 0 every replay
//! passed, 1 one drifted or a recorded call would be refused, 2 a cassette cannot be
//! read (damaged, truncated, another format version) or a usage error.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::testing::replay::{self, ReplayOptions, ToolsMode};

/// Which tools answer the replayed calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Tools {
    /// Every result comes from the cassette.
    Recorded,
    /// Read-only built-in and command tools run again on a copy of `--workspace`.
    Live,
}

/// Arguments of `test`.
#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    /// Cassettes to replay (written by `run --record FILE`).
    #[arg(required = true, value_name = "CASSETTE")]
    paths: Vec<PathBuf>,
    /// `recorded`: feed back the recorded tool results; `live`: re-run the read-only
    /// tools on a temporary copy of `--workspace` and compare their results.
    #[arg(long, value_enum, default_value_t = Tools::Recorded)]
    tools: Tools,
    /// The directory `--tools live` copies and runs the tools in.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
}

pub(crate) fn run(global: &GlobalArgs, args: &TestArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    let tools = match (args.tools, &args.workspace) {
        (Tools::Recorded, _) => ToolsMode::Recorded,
        (Tools::Live, Some(dir)) => ToolsMode::Live {
            workspace: dir.clone(),
        },
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
    for path in &args.paths {
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
    let passed = args.paths.len() - failed - unreadable;
    writeln!(io.out, "{passed} passed, {failed} failed")?;
    Ok(if unreadable > 0 {
        Exit::Usage
    } else if failed > 0 {
        Exit::Invalid
    } else {
        Exit::Ok
    })
}
