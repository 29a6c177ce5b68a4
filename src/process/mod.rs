//! Running a program safely: one home for everything the agent does to start a program on
//! the model's or a preset's behalf — a `bash` command, a command tool, a stdio MCP
//! server — and one entry point, `spawn`, that all three use.
//!
//! - [`mod@env`]: the child's environment, an allowlist ([`BASE_COMMAND_ENV`]) plus what the
//!   preset passes ([`EnvRules`]), never a credential-looking name or value;
//! - [`sandbox`]: what the program may read, write and reach ([`SandboxProfile`],
//!   [`SandboxMode`]), enforced with Landlock and seccomp on Linux;
//! - [`containment`]: how nothing it starts outlives its call ([`Containment`]: a cgroup,
//!   a subreaper supervisor or a process group, each in a file of its own) and the
//!   resource limits of the call ([`CommandLimits`]).
//!
//! Below `tools` (which calls it) and above nothing but `secrets`: it never imports the
//! tools or the prompt.

pub mod containment;
pub mod env;
pub mod sandbox;

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::path::Path;
use std::process::Stdio;

pub use containment::{CommandLimits, Containment};
pub use env::{BASE_COMMAND_ENV, EnvRules};
pub use sandbox::{
    ETC_DENIED, PreparedSandbox, SECRET_PATHS, SandboxError, SandboxMode, SandboxProfile,
};

pub(crate) use containment::{Contained, describe};

/// Where the program starts.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WorkDir<'a> {
    /// The directory an open descriptor holds (the workspace root's, so the program starts
    /// in what the root was when it was opened, not in whatever its path names now). The
    /// caller keeps it open while spawning.
    Fd(RawFd),
    /// A path.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    Path(&'a Path),
}

/// What the program's standard input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    /// Empty (`/dev/null`).
    Null,
    /// A pipe the caller writes to.
    Piped,
}

/// What to run: program, arguments, environment (already filtered by [`env`]'s rules),
/// working directory and standard input. Standard output and error are always pipes.
pub(crate) struct Program<'a> {
    pub(crate) program: &'a OsStr,
    pub(crate) args: &'a [String],
    pub(crate) env: &'a [(OsString, OsString)],
    pub(crate) dir: WorkDir<'a>,
    pub(crate) stdin: Input,
}

/// How the program is confined: its containment, limits and sandbox, with `workspace` the
/// directory the sandbox lets it read (and, in `workspace-write`, write).
pub(crate) struct Confinement<'a> {
    pub(crate) containment: Containment,
    pub(crate) limits: CommandLimits,
    pub(crate) profile: &'a SandboxProfile,
    pub(crate) workspace: &'a Path,
}

/// Why a program did not start.
#[derive(Debug)]
pub(crate) enum SpawnError {
    /// The sandbox cannot be enforced or set up: the program was not run.
    Sandbox(SandboxError),
    /// The program could not be started (missing, not executable, refused).
    Start(io::Error),
}

/// A program running under its containment and sandbox.
pub(crate) struct Spawned {
    /// The process and what contains it.
    pub(crate) contained: Contained,
    /// The sandbox (its private temporary directory lives as long as this): keep it until
    /// the program's tree is gone.
    pub(crate) sandbox: PreparedSandbox,
}

/// Start `program` under `how`: the sandbox is prepared (in the agent), `TMPDIR` points to
/// its private temporary directory when sandboxed, and the program is spawned under the
/// wanted containment (or the next weaker one that works here).
pub(crate) fn spawn(program: &Program<'_>, how: &Confinement<'_>) -> Result<Spawned, SpawnError> {
    let sandbox = how
        .profile
        .prepare(how.workspace)
        .map_err(SpawnError::Sandbox)?;
    let mut env: Vec<(OsString, OsString)> = program.env.to_vec();
    if let Some(temp) = sandbox.temp_dir() {
        // The only place outside the workspace a sandboxed program may write.
        env.retain(|(name, _)| name != "TMPDIR");
        env.push(("TMPDIR".into(), temp.as_os_str().to_owned()));
    }
    let build = || {
        let mut command = tokio::process::Command::new(program.program);
        match program.dir {
            WorkDir::Fd(root) => {
                // SAFETY: fchdir(2) is async-signal-safe; the caller keeps the descriptor
                // open while the program is spawned.
                unsafe {
                    command.pre_exec(move || {
                        if libc::fchdir(root) == 0 {
                            Ok(())
                        } else {
                            Err(io::Error::last_os_error())
                        }
                    });
                }
            }
            WorkDir::Path(dir) => {
                command.current_dir(dir);
            }
        }
        command
            .args(program.args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(match program.stdin {
                Input::Null => Stdio::null(),
                Input::Piped => Stdio::piped(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    };
    let contained = containment::spawn(&build, how.containment, how.limits, &sandbox)
        .map_err(SpawnError::Start)?;
    Ok(Spawned { contained, sandbox })
}
