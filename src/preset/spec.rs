//! The preset file, format version 1, as serde types: what a `.yaml` preset may say.
//!
//! Every struct rejects unknown keys and spells keys in camelCase. Values a later check may
//! complain about keep their position as a [`Spanned`] (serde-saphyr's: `value`, plus
//! `referenced` — where the value is used — and `defined` — where an aliased value was
//! written). Semantic checks (name patterns, finite orders, known tools, ...) are not done
//! here: they belong to the validator, which reports them at these spans. The JSON Schema
//! ([`preset_json_schema`]) is generated from these types and committed as
//! `schemas/preset.schema.json`.

use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_saphyr::Location;
pub use serde_saphyr::Spanned;

use crate::endpoint::{ModelParams, ModelSettings, PresetModel};
pub use crate::endpoint::{Provider, ReasoningEffort};
pub use crate::prompt::VariableType;

/// The only format version this build understands.
pub const FORMAT_VERSION: u32 = 1;

/// `$id` of the generated JSON Schema.
pub const PRESET_SCHEMA_ID: &str = "urn:agent-presets:preset:v1";

/// The pattern a preset name (and so a preset file's stem) must match.
pub const PRESET_NAME_PATTERN: &str = "^[a-z0-9][a-z0-9-]*$";

/// The pattern a section or context name must match (`tool:read_file` included).
pub const SECTION_NAME_PATTERN: &str = "^[a-z][a-z0-9_.:-]*$";

/// The pattern a preset-declared variable name must match.
pub const VARIABLE_NAME_PATTERN: &str = "^[a-z][a-z0-9_]*$";

/// The pattern a locale must match (`de`, `pt-BR`).
pub const LOCALE_PATTERN: &str = super::locale_pack::LOCALE_PATTERN;

/// The pattern an environment variable name in `passEnv` must match.
pub const ENV_NAME_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_]*$";

/// Does `name` match [`ENV_NAME_PATTERN`] (`^[A-Za-z_][A-Za-z0-9_]*$`)?
pub fn is_valid_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Does `name` match [`PRESET_NAME_PATTERN`] (`^[a-z0-9][a-z0-9-]*$`)?
pub fn is_valid_preset_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z' | b'0'..=b'9'))
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'))
}

/// Does `name` match [`SECTION_NAME_PATTERN`] (`^[a-z][a-z0-9_.:-]*$`)? Used for section
/// and context names alike. ASCII only, so byte order equals UTF-16 order.
pub fn is_valid_section_name(name: &str) -> bool {
    crate::prompt::SectionName::is_valid(name)
}

/// Does `name` match [`VARIABLE_NAME_PATTERN`] (`^[a-z][a-z0-9_]*$`)?
pub fn is_valid_variable_name(name: &str) -> bool {
    crate::prompt::VariableName::is_valid(name)
}

/// One preset file (format version 1).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PresetFile {
    /// Format version; must be 1.
    #[schemars(with = "u32", extend("const" = 1))]
    pub version: Spanned<u32>,
    /// The preset's name; equals the file stem.
    #[schemars(with = "String", pattern(PRESET_NAME_PATTERN))]
    pub name: Spanned<String>,
    /// One line saying what the preset is for (shown by `list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The preset this one builds on (its sections, contexts, variables and tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", pattern(PRESET_NAME_PATTERN))]
    pub extends: Option<Spanned<String>>,
    /// Model defaults for `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSpec>,
    /// The system prompt's sections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<PersonaSpec>,
    /// Runtime contexts: facts sent after the history, outside the cacheable prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contexts: Option<Vec<ContextSpec>>,
    /// Template variables this preset declares, in file order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<VariableMap>,
    /// The tool restriction: `allow`, `deny` and the wire `order`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ToolsSpec>")]
    pub tools: Option<Spanned<ToolsSpec>>,
    /// Token budgets for the system prompt and the tool definitions (o200k_base), checked
    /// by `validate` and on every render. Along `extends`, the nearest preset that sets a
    /// key wins for that key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetSpec>,
    /// Names of environment variables `bash` passes to commands besides its base allowlist
    /// (`PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `LANG`, `LANGUAGE`, `LC_*`, `TERM`, `TZ`,
    /// `TMPDIR`, the certificate authorities and proxies). Along `extends` the lists add up. A name that looks like it holds a
    /// credential is an error: commands never get credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>", inner(pattern(ENV_NAME_PATTERN)))]
    pub pass_env: Option<Vec<Spanned<String>>>,
    /// The sandbox commands (`bash`) run in: `read-only`, `workspace-write` or
    /// `full-access` (no sandbox). Along `extends`, the nearest preset that sets it wins;
    /// when none does, `workspace-write`. `run --sandbox` can only make it stricter,
    /// except `--sandbox full-access`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<SandboxSetting>")]
    pub sandbox: Option<Spanned<SandboxSetting>>,
    /// Paths commands may read in a sandbox besides the workspace, the system directories
    /// and the toolchains on `PATH`: absolute, or relative to the workspace. A path that
    /// does not exist when a command runs is skipped. Home-directory secrets (`~/.ssh`,
    /// `~/.aws`, …) stay unreadable. Along `extends` the lists add up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>", inner(length(min = 1)))]
    pub allow_read: Option<Vec<Spanned<String>>>,
    /// MCP servers whose tools the preset brings, by name (`^[a-z][a-z0-9_-]*$`). Their
    /// tools join as `mcp__<server>__<tool>`, with the definitions pinned by the tool lock
    /// (`agent-presets lock --connect`). Along `extends`, a child adds servers and replaces
    /// one by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("propertyNames" = {"pattern": "^[a-z][a-z0-9_-]*$"}))]
    pub mcp_servers: Option<NamedMap<McpServerSpec>>,
    /// Command tools the preset brings, by tool name: a program run with the call's
    /// arguments as JSON on stdin. Along `extends`, a child adds commands and replaces one
    /// by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("propertyNames" = {"pattern": "^[a-zA-Z0-9_-]{1,64}$"}))]
    pub commands: Option<NamedMap<CommandSpec>>,
    /// Permission rules: which tool calls run without asking (`allow`), ask the user
    /// (`ask`) or never run (`deny`): `bash(git push *)`, `write_file(path=.github/**)`,
    /// `mcp__github__get_*`. Checked deny, then ask, then allow, then the tool's default
    /// (read-only tools run, others ask). Along `extends` the lists add up; `override: true`
    /// starts them over at this preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<PermissionsSpec>,
    /// Hooks: programs run at points of a run (before and after a tool call, when the agent
    /// would stop, when a prompt is submitted), the event as JSON on stdin, following
    /// Claude Code's hook conventions: exit 0 continues, exit 2 blocks with stderr as the
    /// reason. Along `extends` each event's list appends to the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<HooksSpec>,
    /// Run limits: the most steps and tool calls per answer (`run --max-steps`,
    /// `--max-tool-calls` override). Along `extends`, each limit comes from the nearest
    /// preset that sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsSpec>,
    /// The output contract: a JSON Schema the final answer must satisfy, sent in each
    /// dialect's strongest form and checked locally, with retries. Along `extends`, the
    /// nearest preset that sets `output` wins (a child replaces it whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputSpec>,
    /// Success checks: programs run after the model's final answer (and a valid output
    /// object), in order, such as `[cargo, test, --quiet]`. A failing check's exit code
    /// and the tail of its output go back to the model as the reason to go on, up to its
    /// `retries`. Along `extends` the lists append, the root's first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<CheckSpec>>,
    /// The locale pack the model's texts come from (`de`: `locales/de.yaml`); `en`, the
    /// built-in English, needs none. Along `extends`, the nearest preset that sets it
    /// wins; `render --locale` and `run --locale` override it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", pattern(LOCALE_PATTERN))]
    pub locale: Option<Spanned<String>>,
    /// Replacements of built-in texts by id (`tool.read_file.description`,
    /// `agent.refused.no-tty`, `section.standard.identity`, …; `agent-presets texts` lists
    /// them). A replacement keeps every `{{ placeholder }}` and protected token of the
    /// original. Along `extends` the child's entry wins, and any entry wins over the
    /// locale pack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<std::collections::BTreeMap<String, String>>")]
    pub texts: Option<TextMap>,
}

/// `permissions:`: the three rule lists (docs/format.md, "Permission rules").
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionsSpec {
    /// Calls that never run, whatever the other lists or `--yes` say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub deny: Option<Vec<Spanned<String>>>,
    /// Calls that ask the user even when an allow rule matches them (`--yes` answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub ask: Option<Vec<Spanned<String>>>,
    /// Calls that run without asking; a `bash` line only if every command in it is allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub allow: Option<Vec<Spanned<String>>>,
    /// Drop the rules inherited through `extends` (all three lists): the only way to loosen
    /// a parent's deny.
    #[serde(default, rename = "override", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<bool>")]
    pub overrides: Option<Spanned<bool>>,
}

/// `hooks:`: the programs run at each event (docs/format.md, "Hooks").
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HooksSpec {
    /// Before a tool call runs (after the permission rules): may block it, or rewrite its
    /// arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_tool_use: Option<Vec<HookSpec>>,
    /// After a tool call ran: may turn its result into an error the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_tool_use: Option<Vec<HookSpec>>,
    /// When the model answers without calling a tool: may send the agent back to work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<HookSpec>>,
    /// When the prompt is submitted: may add context (its stdout) or block the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_prompt_submit: Option<Vec<HookSpec>>,
}

/// One hook: a program run with the event as JSON on stdin.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HookSpec {
    /// Which tools the hook is for (`preToolUse`, `postToolUse` only): a tool name, a glob
    /// (`mcp__github__*`) or alternatives (`write_file|edit_file`). Default: every tool.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub matcher: Option<Spanned<String>>,
    /// The program and its arguments, as a list (`[python3, hooks/guard.py]`), never a
    /// shell string. It runs like a command tool: in the workspace, in the run's sandbox,
    /// with the command environment.
    #[schemars(with = "Vec<String>")]
    pub run: Spanned<Vec<Spanned<String>>>,
    /// How long it may run before it is killed (default `10s`, at most `10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", pattern(DURATION_PATTERN))]
    pub timeout: Option<Spanned<String>>,
    /// What a hook that fails (exits with a code other than 0 and 2, is killed at its
    /// timeout, cannot start, prints JSON that cannot be read) does: `block` (the default:
    /// fail closed) or `continue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<HookOnError>")]
    pub on_error: Option<Spanned<HookOnError>>,
}

/// One success check (docs/format.md, "Success checks").
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CheckSpec {
    /// The program and its arguments, as a list (`[cargo, test, --quiet]`), never a shell
    /// string. It runs like a command tool: in the workspace, in the run's sandbox, with
    /// the command environment.
    #[schemars(with = "Vec<String>")]
    pub run: Spanned<Vec<Spanned<String>>>,
    /// How many more answers the model may give after one this check fails (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>")]
    pub retries: Option<Spanned<u32>>,
    /// How long it may run before it is killed, which counts as a failure (default `5m`,
    /// at most `1h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", pattern(DURATION_PATTERN))]
    pub timeout: Option<Spanned<String>>,
}

/// `onError` of a hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HookOnError {
    /// A failing hook blocks (fail closed).
    Block,
    /// A failing hook is reported and the run goes on.
    Continue,
}

/// The pattern an MCP server name must match.
pub const SERVER_NAME_PATTERN: &str = "^[a-z][a-z0-9_-]*$";

/// Does `name` match [`SERVER_NAME_PATTERN`] (`^[a-z][a-z0-9_-]*$`)?
pub fn is_valid_server_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z'))
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

/// The pattern a duration is written in (`500ms`, `10s`, `2m`, `1h`).
pub const DURATION_PATTERN: &str = "^[0-9]+(ms|s|m|h)$";

/// A duration as a preset writes it: digits, then `ms`, `s`, `m` or `h`. `None` when it
/// is not written so, is zero, or is longer than a day.
pub fn parse_duration(text: &str) -> Option<std::time::Duration> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    let n: u64 = number.parse().ok()?;
    let millis = match unit {
        "ms" => n,
        "s" => n.checked_mul(1000)?,
        "m" => n.checked_mul(60_000)?,
        "h" => n.checked_mul(3_600_000)?,
        _ => return None,
    };
    (1..=86_400_000)
        .contains(&millis)
        .then(|| std::time::Duration::from_millis(millis))
}

/// One MCP server: a program to start (`command`) or an endpoint to reach (`url`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct McpServerSpec {
    /// The server's program and arguments, as a list (`[uvx, mcp-server-time]`), never a
    /// shell string. Started over stdio, in the workspace, with a minimal environment.
    /// Give `command` or `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub command: Option<Spanned<Vec<Spanned<String>>>>,
    /// The server's Streamable HTTP endpoint: `https://`, or `http://` on this machine's
    /// loopback only. Give `command` or `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub url: Option<Spanned<String>>,
    /// Names of environment variables the server's process gets besides the base
    /// allowlist. Never the model's API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>", inner(pattern(ENV_NAME_PATTERN)))]
    pub pass_env: Option<Vec<Spanned<String>>>,
    /// Literal environment values for the server's process. No secrets: a value that
    /// looks like a credential is an error (pass it with `passEnv` instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<NamedMap<Spanned<String>>>,
    /// HTTP headers sent to a `url` server, each from an environment variable
    /// (`{fromEnv: TOKEN, prefix: "Bearer "}`) or a literal `{value: ...}` (no secrets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<NamedMap<HeaderSpec>>,
    /// How long the server may take to start and list its tools (default `10s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", pattern(DURATION_PATTERN))]
    pub startup_timeout: Option<Spanned<String>>,
    /// How long one tool call may take (default `60s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", pattern(DURATION_PATTERN))]
    pub tool_timeout: Option<Spanned<String>>,
    /// `true`: the server's tools only read, and run without asking for approval. A
    /// server's own `readOnlyHint` is a hint, not trust. Default `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<bool>")]
    pub read_only: Option<Spanned<bool>>,
    /// Per-tool settings, by the tool's name as the server spells it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<NamedMap<McpToolSpec>>,
    /// `true`: this entry replaces an inherited one of its name on purpose (without it,
    /// replacing one is an `own-tool-replaced` warning).
    #[serde(default, rename = "override", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<bool>")]
    pub overrides: Option<Spanned<bool>>,
}

/// Settings of one tool of an MCP server.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct McpToolSpec {
    /// Overrides the server's `readOnly` for this tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<bool>")]
    pub read_only: Option<Spanned<bool>>,
}

/// One HTTP header of a `url` server: from an environment variable, or literal.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HeaderSpec {
    /// The NAME of the environment variable holding the value (read when the server is
    /// contacted; never printed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", pattern(ENV_NAME_PATTERN))]
    pub from_env: Option<Spanned<String>>,
    /// Text put before the variable's value (`"Bearer "`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// A literal value (no secrets). Give `fromEnv` or `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub value: Option<Spanned<String>>,
}

/// One command tool: a program run with the call's arguments as JSON on stdin.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CommandSpec {
    /// What the tool does, for the model.
    #[schemars(with = "String")]
    pub description: Spanned<String>,
    /// The JSON Schema of the arguments (draft 2020-12 or draft-07; an object schema).
    /// Default: no arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub parameters: Option<Spanned<serde_json::Value>>,
    /// The program and its arguments, as a list (`[wc, -w]`), never a shell string. It
    /// runs in the workspace with a minimal environment; its stdout is the result, a
    /// non-zero exit a tool error with its stderr.
    #[schemars(with = "Vec<String>")]
    pub run: Spanned<Vec<Spanned<String>>>,
    /// `true`: the command only reads, and runs without asking for approval. Default
    /// `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<bool>")]
    pub read_only: Option<Spanned<bool>>,
    /// How long one call may run before it is killed (default `60s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", pattern(DURATION_PATTERN))]
    pub timeout: Option<Spanned<String>>,
    /// Names of environment variables the command gets besides the base allowlist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>", inner(pattern(ENV_NAME_PATTERN)))]
    pub pass_env: Option<Vec<Spanned<String>>>,
    /// Literal environment values for the command (no secrets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<NamedMap<Spanned<String>>>,
    /// What the model gets of the command's standard error when it succeeds: `include`
    /// (the default: both streams, labelled `--- stdout ---` and `--- stderr ---`, when
    /// it wrote to stderr; `python -m unittest` reports there) or `drop` (stdout only). A
    /// failing command's stderr is always part of its error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<StderrMode>")]
    pub stderr: Option<Spanned<StderrMode>>,
    /// `true`: this entry replaces an inherited one of its name on purpose (without it,
    /// replacing one is an `own-tool-replaced` warning).
    #[serde(default, rename = "override", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<bool>")]
    pub overrides: Option<Spanned<bool>>,
}

/// What a command tool's result holds of its standard error on success.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum StderrMode {
    /// Both streams, labelled, when stderr is not empty.
    #[default]
    Include,
    /// Standard output only.
    Drop,
}

/// A mapping from names to values that keeps file order and the position of every name
/// (`mcpServers`, `commands`, `env`, `headers`). Duplicate names are rejected by the
/// parser.
#[derive(Clone, Debug)]
pub struct NamedMap<T> {
    entries: Vec<(Spanned<String>, T)>,
}

impl<T> Default for NamedMap<T> {
    fn default() -> Self {
        NamedMap {
            entries: Vec::new(),
        }
    }
}

impl<T> NamedMap<T> {
    /// The entries, in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&Spanned<String>, &T)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The value of `name`, if any.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.entries
            .iter()
            .find(|(k, _)| k.value == name)
            .map(|(_, v)| v)
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entries?
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// `texts:` — text id → replacement, in file order with positions. Duplicate ids are
/// rejected by the parser.
#[derive(Clone, Debug, Default)]
pub struct TextMap {
    entries: Vec<(Spanned<String>, Spanned<String>)>,
}

impl TextMap {
    /// The entries `(id, text)`, in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&Spanned<String>, &Spanned<String>)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entries?
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NamedMap<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor<T>(std::marker::PhantomData<T>);

        impl<'de, T: Deserialize<'de>> Visitor<'de> for MapVisitor<T> {
            type Value = NamedMap<T>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping from names to values")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NamedMap<T>, A::Error> {
                let mut entries = Vec::new();
                while let Some(name) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value::<T>()?;
                    entries.push((name, value));
                }
                Ok(NamedMap { entries })
            }
        }

        deserializer.deserialize_map(MapVisitor(std::marker::PhantomData))
    }
}

impl<T: Serialize> Serialize for NamedMap<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (name, value) in &self.entries {
            map.serialize_entry(&name.value, value)?;
        }
        map.end()
    }
}

/// The value type of a [`NamedMap`] as its schema shows it.
pub trait NamedValue {
    /// The schema of one value.
    fn value_schema(generator: &mut SchemaGenerator) -> Schema;
}

impl NamedValue for Spanned<String> {
    fn value_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<String>()
    }
}

impl NamedValue for McpServerSpec {
    fn value_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<McpServerSpec>()
    }
}

impl NamedValue for McpToolSpec {
    fn value_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<McpToolSpec>()
    }
}

impl NamedValue for HeaderSpec {
    fn value_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<HeaderSpec>()
    }
}

impl NamedValue for CommandSpec {
    fn value_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<CommandSpec>()
    }
}

impl<T: NamedValue> JsonSchema for NamedMap<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NamedMap".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "additionalProperties": T::value_schema(generator),
        })
    }
}

impl<'de> Deserialize<'de> for TextMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor;

        impl<'de> Visitor<'de> for MapVisitor {
            type Value = TextMap;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping from text ids to texts")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TextMap, A::Error> {
                let mut entries = Vec::new();
                while let Some(id) = map.next_key::<Spanned<String>>()? {
                    let text = map.next_value::<Spanned<String>>()?;
                    entries.push((id, text));
                }
                Ok(TextMap { entries })
            }
        }

        deserializer.deserialize_map(MapVisitor)
    }
}

impl Serialize for TextMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (id, text) in &self.entries {
            map.serialize_entry(&id.value, &text.value)?;
        }
        map.end()
    }
}

/// `sandbox`: what commands run by tools may read, write and reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxSetting {
    /// Reads limited to the workspace, system directories and toolchains; writes only in a
    /// private temporary directory; no network.
    ReadOnly,
    /// As `read-only`, plus writes in the workspace.
    WorkspaceWrite,
    /// No sandbox: commands can do whatever the user can.
    FullAccess,
}

impl SandboxSetting {
    /// The mode it names.
    pub fn mode(self) -> crate::process::SandboxMode {
        use crate::process::SandboxMode;
        match self {
            SandboxSetting::ReadOnly => SandboxMode::ReadOnly,
            SandboxSetting::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            SandboxSetting::FullAccess => SandboxMode::FullAccess,
        }
    }
}

/// `budget`: the most tokens (counted with o200k_base) the system prompt, the tool
/// definitions and the runtime context may take.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BudgetSpec {
    /// The most tokens the system prompt may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_system_tokens: Option<Spanned<u32>>,
    /// The most tokens the tool definitions (name, description, parameters) may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_tool_tokens: Option<Spanned<u32>>,
    /// The most tokens the runtime context (every context, as one message, wrapper
    /// excluded) may take: checked for the worst case at validate and at every step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_context_tokens: Option<Spanned<u32>>,
}

impl ModelSettings {
    /// The settings a preset's `model` block gives (missing fields take the provider's
    /// defaults).
    pub fn from_spec(spec: &ModelSpec) -> Self {
        let mut settings = ModelSettings::new(spec.provider.value, spec.name.value.clone());
        if let Some(url) = &spec.base_url {
            settings = settings.with_base_url(url.value.clone());
        }
        if let Some(env) = &spec.api_key_env {
            settings.api_key_env = Some(env.value.clone());
        }
        if let Some(max) = &spec.max_tokens {
            settings.max_tokens = Some(max.value);
        }
        if let Some(strict) = &spec.strict_tools {
            settings.strict_tools = strict.value;
        }
        settings.params = ModelParams {
            temperature: spec.temperature.as_ref().map(|t| t.value),
            top_p: spec.top_p.as_ref().map(|t| t.value),
            seed: spec.seed.as_ref().map(|s| s.value),
            stop: spec
                .stop
                .as_ref()
                .map(|s| s.value.iter().map(|x| x.value.clone()).collect())
                .unwrap_or_default(),
            reasoning_effort: spec.reasoning_effort.as_ref().map(|e| e.value),
            thinking_budget: spec.thinking_budget.as_ref().map(|b| b.value),
        };
        settings
    }
}

impl ModelSpec {
    /// The endpoint this block describes, for [`Overrides::apply`](crate::endpoint::Overrides::apply).
    pub fn endpoint(&self) -> PresetModel {
        PresetModel {
            settings: ModelSettings::from_spec(self),
            strict_tools: self.strict_tools.as_ref().map(|s| s.value),
        }
    }
}

/// Model defaults for `run`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ModelSpec {
    /// The provider: `deepseek`, `openai`, `anthropic` or `openai-compatible`.
    #[schemars(with = "Provider")]
    pub provider: Spanned<Provider>,
    /// The model name as the provider spells it (e.g. `deepseek-v4-flash`).
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The API base URL; required for `openai-compatible`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub base_url: Option<Spanned<String>>,
    /// The NAME of the environment variable holding the API key (never the key itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub api_key_env: Option<Spanned<String>>,
    /// The maximum number of tokens to generate per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>")]
    pub max_tokens: Option<Spanned<u32>>,
    /// Send tools in strict mode (`strict: true` with the strict schema projection).
    /// Default: on for `openai` and for `deepseek` at its beta API root (`…/beta`), off
    /// otherwise. DeepSeek supports it only at the beta root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<bool>")]
    pub strict_tools: Option<Spanned<bool>>,
    /// Allow a plain `http://` `baseUrl` for a host that is not this machine's loopback
    /// (`127.0.0.0/8`, `::1`, `localhost`): the key and the conversation then travel in
    /// clear text. Off by default; `validate` warns when it is on and used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<bool>")]
    pub allow_insecure: Option<Spanned<bool>>,
    /// Sampling temperature: 0 to 2 on the OpenAI dialect, 0 to 1 on Anthropic (refused
    /// there with `thinkingBudget`). Unset: the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<f64>")]
    pub temperature: Option<Spanned<f64>>,
    /// Nucleus sampling, 0 to 1 (with Anthropic's `thinkingBudget`, 0.95 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<f64>")]
    pub top_p: Option<Spanned<f64>>,
    /// A seed for best-effort deterministic sampling (OpenAI dialect only; Anthropic has
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<i64>")]
    pub seed: Option<Spanned<i64>>,
    /// Sequences that end the answer (at most 4 on the OpenAI dialect; none empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub stop: Option<Spanned<Vec<Spanned<String>>>>,
    /// How much the model reasons: OpenAI's `reasoning_effort` (`none` … `max`), Anthropic's
    /// `output_config.effort` (`low` … `max`). DeepSeek has no such parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ReasoningEffort>")]
    pub reasoning_effort: Option<Spanned<ReasoningEffort>>,
    /// Anthropic's extended thinking: the most tokens the model may think for, at least
    /// 1024 and less than `maxTokens`. Refuses `temperature` (and a `topP` below 0.95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>")]
    pub thinking_budget: Option<Spanned<u32>>,
}

/// `limits`: how long a run may go on. `run --max-steps` / `--max-tool-calls` override.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LimitsSpec {
    /// The most model requests of one run (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_steps: Option<Spanned<u32>>,
    /// The most tool calls of one answer that run (default 64); the rest are refused to
    /// the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_tool_calls: Option<Spanned<u32>>,
}

/// `output`: what the final answer must be (docs/format.md, "Output contract").
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OutputSpec {
    /// The JSON Schema of the answer (draft 2020-12 or draft-07; an object schema,
    /// self-contained: every `$ref` local). Give this or `schemaFile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub schema: Option<Spanned<serde_json::Value>>,
    /// A JSON file holding the schema, relative to the preset file and inside its
    /// directory (like `textFile`). Give this or `schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", length(min = 1))]
    pub schema_file: Option<Spanned<String>>,
    /// How many more answers the model may give after one that fails the schema
    /// (default 2, at most 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>", range(max = 10))]
    pub retries: Option<Spanned<u32>>,
}

/// The system prompt: sections, removals, and whether runtime context is sent.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PersonaSpec {
    /// `false` suppresses every runtime context (preset and host-provided); once false in
    /// an `extends` chain, a child cannot turn it back on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<bool>")]
    pub include_runtime_context: Option<Spanned<bool>>,
    /// Prompt sections, sorted by `(order, name)` when assembled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<SectionSpec>>,
    /// Names of inherited sections (or `tool:<name>` guidance sections) to drop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>", inner(pattern(SECTION_NAME_PATTERN)))]
    pub remove: Option<Vec<Spanned<String>>>,
}

/// One named piece of the system prompt.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(transform = text_or_text_file)]
pub struct SectionSpec {
    /// The section's name; a child's section with a parent's name replaces it.
    #[schemars(with = "String", pattern(SECTION_NAME_PATTERN))]
    pub name: Spanned<String>,
    /// Sort key (a finite number). Bands: negative identity, 0 persona, 100-999 rules,
    /// 1000-1999 tool guidance, 9000+ closing instructions.
    #[schemars(with = "f64")]
    #[serde(deserialize_with = "order_number")]
    pub order: Spanned<f64>,
    /// The text, a minijinja template unless `template: false`. Give `text` or
    /// `textFile`.
    #[serde(default = "no_text")]
    #[schemars(with = "String")]
    pub text: Spanned<String>,
    /// Take the text from this file instead: a path relative to the preset file, inside
    /// its directory (UTF-8, at most 1 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub text_file: Option<Spanned<String>>,
    /// `true`: when effective, this section alone is the whole system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
    /// A minijinja expression; the section is present only while it is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub when: Option<Spanned<String>>,
    /// `false` sends the text verbatim (for text containing `{{`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<bool>,
    /// `true`: this section replaces an inherited one of the same name on purpose.
    /// Reusing an inherited name without it is a warning (`implicit-override`).
    #[serde(default, rename = "override", skip_serializing_if = "Option::is_none")]
    #[schemars(rename = "override")]
    pub overrides: Option<bool>,
}

/// One runtime context: a fact rendered into the snapshot sent after the history.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(transform = text_or_text_file)]
pub struct ContextSpec {
    /// The context's name; a child's context with a parent's name replaces it.
    #[schemars(with = "String", pattern(SECTION_NAME_PATTERN))]
    pub name: Spanned<String>,
    /// Sort key (a finite number).
    #[schemars(with = "f64")]
    #[serde(deserialize_with = "order_number")]
    pub order: Spanned<f64>,
    /// The text, a minijinja template unless `template: false`. Give `text` or
    /// `textFile`.
    #[serde(default = "no_text")]
    #[schemars(with = "String")]
    pub text: Spanned<String>,
    /// Take the text from this file instead: a path relative to the preset file, inside
    /// its directory (UTF-8, at most 1 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub text_file: Option<Spanned<String>>,
    /// `false` sends the text verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<bool>,
    /// `true`: this context replaces an inherited one of the same name on purpose.
    /// Reusing an inherited name without it is a warning (`implicit-override`).
    #[serde(default, rename = "override", skip_serializing_if = "Option::is_none")]
    #[schemars(rename = "override")]
    pub overrides: Option<bool>,
}

/// An `order` as YAML writes a number. A decimal too large for an `f64` (`1e400`) reads
/// as ±∞ rather than failing to parse, so validation reports it as a `non-finite-order`
/// of its section instead of a wrong type. The shape check has already made sure the
/// value is a plain number (not quoted text), with the same reading.
fn order_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Spanned<f64>, D::Error> {
    let text = Spanned::<String>::deserialize(deserializer)?;
    match crate::yaml_scalar::parse_float(&text.value) {
        Some(value) => Ok(Spanned::new(value, text.referenced, text.defined)),
        None => Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Str(&text.value),
            &"a number",
        )),
    }
}

/// A template variable the preset declares.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(transform = typed_variable_rules)]
pub struct VariableSpec {
    /// What the variable means (shown by `show` and `render --help`).
    pub description: String,
    /// The type of its values: `string` (the default), `integer`, `number` or `boolean`.
    /// Templates receive values of this type; `--var` values are checked against it.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<VariableType>")]
    pub value_type: Option<Spanned<VariableType>>,
    /// The only values allowed (of its type).
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "choices_schema")]
    pub choices: Option<Vec<Spanned<String>>>,
    /// The value used when none is given (of its type; one of `enum` if given).
    // Kept as written; `VariableType::parse` reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "default_schema")]
    pub default: Option<Spanned<String>>,
    /// `true`: rendering without a value is an error even if a template does not use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// `true`: the value changes while an agent runs, so it does not belong in the
    /// cacheable system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volatile: Option<bool>,
}

/// The placeholder `text` of a section or context that gives `textFile` (filled in
/// when the preset file is loaded).
fn no_text() -> Spanned<String> {
    Spanned::new(String::new(), Location::UNKNOWN, Location::UNKNOWN)
}

/// A section or context gives exactly one of `text` and `textFile`. (The shape check
/// enforces the same, with its own messages.)
fn text_or_text_file(schema: &mut Schema) {
    if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
        required.retain(|k| k != "text");
    }
    // Under `allOf`: the shape check reads a top-level `oneOf` as alternative types.
    schema.insert(
        "allOf".into(),
        serde_json::json!([{ "oneOf": [{ "required": ["text"] }, { "required": ["textFile"] }] }]),
    );
}

/// The types a variable's value may be written as.
const SCALAR_TYPES: [&str; 4] = ["string", "integer", "number", "boolean"];

fn default_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["string", "integer", "number", "boolean", "null"] })
}

fn choices_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": ["array", "null"],
        "items": { "type": SCALAR_TYPES },
    })
}

/// For editors: with `type: integer` (number, boolean), `default` and `enum` hold values
/// of that type. (The shape check enforces the same, with its own messages.)
fn typed_variable_rules(schema: &mut Schema) {
    let rules: Vec<serde_json::Value> = [
        (VariableType::Integer, "integer"),
        (VariableType::Number, "number"),
        (VariableType::Boolean, "boolean"),
    ]
    .iter()
    .map(|(t, json_type)| {
        serde_json::json!({
            "if": { "properties": { "type": { "const": t.as_str() } }, "required": ["type"] },
            "then": { "properties": {
                "default": { "type": [json_type, "null"] },
                "enum": { "items": { "type": json_type } },
            } },
        })
    })
    .collect();
    schema.insert("allOf".into(), rules.into());
}

/// One entry of [`VariableMap`]: a variable's name (with its position) and declaration.
#[derive(Clone, Debug)]
pub struct VariableEntry {
    /// The name as written (the mapping key).
    pub name: Spanned<String>,
    /// The declaration.
    pub spec: VariableSpec,
}

/// `variables:` — a mapping from name to [`VariableSpec`] that keeps file order and the
/// position of every name. Duplicate names are rejected by the parser.
#[derive(Clone, Debug, Default)]
pub struct VariableMap {
    entries: Vec<VariableEntry>,
}

impl VariableMap {
    /// The entries, in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, VariableEntry> {
        self.entries.iter()
    }

    /// The declaration of `name`, if any.
    pub fn get(&self, name: &str) -> Option<&VariableEntry> {
        self.entries.iter().find(|e| e.name.value == name)
    }

    /// How many variables.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No variables?
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<'a> IntoIterator for &'a VariableMap {
    type Item = &'a VariableEntry;
    type IntoIter = std::slice::Iter<'a, VariableEntry>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

impl<'de> Deserialize<'de> for VariableMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor;

        impl<'de> Visitor<'de> for MapVisitor {
            type Value = VariableMap;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping from variable names to declarations")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<VariableMap, A::Error> {
                let mut entries: Vec<VariableEntry> = Vec::new();
                while let Some(name) = map.next_key::<Spanned<String>>()? {
                    let spec = map.next_value::<VariableSpec>()?;
                    entries.push(VariableEntry { name, spec });
                }
                Ok(VariableMap { entries })
            }
        }

        deserializer.deserialize_map(MapVisitor)
    }
}

impl Serialize for VariableMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for entry in &self.entries {
            map.serialize_entry(&entry.name.value, &entry.spec)?;
        }
        map.end()
    }
}

impl JsonSchema for VariableMap {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "VariableMap".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Template variables this preset declares, by name.",
            "type": "object",
            "propertyNames": { "pattern": VARIABLE_NAME_PATTERN },
            "additionalProperties": generator.subschema_for::<VariableSpec>(),
        })
    }
}

/// The tool restriction of one preset. Restrictions along an `extends` chain intersect.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolsSpec {
    /// Tool names or globs to keep visible (absent: every tool; `[]`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub allow: Option<Vec<Spanned<String>>>,
    /// Tool names or globs to hide (applied after `allow`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub deny: Option<Vec<Spanned<String>>>,
    /// Explicit wire order; exactly one `<rest>` stands for the unlisted visible tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub order: Option<Vec<Spanned<String>>>,
}

impl ToolsSpec {
    /// `tools: {}` — none of `allow`, `deny`, `order` given (an `empty-restriction`).
    pub fn is_empty(&self) -> bool {
        self.allow.is_none() && self.deny.is_none() && self.order.is_none()
    }
}

/// Which struct of the format a set of allowed keys belongs to, for messages such as
/// "unknown key `x` in a section". Kept next to the types so the lists stay in sync
/// (a unit test checks them against serde's own lists).
pub(crate) const KEY_SETS: &[(&str, &[&str])] = &[
    (
        "the preset file",
        &[
            "version",
            "name",
            "description",
            "extends",
            "model",
            "persona",
            "contexts",
            "variables",
            "tools",
            "budget",
            "passEnv",
            "sandbox",
            "allowRead",
            "mcpServers",
            "commands",
            "permissions",
            "hooks",
            "limits",
            "output",
            "checks",
            "locale",
            "texts",
        ],
    ),
    (
        "`model`",
        &[
            "provider",
            "name",
            "baseUrl",
            "apiKeyEnv",
            "maxTokens",
            "strictTools",
            "allowInsecure",
            "temperature",
            "topP",
            "seed",
            "stop",
            "reasoningEffort",
            "thinkingBudget",
        ],
    ),
    ("`limits`", &["maxSteps", "maxToolCalls"]),
    ("`output`", &["schema", "schemaFile", "retries"]),
    (
        "`persona`",
        &["includeRuntimeContext", "sections", "remove"],
    ),
    (
        "a section",
        &[
            "name", "order", "text", "textFile", "complete", "when", "template", "override",
        ],
    ),
    (
        "a context",
        &["name", "order", "text", "textFile", "template", "override"],
    ),
    (
        "a variable",
        &[
            "description",
            "type",
            "enum",
            "default",
            "required",
            "volatile",
        ],
    ),
    ("`tools`", &["allow", "deny", "order"]),
    (
        "`budget`",
        &["maxSystemTokens", "maxToolTokens", "maxContextTokens"],
    ),
    (
        "an MCP server",
        &[
            "command",
            "url",
            "passEnv",
            "env",
            "headers",
            "startupTimeout",
            "toolTimeout",
            "readOnly",
            "tools",
            "override",
        ],
    ),
    ("an MCP tool's settings", &["readOnly"]),
    ("a header", &["fromEnv", "prefix", "value"]),
    (
        "a command tool",
        &[
            "description",
            "parameters",
            "run",
            "readOnly",
            "timeout",
            "passEnv",
            "env",
            "stderr",
            "override",
        ],
    ),
    ("`permissions`", &["deny", "ask", "allow", "override"]),
    (
        "`hooks`",
        &["preToolUse", "postToolUse", "stop", "userPromptSubmit"],
    ),
    ("a hook", &["match", "run", "timeout", "onError"]),
    ("a check", &["run", "retries", "timeout"]),
    ("the project config", &["presetDirs", "lock", "locale"]),
];

/// Where a set of allowed keys belongs ("`persona`", "a section", ...), if known.
pub(crate) fn key_set_owner(expected: &[&str]) -> Option<&'static str> {
    KEY_SETS
        .iter()
        .find(|(_, keys)| keys.len() == expected.len() && keys.iter().all(|k| expected.contains(k)))
        .map(|(owner, _)| *owner)
}

/// The JSON Schema (draft 2020-12) of a preset file, as committed in
/// `schemas/preset.schema.json` (editors use it through
/// `# yaml-language-server: $schema=...`).
pub fn preset_json_schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<PresetFile>();
    let mut value = schema.to_value();
    if let Some(root) = value.as_object_mut() {
        // Rebuild the root so `$schema`/`$id`/`title`/`description` come first.
        let mut ordered = serde_json::Map::new();
        if let Some(meta) = root.remove("$schema") {
            ordered.insert("$schema".into(), meta);
        }
        ordered.insert("$id".into(), PRESET_SCHEMA_ID.into());
        ordered.insert(
            "title".into(),
            "agent-presets preset file (version 1)".into(),
        );
        ordered.insert(
            "description".into(),
            "A declarative agent preset: persona sections, runtime contexts, variables, \
             model defaults and a tool restriction."
                .into(),
        );
        root.remove("title");
        root.remove("description");
        ordered.extend(std::mem::take(root));
        *root = ordered;
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_patterns() {
        for ok in ["standard", "a", "0x", "my-preset-2"] {
            assert!(is_valid_preset_name(ok), "{ok}");
        }
        for bad in ["", "-a", "A", "my_preset", "é", "a b", "a.b"] {
            assert!(!is_valid_preset_name(bad), "{bad}");
        }
        for ok in ["persona", "tool:read_file", "a.b-c_d:e", "x9"] {
            assert!(is_valid_section_name(ok), "{ok}");
        }
        for bad in ["", "9a", "Persona", "_a", "a b", "tool:Read"] {
            assert!(!is_valid_section_name(bad), "{bad}");
        }
        for ok in ["cwd", "project_name", "a1"] {
            assert!(is_valid_variable_name(ok), "{ok}");
        }
        for bad in ["", "1a", "a-b", "A", "a.b", "_a"] {
            assert!(!is_valid_variable_name(bad), "{bad}");
        }
    }

    /// The patterns in the schema and the checking functions agree.
    #[test]
    fn patterns_match_functions() {
        let cases = [
            "a", "a-b", "a_b", "a.b", "a:b", "0a", "-a", "A", "ab9", "", "_A", "LC_ALL", "A=B",
        ];
        for (pattern, check) in [
            (
                PRESET_NAME_PATTERN,
                is_valid_preset_name as fn(&str) -> bool,
            ),
            (SECTION_NAME_PATTERN, is_valid_section_name),
            (VARIABLE_NAME_PATTERN, is_valid_variable_name),
            (ENV_NAME_PATTERN, is_valid_env_name),
        ] {
            let re = regex::Regex::new(pattern).unwrap();
            for case in cases {
                assert_eq!(re.is_match(case), check(case), "{pattern} vs {case:?}");
            }
        }
    }

    /// `KEY_SETS` lists exactly the keys serde accepts for each struct.
    #[test]
    fn key_sets_match_serde() {
        fn expected_keys<T: for<'de> Deserialize<'de> + fmt::Debug>(yaml: &str) -> Vec<String> {
            match serde_saphyr::from_str::<T>(yaml) {
                Err(e) => match e.without_snippet() {
                    serde_saphyr::Error::SerdeUnknownField { expected, .. } => {
                        expected.iter().map(|s| s.to_string()).collect()
                    }
                    other => panic!("unexpected error {other}"),
                },
                Ok(v) => panic!("parsed: {v:?}"),
            }
        }
        let sets: Vec<Vec<String>> = vec![
            expected_keys::<PresetFile>("zzz: 1"),
            expected_keys::<ModelSpec>("zzz: 1"),
            expected_keys::<LimitsSpec>("zzz: 1"),
            expected_keys::<OutputSpec>("zzz: 1"),
            expected_keys::<PersonaSpec>("zzz: 1"),
            expected_keys::<SectionSpec>("zzz: 1"),
            expected_keys::<ContextSpec>("zzz: 1"),
            expected_keys::<VariableSpec>("zzz: 1"),
            expected_keys::<ToolsSpec>("zzz: 1"),
            expected_keys::<BudgetSpec>("zzz: 1"),
            expected_keys::<McpServerSpec>("zzz: 1"),
            expected_keys::<McpToolSpec>("zzz: 1"),
            expected_keys::<HeaderSpec>("zzz: 1"),
            expected_keys::<CommandSpec>("zzz: 1"),
            expected_keys::<PermissionsSpec>("zzz: 1"),
            expected_keys::<HooksSpec>("zzz: 1"),
            expected_keys::<HookSpec>("zzz: 1"),
            expected_keys::<CheckSpec>("zzz: 1"),
            // The project config (project/config.rs checks its own spec against this row).
            ["presetDirs", "lock", "locale"].map(String::from).to_vec(),
        ];
        assert_eq!(sets.len(), KEY_SETS.len());
        for (got, (owner, keys)) in sets.iter().zip(KEY_SETS) {
            let got: Vec<&str> = got.iter().map(String::as_str).collect();
            assert_eq!(&got, keys, "{owner}");
            assert_eq!(key_set_owner(&got), Some(*owner));
        }
    }

    #[test]
    fn schema_has_id_and_patterns() {
        let schema = preset_json_schema();
        assert_eq!(schema["$id"], PRESET_SCHEMA_ID);
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["name"]["pattern"], PRESET_NAME_PATTERN);
        assert_eq!(schema["properties"]["version"]["const"], 1);
        let text = serde_json::to_string(&schema).unwrap();
        assert!(text.contains(SECTION_NAME_PATTERN));
        assert!(text.contains(VARIABLE_NAME_PATTERN));
    }
}
