//! `--connect` of `lock` and `validate`: ask before starting servers someone else
//! declared, then list them through the library ([`crate::project::connect`]).

use std::io::{BufRead, IsTerminal};

use super::{CliError, Io};
use crate::project::Project;
use crate::project::connect::{self, LiveListings};
use crate::tools::ToolContext;

/// Servers declared in files the user did not write start only with `--yes` or after a
/// "yes" on a terminal; otherwise nothing starts (a usage error).
pub(crate) fn consent(
    project: &Project,
    names: &[String],
    yes: bool,
    io: &mut Io<'_>,
) -> Result<(), CliError> {
    let foreign = connect::foreign_servers(project, names);
    if foreign.is_empty() || yes {
        return Ok(());
    }
    writeln!(
        io.err,
        "`--connect` starts MCP servers declared in files you did not write:"
    )?;
    for f in &foreign {
        writeln!(
            io.err,
            "  {} (preset `{}`, {}): {}",
            f.server, f.preset, f.file, f.what
        )?;
    }
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        write!(io.err, "start them? [y/N] ")?;
        io.err.flush()?;
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() {
            answer.clear();
        }
        if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            return Ok(());
        }
    }
    Err(CliError::usage_with(
        "no MCP server was started: they are declared in files you did not write",
        Some("check the commands and URLs above; pass `--yes` to start them".into()),
    ))
}

/// Start the servers of `names` in the current directory, list them, stop them.
pub(crate) fn list_live(project: &Project, names: &[String]) -> Result<LiveListings, CliError> {
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::usage(format!("cannot determine the current directory: {e}")))?;
    let ctx = ToolContext::new(&cwd).map_err(|e| CliError::usage(e.to_string()))?;
    let vars: Vec<_> = std::env::vars_os().collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("cannot start the async runtime: {e}")))?;
    let sink = stderr_sink();
    Ok(runtime.block_on(connect::list_live(project, names, &ctx, &vars, &sink)))
}

/// Where servers' stderr lines go: this process's stderr, one whole line at a time.
pub(crate) fn stderr_sink() -> crate::mcp::StderrSink {
    std::sync::Arc::new(|_server: &str, line: &str| {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
    })
}

/// Servers' stderr lines held until the output is between lines: during `run` they are
/// printed when no streamed answer or reasoning line is open, so they never land inside
/// one. Bounded per server ([`crate::mcp::HeldStderr`]): a flood is counted, not kept.
#[derive(Clone, Default)]
pub(crate) struct HeldLines(crate::mcp::HeldStderr);

impl HeldLines {
    /// A sink that holds each line.
    pub(crate) fn sink(&self) -> crate::mcp::StderrSink {
        self.0.sink()
    }

    /// Write the held lines to `err` (and what was dropped).
    pub(crate) fn flush(&self, err: &mut dyn std::io::Write) {
        for line in self.0.release() {
            let _ = writeln!(err, "{line}");
        }
    }
}
