//! Recording a run (feature `client`): [`Recorder`] stands between the agent and the
//! live transport and keeps every request body and the turn that answered it;
//! [`cassette`] puts those, the tool results (from the history) and the outcome into a
//! [`Cassette`] once the run ends. What is written passes [`recording_redactor`]: the
//! provider key, the `passEnv` values and the MCP servers' header secrets, in every form
//! the redactor knows, plus hex.

use std::cell::RefCell;

use serde_json::{Map, Value};

use super::cassette::{
    CASSETTE_FORMAT, Cassette, CheckResult, Header, HookResult, RUNTIME_VALUES, RecordedOutcome,
    RecordedRequest, Step, ToolKind, ToolResult, Turn,
};
use crate::agent::{AgentError, ModelTransport, Outcome, RequestBody, TransportFuture};
use crate::client::ClientEvent;
use crate::endpoint::{Dialect, ModelSettings};
use crate::hooks::HookEvent;
use crate::preset::ValidPreset;
use crate::project::lock::PresetLock;
use crate::prompt::Values;
use crate::redact::Redactor;
use crate::request::{Message, Role};
use crate::tools::{ToolOrigin, ToolRegistry};

/// Wraps a live transport and keeps every body sent and the turn that came back.
#[derive(Debug)]
pub struct Recorder<'a> {
    inner: &'a dyn ModelTransport,
    steps: RefCell<Vec<(RequestBody, Option<Turn>)>>,
}

impl<'a> Recorder<'a> {
    /// Record what goes through `inner`.
    pub fn new(inner: &'a dyn ModelTransport) -> Self {
        Recorder {
            inner,
            steps: RefCell::new(Vec::new()),
        }
    }
}

impl ModelTransport for Recorder<'_> {
    fn settings(&self) -> &ModelSettings {
        self.inner.settings()
    }

    fn stream(&self) -> bool {
        self.inner.stream()
    }

    fn send<'a>(
        &'a self,
        body: RequestBody,
        on_event: &'a mut dyn FnMut(ClientEvent<'_>),
    ) -> TransportFuture<'a> {
        Box::pin(async move {
            let step = {
                let mut steps = self.steps.borrow_mut();
                steps.push((body.clone(), None));
                steps.len()
            };
            let result = self.inner.send(body, on_event).await;
            if let Ok(turn) = &result
                && let Some(slot) = self.steps.borrow_mut().get_mut(step - 1)
            {
                slot.1 = Some(Turn::new(step, turn));
            }
            result
        })
    }
}

/// Recording is refused where `CI` is set: a cassette is made on purpose, by a person,
/// and reviewed; CI replays it.
pub fn check_recording_allowed() -> Result<(), String> {
    match std::env::var_os("CI") {
        Some(v) if !v.is_empty() => Err(
            "recording is refused under CI (`CI` is set): record on your machine, commit the cassette, and let CI replay it with `agent-presets test`".into(),
        ),
        _ => Ok(()),
    }
}

/// A redactor for what a recording of `preset` against `settings` may contain: the API
/// key (the value of the variable `settings` names), the values of every `passEnv`
/// variable (the preset's and its MCP servers') and of the servers' header variables,
/// each also as lowercase hex (the redactor folds case). `vars` is the agent's
/// environment.
pub fn recording_redactor(
    preset: &ValidPreset,
    settings: &ModelSettings,
    vars: &[(std::ffi::OsString, std::ffi::OsString)],
) -> Redactor {
    let mut names: Vec<String> = preset.pass_env().iter().map(|s| (*s).to_owned()).collect();
    names.extend(settings.api_key_env.iter().cloned());
    for server in preset.mcp_servers() {
        names.extend(
            server
                .spec
                .pass_env
                .iter()
                .flatten()
                .map(|p| p.value.clone()),
        );
        for (_, header) in server.spec.headers.iter().flat_map(|h| h.iter()) {
            names.extend(header.from_env.iter().map(|v| v.value.clone()));
        }
    }
    let mut secrets: Vec<String> = Vec::new();
    for name in &names {
        let value = vars
            .iter()
            .find(|(k, _)| k.to_str() == Some(name.as_str()))
            .and_then(|(_, v)| v.to_str());
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            secrets.push(value.to_owned());
            secrets.push(hex(value.as_bytes()));
        }
    }
    Redactor::new(secrets)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a recorded run was started with.
#[derive(Clone, Copy, Debug)]
pub struct RecordedRun<'a> {
    /// The preset's name.
    pub preset: &'a str,
    /// Its lock entry (`project::lock::entry`), taken before the run.
    pub entry: &'a PresetLock,
    /// The tools the run could call.
    pub registry: &'a ToolRegistry,
    /// The endpoint.
    pub settings: &'a ModelSettings,
    /// The prompt.
    pub prompt: &'a str,
    /// The values every step was rendered with (the date pinned).
    pub values: &'a Values,
    /// The step limit.
    pub max_steps: usize,
    /// Each success check run, after the final answer of its step, in order.
    pub checks: &'a [CheckResult],
    /// Each hook run, in order.
    pub hooks: &'a [HookResult],
}

/// The cassette of a run that went through `recorder`: its header from `run`, the
/// preset's lock entry, every step with the tool results `history` holds, and
/// `outcome`.
pub fn cassette(
    run: RecordedRun<'_>,
    recorder: &Recorder<'_>,
    history: &[Message],
    outcome: &Result<Outcome, AgentError>,
    redactor: &Redactor,
) -> Cassette {
    let entry = run.entry.clone();
    let mut runtime = Map::new();
    let mut variables = Map::new();
    for (name, value) in run.values.iter() {
        let json = serde_json::to_value(value).unwrap_or(Value::Null);
        if RUNTIME_VALUES.contains(&name) {
            runtime.insert(name.to_owned(), json);
        } else {
            variables.insert(name.to_owned(), json);
        }
    }
    let header = Header {
        format: CASSETTE_FORMAT,
        preset: run.preset.to_owned(),
        fingerprint: entry.fingerprint.clone(),
        tokens: entry.tokens,
        provider: run.settings.provider.as_str().to_owned(),
        dialect: match run.settings.dialect() {
            Dialect::OpenAi => "openai",
            Dialect::Anthropic => "anthropic",
        }
        .to_owned(),
        model: run.settings.name.clone(),
        request: entry.request.clone(),
        prompt: run.prompt.to_owned(),
        stream: recorder.stream(),
        max_steps: run.max_steps,
        runtime,
        variables,
    };
    let registry = run.registry;
    let kind_of = |tool: &str| match registry.get(tool).map(|d| d.origin()) {
        Some(ToolOrigin::Host) => ToolKind::Builtin,
        Some(ToolOrigin::Command { .. }) => ToolKind::Command,
        Some(ToolOrigin::Mcp { .. }) => ToolKind::Mcp,
        None => ToolKind::Unknown,
    };
    let result_of = |id: &str| {
        history
            .iter()
            .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(id))
    };
    // The first body whole, each later one as what changed from the one before.
    let recorded = recorder.steps.borrow();
    let bodies: Vec<Value> = recorded.iter().map(|(body, _)| body.to_value()).collect();
    let steps = recorded
        .iter()
        .zip(&bodies)
        .enumerate()
        .map(|(i, ((_, turn), body))| Step {
            request: RecordedRequest::after(i.checked_sub(1).and_then(|p| bodies.get(p)), body),
            results: turn
                .iter()
                .flat_map(|t| {
                    t.tool_calls.iter().filter_map(move |c| {
                        result_of(&c.id).map(|m| ToolResult {
                            step: t.step,
                            id: c.id.clone(),
                            tool: c.name.clone(),
                            kind: kind_of(&c.name),
                            content: m.content.clone(),
                            is_error: m.is_error,
                        })
                    })
                })
                .collect(),
            checks: turn
                .iter()
                .flat_map(|t| run.checks.iter().filter(move |c| c.step == t.step).cloned())
                .collect(),
            hooks: turn
                .iter()
                .flat_map(|t| {
                    run.hooks
                        .iter()
                        .filter(move |h| {
                            h.step == t.step && h.hook_event != HookEvent::UserPromptSubmit
                        })
                        .cloned()
                })
                .collect(),
            turn: turn.clone(),
        })
        .collect();
    let outcome = match outcome {
        Ok(Outcome::Answered { steps, .. }) => RecordedOutcome::Answered { steps: *steps },
        Ok(Outcome::StepLimit { steps }) => RecordedOutcome::StepLimit { steps: *steps },
        Ok(Outcome::OutputInvalid { steps, .. }) => {
            RecordedOutcome::OutputInvalid { steps: *steps }
        }
        Ok(Outcome::CheckFailed { steps, check, .. }) => RecordedOutcome::CheckFailed {
            steps: *steps,
            check: check.clone(),
        },
        Err(e) => RecordedOutcome::Error {
            message: redactor.redact(&e.to_string()).into_owned(),
        },
    };
    let mut cassette = Cassette {
        header,
        sections: entry.sections.into(),
        tools: entry.tools.into(),
        servers: entry.servers,
        prompt_hooks: run
            .hooks
            .iter()
            .filter(|h| h.hook_event == HookEvent::UserPromptSubmit)
            .cloned()
            .collect(),
        steps,
        outcome: Some(outcome),
        request_lines: Vec::new(),
    };
    redact_cassette(&mut cassette, redactor);
    cassette
}

/// Every string of `cassette` through `redactor`.
fn redact_cassette(cassette: &mut Cassette, redactor: &Redactor) {
    if redactor.is_empty() {
        return;
    }
    let text = cassette.to_text();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(mut v) => {
                redactor.redact_json(&mut v);
                out.push_str(&v.to_string());
            }
            Err(_) => out.push_str(&redactor.redact(line)),
        }
        out.push('\n');
    }
    if let Ok(redacted) = Cassette::parse(&out) {
        *cassette = redacted;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_pairs() {
        assert_eq!(hex(b"sk-\x01"), "736b2d01");
    }

    #[test]
    fn recording_is_refused_under_ci_only() {
        // The test process's own CI variable decides; both answers are checked by the
        // message's shape.
        match check_recording_allowed() {
            Ok(()) => assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty())),
            Err(e) => assert!(e.contains("refused under CI"), "{e}"),
        }
    }
}
