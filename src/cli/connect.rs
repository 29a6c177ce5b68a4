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
    // A preset trusted for exactly what it reaches now (`agent-presets trust`, or a
    // "yes" to `run`) is not asked about again.
    let policy = crate::trust::TrustPolicy::from_environment();
    let store = crate::trust::TrustStore::open(policy.config_dir()).ok();
    let foreign = connect::foreign_servers_untrusted(project, names, store.as_ref());
    if foreign.is_empty() || yes {
        return Ok(());
    }
    writeln!(
        io.err,
        "`--connect` starts MCP servers declared in presets you have not trusted yet (a project's or a shared directory's presets can start any program):"
    )?;
    let shown = crate::trust::display::shown;
    for f in &foreign {
        writeln!(
            io.err,
            "  {} (preset `{}`, {}): {}",
            f.server,
            f.preset,
            f.file,
            shown(&f.what)
        )?;
        if !f.pass_env.is_empty() {
            writeln!(io.err, "      passEnv: {}", shown(&f.pass_env.join(", ")))?;
        }
        for (k, v) in &f.env {
            writeln!(io.err, "      env: {}={}", shown(k), shown(v))?;
        }
        for (h, from) in &f.headers {
            writeln!(io.err, "      header {}: {}", shown(h), shown(from))?;
        }
        writeln!(io.err, "      sandbox: {}", f.sandbox)?;
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
        "no MCP server was started: the presets declaring them are not trusted yet",
        Some("check the commands and URLs above; pass `--yes` to start them, or trust the preset for what it reaches with `agent-presets trust FILE`".into()),
    ))
}

/// Start the servers of `names` in the current directory, list them, stop them.
pub(crate) fn list_live(project: &Project, names: &[String]) -> Result<LiveListings, CliError> {
    // The workspace as `run` takes it (absolute, links resolved), contained as `run`
    // contains; each server then starts in its preset's sandbox and environment rules
    // (`connect::program_context`).
    let cwd = crate::project::run_setup::working_directory(None)?;
    let ctx = ToolContext::new(&cwd).map_err(|e| CliError::usage(e.to_string()))?;
    let ctx = crate::project::run_setup::with_containment_from_env(ctx)?;
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
