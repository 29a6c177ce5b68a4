//! `run NAME "prompt"`: talk to the preset's model. Each step sends exactly what `render`
//! shows (plus the history), streams the answer to stdout, runs the tools the model calls
//! (only the visible ones), and stops at a final answer or `--max-steps`.
//!
//! stdout carries the answer (or, with `--json`, the transcript as JSON lines); stderr
//! carries progress: tool calls, retries, and a summary per step (tokens in/out, cached
//! tokens, time). Exit codes: 0 answered, 1 failed run (API error, missing key, step
//! limit, invalid preset), 2 usage, 130 interrupted (Ctrl-C, SIGINT), 143 SIGTERM,
//! 129 SIGHUP. On any of those three signals every running command is killed (with
//! everything it started) before `run` exits.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::{Value, json};

use super::values::{ModelArgs, ValueArgs, lint_endpoint, render_failed};
use super::waiting::Waiting;
use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::agent::{
    APPROVAL_VARIABLE, Agent, AgentError, AgentEvent, Approval, ApprovalPolicy, ApproveAll,
    Outcome, RefuseChanges, RequestHeader, SystemPromptReason, ToolApproval,
};
use crate::client::{ClientError, ClientOptions, ModelClient};
use crate::project::connect::{RunServers, RunServersError};
use crate::project::environment;
use crate::prompt::{ContextSnapshot, MODEL_VARIABLE, PROVIDER_VARIABLE};
use crate::provider::{FinishReason, StreamEvent, Usage};
use crate::redact::{
    DisplayContext, DisplayPiece, Redactor, StreamRedactor, display_pieces, escaped,
};
use crate::report::Style;
use crate::report::mask;
use crate::request::{Message, Role, ToolCall};
use crate::secrets::mask_secrets;
use crate::tools::{ToolContext, ToolDefinition};

/// Arguments of `run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The preset to run.
    name: String,
    /// What to ask the agent.
    prompt: String,
    #[command(flatten)]
    values: ValueArgs,
    #[command(flatten)]
    model: ModelArgs,
    /// Read the API key from this environment variable instead of the preset's
    /// `model.apiKeyEnv` (or the provider's default).
    #[arg(long, value_name = "NAME", value_parser = parse_env_name)]
    api_key_env: Option<String>,
    /// Stop after this many model requests.
    #[arg(long, value_name = "N", default_value_t = crate::agent::DEFAULT_MAX_STEPS as u64, value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: u64,
    /// Run at most this many tool calls of one answer; the rest are refused to the model.
    #[arg(long, value_name = "N", default_value_t = crate::agent::DEFAULT_MAX_TOOL_CALLS as u64, value_parser = clap::value_parser!(u64).range(1..))]
    max_tool_calls: u64,
    /// Run tools that change files or run commands without asking.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Write the transcript to stdout as JSON lines instead of the streamed answer.
    #[arg(long)]
    json: bool,
    /// Ask for whole answers instead of streamed ones.
    #[arg(long)]
    no_stream: bool,
    /// Retries of a request that failed before any answer arrived (429, 5xx, network).
    #[arg(long, value_name = "N", default_value_t = ClientOptions::default().max_retries)]
    max_retries: usize,
    /// Give up on a request after this many seconds.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,
    /// Allow a plain `http://` base URL for a host other than this machine's loopback.
    #[arg(long)]
    allow_insecure: bool,
    /// The sandbox commands run in: `read-only`, `workspace-write` or `full-access`. Only
    /// stricter than the preset's (default `workspace-write`), except an explicit
    /// `full-access`, which runs commands without a sandbox.
    #[arg(long, value_name = "MODE")]
    sandbox: Option<String>,
    /// Run even when a tool of an MCP server differs from what `presets.lock` pins (the
    /// pinned definition is sent; the live server is called).
    #[arg(long)]
    allow_tool_drift: bool,
}

pub(crate) fn run(global: &GlobalArgs, args: &RunArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    args.values.check_stdin(&args.name)?;
    let mut workspace = Workspace::discover(global)?;
    workspace.presets.set_locale(args.values.locale.clone());
    let preset = workspace.valid_preset(&args.name, io)?;
    args.values.refuse_model_vars()?;
    let Some(mut settings) = args.values.model_settings(&preset, &args.model)? else {
        return Err(CliError::usage_with(
            format!("preset `{}` names no model to run", preset.name()),
            Some(
                "pass `--provider NAME --model NAME`, or add a `model` block to the preset".into(),
            ),
        ));
    };
    // The user's own choice on the command line: it needs no trust.
    if let Some(name) = &args.api_key_env {
        settings.api_key_env = Some(name.clone());
    }
    // The endpoint may not be the one the preset was validated against.
    let linted = lint_endpoint(&preset, &settings, &workspace, io)?;
    // Nothing is sent or started for a preset the user has not trusted (see `trust`).
    let gate = super::trust::RunGate {
        arg: &args.name,
        allow_insecure: args.allow_insecure,
        json: args.json,
    };
    if let Some(exit) = super::trust::admit_run(global, &workspace, &preset, &settings, gate, io)? {
        return Ok(exit);
    }
    let cwd = working_directory(args.values.cwd.as_deref())?;
    let cwd_text = cwd.to_string_lossy().into_owned();
    let mut values = args.values.values(&preset, cwd_text.clone())?;
    values.set(PROVIDER_VARIABLE, settings.provider.as_str());
    values.set(MODEL_VARIABLE, settings.name.clone());
    let sandbox = sandbox_profile(&preset, args.sandbox.as_deref(), &cwd)?;
    values.set("sandbox", sandbox.mode().as_str());
    // The policy the approver below follows, as the agent sets it on every later step.
    values.set(APPROVAL_VARIABLE, approval_policy(args.yes).as_str());
    // Everything that can fail without the network fails now: the first step renders.
    let first_step = preset
        .assembler()
        .assemble(&values)
        .map_err(|ds| render_failed(ds, &workspace))?;

    let mut options = ClientOptions {
        max_retries: args.max_retries,
        stream: !args.no_stream,
        ..ClientOptions::default()
    };
    if let Some(seconds) = args.timeout {
        options.request_timeout = Duration::from_secs(seconds);
    }
    let mut printer = Printer::new(args.json, io.out_style, io.err_style);
    printer.key_env = settings.api_key_env.clone();
    let client = match ModelClient::from_env(settings.clone(), options) {
        Ok(c) => c,
        Err(e) => {
            printer.failed(io, &e.to_string());
            if args.api_key_env.is_some() {
                return Ok(report_flag_key_error(&e, io));
            }
            return Ok(report_client_error(&e, io));
        }
    };
    printer.set_redactor(client.redactor().clone());
    let tools = ToolContext::new(&cwd)
        .map_err(|e| {
            CliError::usage_with(
                e.to_string(),
                Some("pass an existing directory with `--cwd DIR`".into()),
            )
        })?
        .with_passed_env(preset.pass_env())
        .with_hidden_env(settings.api_key_env.clone())
        .with_sandbox(sandbox);
    let tools = with_containment_from_env(tools)?;
    let mut approval: Box<dyn ToolApproval> = match approval_policy(args.yes) {
        ApprovalPolicy::Yes => Box::new(ApproveAll),
        ApprovalPolicy::Ask => Box::new(TerminalApproval::new(
            client.redactor().clone(),
            std::sync::Arc::clone(preset.assembler().texts()),
        )),
        ApprovalPolicy::Refuse => Box::new(RefuseChanges::no_terminal(preset.assembler().texts())),
    };

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("cannot start the async runtime: {e}")))?;
    // The MCP servers whose tools the run can call, started in parallel; their calls go
    // to the live sessions.
    let held = super::connect::HeldLines::default();
    let started = start_mcp_servers(
        &runtime,
        &workspace,
        preset,
        &tools,
        (args.allow_tool_drift, held.sink()),
        io,
    );
    held.flush(&mut *io.err);
    let (mut servers, assembler) = started?;
    let max_steps = usize::try_from(args.max_steps).unwrap_or(usize::MAX);
    let mut agent = Agent::new(&assembler, &client, tools)
        .with_max_steps(max_steps)
        .with_max_tool_calls(usize::try_from(args.max_tool_calls).unwrap_or(usize::MAX))
        .with_linted_tools(&linted)
        .with_first_step(first_step);
    let mut history = Vec::new();
    let mut snapshot = ContextSnapshot::new();
    let mut step_values = |_step: usize| {
        // Runtime facts are read again each step; only the snapshot carries changes.
        let mut v = values.clone();
        let pinned_date = args.values.pins("date");
        if !pinned_date {
            v.set("date", environment::today_utc());
        }
        v
    };
    let waiting = Waiting::new(
        format!(
            "waiting for {}…",
            shown_line(client.redactor(), &settings.name, 80, io.err_style)
        ),
        !args.json && std::io::stderr().is_terminal(),
    );
    let mut on_event = |event: AgentEvent<'_>| {
        waiting.before(&event, &mut *io.err);
        printer.event(event, io);
        if printer.between_lines() {
            held.flush(&mut *io.err);
        }
    };
    let mut stopped_by = None;
    let outcome = runtime.block_on(async {
        let run = agent.run(
            &args.prompt,
            &mut history,
            &mut snapshot,
            &mut step_values,
            approval.as_mut(),
            &mut on_event,
        );
        tokio::select! {
            result = run => Some(result),
            signal = stop_signal() => {
                stopped_by = Some(signal);
                None
            }
            _ = waiting.tick() => None,
        }
        // Dropping `run` here dropped every running tool call: their commands are killed
        // and their cgroups removed before `run` returns.
    });
    waiting.clear(&mut *io.err);
    // Done or interrupted: every server is shut down before `run` returns.
    runtime.block_on(servers.shutdown());
    printer.end_text(io);
    held.flush(&mut *io.err);
    let exit = match outcome {
        None => {
            let signal = stopped_by.unwrap_or(StopSignal::Interrupt);
            printer.interrupted(io, signal);
            let _ = writeln!(
                io.err,
                "{}: interrupted ({})",
                io.err_style.error("error"),
                signal.name()
            );
            signal.exit()
        }
        Some(Ok(Outcome::Answered { steps, finish, .. })) => {
            if finish == FinishReason::Length {
                let _ = writeln!(
                    io.err,
                    "{}: the answer was cut at the output token limit; raise `model.maxTokens` or `--max-tokens`",
                    io.err_style.warning("warning")
                );
            } else if finish == FinishReason::ContentFilter {
                let _ = writeln!(
                    io.err,
                    "{}: the provider filtered or refused the answer",
                    io.err_style.warning("warning")
                );
            }
            printer.done(io, "answered", Some(steps));
            Exit::Ok
        }
        Some(Ok(Outcome::StepLimit { steps })) => {
            printer.done(io, "step-limit", Some(steps));
            let _ = writeln!(
                io.err,
                "{}: stopped after {steps} step{} without a final answer",
                io.err_style.error("error"),
                if steps == 1 { "" } else { "s" }
            );
            let _ = writeln!(
                io.err,
                "  = {}: raise `--max-steps` to let the agent go on",
                io.err_style.bold("help")
            );
            Exit::Invalid
        }
        Some(Err(AgentError::Client(e))) => {
            printer.failed(io, &e.to_string());
            report_client_error(&e, io)
        }
        Some(Err(AgentError::Assemble(ds))) => {
            printer.failed(io, &ds.to_string());
            return Err(render_failed(ds, &workspace));
        }
        Some(Err(AgentError::ToolsRefused(ds))) => {
            printer.failed(io, &ds.to_string());
            return Err(CliError::Diagnostics {
                list: ds.into_vec(),
                exit: Exit::Invalid,
                sources: workspace.presets.source_files(),
            });
        }
    };
    Ok(exit)
}

/// Start the MCP servers `preset`'s visible tools come from (none when it shows no MCP
/// tool) and route those tools' calls to them; a tool whose live definition differs from
/// the lock refuses the run unless `allow_drift` (then a warning names it). The servers'
/// stderr lines go to `sink`.
fn start_mcp_servers(
    runtime: &tokio::runtime::Runtime,
    workspace: &Workspace,
    preset: crate::preset::ValidPreset,
    tools: &ToolContext,
    (allow_drift, sink): (bool, crate::mcp::StderrSink),
    io: &mut Io<'_>,
) -> Result<(RunServers, crate::prompt::PromptAssembler), CliError> {
    let vars: Vec<_> = std::env::vars_os().collect();
    let listings = workspace.tools.listings();
    let start = RunServers::start(&preset, listings, tools, &vars, allow_drift, &sink);
    // A signal while the servers start stops them (dropping the start kills what has
    // started) and ends the run as a signal during the run does.
    let started = runtime.block_on(async {
        tokio::select! {
            result = start => Ok(result),
            signal = stop_signal() => Err(signal),
        }
    });
    let started = match started {
        Ok(result) => result,
        Err(signal) => {
            writeln!(
                io.err,
                "{}: interrupted ({}) while the MCP servers were starting",
                io.err_style.error("error"),
                signal.name()
            )?;
            return Err(CliError::Diagnostics {
                list: Vec::new(),
                exit: signal.exit(),
                sources: workspace.presets.source_files(),
            });
        }
    };
    let servers = started.map_err(|e| match e {
        RunServersError::Drift { .. } => CliError::Diagnostics {
            list: vec![
                crate::diagnostic::Diagnostic::new(
                    crate::diagnostic::DiagnosticKind::ToolDrift,
                    e.to_string(),
                )
                .help(e.help().unwrap_or_default()),
            ],
            exit: Exit::Invalid,
            sources: workspace.presets.source_files(),
        },
        other => CliError::usage_with(other.to_string(), other.help()),
    })?;
    for (tool, what) in &servers.drifted {
        writeln!(
            io.err,
            "{}: `{tool}` differs from presets.lock ({what}); sending the pinned definition (`--allow-tool-drift`)",
            io.err_style.warning("warning")
        )?;
    }
    let assembler = servers.attach(preset.into_assembler());
    Ok((servers, assembler))
}

/// `yes` with `--yes`; else `ask` when there is a terminal to ask on; else `refuse`.
fn approval_policy(yes: bool) -> ApprovalPolicy {
    if yes {
        ApprovalPolicy::Yes
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        ApprovalPolicy::Ask
    } else {
        ApprovalPolicy::Refuse
    }
}

/// A signal that ends `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StopSignal {
    Interrupt,
    Terminate,
    HangUp,
}

impl StopSignal {
    fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
            StopSignal::HangUp => "SIGHUP",
        }
    }

    /// 128 + the signal's number, as shells report it.
    fn exit(self) -> Exit {
        match self {
            StopSignal::Interrupt => Exit::Interrupted,
            StopSignal::Terminate => Exit::Terminated,
            StopSignal::HangUp => Exit::HungUp,
        }
    }
}

/// The first of SIGINT (Ctrl-C), SIGTERM and SIGHUP to arrive. Their handlers are
/// installed when this is first polled (with the agent's first step), so from then on
/// none of them ends the process before the running commands are killed.
async fn stop_signal() -> StopSignal {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            return tokio::select! {
                _ = tokio::signal::ctrl_c() => StopSignal::Interrupt,
                _ = term.recv() => StopSignal::Terminate,
                _ = hup.recv() => StopSignal::HangUp,
            };
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    StopSignal::Interrupt
}

/// The sandbox commands run in: the preset's mode (`sandbox`, default `workspace-write`)
/// or `--sandbox MODE` when that is stricter, or `--sandbox full-access` (an explicit
/// choice to run unconfined); the preset's `allowRead`, relative paths resolved against
/// the working directory `cwd`.
fn sandbox_profile(
    preset: &crate::preset::ValidPreset,
    flag: Option<&str>,
    cwd: &std::path::Path,
) -> Result<crate::tools::sandbox::SandboxProfile, CliError> {
    use crate::tools::sandbox::{SandboxMode, SandboxProfile};
    let own = preset.sandbox_mode();
    let mode = match flag {
        None => own,
        Some(text) => {
            let asked: SandboxMode = text.parse().map_err(|e: String| {
                CliError::usage_with(
                    format!("--sandbox: {e}"),
                    Some("e.g. `--sandbox read-only`".into()),
                )
            })?;
            if asked != SandboxMode::FullAccess && !asked.at_least_as_strict_as(own) {
                return Err(CliError::usage_with(
                    format!(
                        "--sandbox {asked} is weaker than the preset's `{own}` sandbox; --sandbox can only make it stricter"
                    ),
                    Some(format!(
                        "choose `{own}` or stricter, or run commands without a sandbox explicitly with `--sandbox full-access`"
                    )),
                ));
            }
            asked
        }
    };
    let allow_read: Vec<PathBuf> = preset.allow_read().iter().map(|p| cwd.join(p)).collect();
    Ok(SandboxProfile::new(mode).with_allow_read(allow_read))
}

/// `AGENT_PRESETS_CONTAINMENT=cgroup|subreaper|process-group` chooses how commands are
/// contained instead of the best the host allows (for tests and debugging; a
/// containment the host cannot provide falls back to the next weaker one).
fn with_containment_from_env(tools: ToolContext) -> Result<ToolContext, CliError> {
    match std::env::var("AGENT_PRESETS_CONTAINMENT") {
        Ok(name) => {
            let containment = name.parse().map_err(|e: String| {
                CliError::usage_with(
                    format!("AGENT_PRESETS_CONTAINMENT: {e}"),
                    Some("unset it to use the best containment the host allows".into()),
                )
            })?;
            Ok(tools.with_containment(containment))
        }
        Err(std::env::VarError::NotPresent) => Ok(tools),
        Err(std::env::VarError::NotUnicode(_)) => Err(CliError::usage(
            "AGENT_PRESETS_CONTAINMENT is not valid UTF-8; expected `cgroup`, `subreaper` or `process-group`",
        )),
    }
}

/// `--cwd` or the current directory, which must exist, made absolute (symlinks
/// resolved) before anything is rendered. `render` checks it alike, so it shows the
/// directory `run` would send.
pub(crate) fn working_directory(dir: Option<&str>) -> Result<PathBuf, CliError> {
    let given = match dir {
        Some(d) => PathBuf::from(d),
        None => std::env::current_dir()
            .map_err(|e| CliError::usage(format!("cannot determine the current directory: {e}")))?,
    };
    let absolute = given.canonicalize().map_err(|e| {
        CliError::usage_with(
            format!(
                "the working directory `{}` cannot be used: {e}",
                given.display()
            ),
            Some("pass an existing directory with `--cwd DIR`".into()),
        )
    })?;
    if !absolute.is_dir() {
        return Err(CliError::usage(format!(
            "the working directory `{}` is not a directory",
            given.display()
        )));
    }
    Ok(absolute)
}

/// `--api-key-env NAME`: a name a variable can have (not empty, no `=`, no NUL).
fn parse_env_name(name: &str) -> Result<String, String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return Err("an environment variable's name: not empty, without `=`".into());
    }
    Ok(name.to_owned())
}

/// A client error when the key's variable came from `--api-key-env`: a missing key is
/// the flag's variable, not the preset's.
fn report_flag_key_error(e: &ClientError, io: &mut Io<'_>) -> Exit {
    let ClientError::MissingApiKey { var, .. } = e else {
        return report_client_error(e, io);
    };
    let _ = writeln!(
        io.err,
        "{}: {}",
        io.err_style.error("error"),
        mask(&e.to_string())
    );
    let _ = writeln!(
        io.err,
        "  = {}: export {var}=<your key>, or pass the variable that holds it with `--api-key-env NAME`",
        io.err_style.bold("help")
    );
    Exit::Invalid
}

fn report_client_error(e: &ClientError, io: &mut Io<'_>) -> Exit {
    let _ = writeln!(
        io.err,
        "{}: {}",
        io.err_style.error("error"),
        mask(&e.to_string())
    );
    if let Some(help) = e.help() {
        let _ = writeln!(io.err, "  = {}: {help}", io.err_style.bold("help"));
    }
    Exit::Invalid
}

/// Asks on the terminal before a tool that changes things runs. The whole call is shown
/// ([`approval_lines`]): wrapped, never cut, with control, bidirectional and invisible
/// characters escaped and long runs of spaces counted. A call too long for one screen is
/// refused without asking: the user could not see what they approve.
#[derive(Debug)]
struct TerminalApproval {
    /// Tools the user allowed for the rest of the run.
    always: Vec<String>,
    /// Masks the key in what is shown.
    redactor: Redactor,
    /// What the model is told when a call is refused.
    texts: std::sync::Arc<crate::texts::Texts>,
}

impl TerminalApproval {
    fn new(redactor: Redactor, texts: std::sync::Arc<crate::texts::Texts>) -> Self {
        TerminalApproval {
            always: Vec::new(),
            redactor,
            texts,
        }
    }
}

impl ToolApproval for TerminalApproval {
    fn review(&mut self, call: &ToolCall, tool: &ToolDefinition) -> Approval {
        let name = tool.name().as_str();
        if self.always.iter().any(|t| t == name) {
            return Approval::Allow;
        }
        let style = Style::detect(true);
        let (columns, rows) = terminal_size();
        let shown_name = shown_line(&self.redactor, name, 64, style);
        // Far more than any screen shows is not laid out at all.
        let lines = (call.arguments.len() <= MAX_REVIEW_BYTES)
            .then(|| approval_lines(&self.redactor, &call.arguments, columns, style));
        let mut err = std::io::stderr().lock();
        // The blank line, the header, the arguments and the question fit on one screen.
        let needed = lines.as_ref().map_or(usize::MAX, |l| l.len() + 3);
        if needed > rows {
            let size = match &lines {
                Some(l) => format!("{} lines", l.len()),
                None => format!("{} bytes", call.arguments.len()),
            };
            let model_size = match &lines {
                Some(l) => self.texts.render(
                    &crate::texts::AGENT_SIZE_LINES,
                    &[("count", &l.len().to_string())],
                ),
                None => self.texts.render(
                    &crate::texts::AGENT_SIZE_BYTES,
                    &[("count", &call.arguments.len().to_string())],
                ),
            };
            let _ = writeln!(
                err,
                "\n{}: `{shown_name}` was not run: its arguments take {size}, more than this terminal shows ({rows} rows), so they cannot be reviewed here\n  = {}: rerun with `--yes` if you trust the agent, or use a larger terminal",
                style.warning("refused"),
                style.bold("help"),
            );
            let _ = err.flush();
            return Approval::Refuse(self.texts.render(
                &crate::texts::AGENT_REFUSED_TOO_LONG_TO_REVIEW,
                &[
                    ("tool", name),
                    ("size", &model_size),
                    ("rows", &rows.to_string()),
                ],
            ));
        }
        discard_typed_ahead();
        let _ = writeln!(err, "\n{} `{shown_name}`:", style.bold("run"));
        for line in lines.iter().flatten() {
            let _ = writeln!(err, "{line}");
        }
        let _ = write!(err, "[y]es / [n]o / [a]lways for `{shown_name}`: ");
        let _ = err.flush();
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() {
            answer.clear();
        }
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Approval::Allow,
            "a" | "always" => {
                self.always.push(name.to_owned());
                Approval::Allow
            }
            _ => Approval::Refuse(
                self.texts
                    .render(&crate::texts::AGENT_REFUSED_DECLINED, &[("tool", name)]),
            ),
        }
    }
}

/// The terminal's columns and rows (stderr's, else 80×24).
fn terminal_size() -> (usize, usize) {
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` to the pointer, which lives for the call.
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    let columns = if ok && size.ws_col > 0 {
        usize::from(size.ws_col)
    } else {
        80
    };
    let rows = if ok && size.ws_row > 0 {
        usize::from(size.ws_row)
    } else {
        24
    };
    (columns, rows)
}

/// Drop what was typed before the call is shown: a `y` typed ahead must not approve a
/// call the user has not seen.
fn discard_typed_ahead() {
    // SAFETY: tcflush only takes a descriptor and a constant.
    let _ = unsafe { libc::tcflush(libc::STDIN_FILENO, libc::TCIFLUSH) };
}

/// Arguments longer than this are refused for review unread: no screen shows them.
const MAX_REVIEW_BYTES: usize = 256 * 1024;

/// Runs of this many spaces or more are shown as `␠×N`.
const SPACE_RUN: usize = 4;

/// One shown unit of an approval line: text (possibly styled) and its width in columns,
/// or a forced line break (after an escaped newline).
enum Cell {
    Text(String, usize),
    Break,
}

/// The arguments of a call as the approval prompt shows them: each field of a JSON
/// object on its own (`  field:` then its value, string values as their text), else the
/// raw text; the key and known secret formats masked, control, bidirectional and
/// invisible characters escaped and marked, runs of [`SPACE_RUN`] or more spaces shown
/// as `␠×N`, every value wrapped to `columns` (indented by four), never cut.
fn approval_lines(
    redactor: &Redactor,
    arguments: &str,
    columns: usize,
    style: Style,
) -> Vec<String> {
    let width = columns.saturating_sub(4).max(8);
    let mut lines = Vec::new();
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(fields)) => {
            for (key, value) in fields {
                lines.push(format!("  {}:", shown_line(redactor, &key, width, style)));
                let text = match value {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                lines.extend(wrapped(&visible_cells(redactor, &text, style), width));
            }
        }
        _ => lines.extend(wrapped(&visible_cells(redactor, arguments, style), width)),
    }
    lines
}

fn visible_cells(redactor: &Redactor, text: &str, style: Style) -> Vec<Cell> {
    let redacted = redactor.redact(text);
    let masked = mask_secrets(&redacted);
    let mut cells = Vec::new();
    let mut spaces = 0;
    let flush_spaces = |cells: &mut Vec<Cell>, spaces: &mut usize| {
        if *spaces >= SPACE_RUN {
            let marker = format!("␠×{spaces}");
            let width = marker.chars().count();
            cells.push(Cell::Text(style.warning(marker), width));
        } else {
            cells.extend((0..*spaces).map(|_| Cell::Text(" ".to_owned(), 1)));
        }
        *spaces = 0;
    };
    for piece in display_pieces(&masked, DisplayContext::Strict) {
        match piece {
            DisplayPiece::Plain(s) => {
                for c in s.chars() {
                    if c == ' ' {
                        spaces += 1;
                        continue;
                    }
                    flush_spaces(&mut cells, &mut spaces);
                    cells.push(Cell::Text(c.to_string(), char_width(c)));
                }
            }
            DisplayPiece::Escaped(c) => {
                flush_spaces(&mut cells, &mut spaces);
                let e = escaped(c);
                let width = e.len();
                cells.push(Cell::Text(style.warning(e), width));
                if c == '\n' {
                    cells.push(Cell::Break);
                }
            }
        }
    }
    flush_spaces(&mut cells, &mut spaces);
    cells
}

/// `cells` in lines of at most `width` columns, each indented by four spaces.
fn wrapped(cells: &[Cell], width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::from("    ");
    let mut used = 0;
    for cell in cells {
        match cell {
            Cell::Break => {
                lines.push(std::mem::replace(&mut line, String::from("    ")));
                used = 0;
            }
            Cell::Text(text, w) => {
                if used > 0 && used + w > width {
                    lines.push(std::mem::replace(&mut line, String::from("    ")));
                    used = 0;
                }
                line.push_str(text);
                used += w;
            }
        }
    }
    if used > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Columns a character takes: two for East Asian wide and emoji blocks, else one (an
/// overestimate for combining marks, which only makes a prompt look longer).
fn char_width(c: char) -> usize {
    match u32::from(c) {
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD => 2,
        _ => 1,
    }
}

/// Model text for a terminal: the key masked, known secret formats masked (as
/// [`mask_secrets`] always did for what `run` prints), and characters that could drive or
/// mislead the terminal escaped and marked.
fn shown(text: &str, context: DisplayContext, style: Style) -> String {
    let masked = mask_secrets(text);
    let mut out = String::with_capacity(masked.len());
    for piece in display_pieces(&masked, context) {
        match piece {
            DisplayPiece::Plain(s) => out.push_str(s),
            DisplayPiece::Escaped(c) => out.push_str(&style.warning(escaped(c))),
        }
    }
    out
}

/// `text` redacted, escaped and on one line (runs of spaces counted as in the approval
/// prompt), at most `max` columns, then `…`. Only a prefix is looked at, long enough that
/// a secret crossing the cut is still recognised.
fn shown_line(redactor: &Redactor, text: &str, max: usize, style: Style) -> String {
    // A run of spaces counts as one character here: it is shown as one `␠×N`.
    let mut budget = max + redactor.longest_pattern() + 64;
    let mut cut = text.len();
    let mut after_space = false;
    for (i, c) in text.char_indices() {
        if c == ' ' && after_space {
            continue;
        }
        after_space = c == ' ';
        if budget == 0 {
            cut = i;
            break;
        }
        budget -= 1;
    }
    let (text, more) = (&text[..cut], cut < text.len());
    let mut out = String::new();
    let mut used = 0;
    for cell in visible_cells(redactor, text, style) {
        if let Cell::Text(shown, width) = cell {
            if used + width > max {
                out.push('…');
                return out;
            }
            out.push_str(&shown);
            used += width;
        }
    }
    if more {
        out.push('…');
    }
    out
}

/// Renders agent events: the answer to stdout and progress to stderr, or JSON lines.
/// Everything from the model goes through the client's [`Redactor`] (streamed text and
/// reasoning through a [`StreamRedactor`] each, so a key split across pieces is masked
/// too); human output is also escaped ([`shown`], [`shown_line`]); JSON lines stay exact
/// JSON, with every string redacted.
struct Printer {
    json: bool,
    out_style: Style,
    err_style: Style,
    /// Streamed text is on stdout without its final newline yet.
    text_open: bool,
    /// Reasoning is on stderr without its final newline yet.
    reasoning_open: bool,
    headers: usize,
    /// Calls of the current answer not yet shown with a `→` line (the agent announces
    /// a call only when it runs, so a refused one is shown with its result).
    unannounced: Vec<ToolCall>,
    redactor: Redactor,
    text: StreamRedactor,
    reasoning: StreamRedactor,
    /// The variable the key is read from (its name only), for the run header.
    key_env: Option<String>,
}

impl Printer {
    fn new(json: bool, out_style: Style, err_style: Style) -> Self {
        Printer {
            json,
            out_style,
            err_style,
            text_open: false,
            reasoning_open: false,
            headers: 0,
            unannounced: Vec::new(),
            redactor: Redactor::none(),
            text: Redactor::none().stream(),
            reasoning: Redactor::none().stream(),
            key_env: None,
        }
    }

    fn set_redactor(&mut self, redactor: Redactor) {
        self.text = redactor.stream();
        self.reasoning = redactor.stream();
        self.redactor = redactor;
    }

    fn json_line(&self, io: &mut Io<'_>, value: &Value) {
        let mut value = value.clone();
        self.redactor.redact_json(&mut value);
        let _ = writeln!(io.out, "{value}");
        let _ = io.out.flush();
    }

    /// Write streamed answer text (already redacted) to stdout.
    fn write_text(&mut self, io: &mut Io<'_>, text: &str) {
        if text.is_empty() {
            return;
        }
        let _ = write!(
            io.out,
            "{}",
            shown(text, DisplayContext::Text, self.out_style)
        );
        let _ = io.out.flush();
        self.text_open = !text.ends_with('\n');
    }

    /// Write streamed reasoning (already redacted) to stderr.
    fn write_reasoning(&mut self, io: &mut Io<'_>, text: &str) {
        if text.is_empty() {
            return;
        }
        let style = self.err_style;
        let _ = write!(
            io.err,
            "{}",
            style.dim(shown(text, DisplayContext::Text, style))
        );
        self.reasoning_open = !text.ends_with('\n');
    }

    fn end_reasoning(&mut self, io: &mut Io<'_>) {
        let rest = self.reasoning.finish();
        self.write_reasoning(io, &rest);
        if self.reasoning_open {
            let _ = writeln!(io.err);
            self.reasoning_open = false;
        }
    }

    /// No streamed answer or reasoning line is open: other lines may go to stderr.
    fn between_lines(&self) -> bool {
        !self.text_open && !self.reasoning_open
    }

    fn end_text(&mut self, io: &mut Io<'_>) {
        let rest = self.text.finish();
        self.write_text(io, &rest);
        if self.text_open {
            let _ = writeln!(io.out);
            let _ = io.out.flush();
            self.text_open = false;
        }
        self.end_reasoning(io);
    }

    fn event(&mut self, event: AgentEvent<'_>, io: &mut Io<'_>) {
        if self.json {
            self.json_event(event, io);
        } else {
            self.human_event(event, io);
        }
    }

    fn json_event(&mut self, event: AgentEvent<'_>, io: &mut Io<'_>) {
        let line = match event {
            AgentEvent::RequestHeader { step, header } => {
                let mut line = header_json(step, header);
                line["apiKeyEnv"] = json!(self.key_env);
                line
            }
            AgentEvent::Message { step, message } => message_json(step, message),
            AgentEvent::SystemPrompt { step, reason, text } => system_json(step, reason, text),
            AgentEvent::StepFinished {
                step,
                finish,
                usage,
                elapsed,
            } => json!({
                "type": "step",
                "step": step,
                "finish": finish.to_string(),
                "usage": usage,
                "elapsedMs": elapsed.as_millis() as u64,
            }),
            AgentEvent::Retry {
                step,
                attempt,
                delay,
                error,
            } => json!({
                "type": "retry",
                "step": step,
                "attempt": attempt,
                "delayMs": delay.as_millis() as u64,
                "error": mask(&error.to_string()),
            }),
            AgentEvent::Stream { .. } | AgentEvent::ToolCall { .. } => return,
        };
        self.json_line(io, &line);
    }

    fn human_event(&mut self, event: AgentEvent<'_>, io: &mut Io<'_>) {
        let style = self.err_style;
        match event {
            AgentEvent::Stream {
                event: StreamEvent::Text(t),
                ..
            } => {
                self.end_reasoning(io);
                let safe = self.text.push(t);
                self.write_text(io, &safe);
            }
            AgentEvent::Stream {
                event: StreamEvent::Reasoning(t),
                ..
            } => {
                let safe = self.reasoning.push(t);
                self.write_reasoning(io, &safe);
            }
            AgentEvent::Stream { .. } => {}
            // The header line below says when the prefix changes; the text is in `--json`.
            AgentEvent::SystemPrompt { .. } => {}
            AgentEvent::RequestHeader { header, .. } => {
                self.end_text(io);
                self.headers += 1;
                let what = if self.headers == 1 {
                    "model"
                } else {
                    "the request header changed; the provider's prompt cache starts over"
                };
                let _ = writeln!(
                    io.err,
                    "{} {} · {} · {} tools · prefix {}{}",
                    style.dim(format!("{what}:")),
                    header.provider,
                    shown_line(&self.redactor, &header.model, 200, style),
                    header.tools.len(),
                    short_fingerprint(&header.fingerprint),
                    key_note(self.key_env.as_deref(), &self.redactor, style)
                );
            }
            AgentEvent::ToolCall { call, .. } => {
                self.end_text(io);
                self.unannounced.retain(|c| c.id != call.id);
                call_line(call, &self.redactor, style, io);
            }
            AgentEvent::Message { message, .. } if message.role == Role::Assistant => {
                self.unannounced = message.tool_calls.clone();
            }
            AgentEvent::Message { message, .. } if message.role == Role::Tool => {
                self.end_text(io);
                if let Some(i) = self
                    .unannounced
                    .iter()
                    .position(|c| Some(&c.id) == message.tool_call_id.as_ref())
                {
                    let call = self.unannounced.remove(i);
                    call_line(&call, &self.redactor, style, io);
                }
                let first = message.content.lines().next().unwrap_or_default();
                let lines = message.content.lines().count();
                let summary = if message.is_error {
                    style.error(format!(
                        "✗ {}",
                        shown_line(&self.redactor, first, 160, style)
                    ))
                } else {
                    style.dim(format!(
                        "✓ {lines} line{}",
                        if lines == 1 { "" } else { "s" }
                    ))
                };
                let _ = writeln!(io.err, "  {summary}");
            }
            AgentEvent::Message { .. } => {}
            AgentEvent::Retry {
                attempt,
                delay,
                error,
                ..
            } => {
                self.end_text(io);
                let _ = writeln!(
                    io.err,
                    "{}: {}; retrying in {:.1} s (attempt {} failed)",
                    style.warning("retry"),
                    mask(&self.redactor.redact(&error.to_string())),
                    delay.as_secs_f64(),
                    attempt
                );
            }
            AgentEvent::StepFinished {
                step,
                usage,
                elapsed,
                ..
            } => {
                self.end_text(io);
                let _ = writeln!(
                    io.err,
                    "{}",
                    style.dim(step_summary(step, usage.as_ref(), elapsed))
                );
            }
        }
    }

    fn done(&mut self, io: &mut Io<'_>, outcome: &str, steps: Option<usize>) {
        if self.json {
            self.json_line(
                io,
                &json!({"type": "done", "outcome": outcome, "steps": steps}),
            );
        }
    }

    /// The `done` event of a run ended by a signal.
    fn interrupted(&mut self, io: &mut Io<'_>, signal: StopSignal) {
        if self.json {
            self.json_line(
                io,
                &json!({"type": "done", "outcome": "interrupted", "steps": null, "signal": signal.name()}),
            );
        }
    }

    /// The `done` event of a run that failed, with what went wrong (secrets masked), so
    /// a transcript says why it ends.
    fn failed(&mut self, io: &mut Io<'_>, error: &str) {
        if self.json {
            self.json_line(
                io,
                &json!({"type": "done", "outcome": "error", "steps": null, "error": mask(error)}),
            );
        }
    }
}

/// `→ name {arguments}` on stderr: a call the model made, redacted, escaped, cut.
fn call_line(call: &ToolCall, redactor: &Redactor, style: Style, io: &mut Io<'_>) {
    let _ = writeln!(
        io.err,
        "{} {} {}",
        style.bold("→"),
        style.bold(shown_line(redactor, &call.name, 64, style)),
        style.dim(shown_line(redactor, &call.arguments, 200, style))
    );
}

/// `sha256:` and the first 12 hex digits: enough to tell prefixes apart at a glance (the
/// full one is in `--json`).
fn short_fingerprint(fingerprint: &crate::request::Fingerprint) -> String {
    let mut out = String::from("sha256:");
    for b in &fingerprint.as_bytes()[..6] {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// ` · key from NAME`: which variable the key is read from (never its value).
fn key_note(var: Option<&str>, redactor: &Redactor, style: Style) -> String {
    var.map(|v| format!(" · key from {}", shown_line(redactor, v, 64, style)))
        .unwrap_or_default()
}

fn step_summary(step: usize, usage: Option<&Usage>, elapsed: Duration) -> String {
    let tokens = match usage {
        Some(u) => format!(
            "{} in ({} cached) · {} out",
            group(u.input_tokens),
            group(u.cached_tokens),
            group(u.output_tokens)
        ),
        None => "no token counts reported".to_owned(),
    };
    format!("step {step} · {tokens} · {:.1} s", elapsed.as_secs_f64())
}

/// `12345` → `12,345`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn header_json(step: usize, header: &RequestHeader) -> Value {
    let mut value = json!({"type": "request-header", "step": step});
    if let (Some(obj), Ok(Value::Object(fields))) =
        (value.as_object_mut(), serde_json::to_value(header))
    {
        obj.extend(fields);
    }
    value
}

/// `{"type": "system-prompt", "step", "reason", "variables"?, "text"}`: `variables` names
/// what changed for `variables-changed`.
fn system_json(step: usize, reason: &SystemPromptReason, text: &str) -> Value {
    let mut value = json!({"type": "system-prompt", "step": step, "reason": reason.as_str()});
    if let SystemPromptReason::VariablesChanged(names) = reason {
        value["variables"] = json!(names);
    }
    value["text"] = json!(text);
    value
}

fn message_json(step: usize, message: &Message) -> Value {
    let mut value = json!({"type": "message", "step": step});
    if let (Some(obj), Ok(Value::Object(fields))) =
        (value.as_object_mut(), serde_json::to_value(message))
    {
        obj.extend(fields);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }

    const KEY: &str = "sk-unit-0123456789abcdefghijkl";

    #[test]
    fn the_approval_lines_show_everything_wrapped() {
        let r = Redactor::new([KEY]);
        let command = format!(
            "printf '%s' {}{}; rm -rf x\u{2067}\n  next {KEY}",
            "a".repeat(100),
            " ".repeat(300)
        );
        let args = json!({"command": command, "timeout": 5}).to_string();
        let lines = approval_lines(&r, &args, 40, Style::plain());
        let text = lines.join("\n");
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{text}");
        assert_eq!(lines[0], "  command:");
        // Every character is there, in order, once the wrapping is undone.
        let joined: String = lines[1..]
            .iter()
            .take_while(|l| l.starts_with("    "))
            .map(|l| &l[4..])
            .collect();
        assert_eq!(
            joined,
            format!(
                "printf '%s' {}␠×300; rm -rf x\\u{{2067}}\\n  next {}",
                "a".repeat(100),
                "*".repeat(KEY.len())
            ),
            "{text}"
        );
        // The escaped newline also breaks the line.
        assert!(lines.iter().any(|l| l.ends_with("\\n")), "{text}");
        assert!(text.contains("  timeout:\n    5"), "{text}");
        // Arguments that are not an object are shown as they are.
        let lines = approval_lines(&r, "not json\u{1b}[2J", 80, Style::plain());
        assert_eq!(lines, ["    not json\\u{1b}[2J"]);
    }

    #[test]
    fn a_shown_line_is_cut_but_counts_a_run_of_spaces_whole() {
        let r = Redactor::none();
        let text = format!("echo{}; touch x", " ".repeat(5000));
        assert_eq!(
            shown_line(&r, &text, 200, Style::plain()),
            "echo␠×5000; touch x"
        );
        let long = "y".repeat(1000);
        let line = shown_line(&r, &long, 10, Style::plain());
        assert_eq!(line, format!("{}…", "y".repeat(10)));
        let name = format!("a\u{202e}b{KEY}");
        assert_eq!(
            shown_line(&Redactor::new([KEY]), &name, 64, Style::plain()),
            format!("a\\u{{202e}}b{}", "*".repeat(KEY.len()))
        );
    }
}
