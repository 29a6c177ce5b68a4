//! What people copy from the tools they know: keys and values of Claude Code agent
//! frontmatter, Copilot custom agents (`.agent.md`), goose recipes, Codex's
//! `config.toml` and `.mcp.json`, each mapped to this format's way of saying it.
//!
//! One table ([`FOREIGN_KEYS`], [`FOREIGN_TOOLS`]) serves the shape check's help for an
//! unknown key (a foreign key wins over "did you mean": `allowed-tools` is not a typo of
//! `allowRead`) and `agent-presets import` (`crate::import`: the help of each field it
//! does not carry, tool names, model names and providers). Data in, text out: no I/O here.

/// Where a foreign key was met: the owner words of the shape check's unknown-key
/// message ("the preset file", "an MCP server", ...).
const TOP: &str = "the preset file";
const SERVER: &str = "an MCP server";

/// The owner [`key_help`] knows a key of the top level by (for `import`).
pub(crate) const PRESET_OWNER: &str = TOP;
/// The owner [`key_help`] knows a key of one MCP server by (for `import`).
pub(crate) const SERVER_OWNER: &str = SERVER;

/// How the help writes the fix.
#[derive(Clone, Copy, Debug)]
enum Write {
    /// `tools: {allow: [...]}` from the value's tool names.
    Allow,
    /// `tools: {deny: [...]}` from the value's tool names.
    Deny,
    /// A `persona` section holding the value's text.
    Persona,
    /// The `mcpServers` mapping (same server shape, `command` as one list).
    Servers,
    /// `command:` as one list: the program (the sibling `command`) and these arguments.
    Argv,
    /// Another key of ours holds it: `(key, note)`.
    Rename(&'static str, &'static str),
    /// Nothing of ours: what to do instead.
    Say(&'static str),
}

/// A key of another tool's format.
struct ForeignKey {
    key: &'static str,
    /// The mapping it is met in (an owner string of the shape check).
    owner: &'static str,
    /// Whose key it is, for the message: "Claude Code's".
    from: &'static str,
    write: Write,
}

const fn key(
    key: &'static str,
    owner: &'static str,
    from: &'static str,
    write: Write,
) -> ForeignKey {
    ForeignKey {
        key,
        owner,
        from,
        write,
    }
}

const CLAUDE: &str = "Claude Code's";
const GOOSE: &str = "goose's";
const CODEX: &str = "Codex's";
const COPILOT: &str = "Copilot's";
const MCP_JSON: &str = "`.mcp.json`'s";

/// The table of foreign keys. Sorted by owner, then as met in the tools' documentation.
const FOREIGN_KEYS: &[ForeignKey] = &[
    key("allowed-tools", TOP, CLAUDE, Write::Allow),
    key("allowedTools", TOP, CLAUDE, Write::Allow),
    key("disallowed-tools", TOP, CLAUDE, Write::Deny),
    key("disallowedTools", TOP, CLAUDE, Write::Deny),
    key("system_prompt", TOP, "a system prompt key", Write::Persona),
    key("systemPrompt", TOP, "a system prompt key", Write::Persona),
    key("system", TOP, "a system prompt key", Write::Persona),
    key("instructions", TOP, GOOSE, Write::Persona),
    key("developer_instructions", TOP, CODEX, Write::Persona),
    key(
        "prompt",
        TOP,
        GOOSE,
        Write::Say(
            "goose's `prompt` is the first user message, not the system prompt: a preset holds no \
             conversation, so give it to `agent-presets run NAME \"...\"` as the task; \
             for standing instructions write `persona: {sections: [{name: main, order: 0, text: ...}]}`",
        ),
    ),
    key(
        "title",
        TOP,
        GOOSE,
        Write::Rename("description", "a preset's `name` is its file stem"),
    ),
    key("extensions", TOP, GOOSE, Write::Servers),
    key("mcp_servers", TOP, CODEX, Write::Servers),
    key("mcp-servers", TOP, COPILOT, Write::Servers),
    key("servers", TOP, "VS Code's `mcp.json`", Write::Servers),
    key(
        "parameters",
        TOP,
        GOOSE,
        Write::Rename(
            "variables",
            "each `key` becomes a variable: `variables: {KEY: {description: ..., required: true}}`; `{{ KEY }}` in a section's text reads it",
        ),
    ),
    key(
        "model_provider",
        TOP,
        CODEX,
        Write::Rename("model", "write `model: {provider: openai, name: ...}`"),
    ),
    key(
        "sandbox_mode",
        TOP,
        CODEX,
        Write::Rename(
            "sandbox",
            "`sandbox: read-only`, `workspace-write` or `full-access` (Codex's `danger-full-access`)",
        ),
    ),
    key(
        "approval_policy",
        TOP,
        CODEX,
        Write::Say(
            "there is no approval policy key: tools marked `readOnly: true` run without asking, others ask \
             on a terminal (`run --yes` approves all); remove it",
        ),
    ),
    key(
        "permissionMode",
        TOP,
        CLAUDE,
        Write::Say(
            "there is no permission mode key: choose what commands may touch with `sandbox: read-only` or \
             `workspace-write`; tools marked `readOnly: true` run without asking; remove it",
        ),
    ),
    key(
        "color",
        TOP,
        CLAUDE,
        Write::Say("a preset has no display colour: remove it"),
    ),
    key(
        "target",
        TOP,
        COPILOT,
        Write::Say("a preset runs wherever `agent-presets run` runs it: remove it"),
    ),
    key(
        "handoffs",
        TOP,
        COPILOT,
        Write::Say(
            "a preset does not hand off to another agent: remove it (run the other preset yourself)",
        ),
    ),
    key(
        "argument-hint",
        TOP,
        COPILOT,
        Write::Rename(
            "description",
            "say there what the task given to `run` should be",
        ),
    ),
    key(
        "author",
        TOP,
        GOOSE,
        Write::Say("a preset has no author key: write it as a YAML comment (`# author: ...`)"),
    ),
    key(
        "activities",
        TOP,
        GOOSE,
        Write::Say(
            "a preset has no suggested activities: put them in `description` or a YAML comment",
        ),
    ),
    key(
        "settings",
        TOP,
        GOOSE,
        Write::Rename(
            "model",
            "`goose_provider`/`goose_model` become `model: {provider: ..., name: ...}`",
        ),
    ),
    // `.mcp.json`, goose and Codex server keys, inside `mcpServers.<name>`.
    key("args", SERVER, MCP_JSON, Write::Argv),
    key(
        "type",
        SERVER,
        MCP_JSON,
        Write::Say(
            "remove it: `command: [...]` is a stdio server and `url: https://...` a Streamable HTTP one",
        ),
    ),
    key(
        "transport",
        SERVER,
        "a server transport key",
        Write::Say(
            "remove it: `command: [...]` is a stdio server and `url: https://...` a Streamable HTTP one",
        ),
    ),
    key(
        "cmd",
        SERVER,
        GOOSE,
        Write::Rename("command", "the program, then each argument, as one list"),
    ),
    key("uri", SERVER, GOOSE, Write::Rename("url", "")),
    key("httpUrl", SERVER, "Gemini CLI's", Write::Rename("url", "")),
    key("serverUrl", SERVER, "Windsurf's", Write::Rename("url", "")),
    key(
        "envs",
        SERVER,
        GOOSE,
        Write::Rename("env", "literal values only; secrets go in `passEnv`"),
    ),
    key(
        "env_keys",
        SERVER,
        GOOSE,
        Write::Rename(
            "passEnv",
            "the names of the variables the server gets from your environment",
        ),
    ),
    key(
        "env_vars",
        SERVER,
        CODEX,
        Write::Rename(
            "passEnv",
            "the names of the variables the server gets from your environment",
        ),
    ),
    key(
        "timeout",
        SERVER,
        GOOSE,
        Write::Rename("toolTimeout", "a duration such as `300s`"),
    ),
    key(
        "startup_timeout_sec",
        SERVER,
        CODEX,
        Write::Rename("startupTimeout", "a duration such as `10s`"),
    ),
    key(
        "tool_timeout_sec",
        SERVER,
        CODEX,
        Write::Rename("toolTimeout", "a duration such as `60s`"),
    ),
    key(
        "bearer_token_env_var",
        SERVER,
        CODEX,
        Write::Rename(
            "headers",
            "`headers: {Authorization: {fromEnv: NAME, prefix: \"Bearer \"}}`",
        ),
    ),
    key(
        "cwd",
        SERVER,
        MCP_JSON,
        Write::Say(
            "a stdio server always starts in the workspace root: remove it, or `cd` in a wrapper script the list runs",
        ),
    ),
    key(
        "enabled",
        SERVER,
        "a server switch",
        Write::Say("a declared server is on: remove the key, or remove the server to turn it off"),
    ),
    key(
        "disabled",
        SERVER,
        "a server switch",
        Write::Say("a declared server is on: remove the key, or remove the server to turn it off"),
    ),
    key(
        "alwaysAllow",
        SERVER,
        "a client's auto-approve list",
        Write::Say(
            "mark those tools `readOnly` instead: `tools: {TOOL: {readOnly: true}}` (or `readOnly: true` for the whole server)",
        ),
    ),
    key(
        "autoApprove",
        SERVER,
        "a client's auto-approve list",
        Write::Say(
            "mark those tools `readOnly` instead: `tools: {TOOL: {readOnly: true}}` (or `readOnly: true` for the whole server)",
        ),
    ),
];

/// Every foreign key with the mapping it is met in: `(owner, key)` (a test checks
/// none is ours).
#[cfg(test)]
pub(crate) fn foreign_keys() -> impl Iterator<Item = (&'static str, &'static str)> {
    FOREIGN_KEYS.iter().map(|f| (f.owner, f.key))
}

/// Tool names of other agents → the built-in tool that does the same (`None`: no
/// built-in does; the help says what to do instead).
pub(crate) const FOREIGN_TOOLS: &[(&str, Option<&str>)] = &[
    // Claude Code.
    ("Read", Some("read_file")),
    ("Write", Some("write_file")),
    ("Edit", Some("edit_file")),
    ("MultiEdit", Some("edit_file")),
    ("Bash", Some("bash")),
    ("Grep", Some("grep")),
    ("Glob", Some("glob")),
    ("LS", Some("list_dir")),
    ("TodoWrite", Some("todo_write")),
    ("TodoRead", Some("todo_write")),
    ("WebFetch", None),
    ("WebSearch", None),
    ("NotebookEdit", None),
    ("NotebookRead", Some("read_file")),
    ("Task", None),
    // Copilot custom agents' tool aliases, Codex and goose's developer extension.
    ("read", Some("read_file")),
    ("edit", Some("edit_file")),
    ("write", Some("write_file")),
    ("search", Some("grep")),
    ("shell", Some("bash")),
    ("execute", Some("bash")),
    ("runInTerminal", Some("bash")),
    ("terminal", Some("bash")),
    ("todo", Some("todo_write")),
    ("ls", Some("list_dir")),
    ("text_editor", Some("edit_file")),
    ("web", None),
    ("fetch", None),
    ("agent", None),
];

/// What to write instead of a foreign tool name: the built-in, or `None` when there is
/// none (or the name is not a known foreign one).
pub(crate) fn tool_equivalent(name: &str) -> Option<Option<&'static str>> {
    FOREIGN_TOOLS
        .iter()
        .find(|(foreign, _)| *foreign == name)
        .map(|(_, ours)| *ours)
}

/// Help for a foreign tool name in `tools`, or `None` when `name` is nobody's.
pub(crate) fn tool_help(name: &str) -> Option<String> {
    match tool_equivalent(name)? {
        Some(ours) => Some(format!(
            "`{name}` is another agent's name for `{ours}`: write `{ours}`"
        )),
        None => Some(format!(
            "`{name}` is another agent's tool; no built-in tool does this: declare an MCP server that \
             does (`mcpServers:`) and allow its tools (`mcp__<server>__*`), or remove `{name}`"
        )),
    }
}

/// Tool names written the way another agent writes them (`Read, Grep` or
/// `[read, search]`), as ours, in order, without repeats; names without an equivalent
/// are dropped (`unmapped` gets them), MCP-style names (`server/tool`) too.
pub(crate) fn map_tools(names: &[&str], unmapped: &mut Vec<String>) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for name in names {
        let name = name.trim();
        if name.is_empty() {
            continue;
        }
        let ours = tool_equivalent(name).flatten().or_else(|| {
            super::builtin::BUILTIN_TOOL_NAMES
                .iter()
                .copied()
                .find(|b| *b == name)
        });
        match ours {
            Some(ours) if !out.contains(&ours) => out.push(ours),
            Some(_) => {}
            None => unmapped.push(name.to_owned()),
        }
    }
    out
}

/// Split a tool list written as one string (`Read, Grep, Glob` in Claude Code's
/// frontmatter) into names.
pub(crate) fn split_tool_list(text: &str) -> Vec<&str> {
    text.split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// A model name's provider, guessed from how providers spell their names; `None` when
/// the name says nothing (then the help says to choose).
pub(crate) fn provider_of(model: &str) -> Option<(&'static str, &'static str)> {
    let m = model.to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    if m.starts_with("claude") || matches!(m, "sonnet" | "opus" | "haiku") {
        Some(("anthropic", "ANTHROPIC_API_KEY"))
    } else if m.starts_with("gpt")
        || m.starts_with("o1")
        || m.starts_with("o3")
        || m.starts_with("o4")
        || m.starts_with("codex")
    {
        Some(("openai", "OPENAI_API_KEY"))
    } else if m.starts_with("deepseek") {
        Some(("deepseek", "DEEPSEEK_API_KEY"))
    } else {
        None
    }
}

/// Claude Code's model aliases, as a full name an API accepts.
pub(crate) fn full_model_name(model: &str) -> &str {
    match model {
        "sonnet" => "claude-sonnet-4-5",
        "opus" => "claude-opus-4-1",
        "haiku" => "claude-haiku-4-5",
        other => other,
    }
}

/// A model name as another tool shows it, as an API spells it: Claude Code's aliases
/// (`sonnet`), Copilot's display names (`Claude Sonnet 4.5`, `GPT-4.1 (copilot)`)
/// lowercased, spaces as `-`, and a Claude version's dots as `-` (`claude-sonnet-4-5`).
pub(crate) fn api_model_name(model: &str) -> String {
    let model = model.trim();
    let model = match model.find(" (") {
        Some(at) if model.ends_with(')') => &model[..at],
        _ => model,
    };
    let full = full_model_name(model);
    if full != model {
        return full.to_owned();
    }
    // Vendors of the known families spell their names in lowercase; others keep theirs.
    if !model.contains(' ') && provider_of(model).is_none() {
        return model.to_owned();
    }
    let name = model.to_ascii_lowercase().replace(' ', "-");
    if name.starts_with("claude") {
        name.replace('.', "-")
    } else {
        name
    }
}

/// goose's `goose_provider` as ours, with the key variable its API reads.
pub(crate) fn goose_provider(provider: &str) -> Option<(&'static str, &'static str)> {
    match provider.trim().to_ascii_lowercase().as_str() {
        "anthropic" => Some(("anthropic", "ANTHROPIC_API_KEY")),
        "openai" => Some(("openai", "OPENAI_API_KEY")),
        "deepseek" => Some(("deepseek", "DEEPSEEK_API_KEY")),
        _ => None,
    }
}

/// The `model` block to write for a model given as one string (`model: sonnet`,
/// `model: gpt-5`), as YAML flow text.
pub(crate) fn model_block(model: &str) -> String {
    let name = full_model_name(model.trim());
    match provider_of(name) {
        Some((provider, key)) => {
            format!("model: {{provider: {provider}, name: {name}, apiKeyEnv: {key}}}")
        }
        None => format!(
            "model: {{provider: openai-compatible, name: {name}, baseUrl: https://..., apiKeyEnv: ...}} \
             (or `deepseek`, `openai`, `anthropic`)"
        ),
    }
}

/// Help for `model:` written as one string.
pub(crate) fn model_string_help(model: &str) -> String {
    if model.trim() == "inherit" {
        return "`model: inherit` is Claude Code's: remove it (a preset without `model` takes its parent's, \
                or the defaults)"
            .to_owned();
    }
    format!(
        "`model` is a mapping, not a model name: write `{}`",
        model_block(model)
    )
}

/// Help for a tool list written where `tools` wants a mapping (`tools: Read, Grep` or
/// `tools: [read, search]`).
pub(crate) fn tools_list_help(names: &[&str]) -> String {
    let mut unmapped = Vec::new();
    let ours = map_tools(names, &mut unmapped);
    let mut help = format!(
        "`tools` is a mapping: write `tools: {{allow: [{}]}}`",
        ours.join(", ")
    );
    if !unmapped.is_empty() {
        help.push_str(&format!(
            " ({} {} no built-in equivalent: declare an MCP server or a command tool for {})",
            crate::suggest::list_names(unmapped.iter().map(String::as_str)),
            if unmapped.len() == 1 { "has" } else { "have" },
            if unmapped.len() == 1 { "it" } else { "them" },
        ));
    }
    help
}

/// Help for a `${VAR}` written in a value that wants `{fromEnv: ...}` (a header):
/// `Bearer ${TOKEN}` → `{fromEnv: TOKEN, prefix: "Bearer "}`.
pub(crate) fn env_reference_help(text: &str) -> Option<String> {
    let (prefix, name) = split_env_reference(text)?;
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!(", prefix: \"{prefix}\"")
    };
    Some(format!(
        "`${{{name}}}` is not expanded here: write `{{fromEnv: {name}{prefix}}}` (the value is read from \
         the environment when the server is reached)"
    ))
}

/// `Bearer ${TOKEN}` → `("Bearer ", "TOKEN")`; also `$TOKEN` and `${env:TOKEN}` (VS
/// Code). Only a reference at the end of the text.
pub(crate) fn split_env_reference(text: &str) -> Option<(&str, &str)> {
    let is_name = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    let text = text.trim_end();
    if let Some(body) = text.strip_suffix('}')
        && let Some(at) = body.rfind("${")
    {
        let name = &body[at + 2..];
        let name = name.strip_prefix("env:").unwrap_or(name);
        return is_name(name).then(|| (&text[..at], name));
    }
    let at = text.rfind('$')?;
    let name = &text[at + 1..];
    is_name(name).then(|| (&text[..at], name))
}

/// What the shape check knows of an unknown key's value and its siblings.
pub(crate) struct Seen<'a> {
    /// The value's words: a scalar's text (split where the key holds names), a list's
    /// scalar items.
    pub value: Vec<&'a str>,
    /// The value is one scalar (not a list or mapping).
    pub scalar: bool,
    /// The words of the sibling `command` (for `args`).
    pub command: Vec<&'a str>,
}

/// The help for `key` met in the mapping `owner` (an owner string of the shape check),
/// when it is another tool's key: wins over "did you mean".
pub(crate) fn key_help(owner: Option<&str>, key: &str, seen: &Seen<'_>) -> Option<String> {
    let owner = owner?;
    let entry = FOREIGN_KEYS
        .iter()
        .find(|f| f.key == key && f.owner == owner)?;
    let from = entry.from;
    let about = format!("`{key}` is {from}");
    let fix = match entry.write {
        Write::Allow | Write::Deny => {
            let words: Vec<&str> = if seen.scalar {
                seen.value.iter().flat_map(|v| split_tool_list(v)).collect()
            } else {
                seen.value.clone()
            };
            let mut unmapped = Vec::new();
            let ours = map_tools(&words, &mut unmapped);
            let which = if matches!(entry.write, Write::Allow) { "allow" } else { "deny" };
            let names = if ours.is_empty() {
                "read_file, grep".to_owned()
            } else {
                ours.join(", ")
            };
            let mut fix = format!("write `tools: {{{which}: [{names}]}}`");
            if !unmapped.is_empty() {
                fix.push_str(&format!(
                    " ({} {} no built-in equivalent)",
                    crate::suggest::list_names(unmapped.iter().map(String::as_str)),
                    if unmapped.len() == 1 { "has" } else { "have" }
                ));
            }
            fix
        }
        Write::Persona => "write the text as a section: `persona: {sections: [{name: main, order: 0, text: \"...\"}]}` \
             (or `textFile: prompt.md`)"
            .to_owned(),
        Write::Servers => "write `mcpServers:` (a mapping from server name to `{command: [program, args...]}` or \
             `{url: https://...}`)"
            .to_owned(),
        Write::Argv => {
            let mut argv: Vec<&str> = seen.command.clone();
            argv.extend(seen.value.iter().copied());
            if argv.is_empty() {
                "`command` is one list here: the program, then each argument".to_owned()
            } else {
                format!(
                    "`command` is one list here, the program then its arguments: write `command: [{}]` and remove `args`",
                    argv.join(", ")
                )
            }
        }
        Write::Rename(ours, "") => format!("write `{ours}:` instead"),
        Write::Rename(ours, note) => format!("write `{ours}:` instead ({note})"),
        Write::Say(what) => return Some(format!("{about}: {what}")),
    };
    Some(format!("{about}: {fix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_map_to_builtins() {
        for (_, ours) in FOREIGN_TOOLS {
            if let Some(ours) = ours {
                assert!(
                    crate::tools::builtin::BUILTIN_TOOL_NAMES.contains(ours),
                    "{ours}"
                );
            }
        }
        let mut unmapped = Vec::new();
        assert_eq!(
            map_tools(
                &split_tool_list("Read, Grep, Glob, WebFetch, Read"),
                &mut unmapped
            ),
            ["read_file", "grep", "glob"]
        );
        assert_eq!(unmapped, ["WebFetch"]);
    }

    #[test]
    fn env_references() {
        assert_eq!(
            split_env_reference("Bearer ${TOKEN}"),
            Some(("Bearer ", "TOKEN"))
        );
        assert_eq!(
            split_env_reference("${env:GH_TOKEN}"),
            Some(("", "GH_TOKEN"))
        );
        assert_eq!(split_env_reference("$API_KEY"), Some(("", "API_KEY")));
        assert_eq!(split_env_reference("plain"), None);
    }

    #[test]
    fn model_strings() {
        assert_eq!(
            model_block("sonnet"),
            "model: {provider: anthropic, name: claude-sonnet-4-5, apiKeyEnv: ANTHROPIC_API_KEY}"
        );
        assert!(model_string_help("inherit").contains("remove it"));
        assert_eq!(api_model_name("sonnet"), "claude-sonnet-4-5");
        assert_eq!(api_model_name("Claude Sonnet 4.5"), "claude-sonnet-4-5");
        assert_eq!(api_model_name("GPT-4.1 (copilot)"), "gpt-4.1");
        assert_eq!(api_model_name("gpt-5"), "gpt-5");
    }
}
