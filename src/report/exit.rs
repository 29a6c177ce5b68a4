//! How a command ended, as a process exit code: the CLI exits with it and the SARIF log
//! records it in its invocation.

/// How a command ended; the process exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Everything is fine (`0`).
    Ok = 0,
    /// A preset is invalid or a render failed (`1`).
    Invalid = 1,
    /// A usage or I/O problem (`2`).
    Usage = 2,
    /// `run`'s final answer still broke the preset's output contract after its retries
    /// (`3`).
    OutputInvalid = 3,
    /// A success check of the preset still failed after its retries (`4`).
    CheckFailed = 4,
    /// `run` was ended by SIGHUP (`129`, as shells report it).
    HungUp = 129,
    /// `run` was interrupted (Ctrl-C) (`130`, as shells report SIGINT).
    Interrupted = 130,
    /// `run` was ended by SIGTERM (`143`, as shells report it).
    Terminated = 143,
}

impl Exit {
    /// The numeric exit code.
    pub fn code(self) -> u8 {
        self as u8
    }
}
