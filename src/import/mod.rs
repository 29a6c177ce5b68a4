//! `agent-presets import`: a config written for another tool — a Claude Code subagent
//! (`.claude/agents/NAME.md`), a GitHub Copilot custom agent
//! (`.github/agents/NAME.agent.md`), a goose recipe (`.yaml`) or an `.mcp.json` —
//! turned into a preset that extends `standard`, with every field it could not carry
//! reported as an `import-not-carried` warning at its line and column in the input.
//!
//! Data in, text out: [`import`] reads the input's text and returns the preset's YAML and
//! the warnings; reading the file, validating the result with the catalog (as `validate`
//! does) and writing it are the CLI's (`cli/import.rs`). What another tool's key, tool
//! name or model alias means here comes from `tools/foreign.rs`, the table the
//! shape check's help reads too.

use std::path::Path;
use std::sync::Arc;

use serde_saphyr::Spanned;

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::preset::spec::is_valid_preset_name;
use crate::tools::foreign;

mod agents;
mod emit;
mod goose;
mod node;
mod servers;

use emit::Draft;
use node::{Node, Place};

/// What kind of file an import read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// A Claude Code subagent: frontmatter and a Markdown system prompt.
    ClaudeAgent,
    /// A GitHub Copilot custom agent (`.agent.md`): frontmatter and Markdown instructions.
    CopilotAgent,
    /// A goose recipe (YAML).
    GooseRecipe,
    /// An `.mcp.json` (or VS Code's `mcp.json`): MCP servers.
    McpJson,
}

impl SourceKind {
    /// `claude-agent`, `copilot-agent`, `goose-recipe`, `mcp-json`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::ClaudeAgent => "claude-agent",
            SourceKind::CopilotAgent => "copilot-agent",
            SourceKind::GooseRecipe => "goose-recipe",
            SourceKind::McpJson => "mcp-json",
        }
    }

    /// "a Claude Code subagent", for messages.
    pub fn describe(self) -> &'static str {
        match self {
            SourceKind::ClaudeAgent => "a Claude Code subagent",
            SourceKind::CopilotAgent => "a GitHub Copilot custom agent",
            SourceKind::GooseRecipe => "a goose recipe",
            SourceKind::McpJson => "an `.mcp.json`",
        }
    }
}

/// What an import made.
#[derive(Clone, Debug)]
pub struct Imported {
    /// What the input was.
    pub kind: SourceKind,
    /// The preset's name (its file is `NAME.yaml`).
    pub name: String,
    /// The preset file's text.
    pub yaml: String,
    /// Every field not carried (`import-not-carried` warnings, located in the input).
    pub warnings: Vec<Diagnostic>,
}

/// Turn `text`, the file shown as `display`, into a preset. `name` is the name asked
/// for (`--name`); without it, the input's `name`, else its file stem, made a valid
/// preset name. An input that cannot be read as any of the kinds (its frontmatter or
/// JSON broken, a kind no one can tell) is an error, located where it can be.
pub fn import(display: &str, text: &str, name: Option<&str>) -> Result<Imported, Vec<Diagnostic>> {
    if let Some(name) = name
        && !is_valid_preset_name(name)
    {
        return Err(vec![
            Diagnostic::new(
                DiagnosticKind::Io,
                format!("`--name {name}` is not a preset name"),
            )
            .help(format!(
                "a preset name is lowercase letters, digits and `-`, starting with a letter or digit: `--name {}`",
                valid_name(name)
            )),
        ]);
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let kind = detect(display, text).ok_or_else(|| {
        vec![
            Diagnostic::new(
                DiagnosticKind::Io,
                format!("cannot tell what kind of file `{display}` is"),
            )
            .help(
                "`import` reads a Claude Code subagent (`.claude/agents/NAME.md`), a Copilot custom agent \
                 (`.github/agents/NAME.agent.md`), a goose recipe (`NAME.yaml`) or an `.mcp.json`",
            ),
        ]
    })?;
    let file: Arc<str> = Arc::from(display);
    let mut cx = Cx {
        kind,
        place: Place {
            file: Arc::clone(&file),
            line_offset: 0,
        },
        warnings: Vec::new(),
    };
    let mut draft = Draft::default();
    let declared = match kind {
        SourceKind::ClaudeAgent | SourceKind::CopilotAgent => {
            let (front, offset, body) = frontmatter(&file, text)?;
            cx.place.line_offset = offset;
            let root = if front.trim().is_empty() {
                let unknown = serde_saphyr::Location::UNKNOWN;
                Spanned::new(Node::Map(Vec::new()), unknown, unknown)
            } else {
                let root = parse_yaml(&cx.place, front, "frontmatter")?;
                as_mapping(&cx.place, root, "the frontmatter")?
            };
            agents::import(&mut cx, &root, body, &mut draft);
            root.value.get("name").and_then(|n| n.value.text())
        }
        SourceKind::GooseRecipe => {
            let root = parse_yaml(&cx.place, text, "recipe")?;
            let root = as_mapping(&cx.place, root, "a goose recipe")?;
            goose::import(&mut cx, &root, &mut draft);
            None
        }
        SourceKind::McpJson => {
            let root = parse_json(&cx.place, text)?;
            servers::import_mcp_json(&mut cx, &root, &mut draft)?;
            None
        }
    };
    draft.name = match name {
        Some(name) => name.to_owned(),
        None => valid_name(declared.as_deref().unwrap_or_else(|| stem(display))),
    };
    // A comment line: no line break or control character of the file name in it.
    let shown = display.replace(char::is_control, "?");
    let mut header = vec![format!(
        "Imported by `agent-presets import` from {shown} ({}).",
        kind.describe()
    )];
    header.push(
        "Each field it could not carry was reported as an `import-not-carried` warning.".to_owned(),
    );
    header.append(&mut draft.header);
    draft.header = header;
    Ok(Imported {
        kind,
        name: draft.name.clone(),
        yaml: draft.to_yaml(),
        warnings: cx.warnings,
    })
}

/// What an import is reading, and what it found not carried so far.
pub(crate) struct Cx {
    pub(crate) kind: SourceKind,
    pub(crate) place: Place,
    pub(crate) warnings: Vec<Diagnostic>,
}

/// The mapping an unknown key is met in.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Owner {
    /// The top level of the agent or recipe.
    Top,
    /// One MCP server.
    Server,
    /// Anything else; named for the message.
    Other(&'static str),
}

impl Cx {
    /// Whose format it is, for messages: "Claude Code's".
    fn whose(&self) -> &'static str {
        match self.kind {
            SourceKind::ClaudeAgent => "Claude Code's",
            SourceKind::CopilotAgent => "Copilot's",
            SourceKind::GooseRecipe => "goose's",
            SourceKind::McpJson => "`.mcp.json`'s",
        }
    }

    /// `key` (or what it holds) is not carried: a warning at the key.
    pub(crate) fn not_carried(&mut self, key: &Spanned<String>, message: String, help: String) {
        let d = Diagnostic::new(DiagnosticKind::ImportNotCarried, message)
            .at(self.place.key_span(key))
            .help(help);
        self.warnings.push(d);
    }

    /// `what` (an item of a value) is not carried: a warning at `at`.
    pub(crate) fn not_carried_at<T>(&mut self, at: &Spanned<T>, message: String, help: String) {
        let d = Diagnostic::new(DiagnosticKind::ImportNotCarried, message)
            .at(self.place.span(&at.referenced))
            .help(help);
        self.warnings.push(d);
    }

    /// A key this import does not read: not carried, with the foreign-key table's help
    /// when it knows the key.
    pub(crate) fn unknown(&mut self, owner: Owner, key: &Spanned<String>, value: &Node) {
        let words = value.words();
        let seen = foreign::Seen {
            value: words.iter().map(String::as_str).collect(),
            scalar: value.text().is_some(),
            command: Vec::new(),
        };
        let table = match owner {
            Owner::Top => Some(foreign::PRESET_OWNER),
            Owner::Server => Some(foreign::SERVER_OWNER),
            Owner::Other(_) => None,
        };
        let help = foreign::key_help(table, &key.value, &seen).unwrap_or_else(|| {
            format!(
                "a preset has no key for {} `{}`: carry it by hand if it matters (docs/format.md), else leave it out",
                self.whose(),
                key.value
            )
        });
        let place = match owner {
            Owner::Top => String::new(),
            Owner::Server => " of an MCP server".to_owned(),
            Owner::Other(what) => format!(" of {what}"),
        };
        let message = format!(
            "`{}`{place} is not carried into the preset: it is left out",
            key.value
        );
        self.not_carried(key, message, help);
    }
}

/// Which kind of file `display` with `text` is: by its name first, then by its content.
pub fn detect(display: &str, text: &str) -> Option<SourceKind> {
    let path = display.replace('\\', "/");
    let file = Path::new(&path)
        .file_name()
        .map(|f| f.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if file.ends_with(".agent.md")
        || file.ends_with(".chatmode.md")
        || (file.ends_with(".md") && path.contains(".github/agents/"))
    {
        return Some(SourceKind::CopilotAgent);
    }
    if file.ends_with(".md") || file.ends_with(".markdown") {
        return Some(SourceKind::ClaudeAgent);
    }
    if file.ends_with(".json") {
        return Some(SourceKind::McpJson);
    }
    if file.ends_with(".yaml") || file.ends_with(".yml") {
        return Some(SourceKind::GooseRecipe);
    }
    let start = text.trim_start();
    if start.starts_with('{') {
        Some(SourceKind::McpJson)
    } else if text.starts_with("---") {
        Some(SourceKind::ClaudeAgent)
    } else {
        None
    }
}

/// The file name up to its first dot (`reviewer.agent.md` → `reviewer`, `.mcp.json` →
/// `mcp`).
fn stem(display: &str) -> &str {
    let file = display.rsplit(['/', '\\']).next().unwrap_or(display);
    let file = file.trim_start_matches('.');
    file.split('.').next().unwrap_or(file)
}

/// `text` made a preset name: lowercase, every run of other characters one `-`.
pub fn valid_name(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "imported".to_owned()
    } else {
        out.to_owned()
    }
}

/// The frontmatter of a Markdown agent: the YAML between the first line (`---`) and the
/// next `---` line, how many lines come before it, and the body after it.
fn frontmatter<'t>(
    file: &Arc<str>,
    text: &'t str,
) -> Result<(&'t str, u32, &'t str), Vec<Diagnostic>> {
    let at_start = || crate::diagnostic::Span::new(Arc::clone(file), 1, 1);
    let first_end = text.find('\n').unwrap_or(text.len());
    if text[..first_end].trim_end() != "---" {
        return Err(vec![
            Diagnostic::new(
                DiagnosticKind::YamlSyntax,
                "no frontmatter: an agent file starts with a `---` line",
            )
            .at(at_start())
            .help(
                "write the agent's settings between two `---` lines at the top (`name:`, `description:`, \
                 `tools:`), then its prompt",
            ),
        ]);
    }
    let rest_start = (first_end + 1).min(text.len());
    let rest = &text[rest_start..];
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if matches!(line.trim_end(), "---" | "...") {
            let front = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Ok((front, 1, body));
        }
        offset += line.len();
    }
    Err(vec![
        Diagnostic::new(
            DiagnosticKind::YamlSyntax,
            "the frontmatter opened on line 1 is never closed",
        )
        .at(at_start())
        .help("end the settings with a `---` line before the prompt"),
    ])
}

/// Parse YAML, an error located in the input.
fn parse_yaml(place: &Place, text: &str, what: &str) -> Result<Spanned<Node>, Vec<Diagnostic>> {
    node::parse(text).map_err(|(message, at)| {
        let d = Diagnostic::new(
            DiagnosticKind::YamlSyntax,
            format!("the {what} is not valid YAML: {message}"),
        );
        let span = at
            .map(|at| place.span(&at))
            .unwrap_or_else(|| place.span(&serde_saphyr::Location::UNKNOWN));
        vec![d.at(span)]
    })
}

/// The root as a mapping, else an error.
fn as_mapping(
    place: &Place,
    root: Spanned<Node>,
    what: &str,
) -> Result<Spanned<Node>, Vec<Diagnostic>> {
    match root.value {
        Node::Map(_) => Ok(root),
        // An empty frontmatter.
        Node::Null => Ok(Spanned::new(
            Node::Map(Vec::new()),
            root.referenced,
            root.defined,
        )),
        ref other => Err(vec![
            Diagnostic::new(
                DiagnosticKind::WrongType,
                format!("{what} is a mapping of keys, not {}", other.what()),
            )
            .at(place.span(&root.referenced)),
        ]),
    }
}

/// Parse JSON (checked as JSON first: YAML would take more), positions from the YAML
/// reader when it reads it.
fn parse_json(place: &Place, text: &str) -> Result<Spanned<Node>, Vec<Diagnostic>> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let line = u32::try_from(e.line()).unwrap_or(1).max(1);
        let column = u32::try_from(e.column()).unwrap_or(1).max(1);
        vec![
            Diagnostic::new(
                DiagnosticKind::YamlSyntax,
                format!("`{}` is not valid JSON: {e}", place.file),
            )
            .at(crate::diagnostic::Span::new(Arc::clone(&place.file), line, column))
            .help("an `.mcp.json` is one JSON object: `{\"mcpServers\": {\"NAME\": {\"command\": \"...\", \"args\": [...]}}}`"),
        ]
    })?;
    match node::parse(text) {
        Ok(node) => Ok(node),
        // JSON YAML cannot read (tabs before keys): without positions.
        Err(_) => Ok(from_json(&value)),
    }
}

fn from_json(value: &serde_json::Value) -> Spanned<Node> {
    use serde_json::Value;
    let unknown = serde_saphyr::Location::UNKNOWN;
    let node = match value {
        Value::Null => Node::Null,
        Value::Bool(b) => Node::Bool(*b),
        Value::Number(n) => n
            .as_i64()
            .map_or(Node::Float(n.as_f64().unwrap_or(0.0)), Node::Int),
        Value::String(s) => Node::Str(s.clone()),
        Value::Array(items) => Node::Seq(items.iter().map(from_json).collect()),
        Value::Object(map) => Node::Map(
            map.iter()
                .map(|(k, v)| (Spanned::new(k.clone(), unknown, unknown), from_json(v)))
                .collect(),
        ),
    };
    Spanned::new(node, unknown, unknown)
}

/// The model block for a model written as one string, or a warning at `key` when its
/// provider cannot be told. `inherit` (Claude Code's) is the parent's model: nothing to
/// write.
pub(crate) fn model_of(
    cx: &mut Cx,
    key: &Spanned<String>,
    value: &Node,
) -> Option<emit::ModelDraft> {
    let Some(text) = value.text() else {
        cx.not_carried(
            key,
            format!(
                "`{}` is {}, not a model name: it is left out",
                key.value,
                value.what()
            ),
            "write `model: {provider: ..., name: ...}` by hand".to_owned(),
        );
        return None;
    };
    if text.trim() == "inherit" {
        return None;
    }
    let name = foreign::api_model_name(&text);
    match foreign::provider_of(&name) {
        Some((provider, key_env)) => Some(emit::ModelDraft {
            provider: provider.to_owned(),
            name,
            api_key_env: Some(key_env.to_owned()),
            ..emit::ModelDraft::default()
        }),
        None => {
            cx.not_carried(
                key,
                format!(
                    "the model `{text}` is not carried: its provider cannot be told from its name"
                ),
                format!("write `{}`", foreign::model_block(&name)),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_valid() {
        assert_eq!(valid_name("Code Reviewer"), "code-reviewer");
        assert_eq!(valid_name("__x__"), "x");
        assert_eq!(valid_name("日本"), "imported");
        assert_eq!(stem(".github/agents/planner.agent.md"), "planner");
        assert_eq!(stem("proj/.mcp.json"), "mcp");
    }

    #[test]
    fn kinds_by_name_then_content() {
        assert_eq!(
            detect(".claude/agents/a.md", ""),
            Some(SourceKind::ClaudeAgent)
        );
        assert_eq!(
            detect(".github/agents/a.agent.md", ""),
            Some(SourceKind::CopilotAgent)
        );
        assert_eq!(detect("r.yaml", ""), Some(SourceKind::GooseRecipe));
        assert_eq!(detect(".mcp.json", ""), Some(SourceKind::McpJson));
        assert_eq!(detect("x", "{}"), Some(SourceKind::McpJson));
        assert_eq!(detect("x.txt", "hello"), None);
    }

    #[test]
    fn frontmatter_lines_count_from_the_file() {
        let text = "---\nname: a\ncolor: blue\n---\nYou review.\n";
        let out = import(".claude/agents/a.md", text, None).unwrap();
        let w = &out.warnings[0];
        let span = w.span.as_ref().unwrap();
        assert_eq!((span.line, span.column), (3, 1), "{w}");
        assert!(out.yaml.contains("You review."), "{}", out.yaml);
    }

    #[test]
    fn broken_inputs_are_errors() {
        assert!(import("a.md", "no frontmatter", None).is_err());
        assert!(import("a.md", "---\nname: [\n---\n", None).is_err());
        assert!(import(".mcp.json", "{nope", None).is_err());
        assert!(import("x.txt", "hello", None).is_err());
        assert!(import("a.md", "---\nname: a\n---\n", Some("Bad Name")).is_err());
    }
}
