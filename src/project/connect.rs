//! Starting the MCP servers presets declare (feature `client`): for `lock --connect`
//! (list and pin), `validate --connect` (list and compare with the lock) and `run`
//! (start the servers whose tools the run can call, refuse tools that drifted from the
//! lock, route the calls to the live sessions, shut them down at the end).
//!
//! Servers always start in parallel: a run waits for the slowest one, not for the sum.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::{Map, Value};

use super::Project;
use super::server_identity::{self, ServerIdentity};
use super::servers::{
    DeclaredServer, ServerSetupError, ToolChange, compare_listings, declared_servers,
    drift_diagnostics, normalize_listing, server_config, unavailable,
};
use crate::diagnostic::{Diagnostic, Span};
use crate::mcp::{McpError, McpSession, ServerConfig, ServerListing, ServerTransport, StderrSink};
use crate::preset::ParsedPreset;
use crate::preset::chain_settings::{
    api_key_env_of, pass_env_of, sandbox_mode_of, sandbox_profile_of, withheld_env,
};
use crate::preset::resolve::resolve_chain;
use crate::preset::validate::ValidPreset;
use crate::prompt::PromptAssembler;
use crate::redact::{MIN_TRANSFORMED_LEN, Redactor};
use crate::tools::external::ListingMap;
use crate::tools::{
    ExternalHandler, ServerListings, ToolContext, ToolError, ToolFuture, ToolOrigin,
};
use crate::trust::{Authorship, TrustPolicy};

/// One server to start: which preset declares it, where, and how to reach it.
#[derive(Debug)]
pub struct PlannedServer {
    /// The preset (the leaf the lock entry is for).
    pub preset: String,
    /// The server's name under `mcpServers:`.
    pub server: String,
    /// Where the server's name is written.
    pub span: Option<Span>,
    /// How to reach it.
    pub config: ServerConfig,
    /// What it starts in: the workspace, the declaring chain's sandbox and environment
    /// rules ([`program_context`]).
    pub context: ToolContext,
    /// What its stderr and errors must not show besides the run's key: its header
    /// values and the values of the variables it gets through `passEnv`
    /// ([`server_secrets`]).
    pub secrets: Redactor,
}

/// The provider key variables `--connect` never lets a server's output show, whatever
/// the preset's endpoint: their values (and the preset's `apiKeyEnv`'s) are masked.
pub const PROVIDER_KEY_VARS: [&str; 3] =
    ["DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// What a server's output must not show (besides the run's key): each header value (and
/// its last word, the token of `Bearer TOKEN`), and the value of each variable it gets
/// through `passEnv` (the chain's, in `ctx`, and its own) of at least
/// [`MIN_TRANSFORMED_LEN`] characters (shorter ones are ordinary words).
pub fn server_secrets(
    declared: &DeclaredServer<'_>,
    config: &ServerConfig,
    ctx: &ToolContext,
) -> Redactor {
    let mut secrets: Vec<&str> = Vec::new();
    match &config.transport {
        ServerTransport::Http { headers, .. } => {
            for (_, value) in headers {
                let value = value.expose();
                secrets.push(value);
                if let Some(last) = value.split_whitespace().last() {
                    secrets.push(last);
                }
            }
        }
        ServerTransport::Stdio { env, .. } => {
            let own = declared
                .spec
                .pass_env
                .iter()
                .flatten()
                .map(|n| n.value.as_str());
            let passed: Vec<&str> = ctx
                .passed_env()
                .iter()
                .map(String::as_str)
                .chain(own)
                .collect();
            for (name, value) in env {
                if passed.contains(&name.as_str()) && value.chars().count() >= MIN_TRANSFORMED_LEN {
                    secrets.push(value);
                }
            }
        }
    }
    Redactor::new(secrets)
}

/// The redactor of `--connect` for the presets `names`: the values, in `vars`, of the
/// [`PROVIDER_KEY_VARS`] and of each preset's `apiKeyEnv` (the nearest in its chain).
pub fn connect_redactor(
    project: &Project,
    names: &[String],
    vars: &[(OsString, OsString)],
) -> Redactor {
    let mut keys: Vec<String> = PROVIDER_KEY_VARS.iter().map(|&k| k.to_owned()).collect();
    for name in names {
        let Some(chain) = chain_of(project, name) else {
            continue;
        };
        let env = chain
            .iter()
            .rev()
            .find_map(|p| p.file.model.as_ref()?.api_key_env.as_ref());
        if let Some(env) = env {
            keys.push(env.value.clone());
        }
    }
    Redactor::new(
        vars.iter()
            .filter(|(k, _)| k.to_str().is_some_and(|k| keys.iter().any(|n| n == k)))
            .filter_map(|(_, v)| v.to_str()),
    )
}

/// The context the programs of the preset whose chain is `chain` start in, from `base`
/// (the workspace, the containment): the chain's `passEnv`, every provider's key
/// variable and the chain's `apiKeyEnv` withheld ([`withheld_env`]), and the chain's
/// sandbox in `mode` with its `allowRead`. `run` builds its tools' context from the same
/// pieces; a server gets the reads its program needs on top ([`SandboxProfile::with_program`],
/// at spawn), so a server `lock --connect` could start, `run` starts too.
///
/// [`SandboxProfile::with_program`]: crate::process::sandbox::SandboxProfile::with_program
pub fn program_context(
    base: &ToolContext,
    chain: &[&ParsedPreset],
    mode: crate::process::sandbox::SandboxMode,
) -> ToolContext {
    let key = api_key_env_of(chain);
    base.clone()
        .with_passed_env(pass_env_of(chain))
        .with_hidden_env(withheld_env(key.as_deref()))
        .with_sandbox(sandbox_profile_of(chain, mode, base.workspace()))
}

/// A server declared by a file the user did not write (a project's `.agent-presets/`,
/// a `--preset-dir`): starting it runs a program or contacts a URL someone else chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignServer {
    /// The preset.
    pub preset: String,
    /// The server's name.
    pub server: String,
    /// The file that declares it.
    pub file: String,
    /// What would start: the argv joined, or the URL.
    pub what: String,
    /// The variables it gets besides the allowlist (the chain's `passEnv` and its own),
    /// provider key variables left out: they are never passed.
    pub pass_env: Vec<String>,
    /// Its literal `env`, name and value (validation refuses credentials there).
    pub env: Vec<(String, String)>,
    /// Each header of an HTTP server and where its value comes from (`from $VAR`, `a
    /// fixed value`): names only, never a value.
    pub headers: Vec<(String, String)>,
    /// The sandbox it starts in (the chain's `sandbox`, default `workspace-write`).
    pub sandbox: crate::process::sandbox::SandboxMode,
}

/// The chain of the preset named `name` on offer, root first, without validating it (a
/// preset whose servers are not locked yet is not valid, and `lock --connect` is how it
/// becomes so). `None` when it is not on offer or its chain does not resolve.
fn chain_of<'a>(project: &'a Project, name: &str) -> Option<Vec<&'a ParsedPreset>> {
    let leaf = project.presets.parsed(name)?.ok()?;
    let chain = resolve_chain(
        leaf,
        |n| project.presets.parsed(n).into(),
        || project.presets.names().map(str::to_owned).collect(),
    )
    .ok()?;
    Some(chain.presets().to_vec())
}

/// The servers of the presets `names` (on offer) declared in files the user did not
/// write: what `lock --connect` and `validate --connect` must ask about before starting
/// anything.
pub fn foreign_servers(project: &Project, names: &[String]) -> Vec<ForeignServer> {
    foreign_servers_untrusted(project, names, None)
}

/// [`foreign_servers`] without the presets the user already trusted, in `store`, for
/// exactly what they reach now ([`PresetReach`](crate::trust::PresetReach), as
/// `agent-presets trust` and `run` record it: the servers' whole declarations, `passEnv`,
/// `allowRead`, a weaker sandbox).
pub fn foreign_servers_untrusted(
    project: &Project,
    names: &[String],
    store: Option<&crate::trust::TrustStore>,
) -> Vec<ForeignServer> {
    let policy = TrustPolicy::from_environment();
    let mut out = Vec::new();
    for name in names {
        let Some(chain) = chain_of(project, name) else {
            continue;
        };
        if let Some(store) = store {
            let owned: Vec<ParsedPreset> = chain.iter().map(|p| (*p).clone()).collect();
            let workspace = std::env::current_dir().unwrap_or_else(|_| project.project_dir.clone());
            let reach =
                crate::trust::PresetReach::of_chain(name, &owned, &project.presets, &policy, None)
                    .with_digests_of_chain(name, &chain, &workspace, project.tools.listings());
            if store.status(&reach) == crate::trust::TrustStatus::Trusted {
                continue;
            }
        }
        let key = api_key_env_of(&chain);
        let withheld = withheld_env(key.as_deref());
        let chain_pass: Vec<String> = pass_env_of(&chain).into_iter().map(str::to_owned).collect();
        let sandbox = sandbox_mode_of(&chain);
        for declared in declared_servers(&chain) {
            let foreign = match project.presets.entry_of(declared.preset) {
                Some(entry) => policy.authorship(entry) == Authorship::Foreign,
                None => true,
            };
            if foreign {
                let mut pass_env: Vec<String> = Vec::new();
                if declared.spec.command.is_some() {
                    for n in chain_pass.iter().cloned().chain(declared.pass_env()) {
                        if !pass_env.contains(&n) && !withheld.contains(&n) {
                            pass_env.push(n);
                        }
                    }
                }
                let headers = declared
                    .headers()
                    .into_iter()
                    .map(|(h, source)| {
                        let from = match source {
                            crate::preset::own_tools::HeaderSource::Env { name, .. } => {
                                format!("from ${name}")
                            }
                            crate::preset::own_tools::HeaderSource::Literal(_) => {
                                "a fixed value".to_owned()
                            }
                        };
                        (h, from)
                    })
                    .collect();
                out.push(ForeignServer {
                    preset: name.clone(),
                    server: declared.name.value.clone(),
                    file: declared.preset.source.display.to_string(),
                    what: describe(&declared),
                    pass_env,
                    env: declared.env(),
                    headers,
                    sandbox,
                });
            }
        }
    }
    out
}

fn describe(server: &DeclaredServer<'_>) -> String {
    match (&server.spec.command, &server.spec.url) {
        (Some(argv), _) => argv
            .value
            .iter()
            .map(|a| a.value.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        (None, Some(url)) => url.value.clone(),
        (None, None) => String::new(),
    }
}

/// The servers the presets `names` declare, ready to start, and a `server-unavailable`
/// diagnostic (by preset) for each that cannot be set up (a header variable not set).
/// Each server gets `ctx` as its declaring chain runs programs ([`program_context`]: its
/// sandbox, `passEnv` and withheld keys), as `run` starts it.
pub fn plan_servers(
    project: &Project,
    names: &[String],
    ctx: &ToolContext,
    vars: &[(OsString, OsString)],
) -> (Vec<PlannedServer>, BTreeMap<String, Vec<Diagnostic>>) {
    let mut planned = Vec::new();
    let mut problems: BTreeMap<String, Vec<Diagnostic>> = BTreeMap::new();
    for name in names {
        let Some(chain) = chain_of(project, name) else {
            continue;
        };
        let ctx = program_context(ctx, &chain, sandbox_mode_of(&chain));
        for declared in declared_servers(&chain) {
            let span = Some(declared.preset.span_of(declared.name));
            match server_config(&declared, &ctx, vars.iter().cloned()) {
                Ok(config) => planned.push(PlannedServer {
                    preset: name.clone(),
                    server: declared.name.value.clone(),
                    span,
                    secrets: server_secrets(&declared, &config, &ctx),
                    config,
                    context: ctx.clone(),
                }),
                Err(e) => problems
                    .entry(name.clone())
                    .or_default()
                    .push(unavailable(name, span, &e)),
            }
        }
    }
    (planned, problems)
}

/// Start every server of `planned` at once, their stderr lines (prefixed
/// `[mcp <server>] `) to `stderr`; each result in `planned`'s order. Each server's
/// stderr and errors are masked by `redactor` and the server's own secrets.
pub async fn connect_all(
    planned: &[PlannedServer],
    stderr: &StderrSink,
    redactor: &Redactor,
) -> Vec<Result<McpSession, McpError>> {
    join_all(planned.iter().map(|p| connect_one(p, stderr, redactor))).await
}

async fn connect_one(
    p: &PlannedServer,
    stderr: &StderrSink,
    redactor: &Redactor,
) -> Result<McpSession, McpError> {
    let redactor = redactor.merged(&p.secrets);
    McpSession::connect_redacted(&p.config, &p.context, Arc::clone(stderr), redactor).await
}

/// What the servers of some presets list now (schemas normalised, as the lock pins
/// them), and what kept a server from being listed, by preset.
#[derive(Debug, Default)]
pub struct LiveListings {
    /// The listings, by preset and server.
    pub listings: ListingMap,
    /// `server-unavailable` diagnostics, by preset.
    pub problems: BTreeMap<String, Vec<Diagnostic>>,
    /// Which (preset, server) pairs were listed.
    listed: Vec<(String, String)>,
    /// What ran for each listed pair (the lock records it beside the listing).
    identities: BTreeMap<(String, String), ServerIdentity>,
}

impl LiveListings {
    /// Was `server` of `preset` listed?
    pub fn has(&self, preset: &str, server: &str) -> bool {
        self.listed.iter().any(|(p, s)| p == preset && s == server)
    }

    /// `base` (the lock's listings) with every listing listed live in place of the
    /// pinned one: what `lock --connect` validates and locks with.
    pub fn over(&self, mut base: ListingMap) -> ListingMap {
        for (preset, server) in &self.listed {
            if let Some(listing) = self.listings.listing(preset, server) {
                base.insert(preset.clone(), server.clone(), listing.clone());
            }
        }
        base
    }

    /// What ran for `server` of `preset` when it was listed.
    pub fn identity(&self, preset: &str, server: &str) -> Option<&ServerIdentity> {
        self.identities.get(&(preset.to_owned(), server.to_owned()))
    }

    /// Every `server-unavailable` diagnostic.
    pub fn all_problems(&self) -> impl Iterator<Item = &Diagnostic> {
        self.problems.values().flatten()
    }
}

/// Start the servers of the presets `names`, list their tools, shut them down:
/// `lock --connect` and `validate --connect`. A server several presets declare alike
/// (a parent's, inherited) starts once. Their stderr lines go to `stderr`, masked by
/// [`connect_redactor`] and each server's [`server_secrets`].
pub async fn list_live(
    project: &Project,
    names: &[String],
    ctx: &ToolContext,
    vars: &[(OsString, OsString)],
    stderr: &StderrSink,
) -> LiveListings {
    let (planned, problems) = plan_servers(project, names, ctx, vars);
    let mut live = LiveListings {
        problems,
        ..LiveListings::default()
    };
    // Presets of one family declare the same server: start each distinct one once.
    let mut unique: Vec<usize> = Vec::new();
    let slot: Vec<usize> = planned
        .iter()
        .enumerate()
        .map(|(i, p)| {
            match unique.iter().position(|&u| {
                planned[u].config == p.config && planned[u].context.sandbox() == p.context.sandbox()
            }) {
                Some(at) => at,
                None => {
                    unique.push(i);
                    unique.len() - 1
                }
            }
        })
        .collect();
    let distinct: Vec<&PlannedServer> = unique.iter().map(|&u| &planned[u]).collect();
    let redactor = connect_redactor(project, names, vars);
    let sessions = join_all(distinct.iter().map(|p| connect_one(p, stderr, &redactor))).await;
    let mut started = Vec::new();
    let mut listed: Vec<Result<ServerListing, String>> = Vec::new();
    for (p, session) in distinct.iter().zip(sessions) {
        listed.push(session.map_err(|e| e.to_string()).and_then(|s| {
            let listing = normalize_listing(&p.server, s.listing());
            started.push(s);
            listing
        }));
    }
    for (p, &at) in planned.iter().zip(&slot) {
        match &listed[at] {
            Ok(listing) => {
                live.listings
                    .insert(p.preset.clone(), p.server.clone(), listing.clone());
                live.listed.push((p.preset.clone(), p.server.clone()));
                live.identities.insert(
                    (p.preset.clone(), p.server.clone()),
                    server_identity::of_config(&p.config),
                );
            }
            Err(e) => live
                .problems
                .entry(p.preset.clone())
                .or_default()
                .push(unavailable(&p.preset, p.span.clone(), e)),
        }
    }
    join_all(started.into_iter().map(McpSession::shutdown)).await;
    live
}

/// `validate --connect`: the `tool-drift` diagnostics of preset `name`, each server's
/// live listing against what `locked` pins (a server the lock does not pin is reported
/// by validation as `mcp-not-locked`), then the servers that could not be listed.
pub fn live_drift(
    project: &Project,
    name: &str,
    locked: &dyn ServerListings,
    live: &LiveListings,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(chain) = chain_of(project, name) {
        for declared in declared_servers(&chain) {
            let server = declared.name.value.as_str();
            let (Some(old), Some(new)) = (
                locked.listing(name, server),
                live.listings.listing(name, server),
            ) else {
                continue;
            };
            let changes = compare_listings(old, new);
            out.extend(drift_diagnostics(
                name,
                server,
                Some(declared.preset.span_of(declared.name)),
                &changes,
            ));
        }
    }
    out.extend(live.problems.get(name).into_iter().flatten().cloned());
    out
}

/// Why a run's servers could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum RunServersError {
    /// A server's settings cannot be used (a header variable not set).
    #[error(transparent)]
    Setup(#[from] ServerSetupError),
    /// A server did not start, or is not MCP.
    #[error("{0}")]
    Start(McpError),
    /// A server's live listing cannot be pinned (a schema that cannot be normalised).
    #[error("{0}")]
    Listing(String),
    /// Tools the run would send differ from what the lock pins.
    #[error(
        "{}",
        drifted.iter().map(|(tool, what)| format!("tool `{tool}` differs from presets.lock: {what}")).collect::<Vec<_>>().join("\n")
    )]
    Drift {
        /// The preset.
        preset: String,
        /// Each drifted tool as the model sees it, and what changed.
        drifted: Vec<(String, String)>,
    },
}

impl RunServersError {
    /// How to fix it.
    pub fn help(&self) -> Option<String> {
        match self {
            RunServersError::Drift { preset, .. } => Some(format!(
                "the servers changed since the lock was written: review the change with `agent-presets validate --connect {preset}`; if it is intended, run `agent-presets lock --connect {preset}` and commit presets.lock (or pass `--allow-tool-drift` to run anyway with the pinned definitions)"
            )),
            RunServersError::Start(_) => Some(
                "run the server's command yourself to see why (its stderr is shown prefixed with `[mcp NAME]`)".into(),
            ),
            RunServersError::Setup(_) | RunServersError::Listing(_) => None,
        }
    }
}

/// The live sessions of one run.
#[derive(Debug, Default)]
pub struct RunServers {
    sessions: BTreeMap<String, McpSession>,
    /// Tools whose live definition differs from the lock, allowed by
    /// `--allow-tool-drift` (each as the model sees it, and what changed): say so.
    pub drifted: Vec<(String, String)>,
}

/// The MCP servers whose tools `assembler` makes visible, by server, each with the
/// (server-side name, wire name) of its visible tools.
pub fn visible_servers(assembler: &PromptAssembler) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for d in assembler.registry().definitions() {
        if let ToolOrigin::Mcp { server, tool } = d.origin() {
            out.entry(server.clone())
                .or_default()
                .push((tool.clone(), d.name().as_str().to_owned()));
        }
    }
    out
}

impl RunServers {
    /// Start the servers of `preset` that have a visible tool (in parallel; none when no
    /// MCP tool is visible), and check each visible tool's live definition against
    /// `locked`: a difference refuses the run unless `allow_drift`. `vars` is the agent's
    /// environment (header values, the servers' `passEnv`); the servers' stderr lines go
    /// to `stderr`, masked (like the errors of a failed start) by `redactor` (the run's:
    /// the key) and each server's [`server_secrets`].
    pub async fn start(
        preset: &ValidPreset,
        locked: &dyn ServerListings,
        ctx: &ToolContext,
        vars: &[(OsString, OsString)],
        allow_drift: bool,
        (stderr, redactor): (&StderrSink, &Redactor),
    ) -> Result<RunServers, RunServersError> {
        let visible = visible_servers(preset.assembler());
        if visible.is_empty() {
            return Ok(RunServers::default());
        }
        let mut planned = Vec::new();
        for declared in preset.mcp_servers() {
            if visible.contains_key(declared.name.value.as_str()) {
                let config = server_config(&declared, ctx, vars.iter().cloned())?;
                planned.push(PlannedServer {
                    preset: preset.name().to_owned(),
                    server: declared.name.value.clone(),
                    span: Some(declared.preset.span_of(declared.name)),
                    secrets: server_secrets(&declared, &config, ctx),
                    config,
                    context: ctx.clone(),
                });
            }
        }
        let results = connect_all(&planned, stderr, redactor).await;
        let mut sessions = BTreeMap::new();
        let mut failed = None;
        for (p, result) in planned.iter().zip(results) {
            match result {
                Ok(s) => {
                    sessions.insert(p.server.clone(), s);
                }
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        let mut servers = RunServers {
            sessions,
            drifted: Vec::new(),
        };
        if let Some(e) = failed {
            servers.shutdown().await;
            return Err(RunServersError::Start(e));
        }
        let mut drifted = Vec::new();
        for (server, session) in &servers.sessions {
            let live = match normalize_listing(server, session.listing()) {
                Ok(l) => l,
                Err(e) => {
                    servers.shutdown().await;
                    return Err(RunServersError::Listing(e));
                }
            };
            let Some(pinned) = locked.listing(preset.name(), server) else {
                continue;
            };
            let changes = compare_listings(pinned, &live);
            for (tool, wire) in visible.get(server).into_iter().flatten() {
                if let Some(change) = changes.iter().find(|c| c.tool() == tool) {
                    let what = match change {
                        ToolChange::Removed { .. } => {
                            format!("MCP server `{server}` no longer lists it")
                        }
                        other => other.summary(),
                    };
                    drifted.push((wire.clone(), what));
                }
            }
        }
        if !drifted.is_empty() && !allow_drift {
            servers.shutdown().await;
            return Err(RunServersError::Drift {
                preset: preset.name().to_owned(),
                drifted,
            });
        }
        servers.drifted = drifted;
        Ok(servers)
    }

    /// How many servers are running.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Are no servers running?
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// The server listings as they are live (not normalised), by server.
    pub fn live_listing(&self, server: &str) -> Option<&ServerListing> {
        self.sessions.get(server).map(McpSession::listing)
    }

    /// `assembler` with each visible MCP tool's calls going to its live session (the
    /// definitions sent stay the pinned ones).
    pub fn attach(&self, mut assembler: PromptAssembler) -> PromptAssembler {
        assembler.replace_tool_handlers(|d| {
            let ToolOrigin::Mcp { server, tool } = d.origin() else {
                return None;
            };
            let session = self.sessions.get(server)?.clone();
            Some(call_handler(session, tool.clone()))
        });
        assembler
    }

    /// Shut every session down (close stdin, then SIGTERM, then SIGKILL for a child;
    /// the session closed for HTTP), all at once.
    pub async fn shutdown(&mut self) {
        let sessions = std::mem::take(&mut self.sessions);
        join_all(sessions.into_values().map(McpSession::shutdown)).await;
    }
}

/// A handler that calls `tool` on `session`: the result's text on success, a tool
/// error (the server's own, a timeout, a crashed server) otherwise.
fn call_handler(session: McpSession, tool: String) -> ExternalHandler {
    Arc::new(move |args: Value, ctx: ToolContext| {
        let session = session.clone();
        let tool = tool.clone();
        Box::pin(async move {
            let texts = ctx.texts();
            let arguments = match args {
                Value::Object(map) => map,
                Value::Null => Map::new(),
                other => {
                    return Err(ToolError::new(texts.render(
                        &crate::texts::TOOLS_MCP_ERROR_NOT_AN_OBJECT,
                        &[("value", &other.to_string())],
                    )));
                }
            };
            match session.call(&tool, arguments).await {
                Ok(out) if !out.is_error => Ok(out.text),
                Ok(out) => Err(ToolError::new(out.text)),
                Err(e) => Err(ToolError::new(mcp_error_text(&e, texts))),
            }
        }) as ToolFuture
    })
}

/// A failed MCP call as the model reads it: our frames in the registry's language, the
/// server's own words as it said them.
fn mcp_error_text(e: &crate::mcp::McpError, texts: &crate::texts::Texts) -> String {
    use crate::mcp::Unsupported;
    use crate::texts::*;
    match e {
        McpError::Timeout {
            server,
            tool,
            after,
        } => texts.render(
            &TOOLS_MCP_ERROR_TIMEOUT,
            &[
                ("tool", tool),
                ("server", server),
                ("after", &crate::mcp::human_duration(*after)),
            ],
        ),
        McpError::Crashed { server, detail } => texts.render(
            &TOOLS_MCP_ERROR_GONE,
            &[("server", server), ("detail", detail)],
        ),
        McpError::ToolFailed {
            server,
            tool,
            message,
            code,
        } => texts.render(
            &TOOLS_MCP_ERROR_FAILED,
            &[
                ("server", server),
                ("tool", tool),
                ("message", message),
                ("code", &code.to_string()),
            ],
        ),
        McpError::Unsupported { server, tool, what } => texts.render(
            match what {
                Unsupported::Input => &TOOLS_MCP_ERROR_INPUT,
                Unsupported::Task => &TOOLS_MCP_ERROR_TASK,
            },
            &[("server", server), ("tool", tool)],
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::Unsupported;
    use std::time::Duration;

    /// A failed MCP call reads as the error says it in English, and each frame is a text
    /// (so a locale pack translates it; the server's own words stay as they were).
    #[test]
    fn a_failed_mcp_call_is_told_in_the_registrys_texts() {
        let english = crate::texts::Texts::english();
        let errors = [
            McpError::Timeout {
                server: "fx".into(),
                tool: "slow".into(),
                after: Duration::from_millis(1500),
            },
            McpError::Crashed {
                server: "fx".into(),
                detail: "exited with code 1".into(),
            },
            McpError::ToolFailed {
                server: "fx".into(),
                tool: "t".into(),
                message: "kaputt".into(),
                code: -32603,
            },
            McpError::Unsupported {
                server: "fx".into(),
                tool: "t".into(),
                what: Unsupported::Input,
            },
            McpError::Unsupported {
                server: "fx".into(),
                tool: "t".into(),
                what: Unsupported::Task,
            },
        ];
        for e in &errors {
            assert_eq!(mcp_error_text(e, &english), e.to_string());
        }
    }
}
