//! The line `run` shows on a terminal while a request is in flight and no token has come
//! back yet: `waiting for MODEL… 3s`, updated in place each second and cleared before
//! anything else is written (the line is erased, the output goes where it was). Only the CLI draws it, from the agent's events and a timer;
//! on a pipe or with `--json` it is never drawn.

use std::cell::RefCell;
use std::io::Write;
use std::time::{Duration, Instant};

use crate::agent::AgentEvent;
use crate::request::Role;

/// Erase the current terminal line and go to its start.
const CLEAR_LINE: &str = "\r\x1b[2K";

#[derive(Debug, Default)]
struct State {
    /// A request is in flight since then, with nothing received yet.
    since: Option<Instant>,
    /// The seconds shown, while the line is on screen.
    shown: Option<u64>,
    /// Tool results still to come before the next request starts.
    pending_results: usize,
}

/// The in-flight indicator (see the module documentation).
#[derive(Debug)]
pub(crate) struct Waiting {
    /// `waiting for MODEL…`, already escaped for the terminal.
    label: String,
    /// Drawn at all (stderr is a terminal and the output is not `--json`).
    enabled: bool,
    state: RefCell<State>,
}

impl Waiting {
    pub(crate) fn new(label: String, enabled: bool) -> Self {
        Waiting {
            label,
            enabled,
            state: RefCell::new(State::default()),
        }
    }

    /// Before `event` is printed: clear the line, and note whether a request is now in
    /// flight (after the prompt, a changed header or the last tool result of a step) or
    /// answering (a streamed piece, a whole answer, a tool call).
    pub(crate) fn before(&self, event: &AgentEvent<'_>, err: &mut dyn Write) {
        if !self.enabled {
            return;
        }
        self.clear(err);
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return;
        };
        match event {
            AgentEvent::Message { message, .. } if message.role == Role::Assistant => {
                state.pending_results = message.tool_calls.len();
                state.since = None;
            }
            AgentEvent::Message { message, .. } if message.role == Role::Tool => {
                state.pending_results = state.pending_results.saturating_sub(1);
                if state.pending_results == 0 {
                    state.since = Some(Instant::now());
                }
            }
            AgentEvent::Message { .. }
            | AgentEvent::SystemPrompt { .. }
            | AgentEvent::RequestHeader { .. } => {
                state.since.get_or_insert_with(Instant::now);
            }
            // A retry keeps waiting: the line comes back after the retry's own.
            AgentEvent::Retry { .. }
            | AgentEvent::PolicyDecision { .. }
            | AgentEvent::HookDecision { .. }
            | AgentEvent::OutputChecked { .. }
            | AgentEvent::CheckFinished { .. } => {}
            AgentEvent::Stream { .. }
            | AgentEvent::ToolCall { .. }
            | AgentEvent::StepFinished { .. } => state.since = None,
        }
    }

    /// Erase the line if it is on screen (before other output, at the end of the run).
    pub(crate) fn clear(&self, err: &mut dyn Write) {
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return;
        };
        if state.shown.take().is_some() {
            let _ = write!(err, "{CLEAR_LINE}");
            let _ = err.flush();
        }
    }

    /// Draw the line (first after 200 ms: a quick answer shows none) and redraw it each
    /// time the seconds change; never ends (run it next to the request in a `select!`).
    pub(crate) async fn tick(&self) {
        if !self.enabled {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let stderr = std::io::stderr();
            self.draw(&mut stderr.lock());
        }
    }

    fn draw(&self, err: &mut dyn Write) {
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return;
        };
        let Some(since) = state.since else {
            return;
        };
        let seconds = since.elapsed().as_secs();
        if state.shown == Some(seconds) {
            return;
        }
        let _ = write!(err, "{CLEAR_LINE}{} {seconds}s", self.label);
        let _ = err.flush();
        state.shown = Some(seconds);
    }
}
