//! [`Printer`]: what `run` shows of a run as it goes, for a person (the answer on one
//! stream, progress on the other) or for a program (the transcript as JSON lines).

use std::time::Duration;

use serde_json::{Value, json};

use super::display::{shown, shown_line};
use crate::agent::{AgentEvent, RequestHeader, SystemPromptReason};
use crate::client::ClientError;
use crate::preset::output::OutputProblem;
use crate::provider::{StreamEvent, Usage};
use crate::redact::{DisplayContext, Redactor, StreamRedactor};
use crate::report::{Exit, Streams as Io, Style, mask};
use crate::request::{Message, Role, ToolCall};

/// A signal that ends `run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP.
    HangUp,
}

impl StopSignal {
    /// `SIGINT`, `SIGTERM` or `SIGHUP`.
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
            StopSignal::HangUp => "SIGHUP",
        }
    }

    /// 128 + the signal's number, as shells report it.
    pub fn exit(self) -> Exit {
        match self {
            StopSignal::Interrupt => Exit::Interrupted,
            StopSignal::Terminate => Exit::Terminated,
            StopSignal::HangUp => Exit::HungUp,
        }
    }
}

/// A client error when the key's variable came from `--api-key-env`: a missing key is
/// the flag's variable, not the preset's.
pub fn report_flag_key_error(e: &ClientError, io: &mut Io<'_>) -> Exit {
    let ClientError::MissingApiKey { var, .. } = e else {
        return report_client_error(e, io);
    };
    let _ = writeln!(
        io.err,
        "{}: {}",
        io.err_style.error("error"),
        mask(&e.to_string())
    );
    let _ = writeln!(
        io.err,
        "  = {}: export {var}=<your key>, or pass the variable that holds it with `--api-key-env NAME`",
        io.err_style.bold("help")
    );
    Exit::Invalid
}

/// A client error on stderr, secrets masked, with its help; exit 1.
pub fn report_client_error(e: &ClientError, io: &mut Io<'_>) -> Exit {
    let _ = writeln!(
        io.err,
        "{}: {}",
        io.err_style.error("error"),
        mask(&e.to_string())
    );
    if let Some(help) = e.help() {
        let _ = writeln!(io.err, "  = {}: {help}", io.err_style.bold("help"));
    }
    Exit::Invalid
}

/// Renders agent events: the answer to stdout and progress to stderr, or JSON lines.
/// Everything from the model goes through the client's [`Redactor`] (streamed text and
/// reasoning through a [`StreamRedactor`] each, so a key split across pieces is masked
/// too); human output is also escaped ([`shown`], [`shown_line`]); JSON lines stay exact
/// JSON, with every string redacted.
pub struct Printer {
    json: bool,
    out_style: Style,
    err_style: Style,
    /// Streamed text is on stdout without its final newline yet.
    text_open: bool,
    /// Reasoning is on stderr without its final newline yet.
    reasoning_open: bool,
    headers: usize,
    /// Calls of the current answer not yet shown with a `→` line (the agent announces
    /// a call only when it runs, so a refused one is shown with its result).
    unannounced: Vec<ToolCall>,
    redactor: Redactor,
    text: StreamRedactor,
    reasoning: StreamRedactor,
    /// The variable the key is read from (its name only), for the run header.
    pub key_env: Option<String>,
    /// The run has an output contract: the answer's text is transcript (stderr) and
    /// stdout holds only the validated object ([`Printer::output`]).
    text_to_stderr: bool,
}

impl Printer {
    /// A printer of JSON lines (`json`) or of text in these styles.
    pub fn new(json: bool, out_style: Style, err_style: Style) -> Self {
        Printer {
            json,
            out_style,
            err_style,
            text_open: false,
            reasoning_open: false,
            headers: 0,
            unannounced: Vec::new(),
            redactor: Redactor::none(),
            text: Redactor::none().stream(),
            reasoning: Redactor::none().stream(),
            key_env: None,
            text_to_stderr: false,
        }
    }

    /// The run has an output contract: stream the answer's text to stderr, so stdout
    /// holds only the validated object (`agent-presets run triage "…" > verdict.json`).
    pub fn answer_to_stderr(&mut self) {
        self.text_to_stderr = true;
    }

    /// Redact everything shown with `redactor` (the client's).
    pub fn set_redactor(&mut self, redactor: Redactor) {
        self.text = redactor.stream();
        self.reasoning = redactor.stream();
        self.redactor = redactor;
    }

    fn json_line(&self, io: &mut Io<'_>, value: &Value) {
        let mut value = value.clone();
        self.redactor.redact_json(&mut value);
        let _ = writeln!(io.out, "{value}");
        let _ = io.out.flush();
    }

    /// Write streamed answer text (already redacted) to stdout.
    fn write_text(&mut self, io: &mut Io<'_>, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.text_to_stderr {
            let style = self.err_style;
            let _ = write!(io.err, "{}", shown(text, DisplayContext::Text, style));
        } else {
            let _ = write!(
                io.out,
                "{}",
                shown(text, DisplayContext::Text, self.out_style)
            );
            let _ = io.out.flush();
        }
        self.text_open = !text.ends_with('\n');
    }

    /// Write streamed reasoning (already redacted) to stderr.
    fn write_reasoning(&mut self, io: &mut Io<'_>, text: &str) {
        if text.is_empty() {
            return;
        }
        let style = self.err_style;
        let _ = write!(
            io.err,
            "{}",
            style.dim(shown(text, DisplayContext::Text, style))
        );
        self.reasoning_open = !text.ends_with('\n');
    }

    fn end_reasoning(&mut self, io: &mut Io<'_>) {
        let rest = self.reasoning.finish();
        self.write_reasoning(io, &rest);
        if self.reasoning_open {
            let _ = writeln!(io.err);
            self.reasoning_open = false;
        }
    }

    /// No streamed answer or reasoning line is open: other lines may go to stderr.
    pub fn between_lines(&self) -> bool {
        !self.text_open && !self.reasoning_open
    }

    /// End the streamed text (and reasoning) with a newline if it is open.
    pub fn end_text(&mut self, io: &mut Io<'_>) {
        let rest = self.text.finish();
        self.write_text(io, &rest);
        if self.text_open {
            if self.text_to_stderr {
                let _ = writeln!(io.err);
            } else {
                let _ = writeln!(io.out);
                let _ = io.out.flush();
            }
            self.text_open = false;
        }
        self.end_reasoning(io);
    }

    /// Show one event of the agent.
    pub fn event(&mut self, event: AgentEvent<'_>, io: &mut Io<'_>) {
        if self.json {
            self.json_event(event, io);
        } else {
            self.human_event(event, io);
        }
    }

    fn json_event(&mut self, event: AgentEvent<'_>, io: &mut Io<'_>) {
        let line = match event {
            AgentEvent::RequestHeader { step, header } => {
                let mut line = header_json(step, header);
                line["apiKeyEnv"] = json!(self.key_env);
                line
            }
            AgentEvent::Message { step, message } => message_json(step, message),
            AgentEvent::SystemPrompt { step, reason, text } => system_json(step, reason, text),
            AgentEvent::StepFinished {
                step,
                finish,
                usage,
                elapsed,
            } => json!({
                "type": "step",
                "step": step,
                "finish": finish.to_string(),
                "usage": usage,
                "elapsedMs": elapsed.as_millis() as u64,
            }),
            AgentEvent::Retry {
                step,
                attempt,
                delay,
                error,
            } => json!({
                "type": "retry",
                "step": step,
                "attempt": attempt,
                "delayMs": delay.as_millis() as u64,
                "error": mask(&error.to_string()),
            }),
            AgentEvent::PolicyDecision {
                step,
                call,
                decision,
            } => json!({
                "type": "policy",
                "step": step,
                "id": call.id,
                "tool": call.name,
                "verdict": decision.verdict.as_str(),
                "decision": decision,
                "explain": mask(&decision.explain()),
            }),
            AgentEvent::HookDecision {
                step,
                event,
                hook,
                call,
                decision,
            } => json!({
                "type": "hook",
                "step": step,
                "event": event.as_str(),
                "hook": mask(&hook.label()),
                "id": call.map(|c| c.id.as_str()),
                "tool": call.map(|c| c.name.as_str()),
                "verdict": decision.verdict.as_str(),
                "reason": decision.reason.as_deref().map(mask),
                "failure": decision.failure.as_deref().map(mask),
                "rewritten": decision.updated_input.is_some(),
            }),
            AgentEvent::OutputChecked {
                step,
                attempt,
                retries,
                problems,
            } => json!({
                "type": "output",
                "step": step,
                "attempt": attempt,
                "retries": retries,
                "valid": problems.is_empty(),
                "problems": problems.iter().map(problem_json).collect::<Vec<_>>(),
            }),
            AgentEvent::CheckFinished {
                step,
                check,
                attempt,
                run,
            } => json!({
                "type": "check",
                "step": step,
                "check": mask(&check.label()),
                "attempt": attempt,
                "retries": check.retries,
                "passed": run.passed(),
                "ending": run.ending_text(),
                "elapsedMs": run.elapsed_ms,
                "output": mask(&run.output),
            }),
            AgentEvent::Stream { .. } | AgentEvent::ToolCall { .. } => return,
        };
        self.json_line(io, &line);
    }

    fn human_event(&mut self, event: AgentEvent<'_>, io: &mut Io<'_>) {
        let style = self.err_style;
        match event {
            AgentEvent::Stream {
                event: StreamEvent::Text(t),
                ..
            } => {
                self.end_reasoning(io);
                let safe = self.text.push(t);
                self.write_text(io, &safe);
            }
            AgentEvent::Stream {
                event: StreamEvent::Reasoning(t),
                ..
            } => {
                let safe = self.reasoning.push(t);
                self.write_reasoning(io, &safe);
            }
            AgentEvent::Stream { .. } => {}
            // The header line below says when the prefix changes; the text is in `--json`.
            AgentEvent::SystemPrompt { .. } => {}
            AgentEvent::RequestHeader { header, .. } => {
                self.end_text(io);
                self.headers += 1;
                let what = if self.headers == 1 {
                    "model"
                } else {
                    "the request header changed; the provider's prompt cache starts over"
                };
                let _ = writeln!(
                    io.err,
                    "{} {} · {} · {} tools · prefix {}{}",
                    style.dim(format!("{what}:")),
                    header.provider,
                    shown_line(&self.redactor, &header.model, 200, style),
                    header.tools.len(),
                    short_fingerprint(&header.fingerprint),
                    key_note(self.key_env.as_deref(), &self.redactor, style)
                );
            }
            // Which rule decided a call: a denied call shows it, others only when a rule
            // (not the tool's default) decided.
            AgentEvent::PolicyDecision { decision, call, .. } => {
                if decision.rule().is_some() || decision.verdict == crate::policy::Verdict::Deny {
                    self.end_text(io);
                    let line =
                        format!("{} `{}`: {}", "permissions:", call.name, decision.explain());
                    let _ = writeln!(
                        io.err,
                        "{}",
                        style.dim(shown_line(&self.redactor, &line, 400, style))
                    );
                }
            }
            // A hook that ran: shown unless it simply let things go on.
            AgentEvent::HookDecision {
                event,
                hook,
                call,
                decision,
                ..
            } => {
                let plain = decision.verdict == crate::hooks::HookVerdict::Continue
                    && decision.failure.is_none()
                    && decision.updated_input.is_none();
                if !plain {
                    self.end_text(io);
                    let about = call.map(|c| format!(" `{}`", c.name)).unwrap_or_default();
                    let line = format!(
                        "hook {}{about} `{}`: {}",
                        event.key(),
                        hook.label(),
                        decision.explain()
                    );
                    let _ = writeln!(
                        io.err,
                        "{}",
                        style.dim(shown_line(&self.redactor, &line, 400, style))
                    );
                }
            }
            AgentEvent::OutputChecked {
                attempt,
                retries,
                problems,
                ..
            } => {
                self.end_text(io);
                let of = attempt_of(attempt, retries);
                if problems.is_empty() {
                    let _ = writeln!(
                        io.err,
                        "{}",
                        style.dim(format!("✓ the answer matches the output schema{of}"))
                    );
                } else {
                    let _ = writeln!(
                        io.err,
                        "{}",
                        style.error(format!(
                            "✗ the answer breaks the output schema{of}: {} problem{}",
                            problems.len(),
                            if problems.len() == 1 { "" } else { "s" }
                        ))
                    );
                    for p in problems.iter() {
                        let line = shown_line(&self.redactor, &p.to_string(), 300, style);
                        let _ = writeln!(io.err, "    {line}");
                    }
                }
            }
            AgentEvent::CheckFinished {
                check,
                attempt,
                run,
                ..
            } => {
                self.end_text(io);
                let label = shown_line(&self.redactor, &check.label(), 200, style);
                let of = attempt_of(attempt, check.retries);
                let secs = run.elapsed_ms as f64 / 1000.0;
                if run.passed() {
                    let _ = writeln!(
                        io.err,
                        "{}",
                        style.dim(format!("✓ check `{label}` passed{of} ({secs:.1} s)"))
                    );
                } else {
                    let _ = writeln!(
                        io.err,
                        "{}",
                        style.error(format!(
                            "✗ check `{label}` failed{of}: {} ({secs:.1} s)",
                            run.ending_text()
                        ))
                    );
                    let lines: Vec<&str> = run.output.lines().collect();
                    let tail = &lines[lines.len().saturating_sub(6)..];
                    for l in tail {
                        let line = shown_line(&self.redactor, l, 200, style);
                        let _ = writeln!(io.err, "    {}", style.dim(line));
                    }
                }
            }
            AgentEvent::ToolCall { call, .. } => {
                self.end_text(io);
                self.unannounced.retain(|c| c.id != call.id);
                call_line(call, &self.redactor, style, io);
            }
            AgentEvent::Message { message, .. } if message.role == Role::Assistant => {
                self.unannounced = message.tool_calls.clone();
            }
            AgentEvent::Message { message, .. } if message.role == Role::Tool => {
                self.end_text(io);
                if let Some(i) = self
                    .unannounced
                    .iter()
                    .position(|c| Some(&c.id) == message.tool_call_id.as_ref())
                {
                    let call = self.unannounced.remove(i);
                    call_line(&call, &self.redactor, style, io);
                }
                let first = message.content.lines().next().unwrap_or_default();
                let lines = message.content.lines().count();
                let summary = if message.is_error {
                    style.error(format!(
                        "✗ {}",
                        shown_line(&self.redactor, first, 160, style)
                    ))
                } else {
                    style.dim(format!(
                        "✓ {lines} line{}",
                        if lines == 1 { "" } else { "s" }
                    ))
                };
                let _ = writeln!(io.err, "  {summary}");
            }
            AgentEvent::Message { .. } => {}
            AgentEvent::Retry {
                attempt,
                delay,
                error,
                ..
            } => {
                self.end_text(io);
                let _ = writeln!(
                    io.err,
                    "{}: {}; retrying in {:.1} s (attempt {} failed)",
                    style.warning("retry"),
                    mask(&self.redactor.redact(&error.to_string())),
                    delay.as_secs_f64(),
                    attempt
                );
            }
            AgentEvent::StepFinished {
                step,
                usage,
                elapsed,
                ..
            } => {
                self.end_text(io);
                let _ = writeln!(
                    io.err,
                    "{}",
                    style.dim(step_summary(step, usage.as_ref(), elapsed))
                );
            }
        }
    }

    /// The `done` event of a run that ended with `outcome` after `steps` steps.
    pub fn done(&mut self, io: &mut Io<'_>, outcome: &str, steps: Option<usize>) {
        if self.json {
            self.json_line(
                io,
                &json!({"type": "done", "outcome": outcome, "steps": steps}),
            );
        }
    }

    /// The end of a run answered under an output contract: the `done` event carries
    /// the validated object (`--json`), or the object is printed as JSON on stdout.
    pub fn done_with_output(&mut self, io: &mut Io<'_>, steps: usize, output: &Value) {
        let mut output = output.clone();
        self.redactor.redact_json(&mut output);
        if self.json {
            self.json_line(
                io,
                &json!({"type": "done", "outcome": "answered", "steps": steps, "output": output}),
            );
        } else {
            let text = serde_json::to_string_pretty(&output).unwrap_or_else(|_| output.to_string());
            let _ = writeln!(io.out, "{text}");
            let _ = io.out.flush();
        }
    }

    /// The `done` event of a run whose last answer still broke the output contract, or
    /// whose success check still failed: its outcome, the last answer and why.
    pub fn done_unmet(&mut self, io: &mut Io<'_>, outcome: &str, steps: usize, detail: Value) {
        if self.json {
            let mut line = json!({"type": "done", "outcome": outcome, "steps": steps});
            if let (Some(line), Value::Object(detail)) = (line.as_object_mut(), detail) {
                line.extend(detail);
            }
            self.json_line(io, &line);
        }
    }

    /// The `done` event of a run ended by a signal.
    pub fn interrupted(&mut self, io: &mut Io<'_>, signal: StopSignal) {
        if self.json {
            self.json_line(
                io,
                &json!({"type": "done", "outcome": "interrupted", "steps": null, "signal": signal.name()}),
            );
        }
    }

    /// The `done` event of a run that failed, with what went wrong (secrets masked), so
    /// a transcript says why it ends.
    pub fn failed(&mut self, io: &mut Io<'_>, error: &str) {
        if self.json {
            self.json_line(
                io,
                &json!({"type": "done", "outcome": "error", "steps": null, "error": mask(error)}),
            );
        }
    }
}

/// ` (attempt 2 of 3)` when retries are allowed, else nothing.
fn attempt_of(attempt: u32, retries: u32) -> String {
    if retries == 0 {
        String::new()
    } else {
        format!(" (attempt {attempt} of {})", retries + 1)
    }
}

/// An output problem as JSON: where, what was expected, what was found.
pub(crate) fn problem_json(p: &OutputProblem) -> Value {
    json!({"pointer": p.pointer, "expected": mask(&p.expected), "found": mask(&p.found), "message": mask(&p.message)})
}

/// `→ name {arguments}` on stderr: a call the model made, redacted, escaped, cut.
fn call_line(call: &ToolCall, redactor: &Redactor, style: Style, io: &mut Io<'_>) {
    let _ = writeln!(
        io.err,
        "{} {} {}",
        style.bold("→"),
        style.bold(shown_line(redactor, &call.name, 64, style)),
        style.dim(shown_line(redactor, &call.arguments, 200, style))
    );
}

/// `sha256:` and the first 12 hex digits: enough to tell prefixes apart at a glance (the
/// full one is in `--json`).
fn short_fingerprint(fingerprint: &crate::request::Fingerprint) -> String {
    let mut out = String::from("sha256:");
    for b in &fingerprint.as_bytes()[..6] {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// ` · key from NAME`: which variable the key is read from (never its value).
fn key_note(var: Option<&str>, redactor: &Redactor, style: Style) -> String {
    var.map(|v| format!(" · key from {}", shown_line(redactor, v, 64, style)))
        .unwrap_or_default()
}

fn step_summary(step: usize, usage: Option<&Usage>, elapsed: Duration) -> String {
    let tokens = match usage {
        Some(u) => format!(
            "{} in ({} cached) · {} out",
            group(u.input_tokens),
            group(u.cached_tokens),
            group(u.output_tokens)
        ),
        None => "no token counts reported".to_owned(),
    };
    format!("step {step} · {tokens} · {:.1} s", elapsed.as_secs_f64())
}

/// `12345` → `12,345`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn header_json(step: usize, header: &RequestHeader) -> Value {
    let mut value = json!({"type": "request-header", "step": step});
    if let (Some(obj), Ok(Value::Object(fields))) =
        (value.as_object_mut(), serde_json::to_value(header))
    {
        obj.extend(fields);
    }
    value
}

/// `{"type": "system-prompt", "step", "reason", "variables"?, "text"}`: `variables` names
/// what changed for `variables-changed`.
fn system_json(step: usize, reason: &SystemPromptReason, text: &str) -> Value {
    let mut value = json!({"type": "system-prompt", "step": step, "reason": reason.as_str()});
    if let SystemPromptReason::VariablesChanged(names) = reason {
        value["variables"] = json!(names);
    }
    value["text"] = json!(text);
    value
}

fn message_json(step: usize, message: &Message) -> Value {
    let mut value = json!({"type": "message", "step": step});
    if let (Some(obj), Ok(Value::Object(fields))) =
        (value.as_object_mut(), serde_json::to_value(message))
    {
        obj.extend(fields);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }
}
