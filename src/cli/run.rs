//! `run NAME "prompt"`: talk to the preset's model. Each step sends exactly what `render`
//! shows (plus the history), streams the answer to stdout, runs the tools the model calls
//! (only the visible ones), and stops at a final answer or `--max-steps`.
//!
//! stdout carries the answer (or, with `--json`, the transcript as JSON lines); stderr
//! carries progress: tool calls, retries, and a summary per step (tokens in/out, cached
//! tokens, time). Under an output contract (`output:`) the answer's text goes to stderr
//! and stdout holds only the validated object, as JSON. Exit codes: 0 answered, 1 failed
//! run (API error, missing key, step limit, invalid preset), 2 usage, 3 the answer broke
//! the output contract after its retries, 4 a success check failed after its retries,
//! 130 interrupted (Ctrl-C, SIGINT), 143 SIGTERM, 129 SIGHUP. On any of those three signals every running command is killed (with
//! everything it started) before `run` exits.

use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use clap::Args;

use super::values::{ModelArgs, ValueArgs, lint_endpoint, render_failed};
use super::waiting::Waiting;
use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::agent::{
    AgentError, AgentEvent, Approval, ApprovalPolicy, ApproveAll, Outcome, RefuseChanges,
    ToolApproval,
};
use crate::client::ClientOptions;
use crate::project::run_setup::working_directory;
use crate::provider::FinishReason;
use crate::redact::Redactor;
use crate::report::Style;
use crate::request::ToolCall;
use crate::run::{Model, PrepareError, RunError, ServerOptions, Setup, prepare};
use crate::testing::record::check_recording_allowed;
use crate::tools::ToolDefinition;
use crate::transcript::{
    MAX_REVIEW_BYTES, Printer, StopSignal, approval_lines, report_client_error,
    report_flag_key_error, shown_line,
};

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
    /// Stop after this many model requests [default: the preset's `limits.maxSteps`, else 50].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: Option<u64>,
    /// Run at most this many tool calls of one answer; the rest are refused to the model
    /// [default: the preset's `limits.maxToolCalls`, else 64].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_tool_calls: Option<u64>,
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
    /// Run even when a section names a tool the model cannot see (P0107).
    #[arg(long)]
    allow_hidden_tool_mentions: bool,
    /// Also write the run to FILE as a cassette (JSON lines) that `agent-presets test`
    /// replays offline. The date is pinned for the whole run; refused under `CI`.
    #[arg(long, value_name = "FILE")]
    record: Option<std::path::PathBuf>,
    /// Write the validated output object (the preset's `output` contract) to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
}

pub(crate) fn run(global: &GlobalArgs, args: &RunArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    // Orphans of what the run starts come to the agent, and nothing is left when it ends.
    let _reaper = Reaper::adopt();
    args.values.check_stdin(&args.name)?;
    if args.record.is_some() {
        check_recording_allowed().map_err(CliError::usage)?;
    }
    let mut workspace = Workspace::discover(global)?;
    if let Some(locale) = args.values.locale.clone() {
        workspace.presets.set_locale(Some(locale));
    }
    let (preset, warnings) = workspace.valid_preset_and_warnings(&args.name, io)?;
    let refused = crate::project::run_setup::refuse_hidden_tool_mentions(
        &warnings,
        args.allow_hidden_tool_mentions,
    );
    if !refused.is_empty() {
        return Err(CliError::Diagnostics {
            list: refused,
            exit: Exit::Invalid,
            sources: workspace.presets.source_files(),
        });
    }
    if let Some(path) = &args.output
        && preset.output().is_none()
    {
        return Err(CliError::usage_with(
            format!(
                "`--output {}`: preset `{}` declares no output contract, so the run has no object to write",
                path.display(),
                preset.name()
            ),
            Some("add an `output: {schema: …}` block to the preset (docs/format.md, \"Output contract\"), or drop `--output`".into()),
        ));
    }
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
    let cwd = working_directory(args.values.cwd.as_deref())?;
    // The policy of the approver below, rendered into every step.
    let policy = approval_policy(args.yes);
    let setup = Setup {
        project: &workspace,
        preset,
        settings: settings.clone(),
        linted,
        cwd,
        sandbox: args.sandbox.clone(),
        approval: policy,
        max_steps: args.max_steps,
        max_tool_calls: args.max_tool_calls,
        pin_date: args.values.pins("date"),
        record: args.record.is_some(),
    };
    // The journey's order: the trust gate (which may ask), then the values, then step 1.
    let mut gate_exit = None;
    let prepared = prepare(
        setup,
        |preset, settings, cwd| {
            // Nothing is sent or started for a preset the user has not trusted (see `trust`).
            let gate = super::trust::RunGate {
                arg: &args.name,
                allow_insecure: args.allow_insecure,
                json: args.json,
                cwd,
            };
            match super::trust::admit_run(global, &workspace, preset, settings, gate, io)? {
                Some(exit) => {
                    gate_exit = Some(exit);
                    Ok(false)
                }
                None => Ok(true),
            }
        },
        |preset, cwd| args.values.values(preset, cwd),
    )
    .map_err(|e| match e {
        PrepareError::Caller(e) => e,
        PrepareError::Run(e) => run_error(e, &workspace),
    })?;
    let Some(prepared) = prepared else {
        return Ok(gate_exit.unwrap_or(Exit::Invalid));
    };

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
    let connected = match prepared.connect(Model::Live(options)) {
        Ok(c) => c,
        Err(RunError::Client(e)) => {
            printer.failed(io, &e.to_string());
            if args.api_key_env.is_some() {
                return Ok(report_flag_key_error(&e, io));
            }
            return Ok(report_client_error(&e, io));
        }
        Err(e) => return Err(run_error(e, &workspace)),
    };
    let redactor = connected.redactor().clone();
    printer.set_redactor(redactor.clone());
    let texts = connected.preset().assembler().texts();
    let mut approval: Box<dyn ToolApproval> = match policy {
        ApprovalPolicy::Yes => Box::new(ApproveAll),
        ApprovalPolicy::Ask => Box::new(TerminalApproval::new(
            redactor.clone(),
            std::sync::Arc::clone(texts),
        )),
        ApprovalPolicy::Refuse => Box::new(RefuseChanges::no_terminal(texts)),
    };

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("cannot start the async runtime: {e}")))?;
    // Listen for the signals that end the run before anything is started, and keep
    // listening until it ends.
    let mut signals = {
        let _entered = runtime.enter();
        StopSignals::new()
    };
    // The MCP servers whose tools the run can call, started in parallel; their calls go
    // to the live sessions. A signal while they start stops them (dropping the start
    // kills what has started) and ends the run as a signal during the run does.
    let held = super::connect::HeldLines::default();
    let sink = held.sink();
    let start = connected.start(ServerOptions {
        allow_drift: args.allow_tool_drift,
        stderr: &sink,
    });
    let started = runtime.block_on(async {
        tokio::select! {
            result = start => Ok(result),
            signal = signals.recv() => Err(signal),
        }
    });
    let started = match started {
        Ok(Ok(started)) => {
            for (tool, what) in started.drifted() {
                writeln!(
                    io.err,
                    "{}: `{tool}` differs from presets.lock ({what}); sending the pinned definition (`--allow-tool-drift`)",
                    io.err_style.warning("warning")
                )?;
            }
            Ok(started)
        }
        Ok(Err(e)) => Err(run_error(e, &workspace)),
        Err(signal) => {
            writeln!(
                io.err,
                "{}: interrupted ({}) while the MCP servers were starting",
                io.err_style.error("error"),
                signal.name()
            )?;
            Err(CliError::Diagnostics {
                list: Vec::new(),
                exit: signal.exit(),
                sources: workspace.presets.source_files(),
            })
        }
    };
    held.flush(&mut *io.err);
    let mut started = started?;
    // Under an output contract stdout holds only the validated object: the answer's text
    // is transcript, on stderr (`run triage "…" > verdict.json`).
    if started.output_contract().is_some() {
        printer.answer_to_stderr();
    }
    let waiting = Waiting::new(
        format!(
            "waiting for {}…",
            shown_line(&redactor, &settings.name, 80, io.err_style)
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
    let finished = runtime.block_on(async {
        let run = started.run(&args.prompt, approval.as_mut(), &mut on_event);
        tokio::select! {
            result = run => Some(result),
            signal = signals.recv() => {
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
    runtime.block_on(started.shutdown());
    if let Some(path) = &args.record {
        match finished.as_ref().and_then(|f| f.cassette.clone()) {
            Some(mut cassette) => {
                if let Err(e) = std::fs::write(path, cassette.to_text()) {
                    let _ = writeln!(
                        io.err,
                        "{}: cannot write the cassette `{}`: {e}",
                        io.err_style.error("error"),
                        path.display()
                    );
                    return Ok(Exit::Usage);
                }
                let _ = writeln!(
                    io.err,
                    "recorded {} step{} to {}",
                    cassette.steps.len(),
                    if cassette.steps.len() == 1 { "" } else { "s" },
                    path.display()
                );
            }
            None => {
                let _ = writeln!(
                    io.err,
                    "{}: the run was interrupted: no cassette written to `{}`",
                    io.err_style.warning("warning"),
                    path.display()
                );
            }
        }
    }
    printer.end_text(io);
    held.flush(&mut *io.err);
    let exit = match finished.map(|f| f.outcome) {
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
        Some(Ok(Outcome::Answered { finish, .. }))
            if finish == FinishReason::Other(crate::agent::PROMPT_BLOCKED.to_owned()) =>
        {
            // Nothing was sent: the hook's decision event (above) names it and says why.
            printer.done(io, crate::agent::PROMPT_BLOCKED, Some(0));
            let _ = writeln!(
                io.err,
                "{}: a `userPromptSubmit` hook blocked the prompt; nothing was sent to the model",
                io.err_style.error("error")
            );
            let _ = writeln!(
                io.err,
                "  = {}: the hook's decision in the transcript (`--json`: the `hook` event) says which hook and why",
                io.err_style.bold("help")
            );
            Exit::Invalid
        }
        Some(Ok(Outcome::Answered {
            steps,
            finish,
            output,
            ..
        })) => {
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
            match &output {
                Some(object) => {
                    if let Some(path) = &args.output
                        && let Err(e) = write_output(path, object, &redactor)
                    {
                        printer.done(io, "answered", Some(steps));
                        let _ = writeln!(
                            io.err,
                            "{}: cannot write the output object to `{}`: {e}",
                            io.err_style.error("error"),
                            path.display()
                        );
                        return Ok(Exit::Usage);
                    }
                    printer.done_with_output(io, steps, object);
                }
                None => printer.done(io, "answered", Some(steps)),
            }
            Exit::Ok
        }
        Some(Ok(Outcome::OutputInvalid {
            text,
            steps,
            problems,
        })) => {
            printer.done_unmet(
                io,
                "output-invalid",
                steps,
                serde_json::json!({
                    "answer": redactor.redact(&text),
                    "problems": problems.iter().map(crate::transcript::problem_json).collect::<Vec<_>>(),
                }),
            );
            let retries = started.output_contract().map_or(0, |c| c.retries);
            let _ = writeln!(
                io.err,
                "{}: the final answer breaks the output contract after {} attempt{} ({} problem{}):",
                io.err_style.error("error"),
                retries + 1,
                if retries == 0 { "" } else { "s" },
                problems.len(),
                if problems.len() == 1 { "" } else { "s" }
            );
            for p in &problems {
                let line = shown_line(&redactor, &p.to_string(), 300, io.err_style);
                let _ = writeln!(io.err, "  - {line}");
            }
            let answer = shown_line(&redactor, &text, 600, io.err_style);
            let _ = writeln!(io.err, "  last answer: {answer}");
            let _ = writeln!(
                io.err,
                "  = {}: raise `output.retries`, or make the preset's instructions say more about the shape the schema wants",
                io.err_style.bold("help")
            );
            Exit::OutputInvalid
        }
        Some(Ok(Outcome::CheckFailed {
            text,
            steps,
            check,
            ending,
            output,
        })) => {
            printer.done_unmet(
                io,
                "check-failed",
                steps,
                serde_json::json!({
                    "answer": redactor.redact(&text),
                    "check": redactor.redact(&check),
                    "ending": ending,
                    "checkOutput": redactor.redact(&output),
                }),
            );
            let check_shown = shown_line(&redactor, &check, 200, io.err_style);
            let _ = writeln!(
                io.err,
                "{}: the check `{check_shown}` still fails after every retry it allows: {ending}",
                io.err_style.error("error"),
            );
            let lines: Vec<&str> = output.lines().collect();
            for l in &lines[lines.len().saturating_sub(20)..] {
                let l = shown_line(&redactor, l, 300, io.err_style);
                let _ = writeln!(io.err, "  | {l}");
            }
            let _ = writeln!(
                io.err,
                "  = {}: run the check yourself to see why; raise its `retries` to give the agent more tries",
                io.err_style.bold("help")
            );
            Exit::CheckFailed
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
        Some(Err(e @ AgentError::SandboxMismatch { .. })) => {
            // `run` sets the `sandbox` value from the sandbox it enforces; only a value
            // given another way (e.g. `--var sandbox=…`) can differ.
            printer.failed(io, &e.to_string());
            return Err(CliError::usage(e.to_string()));
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

/// Write the validated output object to `path` as pretty JSON (secrets masked), through
/// a temporary file beside it, so a reader never sees half an object.
fn write_output(
    path: &std::path::Path,
    object: &serde_json::Value,
    redactor: &Redactor,
) -> std::io::Result<()> {
    let mut object = object.clone();
    redactor.redact_json(&mut object);
    let mut text = serde_json::to_string_pretty(&object).map_err(std::io::Error::other)?;
    text.push('\n');
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// The agent as the reaper of last resort for one `run`: a child subreaper while it
/// runs (orphans of commands come to it, and each call's end kills them), and on every
/// way out of `run` — an answer, an error, a signal — whatever is left below it is killed.
pub(crate) struct Reaper;

impl Reaper {
    pub(crate) fn adopt() -> Reaper {
        #[cfg(target_os = "linux")]
        crate::process::containment::orphans::adopt();
        Reaper
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        crate::process::containment::orphans::kill_descendants();
    }
}

/// A refusal of the run journey as the CLI reports it.
fn run_error(e: RunError, workspace: &Workspace) -> CliError {
    match e {
        RunError::Usage(u) => u.into(),
        RunError::Render(ds) => render_failed(ds, workspace),
        RunError::Invalid(list) => CliError::Diagnostics {
            list,
            exit: Exit::Invalid,
            sources: workspace.presets.source_files(),
        },
        RunError::Client(e) => CliError::usage(e.to_string()),
    }
}

/// `yes` with `--yes`; else `ask` when there is a terminal to ask on; else `refuse`.
pub(crate) fn approval_policy(yes: bool) -> ApprovalPolicy {
    if yes {
        ApprovalPolicy::Yes
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        ApprovalPolicy::Ask
    } else {
        ApprovalPolicy::Refuse
    }
}

/// The first of SIGINT (Ctrl-C), SIGTERM and SIGHUP to arrive. Their handlers are
/// installed when this is first polled (with the agent's first step), so from then on
/// none of them ends the process before the running commands are killed.
/// The signals that end `run` (SIGINT, SIGTERM, SIGHUP), listened for from before the
/// first server or command starts until the run ends. A listener made only when it is
/// first awaited would leave a window where the signal's default action kills the agent
/// without stopping what it started, and one made per wait would swallow a signal that
/// arrives between two waits.
pub(crate) struct StopSignals {
    #[cfg(unix)]
    streams: Option<[tokio::signal::unix::Signal; 3]>,
}

impl StopSignals {
    /// Start listening (inside the runtime).
    pub(crate) fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let streams = match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) {
                (Ok(int), Ok(term), Ok(hup)) => Some([int, term, hup]),
                _ => None,
            };
            StopSignals { streams }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// The next signal that ends the run.
    pub(crate) async fn recv(&mut self) -> StopSignal {
        #[cfg(unix)]
        if let Some([int, term, hup]) = &mut self.streams {
            return tokio::select! {
                _ = int.recv() => StopSignal::Interrupt,
                _ = term.recv() => StopSignal::Terminate,
                _ = hup.recv() => StopSignal::HangUp,
            };
        }
        let _ = tokio::signal::ctrl_c().await;
        StopSignal::Interrupt
    }
}

/// `--api-key-env NAME`: a name a variable can have (not empty, no `=`, no NUL).
fn parse_env_name(name: &str) -> Result<String, String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return Err("an environment variable's name: not empty, without `=`".into());
    }
    Ok(name.to_owned())
}

/// Asks on the terminal before a tool that changes things runs. The whole call is shown
/// ([`approval_lines`]): wrapped, never cut, with control, bidirectional and invisible
/// characters escaped and long runs of spaces counted. A call too long for one screen is
/// refused without asking: the user could not see what they approve.
#[derive(Debug)]
pub(crate) struct TerminalApproval {
    /// Tools the user allowed for the rest of the run.
    always: Vec<String>,
    /// `bash` command prefixes the user allowed for the rest of the run (`git status *`),
    /// from an "always" answer to a call the permission rules sent to the user.
    always_commands: Vec<crate::policy::Glob>,
    /// The prefixes the "always" of the call being asked about would allow.
    offered: Vec<String>,
    /// Masks the key in what is shown.
    redactor: Redactor,
    /// What the model is told when a call is refused.
    texts: std::sync::Arc<crate::texts::Texts>,
}

impl TerminalApproval {
    pub(crate) fn new(redactor: Redactor, texts: std::sync::Arc<crate::texts::Texts>) -> Self {
        TerminalApproval {
            always: Vec::new(),
            always_commands: Vec::new(),
            offered: Vec::new(),
            redactor,
            texts,
        }
    }
}

impl ToolApproval for TerminalApproval {
    /// The prompt names what sends the call to the user (a rule, or the tool's default).
    fn review_asked(
        &mut self,
        call: &ToolCall,
        tool: &ToolDefinition,
        decision: &crate::policy::Decision,
    ) -> Approval {
        if self.always.iter().any(|t| t == tool.name().as_str()) {
            return Approval::Allow;
        }
        // `bash`: "always" is scoped to the command prefixes of this line, for this run.
        let prefixes = command_prefixes(call);
        if let Some(prefixes) = &prefixes
            && !prefixes.is_empty()
            && prefixes
                .iter()
                .all(|(text, _)| self.always_commands.iter().any(|g| g.is_match(text)))
        {
            return Approval::Allow;
        }
        let style = Style::detect(true);
        let line = shown_line(&self.redactor, &decision.explain(), 400, style);
        let _ = writeln!(
            std::io::stderr().lock(),
            "\n{} {line}",
            style.dim("permissions:")
        );
        self.offered = prefixes.into_iter().flatten().map(|(_, p)| p).collect();
        let answer = self.review(call, tool);
        self.offered.clear();
        answer
    }

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
        if self.offered.is_empty() {
            let _ = write!(err, "[y]es / [n]o / [a]lways for `{shown_name}`: ");
        } else {
            let scope: Vec<String> = self
                .offered
                .iter()
                .map(|p| format!("`{}`", shown_line(&self.redactor, p, 80, style)))
                .collect();
            let _ = write!(
                err,
                "[y]es / [n]o / [a]lways for {} (this run): ",
                scope.join(", ")
            );
        }
        let _ = err.flush();
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() {
            answer.clear();
        }
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Approval::Allow,
            "a" | "always" if !self.offered.is_empty() => {
                for prefix in std::mem::take(&mut self.offered) {
                    if let Ok(glob) =
                        crate::policy::Glob::new(&prefix, crate::policy::GlobKind::Text, true)
                    {
                        self.always_commands.push(glob);
                    }
                }
                Approval::Allow
            }
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
    fn always_allowed(&self) -> &[String] {
        &self.always
    }
}

/// The simple commands of a `bash` call's line with the prefix an "always" answer allows
/// for the rest of the run: the command's name and its first argument unless that is an
/// option or a path (`git status *`, `cargo test *`, `ls *`). `None`: not a `bash` call,
/// or a line that cannot be split or holds a command no pattern may allow.
fn command_prefixes(call: &ToolCall) -> Option<Vec<(String, String)>> {
    if call.name != crate::policy::rule::SHELL_TOOL {
        return None;
    }
    let args: serde_json::Value = serde_json::from_str(&call.arguments).ok()?;
    let line = args.get("command")?.as_str()?;
    let crate::policy::Split::Commands(commands) = crate::policy::shell::split(line) else {
        return None;
    };
    let escape = |w: &str| {
        w.replace('\\', "\\\\")
            .replace('*', "\\*")
            .replace('?', "\\?")
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for c in commands {
        if c.not_allowable.is_some() {
            return None;
        }
        let mut words = c.text.split(' ');
        let mut prefix = escape(words.next().unwrap_or_default());
        if let Some(sub) = words.next()
            && !sub.starts_with('-')
            && sub
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | ':' | '.'))
        {
            prefix.push(' ');
            prefix.push_str(&escape(sub));
        }
        prefix.push_str(" *");
        if !out.iter().any(|(_, p)| *p == prefix) {
            out.push((c.text, prefix));
        }
    }
    Some(out)
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
