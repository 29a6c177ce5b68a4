//! What a run of the agent shows as it goes, the way `agent-presets run` shows it: the
//! answer streamed to one writer and progress (tool calls, retries, a summary per step)
//! to the other, or the transcript as JSON lines ([`Printer`]); model text and tool calls
//! made safe for a terminal ([`shown`], [`shown_line`], [`approval_lines`]). A host
//! that drives an [`Agent`](crate::agent::Agent) gets the same bytes as the CLI by
//! handing its events to a [`Printer`] with its own [`Streams`](crate::report::Streams).
//!
//! Writes go to the writers it is given, never to the process's own streams.

mod display;
mod printer;

pub use display::{MAX_REVIEW_BYTES, approval_lines, shown, shown_line};
pub(crate) use printer::problem_json;
pub use printer::{Printer, StopSignal, report_client_error, report_flag_key_error};
