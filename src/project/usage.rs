//! [`UsageError`]: a request the project layer refuses because of how it was asked.

use std::fmt;

/// A refusal caused by the invocation (a flag, a variable, a path), not by a preset: what
/// is wrong and what to do about it. The CLI exits 2 on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError {
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

impl UsageError {
    /// A refusal without help.
    pub fn new(message: impl Into<String>) -> Self {
        UsageError {
            message: message.into(),
            help: None,
        }
    }

    /// A refusal with (optional) help.
    pub fn with(message: impl Into<String>, help: Option<String>) -> Self {
        UsageError {
            message: message.into(),
            help,
        }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UsageError {}
