//! The tools a preset brings: `mcpServers:` and `commands:`. Two parts:
//!
//! - `check_file`: what one file gets wrong on its own (names, argv, transports, URLs,
//!   durations, secrets in literal values, parameter schemas, programs missing here),
//!   each at its position;
//! - `preset_catalog`: the catalog one preset is validated against — the host's catalog
//!   plus the chain's command tools and the tools of its MCP servers as the lock lists
//!   them ([`ToolCatalog::listings`]). A server the lock does not list is
//!   `mcp-not-locked`; validation never starts a server.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::source::ParsedPreset;
use super::spec::{
    CommandSpec, McpServerSpec, NamedMap, Spanned, is_valid_env_name, is_valid_server_name,
    parse_duration,
};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::endpoint::{EndpointError, check_base_url};
use crate::tools::external::{
    CommandTool, ToolOrigin, check_meta_schema, command_handler, normalize_schema,
};
use crate::tools::{
    ExternalHandler, ExternalTool, PORTABLE_TOOL_NAME_LEN, ToolCatalog, ToolDefinition, ToolError,
    ToolFuture, ToolName, mcp_tool_name, server_name_alias, unaliased_server_name,
};

/// A command tool's timeout when the preset gives none.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// An MCP server's `toolTimeout` when the preset gives none.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// An MCP server's `startupTimeout` when the preset gives none.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The registry allows a call this much longer than the tool's own timeout, so the
/// tool's timeout (which kills the command and says so) fires first.
const TIMEOUT_GRACE: Duration = Duration::from_secs(5);

/// The parameter schema of a command tool that declares none: no arguments.
fn no_parameters() -> Value {
    serde_json::json!({ "type": "object", "properties": {} })
}

/// One MCP server of a preset's chain, after `extends`: the nearest declaration of its name.
#[derive(Clone, Copy, Debug)]
pub struct DeclaredServer<'a> {
    /// The file that declares it (the nearest one in the chain).
    pub preset: &'a ParsedPreset,
    /// Its name as written.
    pub name: &'a Spanned<String>,
    /// Its declaration.
    pub spec: &'a McpServerSpec,
}

impl DeclaredServer<'_> {
    /// How long the server may take to start and list its tools.
    pub fn startup_timeout(&self) -> Duration {
        duration_or(&self.spec.startup_timeout, DEFAULT_STARTUP_TIMEOUT)
    }

    /// How long one tool call may take.
    pub fn tool_timeout(&self) -> Duration {
        duration_or(&self.spec.tool_timeout, DEFAULT_TOOL_TIMEOUT)
    }

    /// The program and its arguments, for a server started here (`command`).
    pub fn argv(&self) -> Option<Vec<String>> {
        self.spec
            .command
            .as_ref()
            .map(|c| c.value.iter().map(|a| a.value.clone()).collect())
    }

    /// The endpoint, for a server reached over HTTP (`url`).
    pub fn url(&self) -> Option<&str> {
        self.spec.url.as_ref().map(|u| u.value.as_str())
    }

    /// The names its `passEnv` lists.
    pub fn pass_env(&self) -> Vec<String> {
        self.spec
            .pass_env
            .iter()
            .flatten()
            .map(|n| n.value.clone())
            .collect()
    }

    /// Its literal `env`, in file order.
    pub fn env(&self) -> Vec<(String, String)> {
        literal_env(self.spec.env.as_ref())
    }

    /// Its `headers`, in file order: the header's name, and where its value comes from.
    pub fn headers(&self) -> Vec<(String, HeaderSource)> {
        self.spec
            .headers
            .iter()
            .flat_map(NamedMap::iter)
            .filter_map(|(name, h)| {
                let source = match (&h.from_env, &h.value) {
                    (Some(env), None) => HeaderSource::Env {
                        name: env.value.clone(),
                        prefix: h.prefix.clone().unwrap_or_default(),
                    },
                    (None, Some(value)) => HeaderSource::Literal(value.value.clone()),
                    _ => return None,
                };
                Some((name.value.clone(), source))
            })
            .collect()
    }

    /// Is tool `tool` (as the server spells it) marked read-only by the preset? The
    /// tool's own `readOnly`, else the server's, else `false`. The server's
    /// `readOnlyHint` plays no part.
    pub fn tool_read_only(&self, tool: &str) -> bool {
        self.spec
            .tools
            .as_ref()
            .and_then(|t| t.get(tool))
            .and_then(|t| t.read_only.as_ref())
            .or(self.spec.read_only.as_ref())
            .is_some_and(|r| r.value)
    }
}

/// Where the value of an MCP server's header comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderSource {
    /// The environment variable `name` (read when the server is contacted), after
    /// `prefix`.
    Env {
        /// The variable's name.
        name: String,
        /// Text before its value (`"Bearer "`).
        prefix: String,
    },
    /// A literal value written in the preset (validation refuses credentials).
    Literal(String),
}

/// One command tool of a preset's chain, after `extends`.
#[derive(Clone, Copy, Debug)]
pub struct DeclaredCommand<'a> {
    /// The file that declares it (the nearest one in the chain).
    pub preset: &'a ParsedPreset,
    /// Its name as written (the tool's wire name).
    pub name: &'a Spanned<String>,
    /// Its declaration.
    pub spec: &'a CommandSpec,
}

impl DeclaredCommand<'_> {
    /// What running it takes.
    pub fn command_tool(&self) -> CommandTool {
        CommandTool {
            name: self.name.value.clone(),
            run: self
                .spec
                .run
                .value
                .iter()
                .map(|a| a.value.clone())
                .collect(),
            pass_env: self
                .spec
                .pass_env
                .iter()
                .flatten()
                .map(|n| n.value.clone())
                .collect(),
            env: literal_env(self.spec.env.as_ref()),
            timeout: duration_or(&self.spec.timeout, DEFAULT_COMMAND_TIMEOUT),
            stderr_on_success: self
                .spec
                .stderr
                .as_ref()
                .is_none_or(|m| m.value == crate::preset::spec::StderrMode::Include),
        }
    }
}

/// `env:` as pairs, in file order.
pub fn literal_env(env: Option<&NamedMap<Spanned<String>>>) -> Vec<(String, String)> {
    env.into_iter()
        .flat_map(NamedMap::iter)
        .map(|(k, v)| (k.value.clone(), v.value.clone()))
        .collect()
}

fn duration_or(text: &Option<Spanned<String>>, default: Duration) -> Duration {
    text.as_ref()
        .and_then(|t| parse_duration(&t.value))
        .unwrap_or(default)
}

/// The MCP servers of a chain (root first): a later file's server replaces an earlier
/// one of the same name, in the earlier one's place.
pub fn declared_servers<'a>(chain: &[&'a ParsedPreset]) -> Vec<DeclaredServer<'a>> {
    let mut out: Vec<DeclaredServer<'a>> = Vec::new();
    for preset in chain {
        for (name, spec) in preset.file.mcp_servers.iter().flat_map(NamedMap::iter) {
            let declared = DeclaredServer { preset, name, spec };
            match out.iter_mut().find(|d| d.name.value == name.value) {
                Some(slot) => *slot = declared,
                None => out.push(declared),
            }
        }
    }
    out
}

/// The command tools of a chain (root first), replaced by name like servers.
pub fn declared_commands<'a>(chain: &[&'a ParsedPreset]) -> Vec<DeclaredCommand<'a>> {
    let mut out: Vec<DeclaredCommand<'a>> = Vec::new();
    for preset in chain {
        for (name, spec) in preset.file.commands.iter().flat_map(NamedMap::iter) {
            let declared = DeclaredCommand { preset, name, spec };
            match out.iter_mut().find(|d| d.name.value == name.value) {
                Some(slot) => *slot = declared,
                None => out.push(declared),
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// What one file gets wrong on its own
// ---------------------------------------------------------------------------------------

/// Every problem of one file's `mcpServers` and `commands`.
pub(crate) fn check_file(preset: &ParsedPreset, out: &mut Vec<Diagnostic>) {
    for (name, spec) in preset.file.mcp_servers.iter().flat_map(NamedMap::iter) {
        check_server(preset, name, spec, out);
    }
    for (name, spec) in preset.file.commands.iter().flat_map(NamedMap::iter) {
        check_command(preset, name, spec, out);
    }
}

fn check_server(
    preset: &ParsedPreset,
    name: &Spanned<String>,
    spec: &McpServerSpec,
    out: &mut Vec<Diagnostic>,
) {
    let n = name.value.as_str();
    if !is_valid_server_name(n) {
        let fixed = fixed_server_name(n);
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidName,
                format!("invalid MCP server name `{n}`"),
            )
            .at(preset.span_of(name))
            .help(format!(
                "server names are lower-case letters, digits, `_` and `-`, starting with a letter (`^[a-z][a-z0-9_-]*$`){}",
                fixed.map_or(String::new(), |f| format!(": e.g. `{f}`"))
            )),
        );
    } else if let Some(why) = server_name_alias(n) {
        out.push(
            Diagnostic::new(
                DiagnosticKind::AmbiguousServerName,
                format!("MCP server name `{n}` could alias another server's tools: {why}"),
            )
            .at(preset.span_of(name))
            .help(format!(
                "rename the server, e.g. `{}`: tools are named `mcp__<server>__<tool>`, and `mcp__<server>__*` must select this server's tools only",
                unaliased_server_name(n)
            )),
        );
    }
    match (&spec.command, &spec.url) {
        (Some(_), Some(url)) => out.push(
            Diagnostic::new(
                DiagnosticKind::ServerTransport,
                format!("MCP server `{n}` gives both `command` and `url`"),
            )
            .at(preset.span_of(url))
            .help("a server is either a program started here (`command`) or an endpoint reached over HTTP (`url`): keep one"),
        ),
        (None, None) => out.push(
            Diagnostic::new(
                DiagnosticKind::ServerTransport,
                format!("MCP server `{n}` gives neither `command` nor `url`"),
            )
            .at(preset.span_of(name))
            .help("add `command: [program, arg, ...]` for a server started here, or `url: https://...` for a remote one"),
        ),
        _ => {}
    }
    if let Some(command) = &spec.command {
        check_argv(
            preset,
            command,
            &format!("MCP server `{n}`"),
            "command",
            out,
        );
    }
    if let Some(url) = &spec.url {
        let v = url.value.as_str();
        match check_base_url(v, false) {
            Ok(_) => {}
            Err(EndpointError::NotHttp { .. }) => out.push(
                Diagnostic::new(
                    DiagnosticKind::ServerTransport,
                    format!("the `url` of MCP server `{n}` must be an http(s) URL, not `{v}`"),
                )
                .at(preset.span_of(url))
                .help("write it like `https://mcp.example.com/mcp` (Streamable HTTP)"),
            ),
            Err(EndpointError::Insecure { host, .. }) => out.push(
                Diagnostic::new(
                    DiagnosticKind::InsecureEndpoint,
                    format!(
                        "the `url` of MCP server `{n}` is plain http:// to `{host}`, which is not this machine: its tool calls and results would cross the network unencrypted"
                    ),
                )
                .at(preset.span_of(url))
                .help("use `https://`; plain `http://` is accepted only for this machine's loopback (`127.0.0.1`, `::1`, `localhost`)"),
            ),
        }
        if spec.command.is_none() && spec.pass_env.is_some() {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidValue,
                    format!("`passEnv` of MCP server `{n}` has no effect: it is reached over HTTP, not started here"),
                )
                .at(spec.pass_env.as_ref().and_then(|l| l.first()).map(|p| preset.span_of(p)))
                .help("remove `passEnv`; send what the server needs in `headers` (`{fromEnv: NAME}`)"),
            );
        }
    }
    if spec.command.is_some()
        && let Some(headers) = &spec.headers
        && let Some((first, _)) = headers.iter().next()
    {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!("`headers` of MCP server `{n}` have no effect: it is started here (`command`), not reached over HTTP"),
            )
            .at(preset.span_of(first))
            .help("remove `headers`; pass what the program needs with `passEnv` or `env`"),
        );
    }
    check_pass_env_names(preset, spec.pass_env.as_deref(), out);
    check_env(preset, spec.env.as_ref(), out);
    for (header, value) in spec.headers.iter().flat_map(NamedMap::iter) {
        let h = header.value.as_str();
        match (&value.from_env, &value.value) {
            (Some(_), Some(_)) | (None, None) => out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidValue,
                    format!("header `{h}` of MCP server `{n}` needs exactly one of `fromEnv` and `value`"),
                )
                .at(preset.span_of(header))
                .help("write `{fromEnv: TOKEN_VARIABLE, prefix: \"Bearer \"}` for a secret, `{value: text}` for a plain value"),
            ),
            (Some(env), None) if !is_valid_env_name(&env.value) => out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidName,
                    format!("`fromEnv` takes an environment variable name; `{}` is not one", env.value),
                )
                .at(preset.span_of(env))
                .help("write the NAME of the variable holding the value, like `METRICS_TOKEN`"),
            ),
            (None, Some(literal)) if is_secret_literal(h, &literal.value) => {
                out.push(secret_literal(
                    preset,
                    literal,
                    &format!("header `{h}`"),
                    "`{fromEnv: NAME}`",
                ));
            }
            _ => {}
        }
    }
    for timeout in [&spec.startup_timeout, &spec.tool_timeout]
        .into_iter()
        .flatten()
    {
        check_duration(preset, timeout, out);
    }
}

fn check_command(
    preset: &ParsedPreset,
    name: &Spanned<String>,
    spec: &CommandSpec,
    out: &mut Vec<Diagnostic>,
) {
    let n = name.value.as_str();
    if n.starts_with("mcp__") {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidName,
                format!("command tool `{n}` starts with `mcp__`, which names MCP servers' tools"),
            )
            .at(preset.span_of(name))
            .help("give the command tool a name of its own"),
        );
    } else if !ToolName::is_valid(n) || n.len() > PORTABLE_TOOL_NAME_LEN {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidName,
                format!("invalid command tool name `{n}`"),
            )
            .at(preset.span_of(name))
            .help("tool names are 1 to 64 characters of a-z, A-Z, 0-9, `_` and `-` (what every provider accepts)"),
        );
    }
    if spec.description.value.trim().is_empty() {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!("command tool `{n}` has an empty `description`"),
            )
            .at(preset.span_of(&spec.description))
            .help("say what the tool does and when to use it: the model reads only this"),
        );
    }
    check_argv(
        preset,
        &spec.run,
        &format!("command tool `{n}`"),
        "run",
        out,
    );
    if let Some(parameters) = &spec.parameters
        && let Err(d) = command_schema(preset, n, parameters)
    {
        out.push(d);
    }
    if let Some(timeout) = &spec.timeout {
        check_duration(preset, timeout, out);
    }
    check_pass_env_names(preset, spec.pass_env.as_deref(), out);
    check_env(preset, spec.env.as_ref(), out);
}

/// The normalised parameter schema of command tool `name`, or why it cannot be used.
fn command_schema(
    preset: &ParsedPreset,
    name: &str,
    parameters: &Spanned<Value>,
) -> Result<Value, Diagnostic> {
    let span = preset.span_of(parameters);
    let (schema, _changes) = normalize_schema(&parameters.value).map_err(|e| {
        let kind = if parameters.value.get("type").is_some_and(|t| t != "object")
            || !parameters.value.is_object()
        {
            DiagnosticKind::ToolSchemaRoot
        } else {
            DiagnosticKind::InvalidToolSchema
        };
        Diagnostic::new(kind, format!("`parameters` of command tool `{name}`: {e}"))
            .at(span.clone())
            .help("write an object schema: `{type: object, properties: {path: {type: string}}, required: [path]}`")
    })?;
    check_meta_schema(&schema).map_err(|e| {
        Diagnostic::new(
            DiagnosticKind::InvalidToolSchema,
            format!("`parameters` of command tool `{name}` is {e}"),
        )
        .at(span)
        .help("fix the schema (JSON Schema draft 2020-12 or draft-07)")
    })?;
    Ok(schema)
}

/// `command` / `run`: a non-empty list whose first entry names a program, found on
/// `PATH` here (a warning: the machine that runs the preset may differ).
fn check_argv(
    preset: &ParsedPreset,
    argv: &Spanned<Vec<Spanned<String>>>,
    owner: &str,
    key: &str,
    out: &mut Vec<Diagnostic>,
) {
    let Some(program) = argv.value.first() else {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!("`{key}` of {owner} is empty"),
            )
            .at(preset.span_of(argv))
            .help(format!(
                "write the program and its arguments: `{key}: [program, arg]`"
            )),
        );
        return;
    };
    let p = program.value.as_str();
    if p.trim().is_empty() {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!("`{key}` of {owner} starts with an empty program name"),
            )
            .at(preset.span_of(program))
            .help("the first entry is the program to run"),
        );
        return;
    }
    if find_program(p).is_none() {
        let words: Vec<&str> = p.split_whitespace().collect();
        let help = if words.len() > 1 {
            let mut all: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
            all.extend(argv.value.iter().skip(1).map(|a| a.value.clone()));
            format!(
                "`{p}` is one entry, so it names one program with spaces in its name; write each argument as its own entry: `{key}: [{}]`",
                all.join(", ")
            )
        } else {
            "install it, or give its absolute path; this is a warning because the machine that runs the preset may have it".to_owned()
        };
        out.push(
            Diagnostic::new(
                DiagnosticKind::ProgramNotFound,
                format!("{owner} runs `{p}`, which is not on `PATH` here"),
            )
            .at(preset.span_of(program))
            .help(help),
        );
    }
}

/// Where `program` would be found: itself when it has a `/`, else the first executable
/// file of that name in a `PATH` directory.
fn find_program(program: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = std::path::PathBuf::from(program);
        return executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

fn check_pass_env_names(
    preset: &ParsedPreset,
    names: Option<&[Spanned<String>]>,
    out: &mut Vec<Diagnostic>,
) {
    for name in names.into_iter().flatten() {
        if !is_valid_env_name(&name.value) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidName,
                    format!(
                        "`passEnv` takes environment variable names; `{}` is not one",
                        name.value
                    ),
                )
                .at(preset.span_of(name))
                .help("write names like `TZ` or `GITHUB_TOKEN`: letters, digits and `_`, not starting with a digit"),
            );
        }
    }
}

fn check_env(
    preset: &ParsedPreset,
    env: Option<&NamedMap<Spanned<String>>>,
    out: &mut Vec<Diagnostic>,
) {
    for (name, value) in env.into_iter().flat_map(NamedMap::iter) {
        if !is_valid_env_name(&name.value) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidName,
                    format!("`env` takes environment variable names; `{}` is not one", name.value),
                )
                .at(preset.span_of(name))
                .help("write names like `LOG_LEVEL`: letters, digits and `_`, not starting with a digit"),
            );
        } else if is_secret_literal(&name.value, &value.value) {
            out.push(secret_literal(
                preset,
                value,
                &format!("`env` value `{}`", name.value),
                &format!("`passEnv: [{}]`", name.value),
            ));
        }
    }
}

/// A literal that holds (or, by its name, is) a credential. Values the whole-file secret
/// scan already reports (known key formats) are left to it.
fn is_secret_literal(name: &str, value: &str) -> bool {
    if !crate::secrets::find_secrets(value).is_empty() || value.trim().is_empty() {
        return false;
    }
    let header_credential = name.eq_ignore_ascii_case("authorization")
        || name.eq_ignore_ascii_case("proxy-authorization")
        || name.eq_ignore_ascii_case("cookie");
    header_credential
        || crate::secrets::is_credential_name(&name.replace('-', "_").to_ascii_uppercase())
        || crate::secrets::is_credential_value(value)
}

fn secret_literal(
    preset: &ParsedPreset,
    value: &Spanned<String>,
    what: &str,
    instead: &str,
) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::LiteralSecret,
        format!("{what} looks like a credential; presets must not contain secrets"),
    )
    .at(preset.span_of(value))
    .help(format!(
        "take it from the environment instead ({instead}); rotate it if this file was ever shared"
    ))
}

fn check_duration(preset: &ParsedPreset, text: &Spanned<String>, out: &mut Vec<Diagnostic>) {
    if parse_duration(&text.value).is_none() {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!("`{}` is not a duration", text.value),
            )
            .at(preset.span_of(text))
            .help(
                "write a whole number and a unit, between 1ms and 24h: `500ms`, `10s`, `2m`, `1h`",
            ),
        );
    }
}

/// `My.Server` → `my-server`: a valid name close to `name`, if one can be made.
fn fixed_server_name(name: &str) -> Option<String> {
    let lowered: String = name
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '-',
        })
        .collect();
    let trimmed = lowered.trim_start_matches(|c: char| !c.is_ascii_lowercase());
    is_valid_server_name(trimmed).then(|| trimmed.to_owned())
}

/// Is the declaration of a server well-formed enough to be listed (so a missing listing
/// is worth reporting)?
fn server_is_usable(spec: &McpServerSpec) -> bool {
    match (&spec.command, &spec.url) {
        (Some(argv), None) => argv
            .value
            .first()
            .is_some_and(|p| !p.value.trim().is_empty()),
        (None, Some(url)) => check_base_url(&url.value, false).is_ok(),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------
// The catalog one preset is validated against
// ---------------------------------------------------------------------------------------

/// `provider-key-exposed`: a server's `headers.fromEnv`, or a server's or command tool's
/// own `passEnv`, naming a variable that holds a model provider's key (every provider's
/// default, and the chain's `apiKeyEnv`). It would never be sent or passed (see
/// [`withheld_env`](super::chain_settings::withheld_env)); saying so here keeps the
/// preset from looking like it works.
fn provider_keys_exposed(
    chain: &[&ParsedPreset],
    servers: &[DeclaredServer<'_>],
    commands: &[DeclaredCommand<'_>],
    out: &mut Vec<Diagnostic>,
) {
    let key = super::chain_settings::api_key_env_of(chain);
    let withheld = super::chain_settings::withheld_env(key.as_deref());
    let is_key = |name: &str| withheld.iter().any(|k| k == name);
    let mut report = |preset: &ParsedPreset, name: &Spanned<String>, what: String| {
        out.push(
            Diagnostic::new(
                DiagnosticKind::ProviderKeyExposed,
                format!(
                    "{what} names `{}`, a model provider's key variable: it is never given to a server or a command",
                    name.value
                ),
            )
            .at(preset.span_of(name))
            .help("give the server its own credential in its own variable (e.g. `METRICS_TOKEN`); the model's key stays with the agent"),
        );
    };
    for server in servers {
        let n = server.name.value.as_str();
        for (header, value) in server.spec.headers.iter().flat_map(NamedMap::iter) {
            if let Some(var) = &value.from_env
                && is_key(&var.value)
            {
                report(
                    server.preset,
                    var,
                    format!(
                        "header `{}` of MCP server `{n}` comes from `fromEnv` that",
                        header.value
                    ),
                );
            }
        }
        for var in server.spec.pass_env.iter().flatten() {
            if is_key(&var.value) {
                report(server.preset, var, format!("`passEnv` of MCP server `{n}`"));
            }
        }
    }
    for command in commands {
        for var in command.spec.pass_env.iter().flatten() {
            if is_key(&var.value) {
                report(
                    command.preset,
                    var,
                    format!("`passEnv` of command tool `{}`", command.name.value),
                );
            }
        }
    }
}

/// The catalog `chain` (root first, the preset validated last) is validated against:
/// `base` plus the chain's command tools and its MCP servers' tools, as `base`'s
/// [`listings`](ToolCatalog::listings) give them for the validated preset. `base` itself
/// when the chain brings no tools. Problems (collisions, unlocked servers, listed
/// schemas that cannot be used) go to `out`; problems of the files themselves were
/// reported by [`check_file`].
pub(crate) fn preset_catalog<'c>(
    chain: &[&ParsedPreset],
    base: &'c ToolCatalog,
    out: &mut Vec<Diagnostic>,
) -> Cow<'c, ToolCatalog> {
    let servers = declared_servers(chain);
    let commands = declared_commands(chain);
    if servers.is_empty() && commands.is_empty() {
        return Cow::Borrowed(base);
    }
    let Some(leaf) = chain.last() else {
        return Cow::Borrowed(base);
    };
    provider_keys_exposed(chain, &servers, &commands, out);
    let mut catalog = base.clone();
    for command in &commands {
        let n = command.name.value.as_str();
        let span = command.preset.span_of(command.name);
        if n.starts_with("mcp__") || !ToolName::is_valid(n) {
            continue; // reported by check_file
        }
        // A schema check_file refused is replaced by "no arguments", so the preset's
        // `allow`/`order` entries naming the tool are not reported a second time.
        let schema = command
            .spec
            .parameters
            .as_ref()
            .and_then(|p| command_schema(command.preset, n, p).ok())
            .unwrap_or_else(no_parameters);
        if base.contains(n) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::DuplicateTool,
                    format!("command tool `{n}` has the name of a tool the host already has"),
                )
                .at(span)
                .help(format!("rename the command tool (e.g. `my_{n}`); to drop the host's `{n}` from this preset, add it to `tools.deny`")),
            );
            continue;
        }
        let tool = command.command_tool();
        let definition = ToolName::new(n).and_then(|name| {
            ToolDefinition::external(ExternalTool {
                name,
                description: command.spec.description.value.clone(),
                schema,
                read_only: command.spec.read_only.as_ref().is_some_and(|r| r.value),
                timeout: Some(tool.timeout + TIMEOUT_GRACE),
                handler: command_handler(tool),
            })
        });
        match definition {
            Ok(d) => {
                let d = d.with_origin(ToolOrigin::Command { name: n.to_owned() });
                if let Err(e) = catalog.register_definition(d) {
                    out.push(e.at(span));
                }
            }
            Err(e) => out.push(e.at(span)),
        }
    }
    let listings = base.listings();
    for server in &servers {
        let s = server.name.value.as_str();
        let span = server.preset.span_of(server.name);
        if !is_valid_server_name(s)
            || server_name_alias(s).is_some()
            || !server_is_usable(server.spec)
        {
            catalog.declare_server(s, false);
            continue; // reported by check_file
        }
        let Some(listing) = listings.listing(leaf.name(), s) else {
            catalog.declare_server(s, false);
            out.push(
                Diagnostic::new(
                    DiagnosticKind::McpNotLocked,
                    format!("the tools of MCP server `{s}` are not locked"),
                )
                .at(span)
                .help("run `agent-presets lock --connect` to start the server once and pin its tools in the lock; `validate` and `render` never start servers"),
            );
            continue;
        };
        catalog.declare_server(s, true);
        for tool in &listing.tools {
            let name = match mcp_tool_name(s, &tool.name) {
                Ok(n) => n,
                Err(e) => {
                    out.push(e.at(span.clone()));
                    continue;
                }
            };
            let schema = match normalize_schema(&tool.input_schema) {
                Ok((schema, _)) => schema,
                Err(e) => {
                    out.push(
                        Diagnostic::new(
                            DiagnosticKind::InvalidToolSchema,
                            format!("tool `{}` of MCP server `{s}`: {e}", tool.name),
                        )
                        .at(span.clone())
                        .help(format!("hide it with `tools: {{deny: [{name}]}}`, or ask the server's authors to fix its schema")),
                    );
                    continue;
                }
            };
            if let Some(existing) = catalog.get(name.as_str()) {
                let what = match existing.origin() {
                    ToolOrigin::Host => "a tool the host already has".to_owned(),
                    ToolOrigin::Command { name } => format!("command tool `{name}`"),
                    ToolOrigin::Mcp { server, tool } => {
                        format!("tool `{tool}` of MCP server `{server}`")
                    }
                };
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::DuplicateTool,
                        format!("tool `{}` of MCP server `{s}` becomes `{name}`, the name of {what}", tool.name),
                    )
                    .at(span.clone())
                    .help("rename the command tool, or rename the server (its tools' names start with it); every tool needs a name of its own"),
                );
                continue;
            }
            let definition = ToolDefinition::external(ExternalTool {
                name,
                description: tool.description.clone().unwrap_or_default(),
                schema,
                read_only: server.tool_read_only(&tool.name),
                timeout: Some(server.tool_timeout() + TIMEOUT_GRACE),
                handler: not_connected(s),
            });
            match definition {
                Ok(d) => {
                    let d = d.with_origin(ToolOrigin::Mcp {
                        server: s.to_owned(),
                        tool: tool.name.clone(),
                    });
                    if let Err(e) = catalog.register_definition(d) {
                        out.push(e.at(span.clone()));
                    }
                }
                Err(e) => out.push(e.at(span.clone())),
            }
        }
    }
    Cow::Owned(catalog)
}

/// The handler of an MCP tool built from the lock, until a run connects the server
/// ([`ToolDefinition::with_handler`]).
fn not_connected(server: &str) -> ExternalHandler {
    let server = server.to_owned();
    Arc::new(move |_, _| {
        let server = server.clone();
        Box::pin(async move {
            Err(ToolError::new(format!(
                "MCP server `{server}` is not connected in this process"
            ))
            .hint("this tool cannot be used here; answer without it"))
        }) as ToolFuture
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_get_a_fix() {
        assert_eq!(fixed_server_name("My.Server").as_deref(), Some("my-server"));
        assert_eq!(fixed_server_name("9lives").as_deref(), Some("lives"));
        assert_eq!(fixed_server_name("___"), None);
    }

    #[test]
    fn secret_literals() {
        assert!(is_secret_literal("API_TOKEN", "hunter2"));
        assert!(is_secret_literal("Authorization", "Basic abc"));
        assert!(!is_secret_literal("LOG_LEVEL", "warn"));
        assert!(!is_secret_literal("X-Client", "agent-presets"));
    }

    #[test]
    fn programs_are_looked_up_on_path() {
        assert!(find_program("sh").is_some());
        assert!(find_program("/bin/sh").is_some());
        assert!(find_program("agent-presets-no-such-program").is_none());
    }
}
