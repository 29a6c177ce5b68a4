//! The step loop: assemble → request → tool calls → registry, until the model answers
//! without calling a tool or the step limit is reached.
//!
//! Each step re-assembles with fresh values (runtime facts such as the date, and the
//! approval policy as the variable [`APPROVAL_VARIABLE`]), so the system prompt and tools
//! stay byte-identical while only the runtime-context snapshot (sent after the history,
//! only when it changed) carries what moved. The system prompt is reported
//! ([`AgentEvent::SystemPrompt`]) on the first step and again only when it changes, with
//! the reason ([`SystemPromptReason`]); the [`RequestHeader`] — model settings, tool
//! schemas as sent, prefix fingerprint — only when it differs from the previous step's.
//!
//! Tool calls run through the preset's registry: hidden and unknown tools are refused
//! alike, arguments are validated against the tool's schema, malformed JSON arguments
//! are reported back to the model, and a [`ToolApproval`] decides whether a tool that
//! changes files or runs commands may run. Every outcome becomes a tool result with the
//! call's id, so the loop goes on.
//!
//! Work per step is bounded: at most [`DEFAULT_MAX_TOOL_CALLS`] calls of one answer run
//! ([`Agent::with_max_tool_calls`]); the rest, calls with a name longer than
//! [`MAX_TOOL_NAME_CHARS`] and calls with arguments over [`MAX_TOOL_ARGUMENT_BYTES`] are
//! refused to the model with a tool result that says why. The history keeps an
//! over-long name only as an excerpt and over-large arguments only as `{}`, so neither
//! is resent (nor held) whole.
//!
//! ```no_run
//! use agent_presets::agent::{Agent, ApproveAll};
//! use agent_presets::client::{ClientOptions, ModelClient};
//! use agent_presets::prompt::ContextSnapshot;
//! use agent_presets::provider::ModelSettings;
//! use agent_presets::{PresetCatalog, ToolCatalog, validate_in_catalog};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let tools = ToolCatalog::builtin();
//! let presets = PresetCatalog::builtin();
//! let preset = validate_in_catalog(&presets, "standard", &tools)
//!     .preset
//!     .expect("standard is valid");
//! let settings = ModelSettings::from_spec(preset.model().expect("a model block"));
//! let client = ModelClient::from_env(settings, ClientOptions::default())?; // DEEPSEEK_API_KEY
//! // passEnv and the sandbox the preset declares, which the prompt tells the model about:
//! let workspace = preset.tool_context("/workspace/demo")?;
//! let mut agent = Agent::new(preset.assembler(), &client, workspace);
//! let (mut history, mut snapshot) = (Vec::new(), ContextSnapshot::new());
//! let values = preset
//!     .default_values()
//!     .with("cwd", "/workspace/demo")
//!     .with("os", "linux")
//!     .with("shell", "bash")
//!     .with("date", "2030-01-01");
//! let outcome = agent
//!     .run(
//!         "fix the failing test",
//!         &mut history,
//!         &mut snapshot,
//!         &mut |_step| values.clone(),
//!         &mut ApproveAll,
//!         &mut |event| eprintln!("{event:?}"),
//!     )
//!     .await?;
//! println!("{outcome:?}");
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::checks::{Check, CheckRun};
use crate::client::{ClientError, ClientEvent, ModelClient};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::endpoint::ModelSettings;
use crate::endpoint::Provider;
use crate::hooks::{EventFacts, Hook, HookDecision, HookEvent, HookRun, HookVerdict, Hooks};
use crate::preset::{OutputContract, output::OutputProblem};
use crate::prompt::{Assembly, ContextSnapshot, PromptAssembler, PromptText, Values};
pub use crate::provider::MAX_TOOL_NAME_CHARS;
pub use crate::provider::RequestBody;
use crate::provider::lint::LintedTools;
use crate::provider::{self, BodyPrefix, FinishReason, ModelTurn, StreamEvent, Usage, excerpt};
use crate::request::{Fingerprint, Message, RequestEnvelope, ToolCall};
use crate::texts::{
    AGENT_INVALID_JSON, AGENT_REFUSED_LARGE_ARGUMENTS, AGENT_REFUSED_LONG_NAME,
    AGENT_REFUSED_NO_TTY, AGENT_REFUSED_NOT_RUN, AGENT_REFUSED_TOO_MANY_CALLS,
    CONTEXT_APPROVAL_ALWAYS, Texts, substitute,
};
use crate::tools::{ToolContext, ToolDefinition, ToolOutput, ToolRegistry, WireTool};

/// What a request looks like apart from its messages. A provider caches the prefix per
/// model, so this changing means the cache starts over.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestHeader {
    /// The provider.
    pub provider: Provider,
    /// The model name.
    pub model: String,
    /// The URL requests go to.
    pub endpoint: String,
    /// The output token limit sent, if any.
    pub max_tokens: Option<u32>,
    /// Whether tools are sent in strict mode.
    pub strict_tools: bool,
    /// The prefix fingerprint (provider, model, tools, system). The system prompt itself
    /// is reported on its own ([`AgentEvent::SystemPrompt`]).
    pub fingerprint: Fingerprint,
    /// The tools exactly as sent (the endpoint's schema projection), in wire order.
    pub tools: Arc<[WireTool]>,
}

impl PartialEq for RequestHeader {
    /// Field by field; the same tools (one `Arc`, as every step of a run has) without
    /// walking their schemas.
    fn eq(&self, other: &Self) -> bool {
        self.provider == other.provider
            && self.model == other.model
            && self.endpoint == other.endpoint
            && self.max_tokens == other.max_tokens
            && self.strict_tools == other.strict_tools
            && self.fingerprint == other.fingerprint
            && (Arc::ptr_eq(&self.tools, &other.tools) || self.tools == other.tools)
    }
}

/// The template variable the agent sets, each step, to the approval policy in force
/// ([`ApprovalPolicy::as_str`]): a runtime fact (`standard` shows it in its runtime
/// context, so a change is re-sent with the next snapshot, and the cacheable prefix stays
/// as it was).
pub const APPROVAL_VARIABLE: &str = "approval";

/// How tool calls that change things are approved: a runtime fact the model is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Someone is asked about each call.
    Ask,
    /// Every call runs without asking (`--yes`).
    Yes,
    /// Every call is refused (no one can be asked).
    Refuse,
}

impl ApprovalPolicy {
    /// `ask`, `yes` or `refuse`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Ask => "ask",
            ApprovalPolicy::Yes => "yes",
            ApprovalPolicy::Refuse => "refuse",
        }
    }
}

/// Why a step reports the system prompt ([`AgentEvent::SystemPrompt`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SystemPromptReason {
    /// The first step of this agent: the prompt as first sent.
    FirstStep,
    /// Variables the system prompt depends on have other values than on the last step
    /// that sent it (named, in name order; empty when the caller assembled that step).
    VariablesChanged(Vec<String>),
    /// The tools sent differ from the last step's.
    ToolsChanged,
}

impl SystemPromptReason {
    /// `first-step`, `variables-changed` or `tools-changed`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SystemPromptReason::FirstStep => "first-step",
            SystemPromptReason::VariablesChanged(_) => "variables-changed",
            SystemPromptReason::ToolsChanged => "tools-changed",
        }
    }
}

/// Whether a tool call may run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Run it.
    Allow,
    /// Do not run it; the model is told why.
    Refuse(String),
}

/// Decides whether a tool that changes things (not [`ToolDefinition::read_only`]) may
/// run. Read-only tools, and calls the registry refuses anyway, are never asked about.
pub trait ToolApproval {
    /// Review one call.
    fn review(&mut self, call: &ToolCall, tool: &ToolDefinition) -> Approval;

    /// Review one call a permission rule (or no rule, for a tool that asks by default)
    /// sends to the user: `decision` says which (for the prompt). Default: [`review`](Self::review).
    fn review_asked(
        &mut self,
        call: &ToolCall,
        tool: &ToolDefinition,
        decision: &crate::policy::Decision,
    ) -> Approval {
        let _ = decision;
        self.review(call, tool)
    }

    /// The policy this approver follows now, told to the model as a runtime fact
    /// ([`APPROVAL_VARIABLE`]); asked once per step. Default: [`ApprovalPolicy::Ask`].
    fn policy(&self) -> ApprovalPolicy {
        ApprovalPolicy::Ask
    }

    /// Tools the user allowed for the rest of the run (answered "always"), in the order
    /// they were allowed; asked once per step. While any are, the runtime context says so
    /// ([`CONTEXT_APPROVAL_ALWAYS`]), after the history, so the prefix is unchanged.
    /// Default: none.
    fn always_allowed(&self) -> &[String] {
        &[]
    }
}

/// Every call may run (`--yes`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ApproveAll;

impl ToolApproval for ApproveAll {
    fn review(&mut self, _: &ToolCall, _: &ToolDefinition) -> Approval {
        Approval::Allow
    }

    fn policy(&self) -> ApprovalPolicy {
        ApprovalPolicy::Yes
    }
}

/// Tools that change things are refused (no one is there to ask).
#[derive(Clone, Debug)]
pub struct RefuseChanges {
    /// The model's text, over `{{ tool }}` and `{{ reason }}`.
    template: String,
    reason: String,
}

impl RefuseChanges {
    /// Refuse saying `reason` (`agent.refused.not-run` in `texts`).
    pub fn new(reason: impl Into<String>, texts: &Texts) -> Self {
        RefuseChanges {
            template: texts.get(&AGENT_REFUSED_NOT_RUN).to_owned(),
            reason: reason.into(),
        }
    }

    /// Refuse because there is no terminal to ask on and no `--yes`
    /// (`agent.refused.no-tty` in `texts`).
    pub fn no_terminal(texts: &Texts) -> Self {
        RefuseChanges {
            template: texts.get(&AGENT_REFUSED_NO_TTY).to_owned(),
            reason: String::new(),
        }
    }
}

impl ToolApproval for RefuseChanges {
    fn review(&mut self, call: &ToolCall, _: &ToolDefinition) -> Approval {
        Approval::Refuse(substitute(
            &self.template,
            &[("tool", &call.name), ("reason", &self.reason)],
        ))
    }

    fn policy(&self) -> ApprovalPolicy {
        ApprovalPolicy::Refuse
    }
}

/// What happens during a run, in order, for display and transcripts.
#[derive(Debug)]
pub enum AgentEvent<'a> {
    /// A step is about to send this system prompt: the first step's, or one that differs
    /// from the last one sent.
    SystemPrompt {
        /// The step (1-based).
        step: usize,
        /// Why it is reported.
        reason: &'a SystemPromptReason,
        /// The system prompt.
        text: &'a PromptText,
    },
    /// A step is about to send this header, which differs from the previous step's.
    RequestHeader {
        /// The step (1-based).
        step: usize,
        /// The header.
        header: &'a RequestHeader,
    },
    /// A message was added to the history (prompt, snapshot, answer, tool result).
    Message {
        /// The step (1-based).
        step: usize,
        /// The message.
        message: &'a Message,
    },
    /// A piece of the answer as it streams in.
    Stream {
        /// The step (1-based).
        step: usize,
        /// The piece.
        event: &'a StreamEvent,
    },
    /// A request failed and will be retried.
    Retry {
        /// The step (1-based).
        step: usize,
        /// The attempt that failed.
        attempt: u32,
        /// The wait before the next one.
        delay: Duration,
        /// Why it failed.
        error: &'a ClientError,
    },
    /// The preset's permission rules decided a call (before any approval is asked).
    PolicyDecision {
        /// The step (1-based).
        step: usize,
        /// The call.
        call: &'a ToolCall,
        /// The verdict and the rule that decided it.
        decision: &'a crate::policy::Decision,
    },
    /// A hook of the preset ran and decided (`hooks:`; each hook that ran, in order).
    HookDecision {
        /// The step (1-based; 1 for `userPromptSubmit`).
        step: usize,
        /// When it ran.
        event: HookEvent,
        /// The hook.
        hook: &'a Hook,
        /// The call it ran for (tool events).
        call: Option<&'a ToolCall>,
        /// What it decided.
        decision: &'a HookDecision,
    },
    /// A final answer was checked against the output contract.
    OutputChecked {
        /// The step (1-based).
        step: usize,
        /// Which answer this is (1 for the first).
        attempt: u32,
        /// How many more answers the contract allows after the first.
        retries: u32,
        /// What is wrong with it (empty: valid).
        problems: &'a [OutputProblem],
    },
    /// A success check ran after a final answer.
    CheckFinished {
        /// The step (1-based).
        step: usize,
        /// The check.
        check: &'a Check,
        /// Which run of this check this is (1 for the first).
        attempt: u32,
        /// How it ended and what it printed.
        run: &'a CheckRun,
    },
    /// A tool call is about to run (after approval).
    ToolCall {
        /// The step (1-based).
        step: usize,
        /// The call.
        call: &'a ToolCall,
    },
    /// The model's answer for a step is complete.
    StepFinished {
        /// The step (1-based).
        step: usize,
        /// Why the model stopped.
        finish: &'a FinishReason,
        /// Token counts, if the provider reported them.
        usage: Option<Usage>,
        /// How long the request took.
        elapsed: Duration,
    },
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The model answered without calling a tool.
    Answered {
        /// The answer.
        text: String,
        /// Steps taken.
        steps: usize,
        /// Why the last answer ended (`Length`: cut at the token limit).
        finish: FinishReason,
        /// The answer as the output contract's object ([`Agent::with_output`]), validated
        /// against its schema; `None` without a contract.
        output: Option<Value>,
    },
    /// The step limit was reached while the model still called tools.
    StepLimit {
        /// Steps taken.
        steps: usize,
    },
    /// The final answer still broke the output contract after every retry it allows.
    OutputInvalid {
        /// The last answer.
        text: String,
        /// Steps taken.
        steps: usize,
        /// What is wrong with it, located in the answer.
        problems: Vec<OutputProblem>,
    },
    /// A success check (`checks:`) still failed after every retry it allows.
    CheckFailed {
        /// The last answer.
        text: String,
        /// Steps taken.
        steps: usize,
        /// The check, as one line (its argv).
        check: String,
        /// How its last run ended (`exit code 1`, `timed out after 5s`, …).
        ending: String,
        /// Its last output (bounded).
        output: String,
    },
}

/// Why a run stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The prompt could not be assembled (e.g. a required variable without a value).
    #[error("the prompt could not be assembled")]
    Assemble(Diagnostics),
    /// The model request failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The client's provider would refuse the tools (the provider lint found errors for
    /// the endpoint the client talks to); nothing was sent.
    #[error("the provider would refuse the tools of the request")]
    ToolsRefused(Diagnostics),
    /// The step's `sandbox` value (what the system prompt tells the model about where
    /// commands run) is not the sandbox the [`ToolContext`] runs them in; nothing was
    /// sent. Build the context with the preset's sandbox:
    /// [`ValidPreset::tool_context`](crate::preset::ValidPreset::tool_context).
    #[error(
        "the prompt tells the model that commands run in the `{told}` sandbox, but the tools run them in `{enforced}`: build the tools with the preset's sandbox (`preset.tool_context(workspace)`) or set the `sandbox` value to `{enforced}`"
    )]
    SandboxMismatch {
        /// The step's `sandbox` value.
        told: String,
        /// The mode of the tool context's sandbox.
        enforced: &'static str,
    },
}

/// What [`ModelTransport::send`] returns.
pub type TransportFuture<'a> = Pin<Box<dyn Future<Output = Result<ModelTurn, ClientError>> + 'a>>;

/// The seam between the agent and the model: the agent builds each step's body and hands
/// it to a transport, which answers with the model's turn. The body comes in parts
/// ([`RequestBody`]: the run's shared prefix, built once, and the step's history), so a
/// transport that compares or keeps bodies does so without the prefix's cost per step;
/// written ([`RequestBody::to_json`]) it is the exact bytes of
/// [`crate::provider::request_body`]. [`ModelClient`] is the live
/// one; `testing::record::Recorder` wraps a live one and keeps every body and turn (a
/// cassette); `testing::replay::Player` answers from a cassette and never opens a socket.
pub trait ModelTransport: std::fmt::Debug {
    /// The settings requests are shaped by (dialect, model, strict tools, token limit).
    fn settings(&self) -> &ModelSettings;
    /// Whether requests ask for a streamed answer (`stream` in the body).
    fn stream(&self) -> bool;
    /// Send one request body (from [`crate::provider::request_parts`]) and collect the
    /// answer, reporting streamed pieces and retries to `on_event`.
    fn send<'a>(
        &'a self,
        body: RequestBody,
        on_event: &'a mut dyn FnMut(ClientEvent<'_>),
    ) -> TransportFuture<'a>;
}

impl ModelTransport for ModelClient {
    fn settings(&self) -> &ModelSettings {
        ModelClient::settings(self)
    }

    fn stream(&self) -> bool {
        self.options().stream
    }

    fn send<'a>(
        &'a self,
        body: RequestBody,
        on_event: &'a mut dyn FnMut(ClientEvent<'_>),
    ) -> TransportFuture<'a> {
        Box::pin(async move { ModelClient::send_body(self, &body, &mut |e| on_event(e)).await })
    }
}

/// What [`ToolRunner::run`] returns.
pub type ToolRunFuture<'a> = Pin<Box<dyn Future<Output = ToolOutput> + 'a>>;

/// The seam between the agent and its tools: a call that passed the agent's own checks
/// (bounds, JSON, approval) is handed to a runner. [`LiveTools`] runs it through the
/// registry; a replay feeds the recorded result back instead (no server or command is
/// started).
pub trait ToolRunner: std::fmt::Debug {
    /// Run `call` of step `step` (its arguments parsed into `args`).
    fn run<'a>(
        &'a self,
        step: usize,
        call: &'a ToolCall,
        args: Value,
        registry: &'a ToolRegistry,
        ctx: &'a ToolContext,
    ) -> ToolRunFuture<'a>;

    /// Run success check `check` after step `step`'s final answer: live by default (the
    /// program in `ctx`'s workspace and sandbox); a replay answers from the recording.
    fn run_check<'a>(
        &'a self,
        _step: usize,
        check: &'a Check,
        ctx: &'a ToolContext,
    ) -> CheckRunFuture<'a> {
        Box::pin(crate::tools::external::run_check(check, ctx))
    }

    /// Run `hook` of step `step` (about `call`, for a tool event) with `input` on its
    /// stdin: live by default (in `ctx`'s workspace and sandbox); a replay answers from
    /// the recording, and the agent decides from that run as it would from a live one.
    fn run_hook<'a>(
        &'a self,
        _step: usize,
        hook: &'a Hook,
        _call: Option<&'a ToolCall>,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> HookRunFuture<'a> {
        Box::pin(crate::tools::external::run_hook(hook, input, ctx))
    }
}

/// What [`ToolRunner::run_check`] returns.
pub type CheckRunFuture<'a> = Pin<Box<dyn Future<Output = CheckRun> + 'a>>;

/// What [`ToolRunner::run_hook`] returns.
pub type HookRunFuture<'a> = Pin<Box<dyn Future<Output = HookRun> + 'a>>;

/// Runs each call through the preset's registry ([`ToolRegistry::call_for_model`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct LiveTools;

impl ToolRunner for LiveTools {
    fn run<'a>(
        &'a self,
        _step: usize,
        call: &'a ToolCall,
        args: Value,
        registry: &'a ToolRegistry,
        ctx: &'a ToolContext,
    ) -> ToolRunFuture<'a> {
        Box::pin(registry.call_for_model(&call.name, args, ctx))
    }
}

/// Runs a conversation against one model with one preset's assembler and tools.
#[derive(Debug)]
pub struct Agent<'a> {
    assembler: &'a PromptAssembler,
    client: &'a dyn ModelTransport,
    runner: &'a dyn ToolRunner,
    tools: ToolContext,
    wire_tools: Arc<[WireTool]>,
    /// The shared part of the bodies last sent, with the system prompt and tools it was
    /// built from (built again only when either changes).
    body_prefix: Option<(PromptText, Arc<[WireTool]>, Arc<BodyPrefix>)>,
    /// The history's values in the last body, reused where the next has the same.
    history_cache: provider::HistoryCache,
    max_steps: usize,
    max_tool_calls: usize,
    last_header: Option<RequestHeader>,
    /// The system prompt last sent, with the values and tools of its step.
    last_system: Option<SentSystem>,
    /// The tools were linted for this client's endpoint already.
    linted: bool,
    /// Step 1, already assembled by the caller.
    first_step: Option<Assembly>,
    /// The preset's permission rules; `None`: every call gets its tool's default.
    policy: Option<Arc<crate::policy::Policy>>,
    /// The preset's hooks; `None`: none.
    hooks: Option<Arc<Hooks>>,
    /// The `session_id` hooks are told.
    session_id: String,
    /// The output contract the final answer must satisfy; `None`: free text.
    output: Option<OutputContract>,
    /// The success checks run after a final answer; `None`: none.
    checks: Option<Arc<[Check]>>,
}

/// What the hooks of one event decided together.
#[derive(Debug)]
struct Fired {
    /// `Block` if one blocked (the last that ran), else `Ask` if one asked.
    verdict: HookVerdict,
    /// The hook that blocked, and its reason.
    blocked: Option<(String, String)>,
    /// The arguments after every rewrite, and the last hook that rewrote them.
    args: Option<Value>,
    rewritten_by: Option<String>,
    /// Context for the model, in hook order.
    context: Vec<String>,
}

/// What a step sent as its system prompt, to tell why the next one differs.
#[derive(Debug)]
struct SentSystem {
    text: PromptText,
    /// `None`: the caller assembled that step ([`Agent::with_first_step`]).
    values: Option<Values>,
    tools: Arc<[WireTool]>,
}

/// The default step limit.
pub const DEFAULT_MAX_STEPS: usize = 50;

/// The default number of tool calls of one answer that run.
pub const DEFAULT_MAX_TOOL_CALLS: usize = 64;

/// The largest tool arguments that run (1 MiB); larger ones are refused, and the history
/// keeps `{}` in their place.
pub const MAX_TOOL_ARGUMENT_BYTES: usize = 1 << 20;

impl<'a> Agent<'a> {
    /// A preset that tells the model runtime facts (it has a runtime context) says "ask"
    /// for approval; once the user answered "always" for some tools, the context also says
    /// which (`context.approval.always`), so the next snapshot is re-sent with the new
    /// state. After the history: the cacheable prefix is unchanged.
    fn note_always_allowed(&self, assembly: &mut Assembly, always: &[String]) {
        let Some(context) = assembly.context.as_ref() else {
            return;
        };
        if always.is_empty() {
            return;
        }
        let tools = always
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let note = self
            .assembler
            .texts()
            .render(&CONTEXT_APPROVAL_ALWAYS, &[("tools", &tools)]);
        assembly.context = Some(PromptText::from(format!("{}\n\n{note}", context.as_str())));
    }

    /// The model is told where commands run (the `sandbox` value, rendered into the
    /// system prompt): a host whose tool context runs them elsewhere would tell it
    /// something false, so that step is refused before anything is sent.
    fn check_sandbox(&self, values: &Values) -> Result<(), AgentError> {
        let enforced = self.tools.sandbox().mode().as_str();
        match values.get("sandbox").and_then(|v| v.as_str()) {
            Some(told) if told != enforced => Err(AgentError::SandboxMismatch {
                told: told.to_owned(),
                enforced,
            }),
            _ => Ok(()),
        }
    }

    /// An agent whose tools work in `tools`' workspace, talking to the model through
    /// `client` (a [`ModelClient`], or any other [`ModelTransport`]).
    pub fn new(
        assembler: &'a PromptAssembler,
        client: &'a dyn ModelTransport,
        tools: ToolContext,
    ) -> Self {
        let wire_tools = provider::wire_tools(client.settings(), assembler.registry()).into();
        Agent {
            assembler,
            client,
            runner: &LiveTools,
            tools,
            wire_tools,
            body_prefix: None,
            history_cache: provider::HistoryCache::default(),
            max_steps: DEFAULT_MAX_STEPS,
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            last_header: None,
            last_system: None,
            linted: false,
            first_step: None,
            policy: None,
            hooks: None,
            session_id: String::new(),
            output: None,
            checks: None,
        }
    }

    /// Run `hooks` at their events: `userPromptSubmit` before the first request (its
    /// stdout joins the prompt; a block ends the run before anything is sent), `preToolUse`
    /// after the permission rules and before approval (a block refuses the call with the
    /// hook's reason; rewritten arguments are checked against the tool's schema and by the
    /// rules again), `postToolUse` after the call (a block turns the result into an error
    /// the model reads), `stop` when the model answers without calling a tool (a block
    /// sends the agent back to work with the reason, at most
    /// [`MAX_STOP_CONTINUATIONS`](crate::hooks::MAX_STOP_CONTINUATIONS) times). Each runs
    /// like a command tool, in this agent's [`ToolContext`].
    pub fn with_hooks(mut self, hooks: Arc<Hooks>) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        self.session_id = format!("{:x}-{nanos:x}", std::process::id());
        self.hooks = (!hooks.is_empty()).then_some(hooks);
        self
    }

    /// Hold the final answer to `contract` (a preset's `output:`,
    /// [`ValidPreset::output`](crate::preset::ValidPreset::output)): it is parsed and
    /// validated against the schema; an answer that fails goes back to the model with
    /// the problems (`agent.output.invalid`) up to `contract.retries` times, then the run
    /// ends with [`Outcome::OutputInvalid`]. A valid one is [`Outcome::Answered`]'s
    /// `output`. Each check is reported as [`AgentEvent::OutputChecked`].
    pub fn with_output(mut self, contract: Option<OutputContract>) -> Self {
        self.output = contract;
        self
    }

    /// Run `checks` after each final answer (and a valid output), in order: a failing
    /// one's ending and bounded output go back to the model (`agent.check.failed`) up to
    /// its `retries` times, then the run ends with [`Outcome::CheckFailed`]. Each run
    /// is reported as [`AgentEvent::CheckFinished`]; the [`ToolRunner`] runs them (a
    /// replay feeds the recorded results back).
    pub fn with_checks(mut self, checks: Arc<[Check]>) -> Self {
        self.checks = (!checks.is_empty()).then_some(checks);
        self
    }

    /// Does `event` run any hook (for `tool`)?
    fn has_hooks(&self, event: HookEvent, tool: Option<&str>) -> bool {
        self.hooks
            .as_ref()
            .is_some_and(|h| h.for_event(event, tool).next().is_some())
    }

    /// Run the hooks of `event` (for `call`'s tool) in order, each seeing the arguments
    /// the previous ones left, until one blocks.
    async fn fire<E>(
        &self,
        step: usize,
        event: HookEvent,
        call: Option<&ToolCall>,
        facts: EventFacts<'_>,
        args: Option<Value>,
        on_event: &mut E,
    ) -> Fired
    where
        E: FnMut(AgentEvent<'_>),
    {
        let mut fired = Fired {
            verdict: HookVerdict::Continue,
            blocked: None,
            args,
            rewritten_by: None,
            context: Vec::new(),
        };
        let Some(hooks) = &self.hooks else {
            return fired;
        };
        let cwd = self.tools.workspace().to_string_lossy().into_owned();
        for hook in hooks.for_event(event, call.map(|c| c.name.as_str())) {
            let input = crate::hooks::event_input(
                event,
                &EventFacts {
                    session_id: &self.session_id,
                    cwd: &cwd,
                    tool_name: call.map(|c| c.name.as_str()),
                    tool_use_id: call.map(|c| c.id.as_str()),
                    tool_input: fired.args.as_ref(),
                    ..facts.clone()
                },
            );
            let run = self
                .runner
                .run_hook(step, hook, call, &input, &self.tools)
                .await;
            let decision =
                crate::hooks::decide_in(event, hook.on_error, &run, self.assembler.texts());
            on_event(AgentEvent::HookDecision {
                step,
                event,
                hook,
                call,
                decision: &decision,
            });
            let HookDecision {
                verdict,
                reason,
                updated_input,
                context,
                ..
            } = decision;
            fired.context.extend(context);
            if let Some(new) = updated_input {
                fired.args = Some(new);
                fired.rewritten_by = Some(hook.label());
            }
            match verdict {
                HookVerdict::Block => {
                    fired.verdict = HookVerdict::Block;
                    fired.blocked = Some((hook.label(), reason.unwrap_or_default()));
                    break;
                }
                HookVerdict::Ask => fired.verdict = HookVerdict::Ask,
                HookVerdict::Continue => {}
            }
        }
        fired
    }

    /// The permission rules' decision on `call` with `args` (reported), if there are rules.
    fn policy_decision<E>(
        &self,
        step: usize,
        call: &ToolCall,
        args: &Value,
        tool: &ToolDefinition,
        on_event: &mut E,
    ) -> Option<crate::policy::Decision>
    where
        E: FnMut(AgentEvent<'_>),
    {
        let policy = self.policy.as_ref()?;
        let path = args
            .get(crate::policy::rule::PATH_ARGUMENT)
            .and_then(Value::as_str)
            .and_then(|raw| crate::tools::builtin::policy_path(&self.tools, raw));
        let decision = policy.decide(&crate::policy::Call {
            tool: &call.name,
            arguments: args,
            read_only: tool.read_only(),
            path: path.as_deref(),
            workspace: self.tools.workspace().to_str(),
        });
        on_event(AgentEvent::PolicyDecision {
            step,
            call,
            decision: &decision,
        });
        Some(decision)
    }

    /// What the model reads for a call a rule denied.
    fn denied(&self, call: &ToolCall, decision: &crate::policy::Decision) -> ToolOutput {
        let rule = decision.rule().map(|r| r.rule.as_str()).unwrap_or_default();
        let part = decision
            .command
            .as_deref()
            .map(|c| format!(" (`{c}`)"))
            .unwrap_or_default();
        ToolOutput::error(self.assembler.texts().render(
            &crate::texts::AGENT_REFUSED_BY_RULE,
            &[("tool", &call.name), ("rule", rule), ("part", &part)],
        ))
    }

    /// Decide each call with `policy` first (deny → ask → allow → the tool's default):
    /// a denied call does not run and the model is told the rule; an allowed one runs
    /// without asking; an ask goes to the approver ([`ToolApproval::review_asked`]).
    pub fn with_policy(mut self, policy: Arc<crate::policy::Policy>) -> Self {
        self.policy = (!policy.is_empty()).then_some(policy);
        self
    }

    /// Use tools already projected and linted for this client's endpoint (see
    /// [`LintedTools`]): [`Agent::run`] then does not lint them again. Tools linted for
    /// another endpoint are ignored (the agent lints its own).
    pub fn with_linted_tools(mut self, linted: &LintedTools) -> Self {
        if linted.settings() == self.client.settings() {
            self.wire_tools = Arc::clone(linted.tools());
            self.linted = true;
        }
        self
    }

    /// Send `assembly` as step 1 instead of assembling it again: the caller rendered it
    /// (with the values step 1 would get, [`APPROVAL_VARIABLE`] set to the policy of the
    /// approver it will pass to [`run`](Self::run)) to fail early, before anything was
    /// sent.
    pub fn with_first_step(mut self, assembly: Assembly) -> Self {
        self.first_step = Some(assembly);
        self
    }

    /// Hand the calls that may run to `runner` instead of running them through the
    /// registry ([`LiveTools`]).
    pub fn with_tool_runner(mut self, runner: &'a dyn ToolRunner) -> Self {
        self.runner = runner;
        self
    }

    /// Stop after `n` model requests (at least 1).
    pub fn with_max_steps(mut self, n: usize) -> Self {
        self.max_steps = n.max(1);
        self
    }

    /// Run at most `n` tool calls of one answer (at least 1); the model is told the rest
    /// were not run.
    pub fn with_max_tool_calls(mut self, n: usize) -> Self {
        self.max_tool_calls = n.max(1);
        self
    }

    /// Add `prompt` to `history` and run until the model answers or the step limit is
    /// reached. `values` gives each step's template values (called once per step, so
    /// runtime facts can change); `snapshot` remembers the runtime context already in
    /// `history`. Call again with the same history and snapshot to continue the
    /// conversation.
    pub async fn run<V, E>(
        &mut self,
        prompt: &str,
        history: &mut Vec<Message>,
        snapshot: &mut ContextSnapshot,
        values: &mut V,
        approval: &mut dyn ToolApproval,
        on_event: &mut E,
    ) -> Result<Outcome, AgentError>
    where
        V: FnMut(usize) -> Values,
        E: FnMut(AgentEvent<'_>),
    {
        // The preset was validated against its own provider; the client may talk to
        // another (`--provider`, `--base-url`): what that one would refuse stops the
        // run before a token is spent.
        if !self.linted {
            let refused = provider::lint::lint_tools(self.client.settings(), &self.wire_tools);
            if refused.iter().any(Diagnostic::is_error) {
                return Err(AgentError::ToolsRefused(Diagnostics::from_vec(refused)));
            }
        }
        snapshot.use_texts(self.assembler.texts());
        let mut prompt = prompt.to_owned();
        if self.has_hooks(HookEvent::UserPromptSubmit, None) {
            let fired = self
                .fire(
                    1,
                    HookEvent::UserPromptSubmit,
                    None,
                    EventFacts {
                        prompt: Some(&prompt),
                        ..EventFacts::default()
                    },
                    None,
                    on_event,
                )
                .await;
            if fired.verdict == HookVerdict::Block {
                // Nothing was sent; the hook's decision event says why.
                return Ok(Outcome::Answered {
                    text: String::new(),
                    steps: 0,
                    finish: FinishReason::Other(PROMPT_BLOCKED.to_owned()),
                    output: None,
                });
            }
            for context in fired.context {
                prompt.push_str("\n\n");
                prompt.push_str(&context);
            }
        }
        let prompt = prompt.as_str();
        let mut stop_continuations = 0usize;
        let mut output_attempts = 0u32;
        let mut check_attempts = vec![0u32; self.checks.as_ref().map_or(0, |c| c.len())];
        history.push(Message::user(prompt));
        if let Some(m) = history.last() {
            on_event(AgentEvent::Message {
                step: 1,
                message: m,
            });
        }
        for step in 1..=self.max_steps {
            let (assembly, step_values) = match self.first_step.take() {
                Some(first) if step == 1 => (first, None),
                _ => {
                    let mut v = values(step);
                    self.check_sandbox(&v)?;
                    v.set(APPROVAL_VARIABLE, approval.policy().as_str());
                    let mut assembly = self.assembler.assemble(&v).map_err(AgentError::Assemble)?;
                    self.note_always_allowed(&mut assembly, approval.always_allowed());
                    (assembly, Some(v))
                }
            };
            let before = history.len();
            let request = RequestEnvelope::build(&assembly, history, snapshot);
            for message in &history[before..] {
                on_event(AgentEvent::Message { step, message });
            }
            if let Some(reason) = self.system_changed(&request.system, step_values.as_ref()) {
                on_event(AgentEvent::SystemPrompt {
                    step,
                    reason: &reason,
                    text: &request.system,
                });
            }
            self.last_system = Some(SentSystem {
                text: request.system.clone(),
                values: step_values,
                tools: Arc::clone(&self.wire_tools),
            });
            let header = self.header(&request);
            if self.last_header.as_ref() != Some(&header) {
                on_event(AgentEvent::RequestHeader {
                    step,
                    header: &header,
                });
                self.last_header = Some(header);
            }
            let prefix = self.body_prefix(&request);
            let body = provider::request_parts_cached(
                self.client.settings(),
                &request,
                prefix,
                &mut self.history_cache,
            );
            let started = Instant::now();
            let turn = self
                .client
                .send(body, &mut |event: ClientEvent<'_>| match event {
                    ClientEvent::Stream(event) => on_event(AgentEvent::Stream { step, event }),
                    ClientEvent::Retry {
                        attempt,
                        delay,
                        error,
                    } => on_event(AgentEvent::Retry {
                        step,
                        attempt,
                        delay,
                        error,
                    }),
                })
                .await?;
            let mut turn = turn;
            let refusals = self.bound_calls(&mut turn.tool_calls);
            history.push(turn.to_message());
            if let Some(m) = history.last() {
                on_event(AgentEvent::Message { step, message: m });
            }
            on_event(AgentEvent::StepFinished {
                step,
                finish: &turn.finish,
                usage: turn.usage,
                elapsed: started.elapsed(),
            });
            if turn.tool_calls.is_empty() {
                let mut output = None;
                if let Some(contract) = &self.output {
                    output_attempts += 1;
                    let checked = contract.check_in(&turn.text, self.assembler.texts());
                    let problems = checked.as_ref().err().map_or(&[][..], Vec::as_slice);
                    on_event(AgentEvent::OutputChecked {
                        step,
                        attempt: output_attempts,
                        retries: contract.retries,
                        problems,
                    });
                    match checked {
                        Ok(value) => output = Some(value),
                        Err(problems) => {
                            if output_attempts > contract.retries || step >= self.max_steps {
                                return Ok(Outcome::OutputInvalid {
                                    text: turn.text,
                                    steps: step,
                                    problems,
                                });
                            }
                            let listed = problems
                                .iter()
                                .map(|p| format!("- {}", p.message))
                                .collect::<Vec<_>>()
                                .join("\n");
                            history.push(Message::user(self.assembler.texts().render(
                                &crate::texts::AGENT_OUTPUT_INVALID,
                                &[("problems", &listed)],
                            )));
                            if let Some(m) = history.last() {
                                on_event(AgentEvent::Message { step, message: m });
                            }
                            continue;
                        }
                    }
                }
                if let Some(checks) = self.checks.clone() {
                    let mut failed = None;
                    for (i, check) in checks.iter().enumerate() {
                        check_attempts[i] += 1;
                        let run = self.runner.run_check(step, check, &self.tools).await;
                        on_event(AgentEvent::CheckFinished {
                            step,
                            check,
                            attempt: check_attempts[i],
                            run: &run,
                        });
                        if !run.passed() {
                            failed = Some((i, run));
                            break;
                        }
                    }
                    if let Some((i, run)) = failed {
                        let check = &checks[i];
                        let ending = check.ending_text_in(&run, self.assembler.texts());
                        if check_attempts[i] > check.retries || step >= self.max_steps {
                            return Ok(Outcome::CheckFailed {
                                text: turn.text,
                                steps: step,
                                check: check.label(),
                                ending,
                                output: run.output,
                            });
                        }
                        history.push(Message::user(self.assembler.texts().render(
                            &crate::texts::AGENT_CHECK_FAILED,
                            &[
                                ("check", &check.label()),
                                ("ending", &ending),
                                ("output", &run.output),
                            ],
                        )));
                        if let Some(m) = history.last() {
                            on_event(AgentEvent::Message { step, message: m });
                        }
                        continue;
                    }
                }
                if stop_continuations < crate::hooks::MAX_STOP_CONTINUATIONS
                    && step < self.max_steps
                    && self.has_hooks(HookEvent::Stop, None)
                {
                    let fired = self
                        .fire(
                            step,
                            HookEvent::Stop,
                            None,
                            EventFacts {
                                stop_hook_active: stop_continuations > 0,
                                ..EventFacts::default()
                            },
                            None,
                            on_event,
                        )
                        .await;
                    if let Some((hook, reason)) = fired.blocked {
                        stop_continuations += 1;
                        history.push(Message::user(self.assembler.texts().render(
                            &crate::texts::AGENT_HOOK_STOP,
                            &[("hook", &hook), ("reason", &reason)],
                        )));
                        if let Some(m) = history.last() {
                            on_event(AgentEvent::Message { step, message: m });
                        }
                        continue;
                    }
                }
                return Ok(Outcome::Answered {
                    text: turn.text,
                    steps: step,
                    finish: turn.finish,
                    output,
                });
            }
            for (call, refusal) in turn.tool_calls.iter().zip(refusals) {
                let output = match refusal {
                    Some(reason) => ToolOutput::error(reason),
                    None => self.run_call(step, call, approval, on_event).await,
                };
                history.push(Message::tool(&call.id, output.content, output.is_error));
                if let Some(m) = history.last() {
                    on_event(AgentEvent::Message { step, message: m });
                }
            }
        }
        Ok(Outcome::StepLimit {
            steps: self.max_steps,
        })
    }

    /// Why each call may not run (`None`: it may), with over-long names cut to an
    /// excerpt and over-large arguments replaced by `{}` (valid in both dialects: an
    /// object for Anthropic's `input`, a string for OpenAI's `arguments`).
    fn bound_calls(&self, calls: &mut [ToolCall]) -> Vec<Option<String>> {
        let total = calls.len();
        let max = self.max_tool_calls;
        let texts = self.assembler.texts();
        calls
            .iter_mut()
            .enumerate()
            .map(|(i, call)| {
                let long_name = call.name.chars().nth(MAX_TOOL_NAME_CHARS).is_some();
                if long_name {
                    // No `…`: the provider checks names it gets back (at most 64
                    // characters, a restricted alphabet).
                    call.name = call.name.chars().take(MAX_TOOL_NAME_CHARS).collect();
                }
                let arguments = call.arguments.len();
                if arguments > MAX_TOOL_ARGUMENT_BYTES {
                    call.arguments = "{}".to_owned();
                }
                if i >= max {
                    Some(texts.render(
                        &AGENT_REFUSED_TOO_MANY_CALLS,
                        &[
                            ("total", &total.to_string()),
                            ("max", &max.to_string()),
                            ("number", &(i + 1).to_string()),
                        ],
                    ))
                } else if long_name {
                    Some(texts.render(
                        &AGENT_REFUSED_LONG_NAME,
                        &[
                            ("tool", &call.name),
                            ("max", &MAX_TOOL_NAME_CHARS.to_string()),
                        ],
                    ))
                } else if arguments > MAX_TOOL_ARGUMENT_BYTES {
                    Some(texts.render(
                        &AGENT_REFUSED_LARGE_ARGUMENTS,
                        &[
                            ("tool", &call.name),
                            ("bytes", &arguments.to_string()),
                            ("max", &MAX_TOOL_ARGUMENT_BYTES.to_string()),
                        ],
                    ))
                } else {
                    None
                }
            })
            .collect()
    }

    /// Why `system` (sent with `values`; `None`: the caller assembled it) must be
    /// reported: it is the first, or differs from the last one sent. `None`: the same
    /// text as last time.
    fn system_changed(
        &self,
        system: &PromptText,
        values: Option<&Values>,
    ) -> Option<SystemPromptReason> {
        let Some(last) = &self.last_system else {
            return Some(SystemPromptReason::FirstStep);
        };
        if last.text == *system {
            return None;
        }
        if !Arc::ptr_eq(&last.tools, &self.wire_tools) && last.tools != self.wire_tools {
            return Some(SystemPromptReason::ToolsChanged);
        }
        let changed = match (&last.values, values) {
            (Some(before), Some(now)) => self
                .assembler
                .system_variables()
                .filter(|v| before.get(v) != now.get(v))
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        Some(SystemPromptReason::VariablesChanged(changed))
    }

    /// The shared part of `request`'s body: the one built for the last step when its
    /// system prompt and tools are the same, else a new one.
    fn body_prefix(&mut self, request: &RequestEnvelope) -> Arc<BodyPrefix> {
        if let Some((system, tools, prefix)) = &self.body_prefix
            && Arc::ptr_eq(tools, &self.wire_tools)
            && system.as_str() == request.system.as_str()
        {
            return Arc::clone(prefix);
        }
        let prefix = Arc::new(provider::body_prefix(
            self.client.settings(),
            request,
            &self.wire_tools,
            self.client.stream(),
        ));
        self.body_prefix = Some((
            request.system.clone(),
            Arc::clone(&self.wire_tools),
            Arc::clone(&prefix),
        ));
        prefix
    }

    fn header(&self, request: &RequestEnvelope) -> RequestHeader {
        let settings = self.client.settings();
        RequestHeader {
            provider: settings.provider,
            model: settings.name.clone(),
            endpoint: settings.endpoint(),
            max_tokens: settings.max_tokens,
            strict_tools: settings.strict_tools,
            fingerprint: request.fingerprint,
            tools: Arc::clone(&self.wire_tools),
        }
    }

    async fn run_call<E>(
        &self,
        step: usize,
        call: &ToolCall,
        approval: &mut dyn ToolApproval,
        on_event: &mut E,
    ) -> ToolOutput
    where
        E: FnMut(AgentEvent<'_>),
    {
        let registry = self.assembler.registry();
        let args = match call.parsed_arguments() {
            Ok(args) => args,
            Err(e) => {
                return ToolOutput::error(self.assembler.texts().render(
                    &AGENT_INVALID_JSON,
                    &[
                        ("tool", &call.name),
                        ("error", &e.to_string()),
                        ("arguments", &excerpt(&call.arguments, 200)),
                    ],
                ));
            }
        };
        let Some(tool) = registry.get(&call.name) else {
            // Unknown and hidden tools are refused by the registry, without asking anyone.
            on_event(AgentEvent::ToolCall { step, call });
            return self
                .runner
                .run(step, call, args, registry, &self.tools)
                .await;
        };
        let texts = self.assembler.texts();
        // Permission rules first (src/policy): deny, ask, allow, the tool's default.
        let mut decision = self.policy_decision(step, call, &args, tool, on_event);
        if let Some(d) = &decision
            && d.verdict == crate::policy::Verdict::Deny
        {
            return self.denied(call, d);
        }
        let mut args = args;
        let mut rewritten: Option<ToolCall> = None;
        let mut hook_asks = false;
        if self.has_hooks(HookEvent::PreToolUse, Some(&call.name)) {
            let fired = self
                .fire(
                    step,
                    HookEvent::PreToolUse,
                    Some(call),
                    EventFacts::default(),
                    Some(args.clone()),
                    on_event,
                )
                .await;
            if let Some((hook, reason)) = &fired.blocked {
                return ToolOutput::error(texts.render(
                    &crate::texts::AGENT_HOOK_BLOCKED,
                    &[("tool", &call.name), ("hook", hook), ("reason", reason)],
                ));
            }
            hook_asks = fired.verdict == HookVerdict::Ask;
            if let (Some(hook), Some(new)) = (fired.rewritten_by, fired.args) {
                // The rewritten arguments are checked as the model's are, before anyone
                // is asked about them, and the rules decide again on them.
                if let Some(problems) = schema_problems(tool, &new) {
                    return ToolOutput::error(texts.render(
                        &crate::texts::AGENT_HOOK_INVALID_REWRITE,
                        &[
                            ("tool", &call.name),
                            ("hook", &hook),
                            ("problems", &problems),
                        ],
                    ));
                }
                let again = ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: new.to_string(),
                };
                decision = self.policy_decision(step, &again, &new, tool, on_event);
                if let Some(d) = &decision
                    && d.verdict == crate::policy::Verdict::Deny
                {
                    return self.denied(&again, d);
                }
                args = new;
                rewritten = Some(again);
            }
        }
        let call = rewritten.as_ref().unwrap_or(call);
        let approved = match &decision {
            Some(d) => match d.verdict {
                crate::policy::Verdict::Deny => return self.denied(call, d),
                crate::policy::Verdict::Ask => approval.review_asked(call, tool, d),
                crate::policy::Verdict::Allow if hook_asks => approval.review_asked(call, tool, d),
                crate::policy::Verdict::Allow => Approval::Allow,
            },
            None if !tool.read_only() || hook_asks => approval.review(call, tool),
            None => Approval::Allow,
        };
        if let Approval::Refuse(reason) = approved {
            return ToolOutput::error(reason);
        }
        on_event(AgentEvent::ToolCall { step, call });
        let post = self.has_hooks(HookEvent::PostToolUse, Some(&call.name));
        let input = post.then(|| args.clone());
        let mut output = self
            .runner
            .run(step, call, args, registry, &self.tools)
            .await;
        if post {
            let response = serde_json::json!({
                "content": output.content,
                "is_error": output.is_error,
            });
            let fired = self
                .fire(
                    step,
                    HookEvent::PostToolUse,
                    Some(call),
                    EventFacts {
                        tool_response: Some(&response),
                        ..EventFacts::default()
                    },
                    input,
                    on_event,
                )
                .await;
            for context in &fired.context {
                output.content.push_str("\n\n");
                output.content.push_str(context);
            }
            if let Some((hook, reason)) = &fired.blocked {
                let note = texts.render(
                    &crate::texts::AGENT_HOOK_POST_BLOCKED,
                    &[("tool", &call.name), ("hook", hook), ("reason", reason)],
                );
                output = ToolOutput::error(format!("{}\n\n{note}", output.content));
            }
        }
        output
    }
}

/// The `finish` reason of the [`Outcome::Answered`] a run returns when a
/// `userPromptSubmit` hook blocked the prompt (nothing was sent; no steps were taken).
pub const PROMPT_BLOCKED: &str = "prompt-blocked-by-hook";

/// Why `args` do not fit `tool`'s parameters (joined), if they do not.
fn schema_problems(tool: &ToolDefinition, args: &Value) -> Option<String> {
    let validator = match tool.validator() {
        Ok(v) => v,
        Err(e) => return Some(e.to_owned()),
    };
    let problems: Vec<String> = validator
        .iter_errors(args)
        .take(5)
        .map(|e| e.to_string())
        .collect();
    (!problems.is_empty()).then(|| problems.join("; "))
}
