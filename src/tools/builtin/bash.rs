//! `bash`: run a shell command in the workspace, in its own process group, with a timeout
//! and capped output.
//!
//! The command's process group is killed when the shell exits, when the timeout fires and
//! when the call is dropped (e.g. by the registry's own timeout). Killing it on exit is
//! what keeps a background job that still holds the pipes (`sleep 100 &`) from hanging the
//! call; reading stops shortly after, whatever is left.
//!
//! What this does **not** do:
//! - A process that deliberately leaves the process group — `setsid`, or a daemon that
//!   starts a new session — is not tracked and may outlive the call. Containing those
//!   takes a cgroup or a sandbox around the agent.
//! - Hiding credentials from commands ([`hidden_env`]) is best-effort: the variables are
//!   removed from the command's environment, but the command runs as the same user as
//!   the agent and can still read the agent process's own environment (e.g.
//!   `/proc/$PPID/environ`) or any file the agent can read. Real isolation needs a
//!   sandbox (another user, a container, a seccomp/landlock profile).

use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

use super::limits::StreamCapture;
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance};

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
        "Run a shell command with `bash -c` in the workspace root and get its exit status, \
         stdout and stderr (each capped; long output keeps its beginning and end). The \
         command is killed, with every process in its process group, after `timeout_secs` \
         (default 120, at most 600); background processes in the group are killed when the \
         command ends. A process that leaves the group (`setsid`, daemons that start a new \
         session) is not tracked."
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        // A template over `tools`: it recommends the file tools that are visible, and
        // none that are not.
        Some(ToolGuidance::templated(
            1060.0,
            "{% macro words(names, last) %}{% for n in names %}{% if not loop.first %}\
             {% if loop.last %} {{ last }} {% else %}, {% endif %}{% endif %}{{ n }}\
             {% endfor %}{% endmacro %}\
             {% set readers = ['read_file', 'grep', 'glob', 'list_dir'] | select('in', tools) | list %}\
             {% set writers = ['edit_file', 'write_file'] | select('in', tools) | list %}\
             Use bash to build, run tests, and use command-line tools.\
             {% if readers or writers %} Prefer \
             {% if readers %}{{ words(readers, 'and') }} for reading and searching{% endif %}\
             {% if readers and writers %}, and {% endif %}\
             {% if writers %}{{ words(writers, 'or') }} for changing files{% endif %}\
             {% if (readers | length) + (writers | length) > 1 %}: they are confined to the \
             workspace and their output is easier to use.\
             {% else %}: it is confined to the workspace and its output is easier to use.\
             {% endif %}{% endif %} Commands cannot be interactive (stdin is empty); \
             background jobs are killed when the command ends, so do not start servers you \
             expect to keep running, and do not detach processes with setsid or \
             nohup-style daemonizing. Redirect very long output to a file and read it in \
             parts.",
        ))
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
        return Err(ToolError::new("the command is empty")
            .hint("give the shell command to run, e.g. `cargo test`"));
    }
    let seconds = args
        .timeout_secs
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
        .clamp(1, MAX_TIMEOUT_SECS);
    let root = ctx.workspace().to_path_buf();
    let limits = *ctx.limits();
    let hidden = hidden_env(&ctx);
    let run = run(
        &args.command,
        &root,
        &hidden,
        Duration::from_secs(u64::from(seconds)),
        limits.max_bytes / 2,
    )
    .await?;
    let half_lines = (limits.max_lines / 2).max(1);
    let report = format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        match run.status {
            Some(status) => describe(status),
            None => format!("timed out after {seconds} s"),
        },
        section(&run.stdout, half_lines, "stdout"),
        section(&run.stderr, half_lines, "stderr"),
    );
    match run.status {
        Some(_) => Ok(report),
        None => Err(ToolError::new(format!(
            "the command did not finish within {seconds} s; it and every process it started were killed. Output so far:\n{report}"
        ))
        .hint(format!(
            "raise timeout_secs (at most {MAX_TIMEOUT_SECS}) if it needs longer, or split the work into smaller commands"
        ))),
    }
}

/// What a finished (or killed) command left behind.
struct Run {
    /// `None` when the timeout fired.
    status: Option<ExitStatus>,
    stdout: StreamCapture,
    stderr: StreamCapture,
}

/// Environment variables the command's environment leaves out: the ones the host named
/// (e.g. the preset's `apiKeyEnv`), every variable whose name looks like it holds a
/// credential ([`is_secret_name`]) and every variable whose value looks like one
/// ([`is_secret_value`]), so `echo $DEEPSEEK_API_KEY` or `env` does not put a key in front
/// of the model.
///
/// Best-effort, not a security boundary: the command runs as the agent's user and can
/// still read the agent's own environment through `/proc/$PPID/environ`, or files that
/// hold the same secrets. Real isolation needs a sandbox.
fn hidden_env(ctx: &ToolContext) -> Vec<std::ffi::OsString> {
    let mut names: Vec<std::ffi::OsString> = std::env::vars_os()
        .filter(|(k, v)| {
            let name = k.to_string_lossy();
            !is_plain_name(&name)
                && (is_secret_name(&name) || is_secret_value(&v.to_string_lossy()))
        })
        .map(|(k, _)| k)
        .collect();
    names.extend(ctx.hidden_env().iter().map(std::ffi::OsString::from));
    names
}

/// Variables every command needs and that never hold a credential; never hidden by the
/// heuristics (only when the host names them).
fn is_plain_name(name: &str) -> bool {
    const PLAIN: [&str; 20] = [
        "PWD", "OLDPWD", "PATH", "HOME", "SHELL", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM",
        "TZ", "TMPDIR", "HOSTNAME", "SHLVL", "DISPLAY", "EDITOR", "VISUAL", "PAGER", "MAIL", "_",
    ];
    PLAIN.contains(&name) || name.starts_with("LC_") || name.starts_with("XDG_")
}

/// Does the name say the variable holds a credential (`GITHUB_TOKEN`, `DB_PASS`,
/// `AWS_SECRET_ACCESS_KEY`, `NPM_AUTH`, …)?
fn is_secret_name(name: &str) -> bool {
    const ENDINGS: [&str; 5] = ["_KEY", "_PAT", "_PASS", "_PWD", "_PIN"];
    const MARKERS: [&str; 12] = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "API_KEY",
        "APIKEY",
        "PRIVATE_KEY",
        "ACCESS_KEY",
        "SESSION_KEY",
        "COOKIE",
    ];
    let upper = name.to_ascii_uppercase();
    ENDINGS.iter().any(|e| upper.ends_with(e))
        || MARKERS.iter().any(|m| upper.contains(m))
        || has_auth(&upper)
}

/// `AUTH` as in `NPM_AUTH`, `OAUTH_…`, `AUTHORIZATION`, but not `AUTHOR` (`GIT_AUTHOR_NAME`),
/// `AUTHORITY` (`XAUTHORITY`, a file path) or the ssh agent's socket path.
fn has_auth(upper: &str) -> bool {
    if upper == "SSH_AUTH_SOCK" {
        return false;
    }
    upper.match_indices("AUTH").any(|(i, _)| {
        let rest = &upper[i + 4..];
        !rest.starts_with("OR") || rest.starts_with("ORIZ")
    })
}

/// Does the value look like a credential: a known key or token format, or a URL with a
/// password in it (`postgres://user:pass@host/db`)?
fn is_secret_value(value: &str) -> bool {
    static URL_WITH_PASSWORD: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| {
            regex::Regex::new(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/?#@\s:]*:[^/?#@\s]+@").ok()
        });
    !crate::secrets::find_secrets(value).is_empty()
        || URL_WITH_PASSWORD
            .as_ref()
            .is_some_and(|re| re.is_match(value))
}

async fn run(
    command: &str,
    root: &Path,
    hidden: &[std::ffi::OsString],
    timeout: Duration,
    budget: usize,
) -> Result<Run, ToolError> {
    let shell = ["/bin/bash", "/usr/bin/bash", "/bin/sh"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("sh");
    let mut command_builder = tokio::process::Command::new(shell);
    for name in hidden {
        command_builder.env_remove(name);
    }
    let mut child = command_builder
        .arg("-c")
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            ToolError::new(format!("could not start `{shell}`: {e}"))
                .hint("the host cannot run shell commands; use the file tools instead")
        })?;
    let mut group = ProcessGroup::new(child.id());

    let stdout = Arc::new(Mutex::new(StreamCapture::new(budget / 2 + budget % 2)));
    let stderr = Arc::new(Mutex::new(StreamCapture::new(budget / 2)));
    let mut readers = Readers(Vec::new());
    if let Some(pipe) = child.stdout.take() {
        readers
            .0
            .push(tokio::spawn(pump(pipe, Arc::clone(&stdout))));
    }
    if let Some(pipe) = child.stderr.take() {
        readers
            .0
            .push(tokio::spawn(pump(pipe, Arc::clone(&stderr))));
    }

    let waited = tokio::select! {
        status = child.wait() => Some(status),
        () = tokio::time::sleep(timeout) => None,
    };
    // The shell is gone or out of time: either way nothing it started may live on, and
    // nothing still holding the pipes may keep us reading.
    group.kill();
    let status = match waited {
        Some(Ok(status)) => Some(status),
        Some(Err(e)) => {
            return Err(
                ToolError::new(format!("could not wait for the command: {e}")).hint("run it again"),
            );
        }
        None => {
            let _ = tokio::time::timeout(DRAIN_GRACE, child.wait()).await;
            None
        }
    };
    readers.finish(DRAIN_GRACE).await;
    Ok(Run {
        status,
        stdout: take(&stdout),
        stderr: take(&stderr),
    })
}

fn take(capture: &Arc<Mutex<StreamCapture>>) -> StreamCapture {
    let mut guard = capture.lock().unwrap_or_else(|p| p.into_inner());
    std::mem::replace(&mut *guard, StreamCapture::new(0))
}

/// Copy a pipe into a capture until EOF.
async fn pump(mut pipe: impl AsyncRead + Unpin, capture: Arc<Mutex<StreamCapture>>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => capture
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(&buf[..n]),
        }
    }
}

/// The pipe readers; aborted when dropped, so none outlives the call.
struct Readers(Vec<JoinHandle<()>>);

impl Readers {
    /// Let the readers drain what is left, for at most `grace`.
    async fn finish(&mut self, grace: Duration) {
        let _ = tokio::time::timeout(grace, async {
            for handle in &mut self.0 {
                let _ = handle.await;
            }
        })
        .await;
    }
}

impl Drop for Readers {
    fn drop(&mut self) {
        for handle in &self.0 {
            handle.abort();
        }
    }
}

/// The command's process group; killed (SIGKILL) on [`kill`](Self::kill) or when dropped
/// without having been killed.
struct ProcessGroup {
    pgid: Option<libc::pid_t>,
}

impl ProcessGroup {
    fn new(pid: Option<u32>) -> Self {
        // 0 and 1 would address our own group or every process: never signal those.
        let pgid = pid
            .and_then(|p| libc::pid_t::try_from(p).ok())
            .filter(|&p| p > 1);
        ProcessGroup { pgid }
    }

    fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            // SAFETY: kill(2) only sends a signal; it reads and writes no memory of ours.
            // The group was created for this command by `process_group(0)`.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `exit code: 0`, or the signal that ended the shell.
fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code: {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "exit status unknown".to_owned(),
    }
}

fn section(capture: &StreamCapture, max_lines: usize, name: &str) -> String {
    let text = capture.render(max_lines, name);
    if text.is_empty() {
        "(empty)".to_owned()
    } else {
        text.strip_suffix('\n').unwrap_or(&text).to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_are_recognised() {
        for name in [
            "DEEPSEEK_API_KEY",
            "OPENAI_APIKEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "SSH_KEY",
            "GITHUB_PAT",
            "DB_PASS",
            "MYSQL_PWD",
            "PGPASSWORD",
            "SMTP_PASSWD",
            "GPG_PASSPHRASE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "NPM_AUTH",
            "HTTP_AUTHORIZATION",
            "OAUTH_CLIENT",
            "SIGNING_PRIVATE_KEY",
            "app_secret",
        ] {
            assert!(is_secret_name(name), "{name} should be hidden");
        }
        for name in [
            "PATH",
            "HOME",
            "GIT_AUTHOR_NAME",
            "XAUTHORITY",
            "SSH_AUTH_SOCK",
            "CARGO_HOME",
            "RUST_LOG",
            "KEYBOARD",
            "MONKEY",
        ] {
            assert!(!is_secret_name(name), "{name} should stay visible");
        }
        for name in [
            "PWD", "OLDPWD", "PATH", "HOME", "SHELL", "USER", "LANG", "TERM", "LC_ALL",
        ] {
            assert!(is_plain_name(name), "{name} is never hidden");
        }
    }

    #[test]
    fn credential_values_are_recognised() {
        for value in [
            "sk-abcdefghijklmnopqrstuvwxyz0123",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "postgres://app:hunter2@db.internal:5432/app",
            "https://user:token@example.com/repo.git",
            "redis://:secretpass@cache:6379",
        ] {
            assert!(is_secret_value(value), "{value} should be hidden");
        }
        for value in [
            "",
            "/usr/bin:/bin",
            "https://example.com/a:b",
            "ssh://git@github.com/org/repo.git",
            "en_US.UTF-8",
            "http://localhost:8080/",
        ] {
            assert!(!is_secret_value(value), "{value} should stay visible");
        }
    }
}
