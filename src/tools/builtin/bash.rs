//! `bash`: run a shell command in the workspace with a timeout and capped output, under a
//! [`Containment`] that kills every process the command started when it ends, times out
//! or the call is dropped, and with an allowlisted environment ([`command_env`]).
//!
//! What a command may read, write and reach is the context's [`SandboxProfile`]
//! ([`ToolContext::sandbox`]): under `full-access` (the library's default) it runs as the
//! agent's user and can do whatever that user can; under `read-only` and
//! `workspace-write` it is confined by Landlock and seccomp (see [`crate::process::sandbox`]),
//! and when the kernel cannot enforce that, the command is refused, not run. It starts
//! through the one spawn path, [`crate::process::spawn`].
//!
//! [`SandboxProfile`]: crate::process::SandboxProfile
//! [`Containment`]: crate::process::Containment
//! [`command_env`]: crate::process::env

use std::future::Future;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::limits::{Readers, StreamCapture, pump, take};
use crate::process::containment::ContainmentWarning;
use crate::process::env::command_env;
use crate::process::sandbox::denial_note;
use crate::process::{self, Containment, Input, Program, SpawnError, WorkDir};
use crate::texts::*;
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance, vals};

/// `timeout_secs` when the model sends none.
pub(crate) const DEFAULT_TIMEOUT_SECS: u32 = 120;
/// The largest `timeout_secs` accepted.
pub(crate) const MAX_TIMEOUT_SECS: u32 = 600;
/// How long output is still read after the process group was killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Arguments of `bash`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command to run with `bash -c`, in the workspace root. Standard input is empty.
    pub command: String,
    /// Seconds before the command and every process it started are killed. Defaults to 120; at most 600.
    #[schemars(range(min = 1, max = 600))]
    pub timeout_secs: Option<u32>,
}

/// The `bash` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bash;

impl Tool for Bash {
    type Args = BashArgs;

    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        TOOL_BASH_DESCRIPTION.text
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        // A template over `tools`: it recommends the file tools that are visible, and
        // none that are not.
        Some(ToolGuidance::templated(1060.0, TOOL_BASH_GUIDANCE.text))
    }

    fn timeout(&self) -> Option<Duration> {
        // Above the largest `timeout_secs`, so the tool's own timeout (which reports the
        // output so far) fires first.
        Some(Duration::from_secs(u64::from(MAX_TIMEOUT_SECS) + 30))
    }

    fn call(
        &self,
        args: BashArgs,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        handle(args, ctx)
    }
}

/// The work of `bash` (a free function, so the future borrows nothing from the tool).
async fn handle(args: BashArgs, ctx: ToolContext) -> Result<String, ToolError> {
    if args.command.trim().is_empty() {
        return Err(ToolError::text(&TOOL_BASH_ERROR_EMPTY, vec![])
            .hint_text(&TOOL_BASH_HINT_EMPTY, vec![]));
    }
    let seconds = args
        .timeout_secs
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
        .clamp(1, MAX_TIMEOUT_SECS);
    let limits = *ctx.limits();
    let run = run(
        &args.command,
        &ctx,
        Duration::from_secs(u64::from(seconds)),
        limits.max_bytes / 2,
    )
    .await?;
    let half_lines = (limits.max_lines / 2).max(1);
    let texts = ctx.texts();
    let status = match run.status {
        Some(status) => describe_status(texts, status),
        None => texts.render(
            &TOOL_BASH_RESULT_TIMED_OUT,
            &[("seconds", &seconds.to_string())],
        ),
    };
    let mut report = texts.render(
        &TOOL_BASH_RESULT_REPORT,
        &[
            ("status", &status),
            ("stdout", &section(texts, &run.stdout, half_lines, "stdout")),
            ("stderr", &section(texts, &run.stderr, half_lines, "stderr")),
        ],
    );
    if let Some(note) = &run.sandbox_note {
        report.push('\n');
        report.push_str(note);
    }
    if let Some(warning) = &run.warning {
        report.push('\n');
        let warning = containment_warning(texts, warning);
        report.push_str(&texts.render(&TOOL_BASH_RESULT_WARNING, &[("warning", &warning)]));
    }
    if !run.containment.tracks_every_descendant() {
        report.push('\n');
        report.push_str(texts.get(&TOOL_BASH_RESULT_GROUP_ONLY));
    }
    let killed_by: &'static BuiltinText = match run.containment {
        Containment::Cgroup => &TOOL_BASH_RESULT_KILLED_CGROUP,
        Containment::Subreaper => &TOOL_BASH_RESULT_KILLED_SUBREAPER,
        Containment::ProcessGroup => &TOOL_BASH_RESULT_KILLED_GROUP,
    };
    // The English text is the containment's own wording.
    debug_assert_eq!(killed_by.text, run.containment.killed_by());
    match run.status {
        Some(_) => Ok(report),
        None => Err(match &run.warning {
            None => ToolError::text(
                &TOOL_BASH_ERROR_TIMEOUT,
                vals![seconds = seconds, killed_by = killed_by, report = report],
            ),
            // Claim only what was verified.
            Some(_) => ToolError::text(
                &TOOL_BASH_ERROR_TIMEOUT_PARTIAL,
                vals![seconds = seconds, report = report],
            ),
        }
        .hint_text(&TOOL_BASH_HINT_TIMEOUT, vals![max = MAX_TIMEOUT_SECS])),
    }
}

/// What a finished (or killed) command left behind.
struct Run {
    /// `None` when the timeout fired.
    status: Option<ExitStatus>,
    stdout: StreamCapture,
    stderr: StreamCapture,
    containment: Containment,
    warning: Option<ContainmentWarning>,
    /// Said when the output shows a refusal under a sandbox.
    sandbox_note: Option<String>,
}

/// The shell commands run with: bash if the host has it.
fn shell() -> &'static str {
    ["/bin/bash", "/usr/bin/bash", "/bin/sh"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("sh")
}

async fn run(
    command: &str,
    ctx: &ToolContext,
    timeout: Duration,
    budget: usize,
) -> Result<Run, ToolError> {
    let shell = shell();
    let env = command_env(ctx.env_rules(), std::env::vars_os());
    let args = ["-c".to_owned(), command.to_owned()];
    // The command starts in the directory the workspace root's descriptor holds, not in
    // whatever its path names now (`ctx` keeps it open).
    let program = Program {
        program: shell.as_ref(),
        args: &args,
        env: &env,
        dir: WorkDir::Fd(ctx.root().fd().as_raw_fd()),
        stdin: Input::Null,
    };
    let process::Spawned {
        mut contained,
        sandbox,
    } = process::spawn(&program, &ctx.confinement(ctx.sandbox())).map_err(|e| match e {
        SpawnError::Sandbox(e) => ToolError::new(format!("{e}")).hint(e.hint()),
        SpawnError::Start(e) => ToolError::text(
            &TOOL_BASH_ERROR_SPAWN,
            vec![
                ("shell", crate::tools::TextValue::from(shell)),
                ("error", super::workspace::io_reason_value(&e)),
            ],
        )
        .hint_text(&TOOL_BASH_HINT_SPAWN, vec![]),
    })?;

    let stdout = Arc::new(Mutex::new(StreamCapture::new(budget / 2 + budget % 2)));
    let stderr = Arc::new(Mutex::new(StreamCapture::new(budget / 2)));
    let mut readers = Readers(Vec::new());
    if let Some(pipe) = contained.child.stdout.take() {
        readers
            .0
            .push(tokio::spawn(pump(pipe, Arc::clone(&stdout))));
    }
    if let Some(pipe) = contained.child.stderr.take() {
        readers
            .0
            .push(tokio::spawn(pump(pipe, Arc::clone(&stderr))));
    }

    // Whether the shell ends or runs out of time, nothing it started may live on, and
    // nothing still holding the pipes may keep us reading.
    let ending = contained
        .run_to_end(timeout, DRAIN_GRACE)
        .await
        .map_err(|e| {
            ToolError::text(
                &TOOL_BASH_ERROR_WAIT,
                vec![("error", super::workspace::io_reason_value(&e))],
            )
            .hint_text(&TOOL_BASH_HINT_WAIT, vec![])
        })?;
    readers.finish(DRAIN_GRACE).await;
    let stdout = take(&stdout);
    let stderr = take(&stderr);
    let sandbox_note = denial_note(sandbox.mode(), &stderr.bytes())
        .or_else(|| denial_note(sandbox.mode(), &stdout.bytes()));
    // The temporary directory goes with the sandbox, after the command's tree is gone.
    drop(sandbox);
    Ok(Run {
        status: ending.status,
        stdout,
        stderr,
        containment: contained.containment,
        warning: ending.warning,
        sandbox_note,
    })
}

/// What went wrong with the containment, for the model (`tools.containment.*`).
fn containment_warning(texts: &crate::texts::Texts, warning: &ContainmentWarning) -> String {
    use crate::texts::{
        TOOLS_CONTAINMENT_CGROUP_LEFT, TOOLS_CONTAINMENT_SUPERVISOR_DIED,
        TOOLS_CONTAINMENT_SURVIVORS_MANY, TOOLS_CONTAINMENT_SURVIVORS_ONE,
    };
    match warning {
        ContainmentWarning::SupervisorDied(status) => texts.render(
            &TOOLS_CONTAINMENT_SUPERVISOR_DIED,
            &[("status", &describe_status(texts, *status))],
        ),
        ContainmentWarning::Survivors(left) => {
            let pids: Vec<String> = left.iter().map(ToString::to_string).collect();
            let text = if left.len() == 1 {
                &TOOLS_CONTAINMENT_SURVIVORS_ONE
            } else {
                &TOOLS_CONTAINMENT_SURVIVORS_MANY
            };
            texts.render(
                text,
                &[
                    ("count", &left.len().to_string()),
                    ("pids", &pids.join(", ")),
                ],
            )
        }
        ContainmentWarning::CgroupLeft(grace) => texts.render(
            &TOOLS_CONTAINMENT_CGROUP_LEFT,
            &[("ms", &grace.as_millis().to_string())],
        ),
    }
}

/// How a command ended, for the model.
pub(crate) fn describe_status(
    texts: &crate::texts::Texts,
    status: std::process::ExitStatus,
) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => {
            texts.render(&TOOL_BASH_RESULT_EXIT_CODE, &[("code", &code.to_string())])
        }
        (None, Some(signal)) => {
            texts.render(&TOOL_BASH_RESULT_SIGNAL, &[("signal", &signal.to_string())])
        }
        (None, None) => texts.get(&TOOL_BASH_RESULT_UNKNOWN_STATUS).to_owned(),
    }
}

fn section(
    texts: &crate::texts::Texts,
    capture: &StreamCapture,
    max_lines: usize,
    name: &str,
) -> String {
    let text = capture.render(max_lines, name, texts);
    if text.is_empty() {
        texts.get(&TOOL_BASH_RESULT_EMPTY).to_owned()
    } else {
        text.strip_suffix('\n').unwrap_or(&text).to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each containment warning the model reads is a text whose English is the
    /// containment's own wording (so a locale pack can translate it).
    #[test]
    fn containment_warnings_are_texts_with_the_containments_english() {
        let english = crate::texts::Texts::english();
        for w in [
            ContainmentWarning::Survivors(vec![42]),
            ContainmentWarning::Survivors(vec![42, 43]),
            ContainmentWarning::CgroupLeft(std::time::Duration::from_millis(250)),
        ] {
            assert_eq!(containment_warning(&english, &w), w.to_string());
        }
    }
}
