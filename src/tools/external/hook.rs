//! Running one hook (`hooks:` in a preset): the program started the way a command tool is
//! ([`process::spawn`] with the context's containment, limits and sandbox, in the
//! workspace root, with the command environment: the allowlist plus the preset's
//! `passEnv`, never the model's API key), the event as one line of JSON on stdin, killed
//! with everything it started at its timeout. What it did comes back as a
//! [`HookRun`]; what that means is [`crate::hooks::decide`]'s business.

use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::checks::{Check, CheckRun};
use crate::hooks::{Hook, HookEnding, HookRun};
use crate::process::env::program_env;
use crate::process::{self, Input, Program, SpawnError, WorkDir, describe};
use crate::tools::ToolContext;
use crate::tools::builtin::limits::{StreamCapture, take};

/// How long output is still read after the process group was killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// Most bytes of standard output kept (a JSON decision, or context for the model).
const MAX_STDOUT_BYTES: usize = 256 * 1024;
/// Most bytes of standard error kept (the reason of a block).
const MAX_STDERR_BYTES: usize = 16 * 1024;

/// Run `hook` with `input` on stdin in `ctx`'s workspace and sandbox.
pub async fn run_hook(hook: &Hook, input: &Value, ctx: &ToolContext) -> HookRun {
    run_program(&hook.run, hook.timeout, input, ctx).await
}

/// Run success check `check` in `ctx`'s workspace and sandbox, as a hook runs (the
/// check's argv, `{"hook_event_name": "Check", "cwd": …}` on stdin, its timeout), and
/// keep what the model reads of its output ([`crate::checks::model_output`]).
pub async fn run_check(check: &Check, ctx: &ToolContext) -> CheckRun {
    let input = serde_json::json!({
        "hook_event_name": "Check",
        "cwd": ctx.workspace().to_string_lossy(),
    });
    let started = std::time::Instant::now();
    let run = run_program(&check.run, check.timeout, &input, ctx).await;
    CheckRun {
        output: crate::checks::model_output(&run.stdout, &run.stderr),
        ending: run.ending,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

/// Run `argv` with `input` on stdin in `ctx`'s workspace and sandbox, killed at `timeout`.
async fn run_program(
    argv: &[String],
    timeout: Duration,
    input: &Value,
    ctx: &ToolContext,
) -> HookRun {
    let not_started = |why: String| HookRun {
        ending: HookEnding::NotStarted(why),
        stdout: String::new(),
        stderr: String::new(),
    };
    let Some((program, rest)) = argv.split_first() else {
        return not_started("it has no program to run".into());
    };
    let vars: Vec<_> = std::env::vars_os().collect();
    let env = program_env(
        ctx.env_rules(),
        &vars,
        std::iter::empty::<&str>(),
        std::iter::empty::<(&str, &str)>(),
    );
    let profile = ctx
        .sandbox()
        .clone()
        .with_program(argv, &env, ctx.workspace());
    let to_run = Program {
        program: program.as_ref(),
        args: rest,
        env: &env,
        dir: WorkDir::Fd(ctx.root().fd().as_raw_fd()),
        stdin: Input::Piped,
    };
    let process::Spawned {
        mut contained,
        sandbox,
    } = match process::spawn(&to_run, &ctx.confinement(&profile)) {
        Ok(s) => s,
        Err(SpawnError::Sandbox(e)) => return not_started(format!("{e}")),
        Err(SpawnError::Start(e)) => {
            return not_started(format!(
                "`{program}`: {}",
                crate::tools::builtin::io_reason_in(&e, ctx.texts())
            ));
        }
    };
    let (mut tasks, stdout, stderr) = super::command::feed_and_capture(
        &mut contained.child,
        input,
        (MAX_STDOUT_BYTES, MAX_STDERR_BYTES),
    );
    let ending = contained.run_to_end(timeout, DRAIN_GRACE).await;
    tasks.finish(DRAIN_GRACE).await;
    drop(sandbox);
    let text =
        |c: &Arc<Mutex<StreamCapture>>| String::from_utf8_lossy(&take(c).bytes()).into_owned();
    let (stdout, stderr) = (text(&stdout), text(&stderr));
    let ending = match ending {
        Err(e) => HookEnding::NotStarted(ctx.texts().render(
            &crate::texts::HOOKS_WAIT_FAILED,
            &[(
                "reason",
                &crate::tools::builtin::io_reason_in(&e, ctx.texts()),
            )],
        )),
        Ok(end) => match end.status {
            None => HookEnding::TimedOut,
            Some(status) => match status.code() {
                Some(code) => HookEnding::Exited(code),
                None => HookEnding::Signalled(describe(status)),
            },
        },
    };
    HookRun {
        ending,
        stdout,
        stderr,
    }
}
