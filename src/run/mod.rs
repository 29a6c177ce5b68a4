//! The run journey (feature `client`), once for `run`, `test --record`, `test --live`
//! and a host: a valid preset and its endpoint become a finished agent run in stages
//! whose order is what keeps a run safe.
//!
//! 1. [`prepare`]: the trust gate (the caller's `admit`, which may ask its user), then
//!    the values (the caller's `read_values`: `--var`, `--var-file`, a case's `vars`),
//!    the sandbox, and step 1 rendered, so that everything that can fail without the
//!    network fails now. Nothing is read from the environment for the model (no key)
//!    before the gate has let the preset through, and no value before the gate either.
//! 2. [`Prepared::connect`]: the transport ([`Model`]: the live [`ModelClient`], built
//!    here and only here from the key, or a transport the caller hands in, such as a
//!    [`crate::testing::replay::Player`]), with a [`Recorder`] in front when recording,
//!    and the tools' context (workspace, `passEnv`, the sandbox, containment).
//! 3. [`Connected::start`]: the MCP servers the visible tools come from, checked against
//!    the lock (`server-changed`, `tool-drift`), started in parallel; dropping the
//!    future kills what has started.
//! 4. [`Started::run`]: the agent until an answer, the step limit or an error; the
//!    recording's cassette is made at its end. [`Started::shutdown`] stops the servers
//!    (after a run, or after the caller interrupted one by dropping its future).
//!
//! This module asks nothing and prints nothing: the caller's `admit` asks, its
//! approver ([`ToolApproval`]) asks before a change, its `on_event` shows the run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::{
    APPROVAL_VARIABLE, Agent, AgentError, AgentEvent, ApprovalPolicy, ModelTransport, Outcome,
    ToolApproval,
};
use crate::client::{ClientError, ClientOptions, ModelClient};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics};
use crate::endpoint::ModelSettings;
use crate::preset::ValidPreset;
use crate::process::SandboxProfile;
use crate::project::connect::{RunServers, RunServersError};
use crate::project::lock::PresetLock;
use crate::project::run_setup::{sandbox_profile, with_containment_from_env};
use crate::project::{Project, UsageError, environment};
use crate::prompt::{Assembly, ContextSnapshot, MODEL_VARIABLE, PROVIDER_VARIABLE, Values};
use crate::provider::lint::LintedTools;
use crate::redact::Redactor;
use crate::request::{Message, Role};
use crate::testing::cassette::Cassette;
use crate::testing::observed::{Observed, ObservedCall, ObservedOutcome};
use crate::testing::record::{RecordedRun, Recorder, cassette, recording_redactor};
use crate::tools::ToolContext;

/// Why a run could not be made (before or while it started; how the run itself ended is
/// [`Finished::outcome`]).
#[derive(Debug)]
pub enum RunError {
    /// A mistake in the invocation (a weaker `--sandbox`, a working directory that
    /// cannot be used, a lock entry that cannot be made): exit 2.
    Usage(UsageError),
    /// Step 1 could not be rendered (a missing variable, a template error): exit 1.
    Render(Diagnostics),
    /// The servers are not the ones the lock pinned (`server-changed`), or a tool of
    /// theirs drifted (`tool-drift`): exit 1.
    Invalid(Vec<Diagnostic>),
    /// The live client could not be built (no key, a bad base URL).
    Client(ClientError),
}

impl From<UsageError> for RunError {
    fn from(e: UsageError) -> Self {
        RunError::Usage(e)
    }
}

/// [`prepare`]'s refusals: the caller's own (from `admit` or `read_values`) or the run's.
#[derive(Debug)]
pub enum PrepareError<E> {
    /// `admit` or `read_values` refused.
    Caller(E),
    /// The run refused.
    Run(RunError),
}

/// What a run is made with, settled before [`prepare`].
#[derive(Debug)]
pub struct Setup<'p> {
    /// The project (its lock pins the servers; its catalog the tools).
    pub project: &'p Project,
    /// The preset, validated.
    pub preset: ValidPreset,
    /// The endpoint, final (overrides applied).
    pub settings: ModelSettings,
    /// The preset's tools linted for `settings` (`project::endpoint::lint`).
    pub linted: LintedTools,
    /// The working directory (absolute, existing: `project::run_setup::working_directory`).
    pub cwd: PathBuf,
    /// `--sandbox MODE`: only stricter than the preset's (or an explicit `full-access`).
    pub sandbox: Option<String>,
    /// The policy of the approver the run will be given (rendered into step 1).
    pub approval: ApprovalPolicy,
    /// `--max-steps` (default: the preset's `limits.maxSteps`, else 50).
    pub max_steps: Option<u64>,
    /// `--max-tool-calls` (default: the preset's `limits.maxToolCalls`, else 64).
    pub max_tool_calls: Option<u64>,
    /// Keep the date of step 1 for every step (a value given on the command line). A
    /// recording always does.
    pub pin_date: bool,
    /// Record the run: [`Finished::cassette`] holds it.
    pub record: bool,
}

/// A run past the trust gate, with its values and step 1 rendered: nothing was sent or
/// started yet.
#[derive(Debug)]
pub struct Prepared<'p> {
    setup: Setup<'p>,
    values: Values,
    sandbox: SandboxProfile,
    first_step: Assembly,
}

/// The journey's first stage: `admit` (the trust gate: it returns `Ok(false)` to stop
/// the run without an error, having said why) decides before anything else is read;
/// then `read_values` gives the values for the preset and the working directory (as
/// text), then the sandbox is settled, the built-in values are set (`provider`, `model`,
/// `sandbox`, `approval`) and step 1 is rendered. `Ok(None)`: `admit` stopped the run.
pub fn prepare<'p, E>(
    setup: Setup<'p>,
    admit: impl FnOnce(&ValidPreset, &ModelSettings, &Path) -> Result<bool, E>,
    read_values: impl FnOnce(&ValidPreset, String) -> Result<Values, E>,
) -> Result<Option<Prepared<'p>>, PrepareError<E>> {
    // Nothing is sent or started for a preset the user has not trusted, and nothing is
    // read for it either.
    if !admit(&setup.preset, &setup.settings, &setup.cwd).map_err(PrepareError::Caller)? {
        return Ok(None);
    }
    let cwd_text = setup.cwd.to_string_lossy().into_owned();
    let mut values = read_values(&setup.preset, cwd_text).map_err(PrepareError::Caller)?;
    values.set(PROVIDER_VARIABLE, setup.settings.provider.as_str());
    values.set(MODEL_VARIABLE, setup.settings.name.clone());
    let sandbox = sandbox_profile(&setup.preset, setup.sandbox.as_deref(), &setup.cwd)
        .map_err(|e| PrepareError::Run(e.into()))?;
    values.set("sandbox", sandbox.mode().as_str());
    // The policy the approver follows, as the agent sets it on every later step.
    values.set(APPROVAL_VARIABLE, setup.approval.as_str());
    let first_step = setup
        .preset
        .assembler()
        .assemble(&values)
        .map_err(|ds| PrepareError::Run(RunError::Render(ds)))?;
    Ok(Some(Prepared {
        setup,
        values,
        sandbox,
        first_step,
    }))
}

/// Where the run's requests go: the transport seam.
#[derive(Debug)]
pub enum Model<'t> {
    /// The live client, built from the endpoint and the key (read now, from the
    /// variable the settings name).
    Live(ClientOptions),
    /// A transport of the caller's: a [`crate::testing::replay::Player`] answering from
    /// a cassette, a host's own. No key is read.
    Given(&'t dyn ModelTransport),
}

#[derive(Debug)]
enum Transport<'t> {
    Client(Box<ModelClient>),
    Given(&'t dyn ModelTransport),
}

impl Transport<'_> {
    fn as_dyn(&self) -> &dyn ModelTransport {
        match self {
            Transport::Client(c) => c.as_ref(),
            Transport::Given(t) => *t,
        }
    }
}

impl<'p> Prepared<'p> {
    /// The values every step is rendered with (the date refreshed per step unless pinned).
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// The preset.
    pub fn preset(&self) -> &ValidPreset {
        &self.setup.preset
    }

    /// The endpoint.
    pub fn settings(&self) -> &ModelSettings {
        &self.setup.settings
    }

    /// Step 1, rendered (what `render` shows).
    pub fn first_step(&self) -> &Assembly {
        &self.first_step
    }

    /// The journey's second stage: the transport (`model`) and the tools' context. A
    /// live client that cannot be built (no key) is [`RunError::Client`].
    pub fn connect<'t>(self, model: Model<'t>) -> Result<Connected<'p, 't>, RunError> {
        let transport = match model {
            Model::Live(options) => Transport::Client(Box::new(ModelClient::from_env(
                self.setup.settings.clone(),
                options,
            )?)),
            Model::Given(t) => Transport::Given(t),
        };
        let preset = &self.setup.preset;
        let tools = ToolContext::new(&self.setup.cwd)
            .map_err(|e| {
                UsageError::with(
                    e.to_string(),
                    Some("pass an existing directory with `--cwd DIR`".into()),
                )
            })?
            .with_passed_env(preset.pass_env())
            // No provider's key reaches a command, command tool or server, whatever
            // `passEnv` says (the same rule as `lock --connect`).
            .with_hidden_env(crate::preset::chain_settings::withheld_env(
                self.setup.settings.api_key_env.as_deref(),
            ))
            .with_sandbox(self.sandbox.clone());
        let tools = with_containment_from_env(tools)?;
        let redactor = match &transport {
            Transport::Client(c) => c.redactor().clone(),
            Transport::Given(_) => Redactor::default(),
        };
        Ok(Connected {
            prepared: self,
            transport,
            tools,
            redactor,
        })
    }
}

impl From<ClientError> for RunError {
    fn from(e: ClientError) -> Self {
        RunError::Client(e)
    }
}

/// A run with its transport and tools' context; its servers not started yet.
#[derive(Debug)]
pub struct Connected<'p, 't> {
    prepared: Prepared<'p>,
    transport: Transport<'t>,
    tools: ToolContext,
    redactor: Redactor,
}

/// What the servers' start needs besides the run.
pub struct ServerOptions<'s> {
    /// `--allow-tool-drift`: a tool whose live definition differs from the lock is sent
    /// as pinned (named in [`Started::drifted`]) instead of refusing the run.
    pub allow_drift: bool,
    /// Where the servers' stderr lines go (masked by the run's redactor and each
    /// server's secrets).
    pub stderr: &'s crate::mcp::StderrSink,
}

impl std::fmt::Debug for ServerOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOptions")
            .field("allow_drift", &self.allow_drift)
            .finish_non_exhaustive()
    }
}

impl<'p, 't> Connected<'p, 't> {
    /// Masks the key (of a live client) in what is shown of the run.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The preset.
    pub fn preset(&self) -> &ValidPreset {
        &self.prepared.setup.preset
    }

    /// The endpoint.
    pub fn settings(&self) -> &ModelSettings {
        self.transport.as_dyn().settings()
    }

    /// The journey's third stage: the MCP servers the visible tools come from (none
    /// when no MCP tool is visible), which must be the ones the lock recorded
    /// (`server-changed`), started in parallel, their tools' calls routed to them.
    /// Dropping the future stops what has started.
    pub async fn start(self, options: ServerOptions<'_>) -> Result<Started<'t>, RunError> {
        let Connected {
            prepared,
            transport,
            tools,
            redactor,
        } = self;
        let Prepared {
            setup,
            values,
            sandbox: _,
            first_step,
        } = prepared;
        let Setup {
            project,
            preset,
            settings,
            linted,
            max_steps,
            max_tool_calls,
            pin_date,
            record,
            ..
        } = setup;
        let vars: Vec<_> = std::env::vars_os().collect();
        // What a recording needs of the preset, taken before the servers take it over.
        let recording = if record {
            let entry = crate::project::lock::entry(&preset)
                .map_err(|e| RunError::Usage(UsageError::new(e.to_string())))?;
            Some(Recording {
                entry,
                redactor: recording_redactor(&preset, &settings, &vars),
                preset: preset.name().to_owned(),
            })
        } else {
            None
        };
        check_servers(project, &preset, &tools, &vars)?;
        // The preset's permission rules (issue 33), before the preset moves to its servers.
        let policy = Arc::new(preset.policy());
        // Its hooks (issue 33): run by the agent around each call, the prompt and the stop.
        let hooks = Arc::new(preset.hooks());
        // What it must deliver (issue 32): the output contract and the success checks.
        let output = preset.output();
        let checks: Arc<[crate::checks::Check]> = preset.checks().into();
        let limits = run_limits(&preset.limits(), max_steps, max_tool_calls);
        let servers = RunServers::start(
            &preset,
            project.tools.listings(),
            &tools,
            &vars,
            options.allow_drift,
            (options.stderr, &redactor),
        )
        .await
        .map_err(|e| match e {
            RunServersError::Drift { .. } => RunError::Invalid(vec![
                Diagnostic::new(DiagnosticKind::ToolDrift, e.to_string())
                    .help(e.help().unwrap_or_default()),
            ]),
            other => RunError::Usage(UsageError::with(other.to_string(), other.help())),
        })?;
        let assembler = servers.attach(preset.into_assembler());
        Ok(Started {
            transport,
            tools,
            servers,
            assembler,
            settings,
            linted,
            values,
            first_step: Some(first_step),
            policy,
            hooks,
            output,
            checks,
            limits,
            pin_date: pin_date || recording.is_some(),
            recording,
        })
    }
}

/// The servers the run starts must be the ones the lock recorded (`server-changed`):
/// their pinned tools came from those; and each hook's script the one it pinned
/// (`prefix-drift`).
fn check_servers(
    project: &Project,
    preset: &ValidPreset,
    tools: &ToolContext,
    vars: &[(std::ffi::OsString, std::ffi::OsString)],
) -> Result<(), RunError> {
    let visible: Vec<String> = crate::project::connect::visible_servers(preset.assembler())
        .into_keys()
        .collect();
    // Hooks and success checks both run programs the lock pins.
    let hooks = !preset.hooks().is_empty() || !preset.checks().is_empty();
    if visible.is_empty() && !hooks {
        return Ok(());
    }
    use crate::project::lock::{LockFile, hook_changes, server_changes};
    let lock = LockFile::load(&LockFile::path(project)).ok().flatten();
    if let Some(locked) = lock.as_ref().and_then(|l| l.get(preset.name())) {
        let mut changed = Vec::new();
        if !visible.is_empty() {
            changed = server_changes(preset, locked, vars, tools.workspace(), Some(&visible));
        }
        // A hook runs its script: the one locked, not another (issue 33).
        if hooks {
            changed.extend(hook_changes(preset, locked, tools.workspace()));
        }
        if !changed.is_empty() {
            return Err(RunError::Invalid(changed));
        }
    }
    Ok(())
}

/// Runs tools, success checks and hooks live, and keeps each check's and hook's run (for
/// the cassette).
#[derive(Debug, Default)]
struct RunLog {
    checks: std::cell::RefCell<Vec<crate::testing::cassette::CheckResult>>,
    hooks: std::cell::RefCell<Vec<crate::testing::cassette::HookResult>>,
}

impl crate::agent::ToolRunner for RunLog {
    fn run<'a>(
        &'a self,
        _step: usize,
        call: &'a crate::request::ToolCall,
        args: serde_json::Value,
        registry: &'a crate::tools::ToolRegistry,
        ctx: &'a ToolContext,
    ) -> crate::agent::ToolRunFuture<'a> {
        Box::pin(registry.call_for_model(&call.name, args, ctx))
    }

    fn run_check<'a>(
        &'a self,
        step: usize,
        check: &'a crate::checks::Check,
        ctx: &'a ToolContext,
    ) -> crate::agent::CheckRunFuture<'a> {
        Box::pin(async move {
            let run = crate::tools::external::run_check(check, ctx).await;
            self.checks
                .borrow_mut()
                .push(crate::testing::cassette::CheckResult {
                    step,
                    check: check.label(),
                    ending: run.ending.clone(),
                    output: run.output.clone(),
                });
            run
        })
    }

    fn run_hook<'a>(
        &'a self,
        step: usize,
        hook: &'a crate::hooks::Hook,
        call: Option<&'a crate::request::ToolCall>,
        input: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> crate::agent::HookRunFuture<'a> {
        Box::pin(async move {
            let run = crate::tools::external::run_hook(hook, input, ctx).await;
            self.hooks
                .borrow_mut()
                .push(crate::testing::cassette::HookResult {
                    step,
                    hook_event: hook.event,
                    hook: hook.label(),
                    id: call.map(|c| c.id.clone()),
                    ending: run.ending.clone(),
                    stdout: run.stdout.clone(),
                    stderr: run.stderr.clone(),
                });
            run
        })
    }
}

#[derive(Debug)]
struct Recording {
    entry: PresetLock,
    redactor: Redactor,
    preset: String,
}

/// The step and tool-call limits of a run: each flag, else the preset's `limits`, else
/// the default.
pub fn run_limits(
    preset: &crate::preset::RunLimits,
    max_steps: Option<u64>,
    max_tool_calls: Option<u64>,
) -> (usize, usize) {
    let pick = |flag: Option<u64>, preset: Option<u32>, default: usize| {
        flag.map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .or_else(|| preset.map(|n| n as usize))
            .unwrap_or(default)
    };
    (
        pick(max_steps, preset.max_steps, crate::agent::DEFAULT_MAX_STEPS),
        pick(
            max_tool_calls,
            preset.max_tool_calls,
            crate::agent::DEFAULT_MAX_TOOL_CALLS,
        ),
    )
}

/// A run whose servers are up: ready to run the agent.
#[derive(Debug)]
pub struct Started<'t> {
    transport: Transport<'t>,
    tools: ToolContext,
    servers: RunServers,
    assembler: crate::prompt::PromptAssembler,
    settings: ModelSettings,
    linted: LintedTools,
    values: Values,
    first_step: Option<Assembly>,
    policy: Arc<crate::policy::Policy>,
    hooks: Arc<crate::hooks::Hooks>,
    output: Option<crate::preset::OutputContract>,
    checks: Arc<[crate::checks::Check]>,
    limits: (usize, usize),
    pin_date: bool,
    recording: Option<Recording>,
}

/// How a run ended: the agent's outcome, the conversation, and the cassette when it was
/// recorded.
#[derive(Debug)]
pub struct Finished {
    /// The agent's outcome.
    pub outcome: Result<Outcome, AgentError>,
    /// Every message after the prompt (assistant turns, tool results).
    pub history: Vec<Message>,
    /// The recording, with `Setup::record` (redacted).
    pub cassette: Option<Cassette>,
}

impl<'t> Started<'t> {
    /// The output contract the run's final answer must meet (`output:`), if any.
    pub fn output_contract(&self) -> Option<&crate::preset::OutputContract> {
        self.output.as_ref()
    }

    /// Tools whose live definition differs from the lock, sent as pinned
    /// (`--allow-tool-drift`), with what changed.
    pub fn drifted(&self) -> &[(String, String)] {
        &self.servers.drifted
    }

    /// The step limit.
    pub fn max_steps(&self) -> usize {
        self.limits.0
    }

    /// The endpoint.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// The journey's last stage: the agent runs `prompt` until an answer, the step limit
    /// or an error, asking `approval` before a change and showing each event to
    /// `on_event`. A run is made once (step 1 was rendered for it). Dropping the future
    /// stops the run: every running tool call is dropped, its commands killed.
    pub async fn run<E>(
        &mut self,
        prompt: &str,
        approval: &mut dyn ToolApproval,
        on_event: &mut E,
    ) -> Finished
    where
        E: FnMut(AgentEvent<'_>),
    {
        let recorder = Recorder::new(self.transport.as_dyn());
        let transport: &dyn ModelTransport = if self.recording.is_some() {
            &recorder
        } else {
            self.transport.as_dyn()
        };
        let log = RunLog::default();
        let mut agent = Agent::new(&self.assembler, transport, self.tools.clone())
            // Live tools, checks and hooks; each check's and hook's run is kept for the
            // cassette.
            .with_tool_runner(&log)
            .with_max_steps(self.limits.0)
            .with_max_tool_calls(self.limits.1)
            .with_linted_tools(&self.linted)
            // The preset's permission rules decide first (issue 33).
            .with_policy(Arc::clone(&self.policy))
            .with_hooks(Arc::clone(&self.hooks))
            // What the final answer must be and what must pass after it (issue 32).
            .with_output(self.output.clone())
            .with_checks(Arc::clone(&self.checks));
        if let Some(step) = self.first_step.take() {
            agent = agent.with_first_step(step);
        }
        let mut history = Vec::new();
        let mut snapshot = ContextSnapshot::new();
        let values = &self.values;
        let pin_date = self.pin_date;
        let mut step_values = |_step: usize| {
            // Runtime facts are read again each step; only the snapshot carries changes.
            let mut v = values.clone();
            if !pin_date {
                v.set("date", environment::today_utc());
            }
            v
        };
        let outcome = agent
            .run(
                prompt,
                &mut history,
                &mut snapshot,
                &mut step_values,
                approval,
                on_event,
            )
            .await;
        let cassette = self.recording.as_ref().map(|r| {
            let run = RecordedRun {
                preset: &r.preset,
                entry: &r.entry,
                registry: self.assembler.registry(),
                settings: &self.settings,
                prompt,
                values: &self.values,
                max_steps: self.limits.0,
                checks: &log.checks.borrow(),
                hooks: &log.hooks.borrow(),
            };
            cassette(run, &recorder, &history, &outcome, &r.redactor)
        });
        Finished {
            outcome,
            history,
            cassette,
        }
    }

    /// Shut every server down (after a run, or after it was interrupted).
    pub async fn shutdown(&mut self) {
        self.servers.shutdown().await;
    }
}

impl Finished {
    /// What the run did, as a test case's expectations see it: every tool call with its
    /// result, the answer, how it ended (an error's message through `redactor`).
    pub fn observed(&self, redactor: &Redactor) -> Observed {
        let mut calls = Vec::new();
        let mut step = 0;
        for m in &self.history {
            if m.role != Role::Assistant {
                continue;
            }
            step += 1;
            for call in &m.tool_calls {
                let result = self
                    .history
                    .iter()
                    .find(|r| r.role == Role::Tool && r.tool_call_id.as_deref() == Some(&call.id));
                calls.push(ObservedCall {
                    step,
                    tool: call.name.clone(),
                    arguments: call
                        .parsed_arguments()
                        .unwrap_or_else(|_| serde_json::Value::String(call.arguments.clone())),
                    result: result.map(|r| r.content.clone()).unwrap_or_default(),
                    is_error: result.is_none_or(|r| r.is_error),
                });
            }
        }
        let (steps, answer, output, outcome) = match &self.outcome {
            Ok(Outcome::Answered {
                text,
                steps,
                output,
                ..
            }) => (
                *steps,
                Some(text.clone()),
                output.clone(),
                ObservedOutcome::Answered,
            ),
            Ok(Outcome::StepLimit { steps }) => (*steps, None, None, ObservedOutcome::StepLimit),
            Ok(Outcome::OutputInvalid { text, steps, .. }) => (
                *steps,
                Some(text.clone()),
                None,
                ObservedOutcome::OutputInvalid,
            ),
            Ok(Outcome::CheckFailed {
                text, steps, check, ..
            }) => (
                *steps,
                Some(text.clone()),
                None,
                ObservedOutcome::CheckFailed {
                    check: check.clone(),
                },
            ),
            Err(e) => (
                step,
                None,
                None,
                ObservedOutcome::Error {
                    message: redactor.redact(&e.to_string()).into_owned(),
                },
            ),
        };
        Observed {
            steps,
            calls,
            answer,
            output,
            outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::endpoint::{Overrides, Provider};
    use crate::project::ProjectOptions;
    use crate::request::ToolCall;

    fn setup(project: &Project) -> Setup<'_> {
        let preset = project
            .validate("standard")
            .preset
            .expect("standard is valid");
        let overrides = Overrides {
            provider: Some(Provider::Deepseek),
            model: Some("test-model".into()),
            ..Overrides::default()
        };
        let settings = crate::project::endpoint::settings(&preset, &overrides)
            .expect("settings")
            .expect("a model");
        let linted = crate::project::endpoint::lint(&preset, &settings, &project.presets);
        Setup {
            project,
            preset,
            settings,
            linted,
            cwd: std::env::temp_dir(),
            sandbox: None,
            approval: ApprovalPolicy::Refuse,
            max_steps: None,
            max_tool_calls: None,
            pin_date: false,
            record: false,
        }
    }

    fn project(dir: &Path) -> Project {
        let options = ProjectOptions {
            project_dir: Some(dir.to_owned()),
            preset_dirs: Vec::new(),
            no_user: true,
            no_project_config: true,
        };
        Project::discover(&options).expect("a project").0
    }

    /// The journey's order is its safety: a gate that refuses stops it before a value is
    /// read; one that admits is asked first, and step 1 is rendered with the values the
    /// run sets (provider, model, sandbox, approval).
    #[test]
    fn the_gate_decides_before_any_value_is_read() {
        let dir = tempfile::tempdir().expect("a directory");
        let project = project(dir.path());
        let order = RefCell::new(Vec::new());
        let refused = prepare(
            setup(&project),
            |_, _, _| {
                order.borrow_mut().push("gate");
                Ok::<_, ()>(false)
            },
            |_, _| {
                order.borrow_mut().push("values");
                Err(())
            },
        );
        assert!(matches!(refused, Ok(None)), "{refused:?}");
        assert_eq!(*order.borrow(), ["gate"]);

        order.borrow_mut().clear();
        let prepared = prepare(
            setup(&project),
            |_, settings, _| {
                order.borrow_mut().push("gate");
                Ok::<_, ()>(settings.name == "test-model")
            },
            |preset, cwd| {
                order.borrow_mut().push("values");
                Ok(preset
                    .default_values()
                    .with("cwd", cwd)
                    .with("os", "linux")
                    .with("shell", "bash")
                    .with("date", "2030-01-01"))
            },
        );
        let prepared = match prepared {
            Ok(Some(p)) => p,
            other => panic!("{other:?}"),
        };
        assert_eq!(*order.borrow(), ["gate", "values"]);
        let values = prepared.values();
        let text = |name: &str| values.get(name).map(|v| v.to_string());
        assert_eq!(text("model").as_deref(), Some("test-model"));
        assert_eq!(text("provider").as_deref(), Some("deepseek"));
        assert_eq!(text(APPROVAL_VARIABLE).as_deref(), Some("refuse"));
        assert!(text("sandbox").is_some());
        assert!(!prepared.first_step().system.is_empty());

        // The values reader's refusal is the caller's, not the run's.
        let failed = prepare(setup(&project), |_, _, _| Ok(true), |_, _| Err("no values"));
        assert!(matches!(failed, Err(PrepareError::Caller("no values"))));
        // A render that fails (no `os`, `shell`, `date`) is the run's, before any client.
        let unrendered = prepare(
            setup(&project),
            |_, _, _| Ok::<_, ()>(true),
            |preset, cwd| Ok(preset.default_values().with("cwd", cwd)),
        );
        assert!(
            matches!(unrendered, Err(PrepareError::Run(RunError::Render(_)))),
            "{unrendered:?}"
        );
    }

    #[test]
    fn limits_come_from_the_flag_then_the_preset_then_the_default() {
        let preset = crate::preset::RunLimits {
            max_steps: Some(7),
            max_tool_calls: None,
        };
        assert_eq!(
            run_limits(&preset, None, None),
            (7, crate::agent::DEFAULT_MAX_TOOL_CALLS)
        );
        assert_eq!(run_limits(&preset, Some(3), Some(2)), (3, 2));
        assert_eq!(
            run_limits(&crate::preset::RunLimits::default(), None, None),
            (
                crate::agent::DEFAULT_MAX_STEPS,
                crate::agent::DEFAULT_MAX_TOOL_CALLS
            )
        );
    }

    /// A live run as the expectations see it: each call with its result and step, the
    /// answer, and an error's message through the redactor.
    #[test]
    fn a_finished_run_is_observed_call_by_call() {
        let call = ToolCall {
            id: "c0".into(),
            name: "read_file".into(),
            arguments: "{\"path\":\"a.txt\"}".into(),
        };
        let assistant = Message::assistant("", vec![call]);
        let result = Message::tool("c0", "the text", false);
        let finished = Finished {
            outcome: Ok(Outcome::Answered {
                text: "done".into(),
                steps: 2,
                finish: crate::provider::FinishReason::Stop,
                output: None,
            }),
            history: vec![assistant, result, Message::assistant("done", Vec::new())],
            cassette: None,
        };
        let observed = finished.observed(&Redactor::default());
        assert_eq!(observed.steps, 2);
        assert_eq!(observed.answer.as_deref(), Some("done"));
        assert_eq!(observed.calls.len(), 1);
        assert_eq!(observed.calls[0].step, 1);
        assert_eq!(observed.calls[0].tool, "read_file");
        assert_eq!(observed.calls[0].arguments["path"], "a.txt");
        assert_eq!(observed.calls[0].result, "the text");
        assert!(!observed.calls[0].is_error);

        let failed = Finished {
            outcome: Err(AgentError::SandboxMismatch {
                told: "sk-secret-0123456789".into(),
                enforced: "read-only",
            }),
            history: Vec::new(),
            cassette: None,
        };
        let observed = failed.observed(&Redactor::new(["sk-secret-0123456789"]));
        match observed.outcome {
            ObservedOutcome::Error { message } => {
                assert!(!message.contains("sk-secret-0123456789"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }
}
