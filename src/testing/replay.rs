//! Replaying a cassette (feature `client`): the agent runs again with today's preset and
//! code and the header's pinned values, but talks to a [`Player`] (answers from the
//! cassette; never builds a client, reads no key, opens no socket) and hands its tool
//! calls to the recorded results (no server or command is started; `ToolsMode::Live`
//! re-runs the read-only built-in and command tools on a copy of a workspace).
//!
//! Each step's body is compared with the recorded one exactly: the first difference
//! stops the replay with `behaviour-drift`, naming the JSON pointer, a bounded diff, the
//! preset section or tool that produced it (from the lock entries of then and now, as
//! lock drift is located) and the cassette's line. A recorded call that today's preset
//! would refuse (hidden, unknown, arguments its schema refuses) is `recorded-call-hidden`.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use similar::TextDiff;

use super::cassette::{
    BodyDelta, Cassette, CassetteError, HookResult, MAX_CASSETTE_BYTES, RecordedRequest, ToolKind,
};
use super::observed::{Observed, ObservedCall, ObservedOutcome};
use crate::agent::{
    APPROVAL_VARIABLE, Agent, AgentError, Approval, ApprovalPolicy, CheckRunFuture, HookRunFuture,
    ModelTransport, Outcome, RequestBody, ToolApproval, ToolRunFuture, ToolRunner, TransportFuture,
};
use crate::checks::{Check, CheckRun};
use crate::client::{ClientError, ClientEvent};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::endpoint::{ModelSettings, Overrides};
use crate::hooks::{Hook, HookEvent, HookRun};
use crate::preset::ValidPreset;
use crate::process::sandbox::SandboxMode;
use crate::project::lock;
use crate::prompt::ContextSnapshot;
use crate::provider::MessageRef;
use crate::request::ToolCall;
use crate::tools::{ToolContext, ToolDefinition, ToolOutput, ToolRegistry};

/// Which tools answer the replayed calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ToolsMode {
    /// Every result comes from the cassette (`--tools recorded`, the default).
    #[default]
    Recorded,
    /// The read-only built-in and command tools run again on a temporary copy of
    /// `workspace` and their results are compared with the recording; other tools'
    /// results come from the cassette (`--tools live`).
    Live {
        /// The directory copied (a case's `workspace`).
        workspace: PathBuf,
    },
}

/// How to replay.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    /// Which tools answer.
    pub tools: ToolsMode,
}

pub use super::suite::Replay;

/// A test case's cassette replayed against today's `preset` (the case's, validated):
/// `Err` when the cassette cannot be read (exit 2); `Ok` with errors among its
/// diagnostics when the run drifted.
pub fn replay_case(
    case: &super::TestCase,
    preset: &ValidPreset,
    options: &ReplayOptions,
) -> Result<Replay, Vec<Diagnostic>> {
    let cassette = load(&case.cassette).map_err(|d| vec![d])?;
    Ok(replay(preset, &cassette, &case.cassette_shown, options))
}

/// Read the cassette at `path`: a file that cannot be read, is too large, damaged or of
/// another format version is one diagnostic (`cassette-corrupt`, `cassette-version`)
/// located at the file and line, with what to do (exit 2).
pub fn load(path: &Path) -> Result<Cassette, Diagnostic> {
    let shown: Arc<str> = path.display().to_string().into();
    // Bounded and decided on the opened descriptor: a FIFO, a device or a file that grows
    // past the limit while it is read is refused instead of read into memory.
    let bytes = crate::bounded::read_bounded(path, MAX_CASSETTE_BYTES as u64).map_err(|e| {
        let help = match e {
            crate::bounded::BoundedReadError::TooLarge { .. } => {
                "a cassette is one run's JSON lines; re-record it (`agent-presets run … --record FILE`) instead of growing it by hand"
            }
            _ => "check the path (a test case names its cassette beside it)",
        };
        Diagnostic::new(
            DiagnosticKind::CassetteCorrupt,
            format!("cannot read the cassette `{shown}`: {e}"),
        )
        .help(help)
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Diagnostic::new(
            DiagnosticKind::CassetteCorrupt,
            format!("the cassette `{shown}` is not UTF-8: {e}"),
        )
    })?;
    Cassette::parse(&text).map_err(|e| located(&shown, e))
}

fn located(file: &Arc<str>, e: CassetteError) -> Diagnostic {
    let kind = if e.version {
        DiagnosticKind::CassetteVersion
    } else {
        DiagnosticKind::CassetteCorrupt
    };
    let span = (e.line > 0).then(|| Span::new(Arc::clone(file), line_u32(e.line), 1));
    Diagnostic::new(kind, e.message).at(span).help(e.help)
}

fn line_u32(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// Answers each request from the cassette, after comparing it with the recorded body.
#[derive(Debug)]
pub struct Player<'c> {
    settings: ModelSettings,
    cassette: &'c Cassette,
    next: Cell<usize>,
    drift: RefCell<Option<BodyDrift>>,
    /// The body of the step before (equal to the recorded one, else the replay stopped).
    previous: RefCell<Option<RequestBody>>,
}

/// Where a step's body first differs from the recording.
#[derive(Clone, Debug)]
struct BodyDrift {
    step: usize,
    pointer: String,
    recorded: Option<Value>,
    now: Option<Value>,
    /// The recorded request does not follow from the step before's (a damaged cassette).
    damaged: bool,
}

impl<'c> Player<'c> {
    /// A player of `cassette` for requests shaped by `settings`.
    pub fn new(settings: ModelSettings, cassette: &'c Cassette) -> Self {
        Player {
            settings,
            cassette,
            next: Cell::new(0),
            drift: RefCell::new(None),
            previous: RefCell::new(None),
        }
    }

    fn stopped(&self) -> ClientError {
        ClientError::Request {
            provider: self.settings.provider,
            detail: "the replay stopped: the request differs from the recording".into(),
        }
    }
}

impl ModelTransport for Player<'_> {
    fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    fn stream(&self) -> bool {
        self.cassette.header.stream
    }

    fn send<'a>(
        &'a self,
        body: RequestBody,
        _on_event: &'a mut dyn FnMut(ClientEvent<'_>),
    ) -> TransportFuture<'a> {
        Box::pin(async move {
            let i = self.next.get();
            self.next.set(i + 1);
            let Some(step) = self.cassette.steps.get(i) else {
                *self.drift.borrow_mut() = Some(BodyDrift {
                    step: i + 1,
                    pointer: String::new(),
                    recorded: None,
                    now: Some(body.to_value()),
                    damaged: false,
                });
                return Err(self.stopped());
            };
            let previous = self.previous.borrow_mut().take();
            if !matches(&step.request, previous.as_ref(), &body) {
                // The trees, whole, only to say where they differ (or that they are
                // equal after all: the same values written otherwise).
                let before = previous.as_ref().map(RequestBody::to_value);
                let now = body.to_value();
                let drift = match step.request.body(before.as_ref()) {
                    None => Some(BodyDrift {
                        step: i + 1,
                        pointer: String::new(),
                        recorded: None,
                        now: None,
                        damaged: true,
                    }),
                    Some(recorded) => {
                        first_difference(&recorded, &now).map(|(pointer, recorded, now)| {
                            BodyDrift {
                                step: i + 1,
                                pointer,
                                recorded: recorded.cloned(),
                                now: now.cloned(),
                                damaged: false,
                            }
                        })
                    }
                };
                if drift.is_some() {
                    *self.drift.borrow_mut() = drift;
                    return Err(self.stopped());
                }
            }
            *self.previous.borrow_mut() = Some(body);
            match &step.turn {
                Some(turn) => Ok(turn.to_model_turn()),
                None => Err(ClientError::Request {
                    provider: self.settings.provider,
                    detail: "the recorded request failed".into(),
                }),
            }
        })
    }
}

/// Is `body` the recorded request (given the step before's body, equal to the recorded
/// one)? Compared as written: a whole body by its text; a delta by computing today's
/// from `previous` as the recorder does (the shared prefix compared by identity, else
/// by text) and comparing the messages it adds by their text. `false` is not yet drift:
/// the caller compares the trees.
fn matches(recorded: &RecordedRequest, previous: Option<&RequestBody>, body: &RequestBody) -> bool {
    match recorded {
        RecordedRequest::Body(b) => body.to_json() == b.text().as_bytes(),
        RecordedRequest::Delta(d) => previous.is_some_and(|p| matches_delta(d, p, body)),
    }
}

fn matches_delta(delta: &BodyDelta, previous: &RequestBody, body: &RequestBody) -> bool {
    let same_prefix = Arc::ptr_eq(previous.prefix(), body.prefix());
    if !same_prefix && !previous.prefix().keys().eq(body.prefix().keys()) {
        return false;
    }
    let (Some(before), Some(now)) = (previous.messages(), body.messages()) else {
        return false;
    };
    let from = before.zip(now).take_while(|(a, b)| a.same(b)).count();
    if from != delta.messages_from || body.message_count() - from != delta.messages.len() {
        return false;
    }
    let mut text = Vec::new();
    for (m, r) in body
        .messages()
        .into_iter()
        .flatten()
        .skip(from)
        .zip(&delta.messages)
    {
        let written = match m {
            MessageRef::Shared(s) => s.text().as_bytes(),
            MessageRef::Own(v) => {
                text.clear();
                if serde_json::to_writer(&mut text, v).is_err() {
                    return false;
                }
                &text
            }
        };
        if written != r.text().as_bytes() {
            return false;
        }
    }
    if same_prefix {
        return delta.changed.is_empty();
    }
    let mut changed = body
        .prefix()
        .entries()
        .zip(previous.prefix().entries())
        .filter(|((_, a), (_, b))| a.text() != b.text() && a.value() != b.value())
        .map(|((k, a), _)| (k, a.value()));
    let mut recorded = delta.changed.iter();
    loop {
        match (changed.next(), recorded.next()) {
            (None, None) => return true,
            (Some((k, v)), Some((rk, rv))) if k == rk && v == rv => {}
            _ => return false,
        }
    }
}

/// The JSON pointer of the first place `now` differs from `recorded` (object keys in
/// the recorded order, then new ones), with the two values there (`None`: absent).
fn first_difference<'v>(
    recorded: &'v Value,
    now: &'v Value,
) -> Option<(String, Option<&'v Value>, Option<&'v Value>)> {
    fn walk<'v>(
        path: &mut String,
        a: &'v Value,
        b: &'v Value,
    ) -> Option<(String, Option<&'v Value>, Option<&'v Value>)> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                for (k, va) in x {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    let found = match y.get(k) {
                        Some(vb) => walk(path, va, vb),
                        None => Some((path.clone(), Some(va), None)),
                    };
                    if found.is_some() {
                        return found;
                    }
                    path.truncate(len);
                }
                y.iter().find(|(k, _)| !x.contains_key(*k)).map(|(k, vb)| {
                    (
                        format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")),
                        None,
                        Some(vb),
                    )
                })
            }
            (Value::Array(x), Value::Array(y)) => {
                for i in 0..x.len().max(y.len()) {
                    let len = path.len();
                    path.push_str(&format!("/{i}"));
                    let found = match (x.get(i), y.get(i)) {
                        (Some(va), Some(vb)) => walk(path, va, vb),
                        (va, vb) => Some((path.clone(), va, vb)),
                    };
                    if found.is_some() {
                        return found;
                    }
                    path.truncate(len);
                }
                None
            }
            _ if a == b => None,
            _ => Some((path.clone(), Some(a), Some(b))),
        }
    }
    // Equal bodies are the rule: compared without building a path for every key.
    if recorded == now {
        return None;
    }
    walk(&mut String::new(), recorded, now)
}

/// Most lines a drift's diff shows.
const MAX_DIFF_LINES: usize = 10;
/// Most characters of one diff line.
const MAX_DIFF_LINE_CHARS: usize = 160;

/// A few lines of the difference of two values (strings line by line; other values as
/// pretty JSON).
fn bounded_diff(recorded: Option<&Value>, now: Option<&Value>) -> String {
    let text = |v: Option<&Value>| match v {
        None => String::new(),
        Some(Value::String(s)) => format!("{s}\n"),
        Some(other) => format!(
            "{}\n",
            serde_json::to_string_pretty(other).unwrap_or_default()
        ),
    };
    let (old, new) = (text(recorded), text(now));
    let diff = TextDiff::from_lines(&old, &new);
    let body = diff
        .unified_diff()
        .context_radius(0)
        .header("recorded", "now")
        .to_string();
    let lines: Vec<&str> = body.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(MAX_DIFF_LINES)
        .map(|l| match l.char_indices().nth(MAX_DIFF_LINE_CHARS) {
            Some((at, _)) => format!("{}…", &l[..at]),
            None => (*l).to_owned(),
        })
        .collect();
    if lines.len() > MAX_DIFF_LINES {
        out.push(format!("… {} more lines", lines.len() - MAX_DIFF_LINES));
    }
    out.join("\n")
}

/// The approver of a replay: every call the recording ran may run again (its result is
/// the recorded one), under the recorded policy.
#[derive(Debug)]
struct Pinned(ApprovalPolicy);

impl ToolApproval for Pinned {
    fn review(&mut self, _: &ToolCall, _: &ToolDefinition) -> Approval {
        Approval::Allow
    }

    fn policy(&self) -> ApprovalPolicy {
        self.0
    }
}

/// Feeds recorded results back; in live mode re-runs read-only built-in and command
/// tools and notes where they now answer otherwise.
#[derive(Debug)]
struct RecordedTools<'c> {
    cassette: &'c Cassette,
    live: Option<ToolContext>,
    calls: RefCell<Vec<ObservedCall>>,
    problems: RefCell<Vec<Diagnostic>>,
    /// How many recorded check results of each step (by index) were fed back.
    checks_used: RefCell<Vec<usize>>,
    /// The recorded hook runs fed back: (0 for the prompt's hooks, else the step; the
    /// position among them).
    hooks_used: RefCell<std::collections::BTreeSet<(usize, usize)>>,
}

impl RecordedTools<'_> {
    /// The recorded hook runs of `step` (0: the prompt's).
    fn hooks_of(&self, step: usize) -> &[HookResult] {
        match step {
            0 => &self.cassette.prompt_hooks,
            n => self
                .cassette
                .steps
                .get(n - 1)
                .map_or(&[][..], |s| s.hooks.as_slice()),
        }
    }

    /// The recorded hook runs that no hook of the replay asked for, in the first
    /// `steps` steps (each a `behaviour-drift`: today's preset no longer runs it there).
    fn unused_hooks(&self, steps: usize) -> Vec<Diagnostic> {
        let used = self.hooks_used.borrow();
        let mut out = Vec::new();
        for step in 0..=steps.min(self.cassette.steps.len()) {
            for (i, h) in self.hooks_of(step).iter().enumerate() {
                if used.contains(&(step, i)) {
                    continue;
                }
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::BehaviourDrift,
                        format!(
                            "step {}: the recording ran the `{}` hook `{}`{}, but today's preset ran no such hook there",
                            h.step,
                            h.hook_event.key(),
                            h.hook,
                            h.id.as_deref().map(|id| format!(" for call `{id}`")).unwrap_or_default()
                        ),
                    )
                    .help("the preset's `hooks` changed since the recording: if that is intended, re-record the case"),
                );
            }
        }
        out
    }
}

impl ToolRunner for RecordedTools<'_> {
    /// A hook answers from the recording, never runs: the recorded run of the same hook
    /// at the same event (and call) of the step, decided again by today's code. One the
    /// recording does not hold is drift, and blocks (as a hook that failed to start).
    fn run_hook<'a>(
        &'a self,
        step: usize,
        hook: &'a Hook,
        call: Option<&'a ToolCall>,
        _input: &'a Value,
        _ctx: &'a ToolContext,
    ) -> HookRunFuture<'a> {
        Box::pin(async move {
            let key = if hook.event == HookEvent::UserPromptSubmit {
                0
            } else {
                step
            };
            let label = hook.label();
            let id = call.map(|c| c.id.as_str());
            let mut used = self.hooks_used.borrow_mut();
            let found = self.hooks_of(key).iter().enumerate().find(|(i, h)| {
                !used.contains(&(key, *i))
                    && h.hook_event == hook.event
                    && h.hook == label
                    && h.id.as_deref() == id
            });
            if let Some((i, h)) = found {
                used.insert((key, i));
                return h.to_run();
            }
            self.problems.borrow_mut().push(
                Diagnostic::new(
                    DiagnosticKind::BehaviourDrift,
                    format!(
                        "step {step}: the `{}` hook `{label}` ran{}, but the recording holds no run of it there",
                        hook.event.key(),
                        id.map(|id| format!(" for call `{id}`")).unwrap_or_default()
                    ),
                )
                .help("the preset's `hooks` changed since the recording: if that is intended, re-record the case"),
            );
            HookRun {
                ending: crate::hooks::HookEnding::NotStarted(
                    "the cassette holds no run of it".into(),
                ),
                stdout: String::new(),
                stderr: String::new(),
            }
        })
    }

    /// A success check answers from the recording, never runs: the next recorded run
    /// of the step with the same argv. One the recording does not hold is drift.
    fn run_check<'a>(
        &'a self,
        step: usize,
        check: &'a Check,
        _ctx: &'a ToolContext,
    ) -> CheckRunFuture<'a> {
        Box::pin(async move {
            let label = check.label();
            let index = step.wrapping_sub(1);
            let mut used = self.checks_used.borrow_mut();
            if used.len() <= index {
                used.resize(index + 1, 0);
            }
            let recorded = self
                .cassette
                .steps
                .get(index)
                .and_then(|s| s.checks.get(used[index]))
                .filter(|c| c.check == label);
            match recorded {
                Some(c) => {
                    used[index] += 1;
                    CheckRun {
                        ending: c.ending.clone(),
                        output: c.output.clone(),
                        elapsed_ms: 0,
                    }
                }
                None => {
                    let what = match self
                        .cassette
                        .steps
                        .get(index)
                        .and_then(|s| s.checks.get(used[index]))
                    {
                        Some(other) => format!("the recording ran `{}` there", other.check),
                        None => "the recording ran no check there".to_owned(),
                    };
                    self.problems.borrow_mut().push(
                        Diagnostic::new(
                            DiagnosticKind::BehaviourDrift,
                            format!("step {step}: the success check `{label}` ran after the answer, but {what}"),
                        )
                        .help("the preset's `checks` changed since the recording: if that is intended, re-record the case"),
                    );
                    CheckRun {
                        ending: crate::checks::CheckEnding::NotStarted(
                            "the cassette holds no result for it".into(),
                        ),
                        output: String::new(),
                        elapsed_ms: 0,
                    }
                }
            }
        })
    }

    fn run<'a>(
        &'a self,
        step: usize,
        call: &'a ToolCall,
        args: Value,
        registry: &'a ToolRegistry,
        _ctx: &'a ToolContext,
    ) -> ToolRunFuture<'a> {
        Box::pin(async move {
            let recorded = self
                .cassette
                .steps
                .get(step.wrapping_sub(1))
                .and_then(|s| s.results.iter().find(|r| r.id == call.id));
            let output = match recorded {
                Some(r) => ToolOutput {
                    content: r.content.clone(),
                    is_error: r.is_error,
                },
                None => ToolOutput::error(format!(
                    "the cassette holds no result for call `{}`",
                    call.id
                )),
            };
            if let (Some(ctx), Some(r), Some(def)) =
                (&self.live, recorded, registry.get(&call.name))
                && def.read_only()
                && matches!(r.kind, ToolKind::Builtin | ToolKind::Command)
            {
                let live = registry.call_for_model(&call.name, args.clone(), ctx).await;
                if live.content != r.content || live.is_error != r.is_error {
                    self.problems.borrow_mut().push(
                        Diagnostic::new(
                            DiagnosticKind::BehaviourDrift,
                            format!(
                                "step {step}: tool `{}` (call `{}`) now returns another result than the recording\n{}",
                                call.name,
                                call.id,
                                bounded_diff(
                                    Some(&Value::String(r.content.clone())),
                                    Some(&Value::String(live.content.clone()))
                                )
                            ),
                        )
                        .help("the tool (or the workspace) changed: if that is intended, re-record the case"),
                    );
                }
            }
            self.calls.borrow_mut().push(ObservedCall {
                step,
                tool: call.name.clone(),
                arguments: call
                    .parsed_arguments()
                    .unwrap_or_else(|_| Value::String(call.arguments.clone())),
                result: output.content.clone(),
                is_error: output.is_error,
            });
            output
        })
    }
}

/// Replay `cassette` (read from `file`, as diagnostics name it) with today's `preset`.
/// Runs its own single-threaded runtime: call it outside one (else [`replay_async`]).
pub fn replay(
    preset: &ValidPreset,
    cassette: &Cassette,
    file: &str,
    options: &ReplayOptions,
) -> Replay {
    thread_local! {
        // One runtime a thread, kept for the next replay: a suite replays many cassettes
        // on each of a few threads, and starting a runtime costs as much as replaying a
        // short cassette.
        static RUNTIME: std::cell::OnceCell<Result<tokio::runtime::Runtime, String>> =
            const { std::cell::OnceCell::new() };
    }
    RUNTIME.with(|rt| {
        let rt = rt.get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        });
        match rt {
            Ok(rt) => rt.block_on(replay_async(preset, cassette, file, options)),
            Err(e) => failed(format!("cannot start the async runtime: {e}")),
        }
    })
}

fn failed(message: String) -> Replay {
    Replay {
        observed: Observed {
            outcome: ObservedOutcome::Error {
                message: message.clone(),
            },
            ..Observed::default()
        },
        diagnostics: vec![Diagnostic::new(DiagnosticKind::BehaviourDrift, message)],
    }
}

/// [`replay`] inside a runtime.
pub async fn replay_async(
    preset: &ValidPreset,
    cassette: &Cassette,
    file: &str,
    options: &ReplayOptions,
) -> Replay {
    let file: Arc<str> = file.into();
    let header = &cassette.header;
    let settings = match crate::project::endpoint::settings(preset, &Overrides::default()) {
        Ok(Some(s)) => s,
        Ok(None) => {
            return failed(format!(
                "preset `{}` names no model any more; the cassette was recorded with `{}`",
                preset.name(),
                header.model
            ));
        }
        Err(e) => return failed(e.to_string()),
    };
    // What changed in the preset since the recording, as lock drift locates it: only
    // computed when something is to be located (the entry counts tokens).
    let changes = || {
        lock::entry(preset)
            .ok()
            .and_then(|now| lock::drift(preset, &cassette.lock_entry(), &now))
            .map(|d| d.changes)
            .unwrap_or_default()
    };

    // Calls the recording ran that today's preset would refuse.
    let mut problems = refused_calls(preset, cassette, &[], &file);
    if !problems.is_empty() {
        problems = refused_calls(preset, cassette, &changes(), &file);
        return Replay {
            observed: Observed {
                outcome: ObservedOutcome::Error {
                    message: "a recorded call would be refused".into(),
                },
                ..Observed::default()
            },
            diagnostics: problems,
        };
    }

    let mut values = preset.default_values();
    for (name, value) in header.runtime.iter().chain(&header.variables) {
        match serde_json::from_value::<minijinja::Value>(value.clone()) {
            Ok(v) => {
                values.set(name.clone(), v);
            }
            Err(e) => return failed(format!("the header's value `{name}` cannot be used: {e}")),
        }
    }
    let policy = match header
        .runtime
        .get(APPROVAL_VARIABLE)
        .and_then(Value::as_str)
    {
        Some("yes") => ApprovalPolicy::Yes,
        Some("refuse") => ApprovalPolicy::Refuse,
        _ => ApprovalPolicy::Ask,
    };
    let mode: SandboxMode = header
        .runtime
        .get("sandbox")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| preset.sandbox_mode());
    // Live tools work in a copy of the workspace, removed at the end.
    let copy = match &options.tools {
        ToolsMode::Recorded => None,
        ToolsMode::Live { workspace } => match TempCopy::of(workspace) {
            Ok(c) => Some(c),
            Err(e) => {
                return failed(format!(
                    "cannot copy the workspace `{}` for live tools: {e}",
                    workspace.display()
                ));
            }
        },
    };
    let root = copy
        .as_ref()
        .map_or_else(std::env::temp_dir, |c| c.path.clone());
    let ctx = match ToolContext::new(&root) {
        Ok(c) => c
            .with_passed_env(preset.pass_env())
            .with_sandbox(preset.sandbox_profile(mode, &root)),
        Err(e) => return failed(e.to_string()),
    };
    let runner = RecordedTools {
        cassette,
        live: copy.as_ref().map(|_| ctx.clone()),
        calls: RefCell::new(Vec::new()),
        problems: RefCell::new(Vec::new()),
        checks_used: RefCell::new(Vec::new()),
        hooks_used: RefCell::new(Default::default()),
    };
    let player = Player::new(settings, cassette);
    let outcome = {
        let mut agent = Agent::new(preset.assembler(), &player, ctx)
            .with_max_steps(header.max_steps.max(1))
            .with_max_tool_calls(
                preset
                    .limits()
                    .max_tool_calls
                    .map_or(crate::agent::DEFAULT_MAX_TOOL_CALLS, |n| n as usize),
            )
            .with_tool_runner(&runner)
            .with_policy(std::sync::Arc::new(preset.policy()))
            // Hooks decide again from their recorded runs (none is started).
            .with_hooks(Arc::new(preset.hooks()))
            // The contract and checks decide when the run is done, as they did live.
            .with_output(preset.output())
            .with_checks(preset.checks().into());
        let (mut history, mut snapshot) = (Vec::new(), ContextSnapshot::new());
        let mut approval = Pinned(policy);
        agent
            .run(
                &header.prompt,
                &mut history,
                &mut snapshot,
                &mut |_| values.clone(),
                &mut approval,
                &mut |_| {},
            )
            .await
    };
    drop(copy);
    let mut diagnostics = runner.problems.take();
    let steps = player.next.get();
    let drift = player.drift.take();
    if let Some(d) = &drift {
        diagnostics.insert(0, drift_diagnostic(d, cassette, &changes(), &file));
    } else if outcome.is_ok() && steps < cassette.steps.len() {
        diagnostics.insert(
            0,
            Diagnostic::new(
                DiagnosticKind::BehaviourDrift,
                format!(
                    "the replay ended after {steps} step{}; the recording made {}",
                    if steps == 1 { "" } else { "s" },
                    cassette.steps.len()
                ),
            )
            .at(request_span(cassette, steps, &file))
            .help("the run loop or the preset changed how the run ends: if that is intended, re-record the case"),
        );
    }
    if diagnostics.is_empty() && drift.is_none() {
        diagnostics.extend(runner.unused_hooks(steps));
    }
    let (answer, output, outcome) = match outcome {
        Ok(Outcome::Answered { text, output, .. }) => {
            (Some(text), output, ObservedOutcome::Answered)
        }
        Ok(Outcome::StepLimit { .. }) => (None, None, ObservedOutcome::StepLimit),
        Ok(Outcome::OutputInvalid { text, .. }) => {
            (Some(text), None, ObservedOutcome::OutputInvalid)
        }
        Ok(Outcome::CheckFailed { text, check, .. }) => {
            (Some(text), None, ObservedOutcome::CheckFailed { check })
        }
        Err(e) if drift.is_some() => (
            None,
            None,
            ObservedOutcome::Error {
                message: format!("behaviour drift ({e})"),
            },
        ),
        Err(e) => (
            None,
            None,
            ObservedOutcome::Error {
                message: agent_error_text(&e),
            },
        ),
    };
    Replay {
        observed: Observed {
            steps,
            calls: runner.calls.take(),
            answer,
            output,
            outcome,
        },
        diagnostics,
    }
}

fn agent_error_text(e: &AgentError) -> String {
    match e {
        AgentError::Assemble(ds) => format!("{e}: {ds}"),
        other => other.to_string(),
    }
}

/// The line of step `index`'s request (0-based) in the cassette.
fn request_span(cassette: &Cassette, index: usize, file: &Arc<str>) -> Option<Span> {
    let line = cassette
        .request_lines
        .get(index)
        .or(cassette.request_lines.last())?;
    Some(Span::new(Arc::clone(file), line_u32(*line), 1))
}

/// The `behaviour-drift` diagnostic of `d`: the pointer and a bounded diff, located at
/// the section or tool the lock entries say changed (else at the cassette's line).
fn drift_diagnostic(
    d: &BodyDrift,
    cassette: &Cassette,
    changes: &[Diagnostic],
    file: &Arc<str>,
) -> Diagnostic {
    let at_cassette = request_span(cassette, d.step - 1, file);
    let where_cassette = at_cassette
        .as_ref()
        .map(|s| format!("{}:{}", s.file, s.line))
        .unwrap_or_else(|| file.to_string());
    if d.damaged {
        return Diagnostic::new(
            DiagnosticKind::CassetteCorrupt,
            format!(
                "step {}'s recorded request does not follow from step {}'s ({where_cassette}): its `messagesFrom` or `changed` names what that body does not have",
                d.step,
                d.step - 1
            ),
        )
        .at(at_cassette)
        .help(format!("the cassette is damaged (edited by hand?): {}", super::cassette::RERECORD));
    }
    if d.recorded.is_none() && d.pointer.is_empty() {
        return Diagnostic::new(
            DiagnosticKind::BehaviourDrift,
            format!(
                "the replay made request {} but the recording ends after {} ({where_cassette})",
                d.step,
                cassette.steps.len()
            ),
        )
        .at(at_cassette)
        .help("the run loop or the preset changed: if that is intended, re-record the case");
    }
    let pointer = if d.pointer.is_empty() {
        "/"
    } else {
        &d.pointer
    };
    let mut message = format!(
        "step {}'s request differs from the recording at `{pointer}` ({where_cassette})",
        d.step
    );
    let cause = changes.first();
    if let Some(c) = cause {
        let first = c.message.lines().next().unwrap_or_default();
        message.push_str(&format!("; the preset changed: {first}"));
    }
    message.push('\n');
    message.push_str(&bounded_diff(d.recorded.as_ref(), d.now.as_ref()));
    let span = cause.and_then(|c| c.span.clone()).or(at_cassette);
    Diagnostic::new(DiagnosticKind::BehaviourDrift, message)
        .at(span)
        .help("if the change is intended, re-record the cassette and review its diff (`agent-presets test --record CASE`, or `run … --record FILE`)")
}

/// `recorded-call-hidden` for each call the recording ran (its result no error) that
/// today's registry would refuse: hidden, unknown, or arguments its schema refuses.
fn refused_calls(
    preset: &ValidPreset,
    cassette: &Cassette,
    changes: &[Diagnostic],
    file: &Arc<str>,
) -> Vec<Diagnostic> {
    let registry = preset.assembler().registry();
    let mut out = Vec::new();
    for (index, step) in cassette.steps.iter().enumerate() {
        let Some(turn) = &step.turn else { continue };
        for call in &turn.tool_calls {
            let Some(result) = step.results.iter().find(|r| r.id == call.id) else {
                continue;
            };
            if result.is_error {
                continue;
            }
            let tool = call.name.as_str();
            let at_cassette = request_span(cassette, index, file);
            let change = changes.iter().find(|c| {
                c.message.contains(&format!("tool `{tool}`"))
                    || c.message.contains(&format!("`tool:{tool}`"))
            });
            let span = change.and_then(|c| c.span.clone()).or(at_cassette.clone());
            let step_no = index + 1;
            let Some(def) = registry.get(tool) else {
                let known = preset.tool_catalog().contains(tool);
                let what = if known { "now hidden" } else { "now unknown" };
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::RecordedCallHidden,
                        format!(
                            "recorded call to `{tool}` is {what} (step {step_no}, call `{}`{})",
                            call.id,
                            at_cassette
                                .as_ref()
                                .map(|s| format!(", {}:{}", s.file, s.line))
                                .unwrap_or_default()
                        ),
                    )
                    .at(span)
                    .help(format!(
                        "the recorded run relied on `{tool}`: allow it again, or re-record the case if the agent should do without it"
                    )),
                );
                continue;
            };
            let Ok(args) = call.parsed_arguments() else {
                continue;
            };
            let Ok(validator) = def.validator() else {
                continue;
            };
            let problems: Vec<String> = validator
                .iter_errors(&args)
                .take(5)
                .map(|e| format!("{}: {e}", e.instance_path()))
                .collect();
            if !problems.is_empty() {
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::RecordedCallHidden,
                        format!(
                            "recorded call to `{tool}` no longer passes its schema (step {step_no}, call `{}`): {}",
                            call.id,
                            problems.join("; ")
                        ),
                    )
                    .at(span)
                    .help("the tool's parameters changed: if that is intended, re-record the case"),
                );
            }
        }
    }
    out
}

/// A temporary copy of a directory (regular files and directories; links are not
/// followed), removed when dropped.
/// A temporary directory (a copy of a workspace, or empty), removed when dropped: where
/// live tools run, and where `test --record` and `test --live` run a case.
#[derive(Debug)]
pub struct TempCopy {
    path: PathBuf,
}

impl TempCopy {
    /// A copy of the directory `from` (regular files and directories; links are not
    /// followed or copied).
    pub fn of(from: &Path) -> std::io::Result<TempCopy> {
        let copy = TempCopy::empty()?;
        copy_dir(from, &copy.path)?;
        Ok(copy)
    }

    /// A new empty directory.
    pub fn empty() -> std::io::Result<TempCopy> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "agent-presets-replay-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&path)?;
        Ok(TempCopy { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

impl Drop for TempCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[cfg(unix)]
    #[test]
    fn a_cassette_that_is_not_a_regular_file_or_too_large_is_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        // A FIFO: `std::fs::read` would block forever waiting for a writer.
        let fifo = dir.path().join("run.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let d = load(&fifo).unwrap_err();
            assert_eq!(d.kind, DiagnosticKind::CassetteCorrupt);
            assert!(d.message.contains("run.jsonl"), "{}", d.message);
        }
        // Larger than the limit: refused from its size, with what to do.
        let big = dir.path().join("big.jsonl");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_CASSETTE_BYTES as u64 + 1).unwrap();
        let d = load(&big).unwrap_err();
        assert_eq!(d.kind, DiagnosticKind::CassetteCorrupt);
        assert!(
            d.help.as_deref().unwrap_or("").contains("re-record"),
            "{:?}",
            d.help
        );
    }

    #[test]
    fn the_first_difference_is_named_by_its_pointer() {
        let a =
            json!({"model": "m", "messages": [{"role": "system", "content": "a\nb"}], "x/y": 1});
        let b =
            json!({"model": "m", "messages": [{"role": "system", "content": "a\nc"}], "x/y": 1});
        let (p, old, new) = first_difference(&a, &b).unwrap();
        assert_eq!(p, "/messages/0/content");
        assert_eq!(old, Some(&json!("a\nb")));
        assert_eq!(new, Some(&json!("a\nc")));
        assert!(first_difference(&a, &a).is_none());
        let c = json!({"model": "m", "messages": [], "x/y": 2});
        assert_eq!(first_difference(&a, &c).unwrap().0, "/messages/0");
        let d = json!({"model": "m", "messages": [{"role": "system", "content": "a\nb"}], "x/y": 1, "new": true});
        assert_eq!(first_difference(&a, &d).unwrap().0, "/new");
        let e =
            json!({"model": "m", "messages": [{"role": "system", "content": "a\nb"}], "x/y": 3});
        assert_eq!(first_difference(&a, &e).unwrap().0, "/x~1y");
    }

    #[test]
    fn the_diff_is_bounded() {
        let old: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..50).map(|i| format!("LINE {i}\n")).collect();
        let d = bounded_diff(Some(&json!(old)), Some(&json!(new)));
        assert!(d.lines().count() <= MAX_DIFF_LINES + 1, "{d}");
        assert!(d.contains("more lines"), "{d}");
        assert!(d.contains("-line 0"), "{d}");
        let small = bounded_diff(Some(&json!("a\nb\n")), Some(&json!("a\nc\n")));
        assert!(
            small.contains("-b") && small.contains("+c") && !small.contains("more"),
            "{small}"
        );
    }
}
