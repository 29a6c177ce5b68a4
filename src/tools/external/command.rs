//! Command tools: a program a preset declares under `commands:`, run with the call's
//! arguments as one line of JSON on standard input. Its standard output (bounded like
//! `bash`'s) is the result, with its standard error beside it, both labelled, when it
//! wrote there (unless the declaration says `stderr: drop`); a non-zero exit is a tool
//! error carrying its standard error.
//!
//! It runs the way `bash` runs a command: through the one spawn path
//! ([`process::spawn`]) with the context's containment, limits and sandbox, in the
//! workspace root, with the allowlisted environment ([`crate::process::env`]) plus the
//! tool's own `passEnv` names and its literal `env` values — never the model's API key.

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::process::env::program_env;
use crate::process::{self, Input, Program, SpawnError, WorkDir};
use crate::texts::{
    TOOL_BASH_RESULT_EMPTY, TOOLS_COMMAND_ERROR_FAILED, TOOLS_COMMAND_ERROR_FAILED_STDERR,
    TOOLS_COMMAND_ERROR_SPAWN, TOOLS_COMMAND_ERROR_TIMEOUT, TOOLS_COMMAND_ERROR_TIMEOUT_STDERR,
    TOOLS_COMMAND_ERROR_WAIT, TOOLS_COMMAND_HINT_FAILED, TOOLS_COMMAND_HINT_SPAWN,
    TOOLS_COMMAND_HINT_TIMEOUT, TOOLS_COMMAND_HINT_WAIT, TOOLS_COMMAND_RESULT_BOTH,
    TOOLS_COMMAND_RESULT_NO_OUTPUT,
};
use crate::tools::builtin::limits::{Readers, StreamCapture, pump, take};
use crate::tools::{ExternalHandler, ToolContext, ToolError, ToolFuture};

/// How long output is still read after the process group was killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// Most bytes of standard error quoted in a tool error.
const MAX_STDERR_BYTES: usize = 8 * 1024;

/// What running one command tool takes (from a preset's `commands:` entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandTool {
    /// The tool's name, for messages.
    pub name: String,
    /// The program and its arguments (never a shell string).
    pub run: Vec<String>,
    /// Environment variables passed besides the base allowlist and the preset's `passEnv`.
    pub pass_env: Vec<String>,
    /// Literal environment values (set after the allowlist; they win).
    pub env: Vec<(String, String)>,
    /// How long one call may run before the command and everything it started are killed.
    pub timeout: Duration,
    /// On success, is a non-empty stderr part of the result (both streams labelled)?
    pub stderr_on_success: bool,
}

/// The handler that runs `tool` (for [`ExternalTool::handler`](crate::tools::ExternalTool)).
pub fn command_handler(tool: CommandTool) -> ExternalHandler {
    let tool = Arc::new(tool);
    Arc::new(move |args: Value, ctx: ToolContext| {
        let tool = Arc::clone(&tool);
        Box::pin(async move { run_command(&tool, &args, &ctx).await }) as ToolFuture
    })
}

async fn run_command(
    tool: &CommandTool,
    args: &Value,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    let Some((program, rest)) = tool.run.split_first() else {
        return Err(ToolError::new(format!(
            "command tool `{}` has no program to run",
            tool.name
        ))
        .hint("this is a mistake in the preset, not in the call"));
    };
    let env = environment(tool, ctx, std::env::vars_os());
    // The sandbox, able to read what the program itself needs (its prefix, interpreter,
    // script).
    let profile = ctx
        .sandbox()
        .clone()
        .with_program(&tool.run, &env, ctx.workspace());
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
    } = process::spawn(&to_run, &ctx.confinement(&profile)).map_err(|e| {
        let e = match e {
            SpawnError::Sandbox(e) => return ToolError::new(format!("{e}")).hint(e.hint()),
            SpawnError::Start(e) => e,
        };
        let hint = ctx.texts().render(&TOOLS_COMMAND_HINT_SPAWN, &[]);
        let sandbox = (e.kind() != std::io::ErrorKind::NotFound)
            .then(|| sandbox_help(&profile, ctx, &tool.run, &env))
            .flatten();
        ToolError::new(ctx.texts().render(
            &TOOLS_COMMAND_ERROR_SPAWN,
            &[
                ("program", program.as_str()),
                ("tool", tool.name.as_str()),
                (
                    "error",
                    &crate::tools::builtin::io_reason_in(&e, ctx.texts()),
                ),
            ],
        ))
        .hint(match sandbox {
            Some(help) => format!("{hint}; {help}"),
            None => hint.to_owned(),
        })
    })?;

    let limits = *ctx.limits();
    let (mut tasks, stdout, stderr) = feed_and_capture(
        &mut contained.child,
        args,
        (limits.max_bytes, MAX_STDERR_BYTES),
    );
    let texts = ctx.texts();
    let ending = contained
        .run_to_end(tool.timeout, DRAIN_GRACE)
        .await
        .map_err(|e| {
            ToolError::new(texts.render(
                &TOOLS_COMMAND_ERROR_WAIT,
                &[
                    ("tool", &tool.name),
                    ("error", &crate::tools::builtin::io_reason_in(&e, texts)),
                ],
            ))
            .hint(texts.render(&TOOLS_COMMAND_HINT_WAIT, &[]))
        })?;
    tasks.finish(DRAIN_GRACE).await;
    drop(sandbox);
    let half = (limits.max_lines / 2).max(1);
    let stdout = take(&stdout).render(limits.max_lines, "stdout", texts);
    let stderr = take(&stderr).render(half, "stderr", texts);
    let stderr = stderr.trim_end();
    match ending.status {
        None => {
            let seconds = humantime(tool.timeout);
            let values = [
                ("tool", tool.name.as_str()),
                ("seconds", seconds.as_str()),
                ("stderr", stderr),
            ];
            let message = if stderr.is_empty() {
                texts.render(&TOOLS_COMMAND_ERROR_TIMEOUT, &values)
            } else {
                texts.render(&TOOLS_COMMAND_ERROR_TIMEOUT_STDERR, &values)
            };
            Err(ToolError::new(message).hint(texts.render(&TOOLS_COMMAND_HINT_TIMEOUT, &[])))
        }
        Some(status) if !status.success() => {
            let hint = texts.render(&TOOLS_COMMAND_HINT_FAILED, &[]);
            // It died of a refused read or exec (126: found but could not be run): the
            // sandbox may be what stopped it.
            let refused = status.code() == Some(126)
                || stderr.contains("Permission denied")
                || stderr.contains("Operation not permitted");
            let hint = match refused
                .then(|| sandbox_help(&profile, ctx, &tool.run, &env))
                .flatten()
            {
                Some(help) => format!("{hint}; {help}"),
                None => hint,
            };
            let status = crate::tools::builtin::describe_status(texts, status);
            let values = [
                ("tool", tool.name.as_str()),
                ("status", status.as_str()),
                ("stderr", stderr),
            ];
            let message = if stderr.is_empty() {
                texts.render(&TOOLS_COMMAND_ERROR_FAILED, &values)
            } else {
                texts.render(&TOOLS_COMMAND_ERROR_FAILED_STDERR, &values)
            };
            Err(ToolError::new(message).hint(hint))
        }
        Some(_) if tool.stderr_on_success && !stderr.is_empty() => {
            let stdout = if stdout.is_empty() {
                texts.render(&TOOL_BASH_RESULT_EMPTY, &[])
            } else {
                stdout.trim_end().to_owned()
            };
            Ok(texts.render(
                &TOOLS_COMMAND_RESULT_BOTH,
                &[("stdout", &stdout), ("stderr", stderr)],
            ))
        }
        Some(_) => Ok(if stdout.is_empty() {
            texts.render(&TOOLS_COMMAND_RESULT_NO_OUTPUT, &[])
        } else {
            stdout
        }),
    }
}

/// [`SandboxProfile::start_failure_help`] for the tool's `argv`, its program looked up on
/// the `PATH` the tool gets (`env`), relative to the workspace.
///
/// [`SandboxProfile::start_failure_help`]: crate::process::SandboxProfile::start_failure_help
/// What a started command tool or hook reads and writes: `input` as one JSON line on its
/// stdin (then closed; a program that does not read it ends the pipe early, which is not
/// an error), its stdout and stderr captured up to `max` bytes each (stdout, stderr), by
/// the tasks returned with the captures.
pub(super) fn feed_and_capture(
    child: &mut tokio::process::Child,
    input: &Value,
    max: (usize, usize),
) -> (
    Readers,
    Arc<Mutex<StreamCapture>>,
    Arc<Mutex<StreamCapture>>,
) {
    let stdout = Arc::new(Mutex::new(StreamCapture::new(max.0)));
    let stderr = Arc::new(Mutex::new(StreamCapture::new(max.1)));
    let mut tasks = Readers(Vec::new());
    if let Some(mut pipe) = child.stdin.take() {
        let mut bytes = serde_json::to_vec(input).unwrap_or_default();
        bytes.push(b'\n');
        tasks.0.push(tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
            let _ = pipe.shutdown().await;
        }));
    }
    if let Some(pipe) = child.stdout.take() {
        tasks.0.push(tokio::spawn(pump(pipe, Arc::clone(&stdout))));
    }
    if let Some(pipe) = child.stderr.take() {
        tasks.0.push(tokio::spawn(pump(pipe, Arc::clone(&stderr))));
    }
    (tasks, stdout, stderr)
}

fn sandbox_help(
    profile: &crate::process::sandbox::SandboxProfile,
    ctx: &ToolContext,
    argv: &[String],
    env: &[(OsString, OsString)],
) -> Option<String> {
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str());
    profile.start_failure_help(argv, path, ctx.workspace())
}

/// The environment of `tool` run in `ctx`, from `vars` (the agent's): the allowlist and
/// the preset's `passEnv` as for `bash` ([`command_env`]), then the tool's own `passEnv`
/// names — passed even when they look like credentials, since the preset names them for
/// this one program (a token a metrics query needs) — then its literal `env`. Names the
/// host withholds ([`ToolContext::hidden_env`]: the model's API key) are never passed.
///
/// [`command_env`]: crate::process::env
fn environment<I>(tool: &CommandTool, ctx: &ToolContext, vars: I) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let vars: Vec<(OsString, OsString)> = vars.into_iter().collect();
    program_env(
        ctx.env_rules(),
        &vars,
        tool.pass_env.iter().map(String::as_str),
        tool.env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    )
}

/// A duration as a preset writes it (`20s`, `1500ms`).
fn humantime(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{ExternalTool, ToolCatalog, ToolDefinition, ToolName, ToolRegistry};
    use serde_json::json;

    fn registry(run: &[&str], timeout: Duration) -> ToolRegistry {
        registry_with(run, timeout, true)
    }

    fn registry_with(run: &[&str], timeout: Duration, stderr_on_success: bool) -> ToolRegistry {
        let tool = CommandTool {
            name: "t".into(),
            run: run.iter().map(|s| s.to_string()).collect(),
            pass_env: vec![],
            env: vec![("GREETING".into(), "hi".into())],
            timeout,
            stderr_on_success,
        };
        let def = ToolDefinition::external(ExternalTool {
            name: ToolName::new("t").unwrap(),
            description: "test".into(),
            schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            read_only: true,
            timeout: Some(timeout + Duration::from_secs(5)),
            handler: command_handler(tool),
        })
        .unwrap();
        let mut catalog = ToolCatalog::new();
        catalog.register_definition(def).unwrap();
        ToolRegistry::unrestricted(&catalog)
    }

    fn ctx() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path()).unwrap();
        (dir, ctx)
    }

    #[tokio::test]
    async fn arguments_arrive_on_stdin_and_stdout_comes_back() {
        let (dir, ctx) = ctx();
        std::fs::write(dir.path().join("marker"), "").unwrap();
        let r = registry(
            &["sh", "-c", "cat; echo \"$GREETING\"; ls"],
            Duration::from_secs(20),
        );
        let out = r.call("t", json!({"path": "a b"}), &ctx).await.unwrap();
        assert!(!out.is_error);
        assert_eq!(out.content, "{\"path\":\"a b\"}\nhi\nmarker\n");
    }

    #[tokio::test]
    async fn what_a_successful_command_writes_on_stderr_reaches_the_model_labelled() {
        // `python -m unittest` reports on stderr; the model got "(no output)".
        let (_dir, ctx) = ctx();
        let script = ["sh", "-c", "echo 'Ran 3 tests' >&2; echo OK >&2"];
        let r = registry(&script, Duration::from_secs(20));
        let out = r.call("t", json!({"path": "x"}), &ctx).await.unwrap();
        assert!(!out.is_error);
        assert_eq!(
            out.content,
            "--- stdout ---\n(empty)\n--- stderr ---\nRan 3 tests\nOK"
        );
        let both = ["sh", "-c", "echo result; echo note >&2"];
        let r = registry(&both, Duration::from_secs(20));
        let out = r.call("t", json!({"path": "x"}), &ctx).await.unwrap();
        assert_eq!(out.content, "--- stdout ---\nresult\n--- stderr ---\nnote");
        // `stderr: drop`: stdout only, as before.
        let r = registry_with(&both, Duration::from_secs(20), false);
        let out = r.call("t", json!({"path": "x"}), &ctx).await.unwrap();
        assert_eq!(out.content, "result\n");
        // Nothing on stderr: stdout as it is.
        let r = registry(&["sh", "-c", "echo only"], Duration::from_secs(20));
        let out = r.call("t", json!({"path": "x"}), &ctx).await.unwrap();
        assert_eq!(out.content, "only\n");
    }

    #[tokio::test]
    async fn a_non_zero_exit_is_a_tool_error_with_stderr() {
        let (_dir, ctx) = ctx();
        let r = registry(
            &["sh", "-c", "echo out; echo broken >&2; exit 3"],
            Duration::from_secs(20),
        );
        let out = r.call_for_model("t", json!({"path": "x"}), &ctx).await;
        assert!(out.is_error);
        assert!(out.content.contains("exit code: 3"), "{}", out.content);
        assert!(out.content.contains("broken"), "{}", out.content);
        assert!(!out.content.contains("out\n"), "{}", out.content);
    }

    #[tokio::test]
    async fn a_slow_command_is_killed_at_its_timeout() {
        let (_dir, ctx) = ctx();
        let r = registry(&["sh", "-c", "sleep 30"], Duration::from_millis(300));
        let started = std::time::Instant::now();
        let out = r.call_for_model("t", json!({"path": "x"}), &ctx).await;
        assert!(out.is_error);
        assert!(
            out.content.contains("did not finish within 300 ms"),
            "{}",
            out.content
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn a_strict_models_null_for_an_optional_property_means_absent() {
        let tool = CommandTool {
            name: "t".into(),
            run: vec!["cat".into()],
            pass_env: vec![],
            env: vec![],
            timeout: Duration::from_secs(20),
            stderr_on_success: true,
        };
        let def = ToolDefinition::external(ExternalTool {
            name: ToolName::new("t").unwrap(),
            description: "test".into(),
            schema: json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "opts": {"type": "object", "properties": {"depth": {"type": "integer"}}}
            }, "required": ["path"]}),
            read_only: true,
            timeout: None,
            handler: command_handler(tool),
        })
        .unwrap()
        .with_origin(crate::tools::ToolOrigin::Command { name: "t".into() });
        let mut catalog = ToolCatalog::new();
        catalog.register_definition(def).unwrap();
        let r = ToolRegistry::unrestricted(&catalog);
        let (_dir, ctx) = ctx();
        let out = r
            .call("t", json!({"path": "a", "opts": {"depth": null}}), &ctx)
            .await
            .unwrap();
        assert_eq!(out.content, "{\"path\":\"a\",\"opts\":{}}\n");
        // A required property's null is still an argument error.
        let out = r.call_for_model("t", json!({"path": null}), &ctx).await;
        assert!(out.is_error, "{}", out.content);
    }

    #[tokio::test]
    async fn a_missing_program_is_a_tool_error() {
        let (_dir, ctx) = ctx();
        let r = registry(
            &["/nonexistent/agent-presets-no-such-program"],
            Duration::from_secs(5),
        );
        let out = r.call_for_model("t", json!({"path": "x"}), &ctx).await;
        assert!(out.is_error);
        assert!(out.content.contains("could not start"), "{}", out.content);
    }

    /// A program the sandbox cannot read (this test binary, outside the workspace) does
    /// not start; the hint says the sandbox may be why, names the program and how to let
    /// it through. Without a sandbox it runs.
    #[tokio::test]
    #[allow(clippy::print_stderr)] // says why it skips where the kernel cannot sandbox
    async fn a_program_the_sandbox_cannot_read_gets_a_sandbox_hint() {
        use crate::process::{SandboxMode, SandboxProfile};
        // This test binary in a secret path of the sandbox's home: nothing is derived
        // from a program there, so the sandbox cannot read it.
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
        let exe = home.path().join(".ssh/prog");
        let current = std::env::current_exe().unwrap();
        if std::fs::hard_link(&current, &exe).is_err() {
            std::fs::copy(&current, &exe).unwrap();
        }
        let resolved = std::fs::canonicalize(&exe).unwrap();
        let run = [exe.to_str().unwrap(), "--list"];
        let (_dir, plain) = ctx();
        let boxed = plain
            .clone()
            .with_sandbox(SandboxProfile::new(SandboxMode::WorkspaceWrite).with_home(home.path()));
        let out = registry(&run, Duration::from_secs(60))
            .call_for_model("t", json!({"path": "x"}), &boxed)
            .await;
        if out.content.contains("Landlock") {
            eprintln!("skipped: this kernel cannot sandbox ({})", out.content);
            return;
        }
        assert!(out.is_error, "{}", out.content);
        assert!(
            out.content
                .contains("the `workspace-write` sandbox may be what stopped it"),
            "{}",
            out.content
        );
        assert!(
            out.content
                .contains(&format!("the program is `{}`", resolved.display())),
            "{}",
            out.content
        );
        assert!(
            out.content.contains(&format!(
                "`allowRead: [{}]`",
                resolved.parent().unwrap().display()
            )),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("--sandbox full-access"),
            "{}",
            out.content
        );
        let out = registry(&run, Duration::from_secs(60))
            .call_for_model("t", json!({"path": "x"}), &plain)
            .await;
        assert!(!out.is_error, "{}", out.content);
    }

    #[test]
    fn the_environment_is_the_allowlist_plus_the_tools_own_names_never_the_key() {
        let (_dir, ctx) = ctx();
        let ctx = ctx.with_hidden_env(["MODEL_KEY"]);
        let tool = CommandTool {
            name: "t".into(),
            run: vec!["true".into()],
            pass_env: vec!["METRICS_TOKEN".into(), "MODEL_KEY".into(), "UNSET".into()],
            env: vec![
                ("LOG_LEVEL".into(), "warn".into()),
                ("PATH".into(), "/opt/bin".into()),
            ],
            timeout: Duration::from_secs(1),
            stderr_on_success: true,
        };
        let vars = [
            ("PATH", "/usr/bin"),
            ("METRICS_TOKEN", "t0ken"),
            ("MODEL_KEY", "sk-secret"),
            ("OTHER", "x"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = environment(&tool, &ctx, vars);
        let pairs: Vec<(&str, &str)> = env
            .iter()
            .map(|(k, v)| (k.to_str().unwrap(), v.to_str().unwrap()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("PAGER", "cat"),
                ("GIT_PAGER", "cat"),
                ("METRICS_TOKEN", "t0ken"),
                ("LOG_LEVEL", "warn"),
                ("PATH", "/opt/bin"),
            ]
        );
    }

    #[tokio::test]
    async fn arguments_are_checked_before_the_command_runs() {
        let (dir, ctx) = ctx();
        let r = registry(&["sh", "-c", "touch ran"], Duration::from_secs(5));
        let out = r.call_for_model("t", json!({"nope": 1}), &ctx).await;
        assert!(out.is_error);
        assert!(!dir.path().join("ran").exists());
    }
}
