//! [`Observed`]: what one run of an agent did, in the terms a test case asserts on.

use serde::{Deserialize, Serialize};

/// What one run did: every tool call in order, the final answer and how the run ended.
///
/// Built by replaying a cassette (or by a live run of a test case); checked by a case's
/// `expect` block.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Observed {
    /// Model requests made (1 for a run answered without a tool call).
    pub steps: usize,
    /// Every tool call the model made, in the order the agent ran them.
    pub calls: Vec<ObservedCall>,
    /// The final answer's text, when the run answered.
    pub answer: Option<String>,
    /// The validated output object, when the preset declares an output contract.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
    /// How the run ended.
    pub outcome: ObservedOutcome,
}

/// One tool call and its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObservedCall {
    /// The step (1-based) whose answer made the call.
    pub step: usize,
    /// The tool's wire name (`read_file`, `mcp__time__get_current_time`, a command tool's name).
    pub tool: String,
    /// The arguments as the model sent them (parsed JSON; a string when they were not JSON).
    pub arguments: serde_json::Value,
    /// The result text the model was given.
    pub result: String,
    /// The result was an error (refused, failed, or the tool reported one).
    pub is_error: bool,
}

/// How a run ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", deny_unknown_fields)]
pub enum ObservedOutcome {
    /// The model gave a final answer.
    #[default]
    Answered,
    /// The step limit was reached while the model still called tools.
    StepLimit,
    /// The final answer still broke the output contract after its retries.
    OutputInvalid,
    /// A success check still failed after its retries.
    CheckFailed {
        /// The check, as one line (its argv).
        check: String,
    },
    /// The run stopped with an error (its message, redacted).
    Error {
        /// What went wrong.
        message: String,
    },
}
