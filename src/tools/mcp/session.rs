//! [`McpSession`]: one connected MCP server — started (stdio) or reached (Streamable
//! HTTP), its tools listed once, then called with a timeout — and its end.
//!
//! What the client promises, whatever the server does:
//! - It advertises no capabilities (no roots, sampling or elicitation) and answers every
//!   request the server sends it with an error (`ping` aside, which the protocol requires).
//!   `list_changed` notifications are ignored: the tool lock decides what a run sends.
//! - Both protocol eras: it probes with `server/discover` (the stateless 2026-07-28
//!   revision) and falls back to the `initialize` handshake when the server answers the
//!   probe as a legacy server does ([`ClientLifecycleMode::Auto`]).
//! - Starting, the handshake and listing the tools share one deadline (`startupTimeout`);
//!   a server that prints something other than JSON-RPC on stdout fails fast
//!   ([`McpError::NotMcp`]) instead of leaving the client to wait.
//! - A call that outlives `toolTimeout` is abandoned with `notifications/cancelled`; a
//!   server process that ended turns this and every later call into
//!   [`McpError::Crashed`], and says so once on the stderr sink.
//! - A stdio server is spawned through the one spawn path
//!   ([`crate::process::spawn`]: the context's containment, limits and sandbox profile, with
//!   the network allowed since servers often need it), with exactly the environment the
//!   caller gives, in the given directory; its stderr goes line by line, prefixed
//!   `[mcp <name>] `, redacted (the caller's [`Redactor`]: the key, header values,
//!   `passEnv` values) and escaped, to the caller's sink, a line longer than 4 KiB cut;
//!   it ends with the session: stdin closed, then SIGTERM, then SIGKILL of everything it
//!   started.
//! - The errors a session returns (a failed start with the server's last stderr lines,
//!   what it printed instead of JSON-RPC, its JSON-RPC error messages) are redacted by
//!   the same [`Redactor`].

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

#[allow(deprecated)]
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationCreateRequestMethod, Implementation, ListRootsRequestMethod,
    ListRootsResult, PaginatedRequestParams, ProtocolVersion,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient,
    RunningService,
};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use rmcp::{ClientHandler, ErrorData, Peer, ServiceError};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader, ReadBuf};
use tokio::task::JoinHandle;

use super::types::{
    CallOutput, ListedTool, McpError, ServerConfig, ServerListing, ServerTransport,
    ToolAnnotations, Unsupported,
};
use crate::process::{
    self, Contained, Input, PreparedSandbox, Program, SpawnError, WorkDir, describe,
};
use crate::redact::{DisplayContext, Redactor, escape_for_display};
use crate::tools::ToolContext;
use crate::tools::builtin::OutputLimits;

/// The most tools accepted from one server: more is an error, not a silent cut (no
/// provider takes that many in one request; OpenAI's limit is 128).
pub const MAX_TOOLS: usize = 1_000;
/// The most pages of `tools/list` followed (a server whose cursor never ends).
pub const MAX_LIST_PAGES: usize = 100;
/// The longest tool description accepted, in bytes. Real servers stay under a few KiB;
/// a longer one is refused rather than cut, since a cut description is not what the
/// server's author wrote and a huge one costs every request.
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
/// The largest input or output schema accepted, in bytes of compact JSON.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// The longest tool name accepted, in bytes (MCP asks for at most 128 characters).
pub const MAX_TOOL_NAME_BYTES: usize = 256;
/// The largest single JSON-RPC message read from a server (a line on stdio, a body or
/// event over HTTP).
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How long a stdio server has to exit after its stdin closed, and again after SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(1);
/// How long an HTTP session may take to close (its `DELETE`).
const HTTP_CLOSE_GRACE: Duration = Duration::from_secs(2);
/// Non-JSON on stdout before the first message, past which the server is not MCP.
const GARBAGE_LINES: usize = 8;
const GARBAGE_BYTES: usize = 8 * 1024;
/// The longest stderr line passed on (longer ones are cut, the rest of the line
/// skipped), and how many of the last lines are kept for startup errors.
pub const STDERR_LINE_BYTES: usize = 4 * 1024;
const STDERR_TAIL: usize = 5;

/// Where a server's stderr goes: one call per line, with the server's name and the line
/// already prefixed `[mcp <name>] `, redacted and escaped for a terminal. Called from a
/// runtime task: it must not block for long. The CLI prints these lines on its stderr
/// between (never inside) lines of the answer, holding a bounded number meanwhile
/// ([`HeldStderr`](super::HeldStderr)); a host may log them.
pub type StderrSink = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// A connected server. Cheap to clone (a handle); every clone calls the same server.
/// The server ends with [`shutdown`](Self::shutdown), or when the last handle is
/// dropped (then without the grace periods).
#[derive(Clone)]
pub struct McpSession {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    listing: ServerListing,
    tool_timeout: Duration,
    limits: OutputLimits,
    peer: Peer<RoleClient>,
    running: tokio::sync::Mutex<Option<RunningService<RoleClient, NoCapabilities>>>,
    process: Option<ServerProcess>,
    stderr: Arc<StderrLog>,
    /// Why the server is gone, once it is (the first failure says it on the sink).
    gone: Mutex<Option<String>>,
    shut_down: AtomicBool,
}

impl fmt::Debug for McpSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpSession")
            .field("name", &self.inner.name)
            .field("server", &self.inner.listing.server_name)
            .field("protocol_version", &self.inner.listing.protocol_version)
            .field("tools", &self.inner.listing.tools.len())
            .finish_non_exhaustive()
    }
}

impl McpSession {
    /// Start or reach the server, agree on a protocol revision and list its tools, all
    /// within `config.startup_timeout`. The server's stderr is dropped (but its last
    /// lines still explain a failed start); see [`connect_with_stderr`](Self::connect_with_stderr).
    pub async fn connect(config: &ServerConfig, ctx: &ToolContext) -> Result<McpSession, McpError> {
        Self::connect_with_stderr(config, ctx, Arc::new(|_: &str, _: &str| {})).await
    }

    /// [`connect`](Self::connect), with the server's stderr lines sent to `sink`.
    pub async fn connect_with_stderr(
        config: &ServerConfig,
        ctx: &ToolContext,
        sink: StderrSink,
    ) -> Result<McpSession, McpError> {
        Self::connect_redacted(config, ctx, sink, Redactor::none()).await
    }

    /// [`connect_with_stderr`](Self::connect_with_stderr), with every stderr line and
    /// the error of a failed start masked by `redactor`.
    pub async fn connect_redacted(
        config: &ServerConfig,
        ctx: &ToolContext,
        sink: StderrSink,
        redactor: Redactor,
    ) -> Result<McpSession, McpError> {
        let stderr = Arc::new(StderrLog::new(&config.name, sink, redactor.clone()));
        let result = match &config.transport {
            ServerTransport::Stdio { argv, env, cwd } => {
                connect_stdio(config, ctx, stderr, argv, env, cwd).await
            }
            ServerTransport::Http { url, headers } => {
                connect_http(config, ctx, stderr, url, headers).await
            }
        };
        result.map_err(|e| e.redacted(&redactor))
    }

    /// What the server offers: its name, version, the protocol revision agreed and its
    /// tools as listed when the session started (later `list_changed` notifications do
    /// not change it).
    pub fn listing(&self) -> &ServerListing {
        &self.inner.listing
    }

    /// The server's name in the preset.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Call tool `tool` (its name on the server) with `arguments`, within the session's
    /// tool timeout. A result flagged `isError` is `Ok` with [`CallOutput::is_error`];
    /// a protocol error, a timeout or a server that is gone is an `Err`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallOutput, McpError> {
        let inner = &self.inner;
        if let Some(detail) = inner.gone_detail() {
            return Err(McpError::Crashed {
                server: inner.name.clone(),
                detail,
            });
        }
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        // Dropping the request on timeout sends `notifications/cancelled` for it (rmcp's
        // cancel-on-drop guard).
        let answer =
            tokio::time::timeout(inner.tool_timeout, inner.peer.call_tool_once(params)).await;
        let response = match answer {
            Err(_) => {
                return Err(McpError::Timeout {
                    server: inner.name.clone(),
                    tool: cut(tool, 128),
                    after: inner.tool_timeout,
                });
            }
            Ok(Err(error)) => return Err(inner.call_error(tool, error).await),
            Ok(Ok(response)) => response,
        };
        match response {
            CallToolResponse::Complete(result) => {
                let value = serde_json::to_value(&result).map_err(|e| McpError::Protocol {
                    server: inner.name.clone(),
                    detail: format!("the result of `{}` could not be read: {e}", cut(tool, 128)),
                })?;
                Ok(call_output(&value, &inner.limits))
            }
            CallToolResponse::InputRequired(_) => Err(McpError::Unsupported {
                server: inner.name.clone(),
                tool: cut(tool, 128),
                what: Unsupported::Input,
            }),
            _ => Err(McpError::Unsupported {
                server: inner.name.clone(),
                tool: cut(tool, 128),
                what: Unsupported::Task,
            }),
        }
    }

    /// End the session: close the server's stdin, give it a second to exit, then
    /// SIGTERM and the same grace, then SIGKILL everything it started (an HTTP session
    /// is closed). Later calls on any clone fail with [`McpError::Crashed`].
    pub async fn shutdown(self) {
        let inner = &self.inner;
        if inner.shut_down.swap(true, Ordering::SeqCst) {
            return;
        }
        inner.mark_gone("the session was shut down".to_owned(), false);
        let running = inner.running.lock().await.take();
        match &inner.process {
            Some(process) => {
                // Closing the transport drops the writer: the server reads end of file.
                if let Some(running) = running {
                    let _ = tokio::time::timeout(EXIT_GRACE, running.cancel()).await;
                }
                process.end().await;
            }
            None => {
                if let Some(running) = running {
                    let _ = tokio::time::timeout(HTTP_CLOSE_GRACE, running.cancel()).await;
                }
            }
        }
    }
}

impl Inner {
    fn gone_detail(&self) -> Option<String> {
        self.gone.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Remember that the server is gone; the first time, say so on the sink.
    fn mark_gone(&self, detail: String, announce: bool) {
        let mut gone = self.gone.lock().unwrap_or_else(|p| p.into_inner());
        if gone.is_none() {
            if announce {
                self.stderr.say(&format!(
                    "server is gone ({detail}); its tools fail from now on"
                ));
            }
            *gone = Some(detail);
        }
    }

    async fn call_error(&self, tool: &str, error: ServiceError) -> McpError {
        match error {
            ServiceError::McpError(data) => McpError::ToolFailed {
                server: self.name.clone(),
                tool: cut(tool, 128),
                message: cut(&data.message, 1000),
                code: data.code.0,
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_)
                if self.process.is_some() =>
            {
                let detail = match &self.process {
                    Some(process) => process.exit_detail().await,
                    None => String::new(),
                };
                self.mark_gone(detail.clone(), true);
                McpError::Crashed {
                    server: self.name.clone(),
                    detail,
                }
            }
            ServiceError::TransportClosed => {
                let detail = "the connection closed".to_owned();
                self.mark_gone(detail.clone(), true);
                McpError::Crashed {
                    server: self.name.clone(),
                    detail,
                }
            }
            other => McpError::Protocol {
                server: self.name.clone(),
                detail: format!(
                    "calling `{}` failed: {}",
                    cut(tool, 128),
                    cut(&other.to_string(), 1000)
                ),
            },
        }
    }
}

/// The client side of the protocol: no capabilities, and an error for every request a
/// server makes (rmcp answers `sampling/createMessage` and unknown methods with "method
/// not found" already; roots and elicitation are refused here instead of answered with
/// an empty list or a decline).
struct NoCapabilities;

impl ClientHandler for NoCapabilities {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agent-presets", env!("CARGO_PKG_VERSION")),
        )
    }

    // Roots are deprecated (SEP-2577) but servers on older revisions still ask.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Err(ErrorData::method_not_found::<ListRootsRequestMethod>())
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Err(ErrorData::method_not_found::<ElicitationCreateRequestMethod>())
    }
}

/// Probe with `server/discover` for the 2026-07-28 revision, and fall back to the
/// `initialize` handshake (newest revision that has one) when the server answers the
/// probe as a legacy server does (an error such as "method not found"). The older
/// revisions are listed too: a server that knows `server/discover` but implements only
/// older revisions answers "unsupported protocol version", and the probe is then
/// repeated with the newest revision it supports instead of failing.
fn lifecycle() -> ClientLifecycleMode {
    let mut preferred: Vec<ProtocolVersion> = ProtocolVersion::KNOWN_VERSIONS.to_vec();
    preferred.reverse();
    ClientLifecycleMode::Auto {
        preferred_versions: preferred,
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

async fn connect_stdio(
    config: &ServerConfig,
    ctx: &ToolContext,
    stderr: Arc<StderrLog>,
    argv: &[String],
    env: &[(String, String)],
    cwd: &std::path::Path,
) -> Result<McpSession, McpError> {
    let name = config.name.clone();
    let Some((program, args)) = argv.split_first() else {
        return Err(McpError::Config {
            server: name,
            detail: "`command` is empty".to_owned(),
        });
    };
    // One profile for every start of a server (`lock --connect`, `validate --connect`,
    // `run`): the context's sandbox, the network, and what the program itself needs.
    let profile = ctx
        .sandbox()
        .clone()
        .with_network(true)
        .with_program(argv, env, cwd);
    let os_env: Vec<(std::ffi::OsString, std::ffi::OsString)> =
        env.iter().map(|(k, v)| (k.into(), v.into())).collect();
    let to_run = Program {
        program: program.as_ref(),
        args,
        env: &os_env,
        dir: WorkDir::Path(cwd),
        stdin: Input::Piped,
    };
    let process::Spawned {
        mut contained,
        sandbox,
    } = process::spawn(&to_run, &ctx.confinement(&profile)).map_err(|e| {
        let e = match e {
            SpawnError::Sandbox(e) => {
                return McpError::Start {
                    server: name.clone(),
                    reason: format!("{e} ({})", e.hint()),
                };
            }
            SpawnError::Start(e) => e,
        };
        McpError::Start {
            server: name.clone(),
            reason: if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "`{}` was not found (is it installed and on the PATH the server gets?)",
                    cut(program, 200)
                )
            } else {
                let mut reason = format!("could not run `{}`: {e}", cut(program, 200));
                if let Some(help) = sandbox_help(&profile, argv, env, cwd) {
                    reason.push_str("; ");
                    reason.push_str(&help);
                }
                reason
            },
        }
    })?;
    let pgid = contained.child.id();
    let (Some(stdin), Some(stdout), Some(stderr_pipe)) = (
        contained.child.stdin.take(),
        contained.child.stdout.take(),
        contained.child.stderr.take(),
    ) else {
        return Err(McpError::Start {
            server: name,
            reason: "its pipes could not be set up".to_owned(),
        });
    };
    let stderr_task = tokio::spawn(pump_stderr(stderr_pipe, Arc::clone(&stderr)));
    let process = ServerProcess {
        contained: Mutex::new(Some(contained)),
        pgid,
        stderr_task,
        _sandbox: sandbox,
    };
    let watch = Arc::new(OutputWatch::default());
    let stdout = WatchedOutput {
        inner: stdout,
        watch: Arc::clone(&watch),
        line: Vec::new(),
        kind: LineKind::Blank,
    };
    let transport = LateProbeFilter::new(
        AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(MAX_MESSAGE_BYTES),
    );

    let started = tokio::time::timeout(config.startup_timeout, async {
        tokio::select! {
            running = NoCapabilities.serve_with_lifecycle(transport, lifecycle()) => {
                let running = running.map_err(|e| Failure::Handshake(Box::new(e)))?;
                let tools = list_tools(running.peer(), &name).await.map_err(Failure::Listing)?;
                Ok((running, tools))
            }
            () = watch.fatal() => Err(Failure::Garbage),
        }
    })
    .await;
    let failure = match started {
        Ok(Ok((running, tools))) => {
            return Ok(session(config, ctx, stderr, running, tools, Some(process)));
        }
        Ok(Err(failure)) => failure,
        Err(_) => Failure::Timeout,
    };
    let error = match (failure, watch.sample()) {
        (Failure::Listing(error), _) => error,
        (_, Some(sample)) => McpError::NotMcp {
            server: name.clone(),
            detail: format!("it printed `{sample}` on stdout instead of JSON-RPC"),
        },
        (Failure::Garbage, None) => McpError::NotMcp {
            server: name.clone(),
            detail: "it printed non-JSON on stdout".to_owned(),
        },
        (Failure::Timeout, None) => McpError::StartupTimeout {
            server: name.clone(),
            after: config.startup_timeout,
        },
        (Failure::Handshake(error), None) => {
            let exit = process.exit_detail().await;
            match handshake_error(&name, *error, Some(exit), &stderr) {
                // It died at once: the sandbox may be what stopped it.
                McpError::Start { server, mut reason } => {
                    if let Some(help) = sandbox_help(&profile, argv, env, cwd) {
                        reason.push('\n');
                        reason.push_str(&help);
                    }
                    McpError::Start { server, reason }
                }
                other => other,
            }
        }
    };
    process.kill().await;
    Err(error)
}

async fn connect_http(
    config: &ServerConfig,
    ctx: &ToolContext,
    stderr: Arc<StderrLog>,
    url: &str,
    headers: &[(String, super::types::HeaderSecret)],
) -> Result<McpSession, McpError> {
    let name = config.name.clone();
    let mut custom = HashMap::new();
    for (header, value) in headers {
        let header_name =
            reqwest::header::HeaderName::from_bytes(header.as_bytes()).map_err(|_| {
                McpError::Config {
                    server: name.clone(),
                    detail: format!("`{}` is not a valid header name", cut(header, 100)),
                }
            })?;
        if [
            "accept",
            "mcp-session-id",
            "mcp-protocol-version",
            "last-event-id",
        ]
        .contains(&header_name.as_str())
        {
            return Err(McpError::Config {
                server: name,
                detail: format!(
                    "header `{header}` is set by the protocol client itself; remove it from `headers`"
                ),
            });
        }
        // The value is never shown: it may be a token.
        let mut header_value = reqwest::header::HeaderValue::from_str(value.expose()).map_err(|_| McpError::Config {
            server: name.clone(),
            detail: format!("the value of header `{header}` has characters a header cannot carry (a line break?)"),
        })?;
        header_value.set_sensitive(true);
        custom.insert(header_name, header_value);
    }
    // No redirects: custom headers (tokens) must not follow one to another host.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(config.startup_timeout)
        .build()
        .map_err(|e| McpError::Start {
            server: name.clone(),
            reason: format!("no HTTP client: {e}"),
        })?;
    let transport_config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(custom)
        .max_json_response_size(MAX_MESSAGE_BYTES)
        .max_sse_event_size(MAX_MESSAGE_BYTES);
    let transport = StreamableHttpClientTransport::with_client(client, transport_config);
    let started = tokio::time::timeout(config.startup_timeout, async {
        let running = NoCapabilities
            .serve_with_lifecycle(transport, lifecycle())
            .await
            .map_err(|e| handshake_error(&name, e, None, &stderr))?;
        let tools = list_tools(running.peer(), &name).await?;
        Ok::<_, McpError>((running, tools))
    })
    .await;
    let (running, tools) = match started {
        Ok(result) => result?,
        Err(_) => {
            return Err(McpError::StartupTimeout {
                server: name,
                after: config.startup_timeout,
            });
        }
    };
    Ok(session(config, ctx, stderr, running, tools, None))
}

enum Failure {
    Handshake(Box<ClientInitializeError>),
    Listing(McpError),
    Garbage,
    Timeout,
}

fn session(
    config: &ServerConfig,
    ctx: &ToolContext,
    stderr: Arc<StderrLog>,
    running: RunningService<RoleClient, NoCapabilities>,
    tools: Vec<ListedTool>,
    process: Option<ServerProcess>,
) -> McpSession {
    let info = running.peer().peer_info();
    let (server_name, server_version, protocol_version) = match info.as_deref() {
        Some(info) => (
            info.server_info
                .as_ref()
                .map(|i| i.name.clone())
                .unwrap_or_default(),
            info.server_info
                .as_ref()
                .map(|i| i.version.clone())
                .unwrap_or_default(),
            info.protocol_version.to_string(),
        ),
        None => (String::new(), String::new(), String::new()),
    };
    McpSession {
        inner: Arc::new(Inner {
            name: config.name.clone(),
            listing: ServerListing {
                server_name,
                server_version,
                protocol_version,
                tools,
            },
            tool_timeout: config.tool_timeout,
            limits: *ctx.limits(),
            peer: running.peer().clone(),
            running: tokio::sync::Mutex::new(Some(running)),
            process,
            stderr,
            gone: Mutex::new(None),
            shut_down: AtomicBool::new(false),
        }),
    }
}

/// [`SandboxProfile::start_failure_help`] for a stdio server's `argv`, its program looked
/// up on the `PATH` it is given (`env`).
///
/// [`SandboxProfile::start_failure_help`]: crate::process::SandboxProfile::start_failure_help
fn sandbox_help(
    profile: &crate::process::sandbox::SandboxProfile,
    argv: &[String],
    env: &[(String, String)],
    cwd: &std::path::Path,
) -> Option<String> {
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| std::ffi::OsStr::new(v));
    profile.start_failure_help(argv, path, cwd)
}

/// A failed handshake, said in terms of what the user can do.
fn handshake_error(
    name: &str,
    error: ClientInitializeError,
    exit: Option<String>,
    stderr: &StderrLog,
) -> McpError {
    let server = name.to_owned();
    let error = match error {
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => *fallback,
        other => other,
    };
    match error {
        ClientInitializeError::ConnectionClosed(_)
        | ClientInitializeError::TransportError { .. } => match exit {
            Some(exit) => {
                let mut reason = format!("it ended before the handshake ({exit})");
                let tail = stderr.tail();
                if !tail.is_empty() {
                    reason.push_str(&format!("; its last stderr lines:\n{}", tail.join("\n")));
                }
                McpError::Start { server, reason }
            }
            None => McpError::Start {
                server,
                reason: cut(&error.to_string(), 1000),
            },
        },
        ClientInitializeError::JsonRpcError(data) => McpError::Protocol {
            server,
            detail: format!(
                "the handshake was refused: {} (JSON-RPC error {})",
                cut(&data.message, 1000),
                data.code.0
            ),
        },
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => McpError::Protocol {
            server,
            detail: format!(
                "no protocol revision in common (the server supports {})",
                cut(
                    &server_supported
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    200
                )
            ),
        },
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_) => McpError::NotMcp {
            server,
            detail: "its answer to the handshake is not an MCP handshake result".to_owned(),
        },
        other => McpError::Protocol {
            server,
            detail: cut(&other.to_string(), 1000),
        },
    }
}

/// Every page of `tools/list`, converted and checked against the limits.
async fn list_tools(peer: &Peer<RoleClient>, name: &str) -> Result<Vec<ListedTool>, McpError> {
    let mut tools: Vec<ListedTool> = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor.take());
        let page = peer
            .list_tools(Some(params))
            .await
            .map_err(|e| McpError::Protocol {
                server: name.to_owned(),
                detail: format!("listing its tools failed: {}", cut(&e.to_string(), 1000)),
            })?;
        for tool in page.tools {
            if tools.len() == MAX_TOOLS {
                return Err(McpError::TooManyTools {
                    server: name.to_owned(),
                    limit: MAX_TOOLS,
                });
            }
            let value = serde_json::to_value(&tool).map_err(|e| McpError::Protocol {
                server: name.to_owned(),
                detail: format!("a listed tool could not be read: {e}"),
            })?;
            let tool = listed_tool(name, &value)?;
            if tools.iter().any(|t| t.name == tool.name) {
                return Err(McpError::Protocol {
                    server: name.to_owned(),
                    detail: format!("it lists tool `{}` twice", cut(&tool.name, 128)),
                });
            }
            tools.push(tool);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
    Err(McpError::Protocol {
        server: name.to_owned(),
        detail: format!("its tool list goes on for more than {MAX_LIST_PAGES} pages"),
    })
}

/// One tool from its wire form (`tools/list` item), with the size limits applied.
fn listed_tool(server: &str, value: &Value) -> Result<ListedTool, McpError> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let name = text("name").unwrap_or_default();
    let too_large = |what: &'static str, bytes: usize, limit: usize| McpError::ToolTooLarge {
        server: server.to_owned(),
        tool: cut(&name, 128),
        what,
        bytes,
        limit,
    };
    if name.is_empty() {
        return Err(McpError::Protocol {
            server: server.to_owned(),
            detail: "it lists a tool without a name".to_owned(),
        });
    }
    if name.len() > MAX_TOOL_NAME_BYTES {
        return Err(too_large("name", name.len(), MAX_TOOL_NAME_BYTES));
    }
    let description = text("description");
    if let Some(d) = &description
        && d.len() > MAX_DESCRIPTION_BYTES
    {
        return Err(too_large("description", d.len(), MAX_DESCRIPTION_BYTES));
    }
    let schema_size = |v: &Value| serde_json::to_string(v).map_or(usize::MAX, |s| s.len());
    let input_schema = value
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let bytes = schema_size(&input_schema);
    if bytes > MAX_SCHEMA_BYTES {
        return Err(too_large("input schema", bytes, MAX_SCHEMA_BYTES));
    }
    let output_schema = value.get("outputSchema").filter(|v| !v.is_null()).cloned();
    if let Some(schema) = &output_schema {
        let bytes = schema_size(schema);
        if bytes > MAX_SCHEMA_BYTES {
            return Err(too_large("output schema", bytes, MAX_SCHEMA_BYTES));
        }
    }
    let annotations = value
        .get("annotations")
        .and_then(Value::as_object)
        .map(|a| {
            let hint = |key: &str| a.get(key).and_then(Value::as_bool);
            ToolAnnotations {
                title: a.get("title").and_then(Value::as_str).map(|t| cut(t, 1000)),
                read_only_hint: hint("readOnlyHint"),
                destructive_hint: hint("destructiveHint"),
                idempotent_hint: hint("idempotentHint"),
                open_world_hint: hint("openWorldHint"),
            }
        });
    Ok(ListedTool {
        name,
        title: text("title").map(|t| cut(&t, 1000)),
        description,
        input_schema,
        output_schema,
        annotations,
    })
}

/// A `tools/call` result (wire form) as text for the model: text content as it is,
/// `structuredContent` as JSON (unless a text item already carries the same JSON), text
/// resources with a header naming them, and a placeholder for what cannot be carried
/// as text (images, audio, binary resources, links); bounded by `limits`.
pub(crate) fn call_output(result: &Value, limits: &OutputLimits) -> CallOutput {
    let mut parts: Vec<String> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    for item in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let field = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        match field("type") {
            "text" => {
                texts.push(field("text"));
                parts.push(field("text").to_owned());
            }
            "image" | "audio" => {
                // Base64: three bytes per four characters.
                let bytes = field("data").len() / 4 * 3;
                parts.push(format!(
                    "[{} left out: {}, about {bytes} bytes; this client passes only text to the model]",
                    field("type"),
                    mime_or_unknown(field("mimeType"))
                ));
            }
            "resource" => {
                let resource = item.get("resource").unwrap_or(&Value::Null);
                let get = |key: &str| resource.get(key).and_then(Value::as_str);
                let uri = cut(get("uri").unwrap_or("?"), 300);
                match (get("text"), get("blob")) {
                    (Some(text), _) => parts.push(format!("[resource {uri}]\n{text}")),
                    (None, blob) => parts.push(format!(
                        "[resource left out: {uri}, {}, about {} bytes of binary data]",
                        mime_or_unknown(get("mimeType").unwrap_or("")),
                        blob.map_or(0, |b| b.len() / 4 * 3)
                    )),
                }
            }
            "resource_link" => parts.push(format!(
                "[resource link: {} ({})]",
                cut(field("uri"), 300),
                cut(field("name"), 200)
            )),
            other => parts.push(format!("[content of type `{}` left out]", cut(other, 50))),
        }
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        let already = texts
            .iter()
            .any(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == structured));
        if !already {
            parts.push(serde_json::to_string(structured).unwrap_or_default());
        }
    }
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    CallOutput {
        text: bound(&parts.join("\n"), limits),
        is_error,
    }
}

fn mime_or_unknown(mime: &str) -> String {
    if mime.is_empty() {
        "unknown type".to_owned()
    } else {
        cut(mime, 100)
    }
}

/// `text` within `limits`: whole lines while they fit; a first line longer than the
/// whole budget is cut inside; a marker says how much was left out.
fn bound(text: &str, limits: &OutputLimits) -> String {
    let mut kept = 0usize;
    for (count, line) in text.split_inclusive('\n').enumerate() {
        if count == limits.max_lines || kept + line.len() > limits.max_bytes {
            break;
        }
        kept += line.len();
    }
    if kept == text.len() {
        return text.to_owned();
    }
    if kept == 0 {
        kept = floor_char_boundary(text, limits.max_bytes);
    }
    let rest = &text[kept..];
    let mut out = String::with_capacity(kept + 160);
    out.push_str(&text[..kept]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "[... output truncated: {} more bytes not shown; ask the tool for less]",
        rest.len()
    ));
    out
}

fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// A stdio server's process and what goes with it.
struct ServerProcess {
    contained: Mutex<Option<Contained>>,
    /// Its process group (the spawned process's id), for SIGTERM.
    pgid: Option<u32>,
    stderr_task: JoinHandle<()>,
    /// Held while the server runs: its private temporary directory goes with it.
    _sandbox: PreparedSandbox,
}

impl ServerProcess {
    /// How the process ended, for a message (it may take a moment to be reaped).
    async fn exit_detail(&self) -> String {
        for _ in 0..20 {
            let status = self
                .contained
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_mut()
                .and_then(Contained::try_status);
            if let Some(status) = status {
                // What it printed on stderr before it exited goes with the reason: let
                // the reader get to the end of it (briefly: something it started may
                // hold the pipe open).
                for _ in 0..50 {
                    if self.stderr_task.is_finished() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                return format!("it exited, {}", describe(status));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        "its output closed".to_owned()
    }

    fn take(&self) -> Option<Contained> {
        self.contained
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The kill sequence after stdin was closed: wait, SIGTERM, wait, SIGKILL.
    async fn end(&self) {
        let Some(mut contained) = self.take() else {
            return;
        };
        if tokio::time::timeout(EXIT_GRACE, contained.child.wait())
            .await
            .is_err()
        {
            if let Some(pgid) = self.pgid.and_then(|p| libc::pid_t::try_from(p).ok()) {
                // SAFETY: killpg(2) only sends a signal, to the server's own process group
                // (it was not reaped: `wait` above has not returned).
                unsafe {
                    libc::killpg(pgid, libc::SIGTERM);
                }
            }
            let _ = tokio::time::timeout(EXIT_GRACE, contained.child.wait()).await;
        }
        // SIGKILL to whatever is left of its tree (and the cgroup removed).
        let _ = contained.run_to_end(Duration::ZERO, EXIT_GRACE).await;
        self.stderr_task.abort();
    }

    /// A failed start: no grace.
    async fn kill(self) {
        if let Some(mut contained) = self.take() {
            let _ = contained.run_to_end(Duration::ZERO, EXIT_GRACE).await;
        }
        self.stderr_task.abort();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // `Contained`'s own drop kills the tree.
        self.stderr_task.abort();
    }
}

/// The server's stderr: each line to the sink, the last few kept for startup errors.
struct StderrLog {
    name: String,
    prefix: String,
    sink: StderrSink,
    redactor: Redactor,
    tail: Mutex<VecDeque<String>>,
}

impl StderrLog {
    fn new(name: &str, sink: StderrSink, redactor: Redactor) -> Self {
        StderrLog {
            name: name.to_owned(),
            prefix: format!("[mcp {name}] "),
            sink,
            redactor,
            tail: Mutex::new(VecDeque::new()),
        }
    }

    /// One line as the server wrote it (`cut`: its first [`STDERR_LINE_BYTES`] only):
    /// redacted, then escaped (so a key written with control characters inside is no
    /// key either way).
    fn line(&self, raw: &[u8], cut: bool) {
        let text = String::from_utf8_lossy(raw);
        let text = text.trim_end_matches(['\n', '\r']);
        let text = self.redactor.redact(text);
        let mut shown = escape_for_display(&text, DisplayContext::Strict).into_owned();
        if cut {
            shown.push_str(" … (line cut)");
        }
        {
            let mut tail = self.tail.lock().unwrap_or_else(|p| p.into_inner());
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(format!("  {shown}"));
        }
        (self.sink)(&self.name, &format!("{}{shown}", self.prefix));
    }

    /// A line of our own about the server.
    fn say(&self, text: &str) {
        let text = self.redactor.redact(text);
        (self.sink)(&self.name, &format!("{}{text}", self.prefix));
    }

    fn tail(&self) -> Vec<String> {
        self.tail
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

async fn pump_stderr(pipe: tokio::process::ChildStderr, log: Arc<StderrLog>) {
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(STDERR_LINE_BYTES as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let cut = n == STDERR_LINE_BYTES && line.last() != Some(&b'\n');
                if cut {
                    // Back to a character boundary (at most 3 bytes of a split one).
                    let valid = match std::str::from_utf8(&line) {
                        Ok(_) => line.len(),
                        Err(e) if e.error_len().is_none() => e.valid_up_to(),
                        Err(_) => line.len(),
                    };
                    line.truncate(valid);
                }
                log.line(&line, cut);
                if cut && !skip_line(&mut reader).await {
                    return;
                }
            }
        }
    }
}

/// Read past the rest of a line (never holding more than the reader's buffer); `false`
/// at the end of the stream.
async fn skip_line(reader: &mut BufReader<tokio::process::ChildStderr>) -> bool {
    loop {
        let (found, len) = match reader.fill_buf().await {
            Ok([]) | Err(_) => return false,
            Ok(buf) => match memchr::memchr(b'\n', buf) {
                Some(i) => (true, i + 1),
                None => (false, buf.len()),
            },
        };
        reader.consume(len);
        if found {
            return true;
        }
    }
}

/// What came out of a server's stdout before its first JSON-RPC message: rmcp skips
/// lines that are not JSON, so without this a server printing only garbage would be
/// waited for until the startup timeout.
#[derive(Default)]
struct OutputWatch {
    state: Mutex<WatchState>,
    notify: tokio::sync::Notify,
}

#[derive(Default)]
struct WatchState {
    /// A JSON line was seen: watching stopped.
    json: bool,
    garbage_lines: usize,
    garbage_bytes: usize,
    sample: Option<String>,
    fatal: bool,
}

impl OutputWatch {
    fn sample(&self) -> Option<String> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .sample
            .clone()
    }

    fn is_fatal(&self) -> bool {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).fatal
    }

    /// Returns once the garbage is past the limits (never, for a well-behaved server).
    async fn fatal(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_fatal() {
                return;
            }
            notified.await;
        }
    }

    fn garbage(&self, line: &[u8], len: usize) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.garbage_lines += 1;
        state.garbage_bytes += len;
        if state.sample.is_none() {
            let text = String::from_utf8_lossy(line);
            let text = escape_for_display(text.trim(), DisplayContext::Strict).into_owned();
            state.sample = Some(cut(&text, 120));
        }
        if state.garbage_lines >= GARBAGE_LINES || state.garbage_bytes >= GARBAGE_BYTES {
            state.fatal = true;
            drop(state);
            self.notify.notify_waiters();
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LineKind {
    /// Only whitespace so far.
    Blank,
    Json,
    Garbage,
}

/// The server's stdout, watched line by line until its first JSON line.
struct WatchedOutput<R> {
    inner: R,
    watch: Arc<OutputWatch>,
    /// The start of the current line (for the sample) and its kind.
    line: Vec<u8>,
    kind: LineKind,
}

impl<R> WatchedOutput<R> {
    fn scan(&mut self, bytes: &[u8]) {
        if self
            .watch
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .json
        {
            return;
        }
        for &byte in bytes {
            if byte == b'\n' {
                match self.kind {
                    LineKind::Json => {
                        self.watch
                            .state
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .json = true;
                        return;
                    }
                    LineKind::Garbage => self.watch.garbage(&self.line, self.line.len().max(1)),
                    LineKind::Blank => {}
                }
                self.line.clear();
                self.kind = LineKind::Blank;
                continue;
            }
            if self.kind == LineKind::Blank && !byte.is_ascii_whitespace() {
                self.kind = if byte == b'{' || byte == b'[' {
                    LineKind::Json
                } else {
                    LineKind::Garbage
                };
            }
            if self.line.len() < 200 {
                self.line.push(byte);
            } else if self.kind == LineKind::Garbage && self.line.len() == 200 {
                // A garbage line with no end: count it now, so a flood without newlines
                // is caught too.
                self.watch.garbage(&self.line, GARBAGE_BYTES);
                self.line.push(b' ');
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for WatchedOutput<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let new = buf.filled()[before..].to_vec();
            self.scan(&new);
        }
        polled
    }
}

/// rmcp's `Auto` lifecycle gives the `server/discover` probe 10 seconds, then falls back
/// to `initialize` on the same stream. A legacy server that starts slower than that (a
/// cold `npx -y`, `uvx` or `pipx run` downloading its package) answers the probe late,
/// and rmcp, waiting for `initialize`'s answer, read that one instead and failed the
/// start ("uncorrelated error response: expected id 1, error response carried 0"). This
/// transport remembers the probes' ids and, once `initialize` went out, drops what comes
/// back for them: nothing waits for those answers any more.
struct LateProbeFilter<T> {
    inner: T,
    probes: Vec<rmcp::model::RequestId>,
    fell_back: bool,
}

impl<T> LateProbeFilter<T> {
    fn new(inner: T) -> Self {
        Self {
            inner,
            probes: Vec::new(),
            fell_back: false,
        }
    }

    /// Is `message` the late answer to a probe that nothing waits for?
    fn is_stale(&self, message: &rmcp::service::RxJsonRpcMessage<RoleClient>) -> bool {
        use rmcp::model::JsonRpcMessage;
        if !self.fell_back {
            return false;
        }
        let id = match message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        id.is_some_and(|id| self.probes.contains(id))
    }
}

impl<T: rmcp::transport::Transport<RoleClient>> rmcp::transport::Transport<RoleClient>
    for LateProbeFilter<T>
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        use rmcp::model::{ClientRequest, JsonRpcMessage};
        if let JsonRpcMessage::Request(request) = &item {
            match &request.request {
                ClientRequest::DiscoverRequest(_) => self.probes.push(request.id.clone()),
                ClientRequest::InitializeRequest(_) => self.fell_back = true,
                _ => {}
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if !self.is_stale(&message) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structured_content_is_not_repeated_when_a_text_item_carries_it() {
        let limits = OutputLimits::DEFAULT;
        let result = json!({
            "content": [{"type": "text", "text": "{\"a\": 1}"}],
            "structuredContent": {"a": 1}
        });
        assert_eq!(call_output(&result, &limits).text, "{\"a\": 1}");
        let result = json!({"content": [], "structuredContent": {"a": 1}});
        assert_eq!(call_output(&result, &limits).text, "{\"a\":1}");
    }

    #[test]
    fn a_huge_single_line_is_cut_inside_with_a_marker() {
        let limits = OutputLimits {
            max_bytes: 100,
            max_lines: 10,
            max_line_chars: 50,
        };
        let out = bound(&"é".repeat(1000), &limits);
        assert!(out.starts_with(&"é".repeat(50)), "{out}");
        assert!(out.contains("output truncated: 1900 more bytes"), "{out}");
    }

    #[test]
    fn garbage_lines_before_json_are_counted_and_sampled() {
        let watch = Arc::new(OutputWatch::default());
        let mut out = WatchedOutput {
            inner: tokio::io::empty(),
            watch: Arc::clone(&watch),
            line: Vec::new(),
            kind: LineKind::Blank,
        };
        out.scan(b"\n  \nhello\x1b[31m world\n");
        assert_eq!(watch.sample().as_deref(), Some("hello\\u{1b}[31m world"));
        assert!(!watch.is_fatal());
        out.scan(&b"x\n".repeat(GARBAGE_LINES));
        assert!(watch.is_fatal());
        // After a JSON line nothing is watched any more.
        let watch = Arc::new(OutputWatch::default());
        let mut out = WatchedOutput {
            inner: tokio::io::empty(),
            watch: Arc::clone(&watch),
            line: Vec::new(),
            kind: LineKind::Blank,
        };
        out.scan(b"{\"jsonrpc\":\"2.0\"}\n");
        out.scan(&b"x\n".repeat(100));
        assert!(!watch.is_fatal());
        assert_eq!(watch.sample(), None);
    }
}
