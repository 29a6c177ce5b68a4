//! The cassette: one recorded run as JSON lines, one event a line, keys in a fixed
//! order, so a re-recorded run reviews as a diff in a pull request.
//!
//! ```text
//! {"event":"header","format":2,"preset":"reviewer","fingerprint":"sha256:…",…}
//! {"event":"section","name":"identity","order":0,"tokens":12,"text":["You are …"]}
//! {"event":"tool","name":"read_file","tokens":90,"definition":{…}}
//! {"event":"server","name":"fx","listing":{…}}
//! {"event":"request","step":1,"body":{…}}
//! {"event":"turn","step":1,"text":"","toolCalls":[…],"finish":"tool-calls",…}
//! {"event":"toolResult","step":1,"id":"c1","tool":"read_file","kind":"builtin",…}
//! {"event":"request","step":2,"messagesFrom":2,"messages":[…]}
//! {"event":"hookResult","step":1,"hookEvent":"preToolUse","hook":"python3 guard.py","id":"c1","ending":{"exited":0},"stdout":"","stderr":""}
//! {"event":"checkResult","step":2,"check":"cargo test","ending":{"exited":0},"output":"…"}
//! {"event":"outcome","kind":"answered","steps":2}
//! ```
//!
//! The header pins everything that varies between runs (the runtime values: cwd, os,
//! shell, date, sandbox, approval; the variables; the stream flag), so a replay on
//! another day or in another directory rebuilds the same bodies: nothing is scrubbed.
//! The `section`, `tool` and `server` lines are the preset's lock entry as it was
//! recorded: a replay that drifts compares them with today's to say which section or
//! tool of which file changed. [`Cassette::to_text`] writes, [`Cassette::parse`] reads
//! (every problem a [`CassetteError`] with the line and what to do).
//!
//! Format 2 writes the first step's body whole and each later step's as what changed
//! from the step before's ([`BodyDelta`]: the messages from the first that differs, and
//! the other top-level keys whose value changed), so the cacheable prefix (tools, system
//! prompt) is written once and a re-recorded run diffs only where it changed; a body
//! whose keys differ from the step before's is written whole. Format 1 (every body
//! whole) is still read.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mcp::ServerListing;
use crate::project::lock::{LockedSection, LockedTool, PrefixTokens, PresetLock};
use crate::provider::{FinishReason, ModelTurn, Usage};
use crate::request::ToolCall;

/// The cassette format this build writes (it reads this one and format 1, whose
/// request lines all hold whole bodies).
pub const CASSETTE_FORMAT: u64 = 2;

/// The oldest cassette format this build reads.
pub const OLDEST_CASSETTE_FORMAT: u64 = 1;

/// The largest cassette read (64 MiB).
pub const MAX_CASSETTE_BYTES: usize = 64 << 20;

/// The first line: what was run, with what, and the values that were pinned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    /// [`CASSETTE_FORMAT`] when written.
    pub format: u64,
    /// The preset's name.
    pub preset: String,
    /// The fingerprint of its cacheable prefix as the lock renders it.
    pub fingerprint: String,
    /// Token counts of that prefix.
    pub tokens: PrefixTokens,
    /// The provider (`deepseek`, `openai`, `anthropic`, `openai-compatible`).
    pub provider: String,
    /// The wire dialect (`openai`, `anthropic`).
    pub dialect: String,
    /// The model.
    pub model: String,
    /// What the preset added to every request besides the prefix: its model parameters
    /// and output schema digest, as the lock entry holds them
    /// ([`PresetLock::request`]); absent when empty.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub request: std::collections::BTreeMap<String, Value>,
    /// The prompt.
    pub prompt: String,
    /// Whether answers were streamed (`stream` in every body).
    pub stream: bool,
    /// The step limit the run had.
    pub max_steps: usize,
    /// The runtime values every step was rendered with: `cwd`, `os`, `shell`, `date`,
    /// `sandbox`, `approval`, `provider`, `model`.
    pub runtime: Map<String, Value>,
    /// Every other template value (the preset's variables, as given or defaulted).
    pub variables: Map<String, Value>,
}

/// The names [`Header::runtime`] holds; every other value is a variable.
pub const RUNTIME_VALUES: [&str; 8] = [
    "cwd", "os", "shell", "date", "sandbox", "approval", "provider", "model",
];

/// Where a tool comes from, as a tool result line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolKind {
    /// A tool built into agent-presets (`read_file`, `bash`, …) or a host's.
    Builtin,
    /// A command tool the preset declares (`commands:`).
    Command,
    /// A tool of an MCP server.
    Mcp,
    /// Not a visible tool (the call was refused).
    Unknown,
}

/// A tool call's result as the model was given it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolResult {
    /// The step whose answer made the call.
    pub step: usize,
    /// The call's id.
    pub id: String,
    /// The tool's wire name.
    pub tool: String,
    /// Where the tool comes from.
    pub kind: ToolKind,
    /// The result text.
    pub content: String,
    /// The result was an error.
    pub is_error: bool,
}

/// One run of a success check after a step's final answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckResult {
    /// The step whose answer it checked.
    pub step: usize,
    /// The check, as one line (its argv).
    pub check: String,
    /// How it ended.
    pub ending: crate::checks::CheckEnding,
    /// What it printed (bounded, as the model read it).
    pub output: String,
}

/// One run of a hook of the preset (`hooks:`): what its process ended with and printed,
/// from which a replay decides again (`hooks::decide`) instead of running it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookResult {
    /// The step it ran in (`userPromptSubmit`: 1, before its request).
    pub step: usize,
    /// When it ran.
    pub hook_event: crate::hooks::HookEvent,
    /// The hook, as one line (its argv).
    pub hook: String,
    /// The tool call it was about (tool events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// How it ended.
    pub ending: crate::hooks::HookEnding,
    /// Its standard output (bounded, as the agent read it).
    pub stdout: String,
    /// Its standard error (bounded).
    pub stderr: String,
}

impl HookResult {
    /// The run as the agent takes it.
    pub fn to_run(&self) -> crate::hooks::HookRun {
        crate::hooks::HookRun {
            ending: self.ending.clone(),
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
        }
    }
}

/// The model's turn of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Turn {
    /// The step.
    pub step: usize,
    /// The answer text.
    pub text: String,
    /// The reasoning, when the provider sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// The tool calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub finish: FinishReason,
    /// Token counts, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl Turn {
    /// The turn of `step`.
    pub fn new(step: usize, turn: &ModelTurn) -> Self {
        Turn {
            step,
            text: turn.text.clone(),
            reasoning: turn.reasoning.clone(),
            tool_calls: turn.tool_calls.clone(),
            finish: turn.finish.clone(),
            usage: turn.usage,
        }
    }

    /// The turn as the agent takes it.
    pub fn to_model_turn(&self) -> ModelTurn {
        ModelTurn {
            text: self.text.clone(),
            reasoning: self.reasoning.clone(),
            tool_calls: self.tool_calls.clone(),
            finish: self.finish.clone(),
            usage: self.usage,
        }
    }
}

/// How the recorded run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", deny_unknown_fields)]
pub enum RecordedOutcome {
    /// A final answer.
    Answered {
        /// Steps taken.
        steps: usize,
    },
    /// The step limit.
    StepLimit {
        /// Steps taken.
        steps: usize,
    },
    /// The final answer still broke the output contract after its retries.
    OutputInvalid {
        /// Steps taken.
        steps: usize,
    },
    /// A success check still failed after its retries.
    CheckFailed {
        /// Steps taken.
        steps: usize,
        /// The check, as one line (its argv).
        check: String,
    },
    /// An error (its message, redacted).
    Error {
        /// What went wrong.
        message: String,
    },
}

/// A recorded request body: its text as written (one line of compact JSON), read into a
/// tree only when a replay has to say where today's body differs. Replaying compares
/// today's body, written the same way, with the text: most of a cassette is request
/// bodies, and most replays find them equal.
#[derive(Clone, Debug)]
pub struct RecordedBody {
    raw: Box<serde_json::value::RawValue>,
    tree: std::sync::OnceLock<Value>,
}

impl RecordedBody {
    /// The body `value`, as the recorder writes it.
    pub fn from_value(value: Value) -> Self {
        let raw = serde_json::value::RawValue::from_string(value.to_string())
            .unwrap_or_else(|_| null_body());
        let tree = std::sync::OnceLock::new();
        let _ = tree.set(value);
        RecordedBody { raw, tree }
    }

    fn from_raw(raw: Box<serde_json::value::RawValue>) -> Self {
        RecordedBody {
            raw,
            tree: std::sync::OnceLock::new(),
        }
    }

    /// The body as written.
    pub fn text(&self) -> &str {
        self.raw.get()
    }

    /// The body as a tree (read on first use).
    pub fn value(&self) -> &Value {
        self.tree
            .get_or_init(|| serde_json::from_str(self.raw.get()).unwrap_or(Value::Null))
    }
}

/// `null` as a raw value (what a body that cannot be written becomes; never in practice).
fn null_body() -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(&Value::Null).unwrap_or_default()
}

impl PartialEq for RecordedBody {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text() || self.value() == other.value()
    }
}

impl From<Value> for RecordedBody {
    fn from(value: Value) -> Self {
        RecordedBody::from_value(value)
    }
}

impl Serialize for RecordedBody {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RecordedBody {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(RecordedBody::from_value)
    }
}

/// A later step's body as what changed from the body of the step before: the same
/// top-level keys in the same order, `messages` from index `messages_from` on replaced
/// by `messages`, and the keys in `changed` given their new values.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyDelta {
    /// How many leading messages are the step before's.
    pub messages_from: usize,
    /// The messages after those.
    pub messages: Vec<RecordedBody>,
    /// The other top-level keys whose value changed, with their new values.
    pub changed: Map<String, Value>,
}

/// A step's recorded request: its body whole, or what changed from the step before's.
#[derive(Clone, Debug, PartialEq)]
pub enum RecordedRequest {
    /// The whole body (the first step's; any step's in format 1).
    Body(RecordedBody),
    /// What changed from the step before's body.
    Delta(BodyDelta),
}

impl From<Value> for RecordedRequest {
    fn from(value: Value) -> Self {
        RecordedRequest::Body(value.into())
    }
}

impl RecordedRequest {
    /// How `body` is written after `previous` (the step before's body; `None`: the first
    /// step): what changed when both are objects with the same keys in the same order and
    /// a `messages` array, else whole.
    pub fn after(previous: Option<&Value>, body: &Value) -> RecordedRequest {
        if let Some(Value::Object(p)) = previous
            && let Value::Object(b) = body
            && p.keys().eq(b.keys())
            && let (Some(Value::Array(pm)), Some(Value::Array(bm))) =
                (p.get("messages"), b.get("messages"))
        {
            let from = pm.iter().zip(bm).take_while(|(x, y)| x == y).count();
            let changed = b
                .iter()
                .filter(|(k, v)| *k != "messages" && p.get(*k) != Some(*v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            return RecordedRequest::Delta(BodyDelta {
                messages_from: from,
                messages: bm[from..].iter().cloned().map(RecordedBody::from).collect(),
                changed,
            });
        }
        RecordedRequest::Body(body.clone().into())
    }

    /// The whole body, given the step before's (`previous`; `None`: the first step).
    /// `None` when a delta does not fit `previous` (a damaged cassette).
    pub fn body(&self, previous: Option<&Value>) -> Option<Value> {
        let delta = match self {
            RecordedRequest::Body(b) => return Some(b.value().clone()),
            RecordedRequest::Delta(d) => d,
        };
        let Some(Value::Object(p)) = previous else {
            return None;
        };
        let mut out = Map::new();
        for (k, v) in p {
            let v = if k == "messages" {
                let Value::Array(m) = v else { return None };
                let kept = m.get(..delta.messages_from)?;
                Value::Array(
                    kept.iter()
                        .cloned()
                        .chain(delta.messages.iter().map(|m| m.value().clone()))
                        .collect(),
                )
            } else {
                delta.changed.get(k).unwrap_or(v).clone()
            };
            out.insert(k.clone(), v);
        }
        if !out.contains_key("messages") || delta.changed.keys().any(|k| !p.contains_key(k)) {
            return None;
        }
        Some(Value::Object(out))
    }
}

/// One step: the body sent, the turn that came back, the results of its calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The request body, whole or as what changed from the step before's.
    pub request: RecordedRequest,
    /// The model's turn (`None`: the request failed).
    pub turn: Option<Turn>,
    /// The results of its tool calls, in order.
    pub results: Vec<ToolResult>,
    /// The success checks run after its final answer, in order.
    pub checks: Vec<CheckResult>,
    /// The hooks run in it after its turn (`preToolUse`, `postToolUse`, `stop`), in
    /// the order they ran.
    pub hooks: Vec<HookResult>,
}

/// The `section` or `tool` lines of a cassette: the prefix as the lock recorded it,
/// which a replay reads only to say where a drift comes from. Their shape is checked
/// when the cassette is read (a damaged line is `cassette-corrupt` there, as any other),
/// and they are read into their type on first use: most replays pass without it, and
/// the tools' schemas are much of a cassette.
#[derive(Clone, Debug)]
pub struct LockedLines<T> {
    /// Each line's object, its `event` tag taken out, as written.
    raw: Vec<String>,
    read: std::sync::OnceLock<Vec<T>>,
}

impl<T> Default for LockedLines<T> {
    fn default() -> Self {
        LockedLines {
            raw: Vec::new(),
            read: std::sync::OnceLock::new(),
        }
    }
}

impl<T> From<Vec<T>> for LockedLines<T> {
    fn from(items: Vec<T>) -> Self {
        LockedLines {
            raw: Vec::new(),
            read: std::sync::OnceLock::from(items),
        }
    }
}

impl<T: serde::de::DeserializeOwned> LockedLines<T> {
    /// The lines, read.
    pub fn get(&self) -> &[T] {
        // Each line's shape was checked when it was read (`SectionShape`, `ToolShape`,
        // which accept what `T` accepts): reading it cannot fail.
        self.read.get_or_init(|| {
            self.raw
                .iter()
                .filter_map(|r| serde_json::from_str(r).ok())
                .collect()
        })
    }

    /// How many lines.
    pub fn len(&self) -> usize {
        self.read.get().map_or(self.raw.len(), Vec::len)
    }

    /// None?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Only while `Cassette::parse` reads the lines (nothing has been read yet).
    fn push_raw(&mut self, raw: String) {
        self.raw.push(raw);
    }
}

impl<T: serde::de::DeserializeOwned + PartialEq> PartialEq for LockedLines<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.read.get().is_none() && other.read.get().is_none() && self.raw == other.raw)
            || self.get() == other.get()
    }
}

/// What a `section` line must hold, checked without building it (see [`LockedLines`]):
/// the fields of [`LockedSection`], of the same types.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SectionShape<'a> {
    #[serde(borrow, rename = "name")]
    _name: std::borrow::Cow<'a, str>,
    #[serde(rename = "order")]
    _order: f64,
    #[serde(rename = "tokens")]
    _tokens: u64,
    #[serde(borrow, rename = "text")]
    _text: Vec<std::borrow::Cow<'a, str>>,
}

/// What a `tool` line must hold: the fields of [`LockedTool`], of the same types (the
/// schema any JSON value, as `Value` reads).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolShape<'a> {
    #[serde(borrow, rename = "name")]
    _name: std::borrow::Cow<'a, str>,
    #[serde(rename = "tokens")]
    _tokens: u64,
    #[serde(borrow, rename = "definition")]
    _definition: DefinitionShape<'a>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DefinitionShape<'a> {
    #[serde(borrow, rename = "name")]
    _name: std::borrow::Cow<'a, str>,
    #[serde(borrow, rename = "description")]
    _description: std::borrow::Cow<'a, str>,
    #[serde(borrow, rename = "parameters")]
    _parameters: &'a serde_json::value::RawValue,
}

/// `raw` without its tag when it is a `section` or `tool` line as the writer writes one
/// and of the right shape (`None`: read it the general way, which says what is wrong).
fn locked_line(raw: &str) -> Option<(bool, String)> {
    let (tool, rest) = if let Some(rest) = raw.strip_prefix(r#"{"event":"section","#) {
        (false, rest)
    } else {
        (true, raw.strip_prefix(r#"{"event":"tool","#)?)
    };
    let untagged = format!("{{{rest}");
    let fits = if tool {
        serde_json::from_str::<ToolShape<'_>>(&untagged).is_ok()
    } else {
        serde_json::from_str::<SectionShape<'_>>(&untagged).is_ok()
    };
    fits.then_some((tool, untagged))
}

/// A whole cassette.
#[derive(Clone, Debug, PartialEq)]
pub struct Cassette {
    /// The header.
    pub header: Header,
    /// The prefix's sections as the lock records them.
    pub sections: LockedLines<LockedSection>,
    /// The visible tools as the lock records them.
    pub tools: LockedLines<LockedTool>,
    /// The MCP servers' pinned listings, by server.
    pub servers: BTreeMap<String, ServerListing>,
    /// The `userPromptSubmit` hooks run before the first request, in order.
    pub prompt_hooks: Vec<HookResult>,
    /// The steps.
    pub steps: Vec<Step>,
    /// How it ended (`None` only while recording).
    pub outcome: Option<RecordedOutcome>,
    /// The line each step's request is on (1-based; filled by [`Cassette::parse`] and
    /// [`Cassette::to_text`]).
    pub request_lines: Vec<usize>,
}

/// One line of the file.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "event", deny_unknown_fields)]
enum Line {
    Header(Box<Header>),
    Section(LockedSection),
    Tool(LockedTool),
    Server {
        name: String,
        listing: ServerListing,
    },
    Request {
        step: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<RecordedBody>,
        #[serde(
            default,
            rename = "messagesFrom",
            skip_serializing_if = "Option::is_none"
        )]
        messages_from: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        messages: Option<Vec<RecordedBody>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        changed: Option<Map<String, Value>>,
    },
    Turn(Turn),
    ToolResult(ToolResult),
    CheckResult(CheckResult),
    HookResult(HookResult),
    Outcome(RecordedOutcome),
}

/// A request line as the recorder writes it (`{"event":"request","step":…,"body":…}`,
/// or `…"messagesFrom":…,"messages":[…],"changed":{…}}`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestLine {
    #[serde(rename = "event")]
    _event: RequestEvent,
    step: usize,
    /// Checked to be JSON and kept as written (no tree).
    #[serde(default)]
    body: Option<Box<serde_json::value::RawValue>>,
    #[serde(default, rename = "messagesFrom")]
    messages_from: Option<usize>,
    #[serde(default)]
    messages: Option<Vec<Box<serde_json::value::RawValue>>>,
    #[serde(default)]
    changed: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum RequestEvent {
    Request,
}

/// `raw` read as a request line, when it starts as the recorder writes one; `None` (read
/// it the general way, with its errors) for anything else, a failed read included.
fn fast_request(raw: &str) -> Option<RequestLine> {
    if !raw.starts_with(r#"{"event":"request","#) {
        return None;
    }
    serde_json::from_str(raw).ok()
}

/// `raw` read straight into its line's type when it starts as the writer writes one
/// (`{"event":"<name>",…`): no tree first, nor serde's buffered copy of one that an
/// internally tagged enum needs. `None` for anything else, a failed read included (the
/// general way reads it again and says what is wrong).
fn fast_line(raw: &str) -> Option<Line> {
    let rest = raw.strip_prefix(r#"{"event":""#)?;
    let (name, rest) = rest.split_once("\",")?;
    if name == "request" {
        // Most of a cassette is request bodies: kept as written (no tree).
        let r = fast_request(raw)?;
        return Some(Line::Request {
            step: r.step,
            body: r.body.map(RecordedBody::from_raw),
            messages_from: r.messages_from,
            messages: r
                .messages
                .map(|m| m.into_iter().map(RecordedBody::from_raw).collect()),
            changed: r.changed,
        });
    }
    let untagged = format!("{{{rest}");
    let text = untagged.as_str();
    match name {
        "section" => serde_json::from_str(text).ok().map(Line::Section),
        "tool" => serde_json::from_str(text).ok().map(Line::Tool),
        "turn" => serde_json::from_str(text).ok().map(Line::Turn),
        "toolResult" => serde_json::from_str(text).ok().map(Line::ToolResult),
        "checkResult" => serde_json::from_str(text).ok().map(Line::CheckResult),
        "hookResult" => serde_json::from_str(text).ok().map(Line::HookResult),
        _ => None,
    }
}

/// What a later step's delta must fit in the body before it: its top-level keys and how
/// many messages it has (`None`: no `messages` array). Read from a whole body without
/// building its tree.
#[derive(Debug, Default)]
struct BodyShape {
    keys: Vec<String>,
    messages: Option<usize>,
}

impl<'de> Deserialize<'de> for BodyShape {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Shape;
        impl<'de> serde::de::Visitor<'de> for Shape {
            type Value = BodyShape;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a request body")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<BodyShape, A::Error> {
                let mut shape = BodyShape::default();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "messages" {
                        shape.messages = map.next_value::<Count>()?.0;
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                    shape.keys.push(key);
                }
                Ok(shape)
            }
        }
        deserializer.deserialize_map(Shape)
    }
}

/// How many items an array has (`None`: not an array).
struct Count(Option<usize>);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Items;
        impl<'de> serde::de::Visitor<'de> for Items {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Count, A::Error> {
                let mut n = 0;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Count(Some(n)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Count, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Count(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Count, E> {
                Ok(Count(None))
            }
            fn visit_unit<E>(self) -> Result<Count, E> {
                Ok(Count(None))
            }
        }
        deserializer.deserialize_any(Items)
    }
}

/// The shape of the body `request` makes after a body of shape `before` (`None`: the
/// first step), or why it does not fit it (a damaged cassette).
fn shape_after(
    before: Option<&BodyShape>,
    request: &RecordedRequest,
    step: usize,
) -> Result<BodyShape, String> {
    match request {
        RecordedRequest::Body(b) => Ok(serde_json::from_str(b.text()).unwrap_or_default()),
        RecordedRequest::Delta(d) => {
            let Some(before) = before else {
                return Err(format!("step {step}'s request has no step before it"));
            };
            let Some(count) = before.messages else {
                return Err(format!(
                    "step {step}'s request keeps messages of step {}'s, which has no `messages` array",
                    step - 1
                ));
            };
            if d.messages_from > count {
                return Err(format!(
                    "step {step}'s request keeps {} messages of step {}'s, which has {count}",
                    d.messages_from,
                    step - 1
                ));
            }
            if let Some(key) = d.changed.keys().find(|k| !before.keys.contains(k)) {
                return Err(format!(
                    "step {step}'s request changes `{key}`, which step {}'s does not have",
                    step - 1
                ));
            }
            Ok(BodyShape {
                keys: before.keys.clone(),
                messages: Some(d.messages_from + d.messages.len()),
            })
        }
    }
}

/// A cassette that cannot be read: where, what, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CassetteError {
    /// 1-based line (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub help: String,
    /// An unknown format version (`cassette-version`), not a damaged file.
    pub version: bool,
}

impl fmt::Display for CassetteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub(crate) const RERECORD: &str = "re-record it: `agent-presets run PRESET PROMPT --record FILE` (or `agent-presets test --record CASE`), and review the diff";

fn corrupt(line: usize, message: impl Into<String>) -> CassetteError {
    CassetteError {
        line,
        message: message.into(),
        help: format!("the cassette is damaged (truncated, or edited by hand?): {RERECORD}"),
        version: false,
    }
}

impl Cassette {
    /// The lock entry the cassette records (for drift: what changed since).
    pub fn lock_entry(&self) -> PresetLock {
        PresetLock {
            provider: Some(self.header.provider.clone()),
            model: Some(self.header.model.clone()),
            request: self.header.request.clone(),
            fingerprint: self.header.fingerprint.clone(),
            tokens: self.header.tokens,
            sections: self.sections.get().to_vec(),
            tools: self.tools.get().to_vec(),
            servers: self.servers.clone(),
            identities: Default::default(),
            // A cassette records what each hook did, not its pin (the lock keeps that).
            hooks: Default::default(),
            hook_scripts: Default::default(),
            permissions: Default::default(),
        }
    }

    /// Every recorded tool call with its result, in order.
    pub fn calls(&self) -> impl Iterator<Item = (&ToolCall, Option<&ToolResult>)> {
        self.steps.iter().flat_map(|s| {
            s.turn.iter().flat_map(move |t| {
                t.tool_calls
                    .iter()
                    .map(move |c| (c, s.results.iter().find(|r| r.id == c.id)))
            })
        })
    }

    /// The cassette as JSON lines (each line's keys in their fixed order), and the line
    /// of each request noted.
    pub fn to_text(&mut self) -> String {
        let mut lines: Vec<Line> = vec![Line::Header(Box::new(self.header.clone()))];
        lines.extend(self.sections.get().iter().cloned().map(Line::Section));
        lines.extend(self.tools.get().iter().cloned().map(Line::Tool));
        lines.extend(self.servers.iter().map(|(name, listing)| Line::Server {
            name: name.clone(),
            listing: listing.clone(),
        }));
        lines.extend(self.prompt_hooks.iter().cloned().map(Line::HookResult));
        let mut request_lines = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            request_lines.push(lines.len() + 1);
            lines.push(match &step.request {
                RecordedRequest::Body(body) => Line::Request {
                    step: i + 1,
                    body: Some(body.clone()),
                    messages_from: None,
                    messages: None,
                    changed: None,
                },
                RecordedRequest::Delta(d) => Line::Request {
                    step: i + 1,
                    body: None,
                    messages_from: Some(d.messages_from),
                    messages: Some(d.messages.clone()),
                    changed: (!d.changed.is_empty()).then(|| d.changed.clone()),
                },
            });
            if let Some(turn) = &step.turn {
                lines.push(Line::Turn(turn.clone()));
            }
            // In the order things happened: each call's pre hooks, its result, its post
            // hooks; then the checks and the stop hooks.
            let about = |id: &str, event: crate::hooks::HookEvent| {
                step.hooks
                    .iter()
                    .filter(move |h| h.hook_event == event && h.id.as_deref() == Some(id))
                    .cloned()
                    .map(Line::HookResult)
                    .collect::<Vec<_>>()
            };
            for result in &step.results {
                lines.extend(about(&result.id, crate::hooks::HookEvent::PreToolUse));
                lines.push(Line::ToolResult(result.clone()));
                lines.extend(about(&result.id, crate::hooks::HookEvent::PostToolUse));
            }
            let placed = |h: &HookResult| {
                h.hook_event.is_tool_event()
                    && step
                        .results
                        .iter()
                        .any(|r| h.id.as_deref() == Some(r.id.as_str()))
            };
            let (stop, other): (Vec<&HookResult>, Vec<&HookResult>) = step
                .hooks
                .iter()
                .filter(|h| !placed(h))
                .partition(|h| h.hook_event == crate::hooks::HookEvent::Stop);
            lines.extend(other.into_iter().cloned().map(Line::HookResult));
            lines.extend(step.checks.iter().cloned().map(Line::CheckResult));
            lines.extend(stop.into_iter().cloned().map(Line::HookResult));
        }
        if let Some(outcome) = &self.outcome {
            lines.push(Line::Outcome(outcome.clone()));
        }
        self.request_lines = request_lines;
        let mut out = String::new();
        for line in &lines {
            // Plain data: serialising cannot fail.
            out.push_str(&serde_json::to_string(line).unwrap_or_default());
            out.push('\n');
        }
        out
    }

    /// Read a cassette. A damaged line, a missing header or outcome, steps out of order
    /// or an unknown format version is a [`CassetteError`] naming the line.
    pub fn parse(text: &str) -> Result<Cassette, CassetteError> {
        let mut header: Option<Header> = None;
        let mut cassette = Cassette {
            header: Header {
                format: CASSETTE_FORMAT,
                preset: String::new(),
                fingerprint: String::new(),
                tokens: PrefixTokens {
                    system: 0,
                    tools: 0,
                    prefix: 0,
                },
                provider: String::new(),
                dialect: String::new(),
                model: String::new(),
                request: Default::default(),
                prompt: String::new(),
                stream: false,
                max_steps: 0,
                runtime: Map::new(),
                variables: Map::new(),
            },
            sections: LockedLines::default(),
            tools: LockedLines::default(),
            servers: BTreeMap::new(),
            prompt_hooks: Vec::new(),
            steps: Vec::new(),
            outcome: None,
            request_lines: Vec::new(),
        };
        let mut last = 0;
        // The shape of the last request's body, for the next delta to fit.
        let mut shape: Option<BodyShape> = None;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            last = n;
            if raw.trim().is_empty() {
                continue;
            }
            if cassette.outcome.is_some() {
                return Err(corrupt(n, format!("line {n}: an event after the outcome")));
            }
            if header.is_some()
                && let Some((tool, untagged)) = locked_line(raw)
            {
                match tool {
                    true => cassette.tools.push_raw(untagged),
                    false => cassette.sections.push_raw(untagged),
                }
                continue;
            }
            let fast = if header.is_some() {
                fast_line(raw)
            } else {
                None
            };
            let line = match fast {
                Some(line) => line,
                _ => {
                    let value: Value = serde_json::from_str(raw)
                        .map_err(|e| corrupt(n, format!("line {n} is not JSON: {e}")))?;
                    if header.is_none() {
                        check_header_line(&value, n)?;
                    }
                    serde_json::from_value(value)
                        .map_err(|e| corrupt(n, format!("line {n}: {e}")))?
                }
            };
            match line {
                Line::Header(h) => {
                    if header.is_some() {
                        return Err(corrupt(n, format!("line {n}: a second header")));
                    }
                    header = Some(*h);
                }
                _ if header.is_none() => unreachable_header(n)?,
                // A line written otherwise than the writer writes it (spaces, another key
                // order), read the general way: kept as the writer writes it.
                Line::Section(s) => cassette
                    .sections
                    .push_raw(serde_json::to_string(&s).unwrap_or_default()),
                Line::Tool(t) => cassette
                    .tools
                    .push_raw(serde_json::to_string(&t).unwrap_or_default()),
                Line::Server { name, listing } => {
                    cassette.servers.insert(name, listing);
                }
                Line::Request {
                    step,
                    body,
                    messages_from,
                    messages,
                    changed,
                } => {
                    let request = match (body, messages_from, messages) {
                        (Some(body), None, None) if changed.is_none() => {
                            RecordedRequest::Body(body)
                        }
                        (None, Some(from), Some(messages)) if step > 1 => {
                            RecordedRequest::Delta(BodyDelta {
                                messages_from: from,
                                messages,
                                changed: changed.unwrap_or_default(),
                            })
                        }
                        _ => {
                            return Err(corrupt(
                                n,
                                format!(
                                    "line {n}: a request holds either its `body` or, after step 1, `messagesFrom` and `messages` (and `changed`)"
                                ),
                            ));
                        }
                    };
                    if step != cassette.steps.len() + 1 {
                        return Err(corrupt(
                            n,
                            format!(
                                "line {n}: the request of step {step}, expected step {}",
                                cassette.steps.len() + 1
                            ),
                        ));
                    }
                    let now = shape_after(shape.as_ref(), &request, step)
                        .map_err(|e| corrupt(n, format!("line {n}: {e}")))?;
                    shape = Some(now);
                    cassette.request_lines.push(n);
                    cassette.steps.push(Step {
                        request,
                        turn: None,
                        results: Vec::new(),
                        checks: Vec::new(),
                        hooks: Vec::new(),
                    });
                }
                Line::Turn(turn) => {
                    let step = current_step(&mut cassette.steps, turn.step, n, "turn")?;
                    if step.turn.is_some() {
                        return Err(corrupt(n, format!("line {n}: a second turn of a step")));
                    }
                    step.turn = Some(turn);
                }
                Line::ToolResult(result) => {
                    let step = current_step(&mut cassette.steps, result.step, n, "tool result")?;
                    let known = step
                        .turn
                        .as_ref()
                        .is_some_and(|t| t.tool_calls.iter().any(|c| c.id == result.id));
                    if !known {
                        return Err(corrupt(
                            n,
                            format!(
                                "line {n}: the result of call `{}`, which the step's turn does not make",
                                result.id
                            ),
                        ));
                    }
                    step.results.push(result);
                }
                Line::CheckResult(check) => {
                    let step = current_step(&mut cassette.steps, check.step, n, "check result")?;
                    let answered = step.turn.as_ref().is_some_and(|t| t.tool_calls.is_empty());
                    if !answered {
                        return Err(corrupt(
                            n,
                            format!(
                                "line {n}: a check result of step {}, whose turn is not a final answer",
                                check.step
                            ),
                        ));
                    }
                    step.checks.push(check);
                }
                Line::HookResult(hook)
                    if hook.hook_event == crate::hooks::HookEvent::UserPromptSubmit =>
                {
                    if !cassette.steps.is_empty() || hook.step != 1 {
                        return Err(corrupt(
                            n,
                            format!(
                                "line {n}: a `userPromptSubmit` hook result after the first request (such hooks run before it)"
                            ),
                        ));
                    }
                    cassette.prompt_hooks.push(hook);
                }
                Line::HookResult(hook) => {
                    let step = current_step(&mut cassette.steps, hook.step, n, "hook result")?;
                    let Some(turn) = &step.turn else {
                        return Err(corrupt(
                            n,
                            format!(
                                "line {n}: a hook result of step {}, before its turn",
                                hook.step
                            ),
                        ));
                    };
                    let fits = match (&hook.id, hook.hook_event.is_tool_event()) {
                        (Some(id), true) => turn.tool_calls.iter().any(|c| &c.id == id),
                        (None, false) => turn.tool_calls.is_empty(),
                        _ => false,
                    };
                    if !fits {
                        return Err(corrupt(
                            n,
                            format!(
                                "line {n}: a `{}` hook result that does not fit the step's turn (a tool event names one of its calls by `id`; a `stop` hook follows a final answer)",
                                hook.hook_event.key()
                            ),
                        ));
                    }
                    step.hooks.push(hook);
                }
                Line::Outcome(outcome) => cassette.outcome = Some(outcome),
            }
        }
        let Some(header) = header else {
            return Err(corrupt(0, "the cassette is empty (no header line)"));
        };
        cassette.header = header;
        if cassette.outcome.is_none() {
            return Err(corrupt(
                last,
                format!(
                    "the cassette ends at line {last} without an outcome: it was cut short (the recording stopped, or the file is truncated)"
                ),
            ));
        }
        Ok(cassette)
    }
}

/// The first line must be a header of a format this build reads.
fn check_header_line(value: &Value, n: usize) -> Result<(), CassetteError> {
    if value.get("event").and_then(Value::as_str) != Some("header") {
        return Err(corrupt(
            n,
            format!("line {n}: a cassette starts with its header (`{{\"event\":\"header\",…}}`)"),
        ));
    }
    match value.get("format").and_then(Value::as_u64) {
        Some(OLDEST_CASSETTE_FORMAT..=CASSETTE_FORMAT) => Ok(()),
        Some(other) => Err(CassetteError {
            line: n,
            message: format!(
                "line {n}: cassette format {other}; this agent-presets reads formats {OLDEST_CASSETTE_FORMAT} to {CASSETTE_FORMAT}"
            ),
            help: if other > CASSETTE_FORMAT {
                "it was recorded by a newer agent-presets: upgrade, or re-record it with this one"
                    .into()
            } else {
                format!("it was recorded by an older agent-presets: {RERECORD}")
            },
            version: true,
        }),
        None => Err(corrupt(
            n,
            format!("line {n}: the header has no `format` number"),
        )),
    }
}

fn unreachable_header(n: usize) -> Result<(), CassetteError> {
    Err(corrupt(n, format!("line {n}: an event before the header")))
}

fn current_step<'a>(
    steps: &'a mut [Step],
    step: usize,
    n: usize,
    what: &str,
) -> Result<&'a mut Step, CassetteError> {
    let count = steps.len();
    match steps.last_mut() {
        Some(s) if step == count => Ok(s),
        _ => Err(corrupt(
            n,
            format!("line {n}: a {what} of step {step} outside that step's request"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Cassette {
        let mut runtime = Map::new();
        runtime.insert("cwd".into(), "/w".into());
        Cassette {
            header: Header {
                format: CASSETTE_FORMAT,
                preset: "p".into(),
                fingerprint: "sha256:0".into(),
                tokens: PrefixTokens {
                    system: 1,
                    tools: 2,
                    prefix: 3,
                },
                provider: "deepseek".into(),
                dialect: "openai".into(),
                model: "m".into(),
                request: Default::default(),
                prompt: "hi".into(),
                stream: true,
                max_steps: 50,
                runtime,
                variables: Map::new(),
            },
            sections: Vec::new().into(),
            tools: Vec::new().into(),
            servers: BTreeMap::new(),
            steps: vec![Step {
                request: serde_json::json!({"model": "m", "messages": []}).into(),
                turn: Some(Turn {
                    step: 1,
                    text: String::new(),
                    reasoning: None,
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                    }],
                    finish: FinishReason::ToolCalls,
                    usage: None,
                }),
                results: vec![ToolResult {
                    step: 1,
                    id: "c1".into(),
                    tool: "read_file".into(),
                    kind: ToolKind::Builtin,
                    content: "x".into(),
                    is_error: false,
                }],
                checks: Vec::new(),
                hooks: Vec::new(),
            }],
            prompt_hooks: Vec::new(),
            outcome: Some(RecordedOutcome::Answered { steps: 1 }),
            request_lines: Vec::new(),
        }
    }

    #[test]
    fn a_cassette_reads_back_as_written() {
        let mut c = sample();
        let text = c.to_text();
        assert_eq!(text.lines().count(), 5, "{text}");
        assert!(text.starts_with("{\"event\":\"header\",\"format\":2,\"preset\":\"p\""));
        let back = Cassette::parse(&text).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.request_lines, vec![2]);
    }

    /// Step 2: a final answer, `cargo test` run after it (exit `code`, `output`), `hooks`.
    fn answered_and_checked(code: i32, output: &str, hooks: Vec<HookResult>) -> Step {
        Step {
            request: serde_json::json!({"model": "m", "messages": [1]}).into(),
            turn: Some(Turn {
                step: 2,
                text: "done".into(),
                reasoning: None,
                tool_calls: Vec::new(),
                finish: FinishReason::Stop,
                usage: None,
            }),
            results: Vec::new(),
            checks: vec![CheckResult {
                step: 2,
                check: "cargo test".into(),
                ending: crate::checks::CheckEnding::Exited(code),
                output: output.into(),
            }],
            hooks,
        }
    }

    /// Check results follow their step's final answer; one after a turn that called
    /// tools is a damaged cassette.
    #[test]
    fn check_results_read_back_and_only_after_a_final_answer() {
        let mut c = sample();
        c.steps
            .push(answered_and_checked(1, "1 failed", Vec::new()));
        let text = c.to_text();
        assert!(
            text.contains(r#"{"event":"checkResult","step":2,"check":"cargo test","ending":{"exited":1},"output":"1 failed"}"#),
            "{text}"
        );
        assert_eq!(Cassette::parse(&text).unwrap(), c);
        let moved = text.replace(r#""checkResult","step":2"#, r#""checkResult","step":1"#);
        let e = Cassette::parse(&moved).unwrap_err();
        assert!(e.message.contains("outside that step's request"), "{e:?}");
    }

    fn hook(step: usize, event: crate::hooks::HookEvent, id: Option<&str>) -> HookResult {
        HookResult {
            step,
            hook_event: event,
            hook: format!("guard {}", event.key()),
            id: id.map(str::to_owned),
            ending: crate::hooks::HookEnding::Exited(0),
            stdout: String::new(),
            stderr: "ok".into(),
        }
    }

    /// Hook results are written where they ran (prompt hooks before the first request,
    /// a call's pre hooks before its result and post hooks after it, stop hooks after the
    /// checks) and read back in that place; one that fits no call is a damaged cassette.
    #[test]
    fn hook_results_read_back_where_they_ran() {
        use crate::hooks::HookEvent::*;
        let mut c = sample();
        c.prompt_hooks.push(hook(1, UserPromptSubmit, None));
        c.steps[0].hooks = vec![
            hook(1, PreToolUse, Some("c1")),
            hook(1, PostToolUse, Some("c1")),
        ];
        c.steps
            .push(answered_and_checked(0, "", vec![hook(2, Stop, None)]));
        let text = c.to_text();
        let events: Vec<String> = text
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let e = v["event"].as_str().unwrap().to_owned();
                match v.get("hookEvent").and_then(Value::as_str) {
                    Some(h) => format!("{e}:{h}"),
                    None => e,
                }
            })
            .collect();
        assert_eq!(
            events,
            [
                "header",
                "hookResult:userPromptSubmit",
                "request",
                "turn",
                "hookResult:preToolUse",
                "toolResult",
                "hookResult:postToolUse",
                "request",
                "turn",
                "checkResult",
                "hookResult:stop",
                "outcome"
            ]
        );
        assert!(text.contains(r#"{"event":"hookResult","step":1,"hookEvent":"preToolUse","hook":"guard preToolUse","id":"c1","ending":{"exited":0},"stdout":"","stderr":"ok"}"#), "{text}");
        let back = Cassette::parse(&text).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.request_lines, vec![3, 8]);
        let stray = text.replace(r#""id":"c1","ending""#, r#""id":"c9","ending""#);
        let e = Cassette::parse(&stray).unwrap_err();
        assert!(e.message.contains("does not fit the step's turn"), "{e:?}");
        let late = format!(
            "{}\n{}",
            text.lines().take(3).collect::<Vec<_>>().join("\n"),
            r#"{"event":"hookResult","step":1,"hookEvent":"userPromptSubmit","hook":"x","ending":{"exited":0},"stdout":"","stderr":""}"#
        );
        let e = Cassette::parse(&late).unwrap_err();
        assert!(e.message.contains("after the first request"), "{e:?}");
    }

    /// A later body is written as what changed from the one before, and reads back to
    /// the same body; a body whose keys changed is written whole.
    #[test]
    fn a_later_body_is_written_as_what_changed() {
        use serde_json::json;
        let tools = json!([{"name": "read_file", "schema": {"big": "x".repeat(100)}}]);
        let one = json!({"model": "m", "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}], "tools": tools, "stream": true});
        // Anthropic moves its cache breakpoint: the last message changes too.
        let two = json!({"model": "m", "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "hi!"}, {"role": "tool", "content": "r"}], "tools": tools, "stream": false});
        let delta = RecordedRequest::after(Some(&one), &two);
        let RecordedRequest::Delta(d) = &delta else {
            panic!("{delta:?}")
        };
        assert_eq!(d.messages_from, 1);
        assert_eq!(d.messages.len(), 2);
        assert_eq!(
            d.changed,
            json!({"stream": false}).as_object().unwrap().clone()
        );
        assert_eq!(delta.body(Some(&one)), Some(two.clone()));
        // Another key: whole.
        let three =
            json!({"model": "m", "messages": [], "tools": tools, "stream": false, "seed": 1});
        assert!(matches!(
            RecordedRequest::after(Some(&two), &three),
            RecordedRequest::Body(_)
        ));
        assert!(matches!(
            RecordedRequest::after(None, &one),
            RecordedRequest::Body(_)
        ));
        // A delta that does not fit the body before it (too few messages, a key it
        // lacks) rebuilds nothing.
        let Some(Value::Object(mut short)) = Some(one.clone()) else {
            unreachable!()
        };
        short.insert("messages".into(), json!([]));
        assert_eq!(delta.body(Some(&Value::Object(short))), None);
        let Some(Value::Object(mut keyless)) = Some(one.clone()) else {
            unreachable!()
        };
        keyless.remove("stream");
        assert_eq!(delta.body(Some(&Value::Object(keyless))), None);

        // In a cassette: step 2's line holds the new messages only, not the tools.
        let mut c = sample();
        c.steps[0].request = one.clone().into();
        let mut second = answered_and_checked(0, "", Vec::new());
        second.request = delta.clone();
        c.steps.push(second);
        let text = c.to_text();
        let line = text.lines().nth(c.request_lines[1] - 1).unwrap();
        assert!(
            line.starts_with(r#"{"event":"request","step":2,"messagesFrom":1,"messages":[{"role":"user","content":"hi!"}"#),
            "{line}"
        );
        assert!(line.ends_with(r#""changed":{"stream":false}}"#), "{line}");
        assert!(!line.contains("read_file"), "{line}");
        let back = Cassette::parse(&text).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.steps[1].request.body(Some(&one)), Some(two));

        // A line with both forms, or a delta at step 1, is damaged.
        let both = text.replacen(
            r#""step":2,"messagesFrom""#,
            r#""step":2,"body":{},"messagesFrom""#,
            1,
        );
        let e = Cassette::parse(&both).unwrap_err();
        assert_eq!(e.line, c.request_lines[1]);
        assert!(e.message.contains("either its `body`"), "{e:?}");
        // A delta that does not fit the body before it is damaged, found on reading.
        let far = text.replacen(r#""messagesFrom":1"#, r#""messagesFrom":3"#, 1);
        let e = Cassette::parse(&far).unwrap_err();
        assert_eq!(e.line, c.request_lines[1]);
        assert!(
            e.message
                .contains("keeps 3 messages of step 1's, which has 2"),
            "{e:?}"
        );
        let stray = text.replacen(
            r#""changed":{"stream":false}"#,
            r#""changed":{"seed":1}"#,
            1,
        );
        let e = Cassette::parse(&stray).unwrap_err();
        assert!(
            e.message
                .contains("changes `seed`, which step 1's does not have"),
            "{e:?}"
        );
    }

    /// Format 1 (every body whole) still reads.
    #[test]
    fn a_format_1_cassette_still_reads() {
        let mut c = sample();
        c.header.format = 1;
        let text = c.to_text();
        assert!(
            text.starts_with(r#"{"event":"header","format":1,"#),
            "{text}"
        );
        assert_eq!(Cassette::parse(&text).unwrap(), c);
    }

    /// `sample()` with a section and a tool as the lock records them.
    fn with_prefix() -> Cassette {
        let mut c = sample();
        c.sections = vec![LockedSection {
            name: "identity".into(),
            order: 0.0,
            tokens: 4,
            text: vec!["You review \"code\".".into(), "Be brief.".into()],
        }]
        .into();
        c.tools = vec![LockedTool {
            name: "read_file".into(),
            tokens: 30,
            definition: crate::project::lock::LockedDefinition {
                name: "read_file".into(),
                description: "Read a file.\nAny file.".into(),
                parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string", "minLength": 1.5}}}),
            },
        }]
        .into();
        c
    }

    #[test]
    fn the_prefix_lines_read_back_when_asked_for() {
        let mut c = with_prefix();
        let text = c.to_text();
        let back = Cassette::parse(&text).unwrap();
        assert_eq!((back.sections.len(), back.tools.len()), (1, 1));
        // Read on first use, equal to what was written.
        assert_eq!(back.lock_entry(), c.lock_entry());
        assert_eq!(back, c);
        assert_eq!(back.clone().to_text(), text);
    }

    #[test]
    fn a_damaged_prefix_line_is_refused_where_it_is() {
        let text = with_prefix().to_text();
        for (from, to) in [
            ("\"tokens\":30", "\"tokens\":\"30\""),
            ("\"tokens\":4", "\"tokens\":-4"),
            ("\"description\"", "\"summary\""),
            ("\"text\":[", "\"text\":[1,"),
            ("\"order\":0", "\"order\":\"first\""),
            ("\"parameters\":{", "\"parameters\":{]"),
        ] {
            assert!(text.contains(from), "{from}");
            let damaged = text.replacen(from, to, 1);
            let line = damaged
                .lines()
                .position(|l| l.contains(to))
                .map(|i| i + 1)
                .unwrap();
            let e = Cassette::parse(&damaged).unwrap_err();
            assert_eq!(e.line, line, "{to}: {e:?}");
            assert!(!e.version);
        }
    }

    #[test]
    fn a_truncated_cassette_names_its_last_line() {
        let text = sample().to_text();
        let cut: Vec<&str> = text.lines().take(3).collect();
        let e = Cassette::parse(&cut.join("\n")).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("without an outcome"), "{e:?}");
        let half = &text[..text.len() / 2];
        let e = Cassette::parse(half).unwrap_err();
        assert!(e.message.contains("is not JSON"), "{e:?}");
        assert!(!e.version);
    }

    #[test]
    fn an_unknown_format_is_a_version_error() {
        let text = sample()
            .to_text()
            .replacen("\"format\":2", "\"format\":7", 1);
        let e = Cassette::parse(&text).unwrap_err();
        assert!(e.version);
        assert_eq!(e.line, 1);
        assert!(e.help.contains("newer"), "{e:?}");
        assert!(Cassette::parse("").unwrap_err().message.contains("empty"));
        let e = Cassette::parse("{\"event\":\"turn\"}").unwrap_err();
        assert!(e.message.contains("starts with its header"), "{e:?}");
    }
}
