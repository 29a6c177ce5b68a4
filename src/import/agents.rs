//! Claude Code subagents and Copilot custom agents: frontmatter (name, description,
//! tools, model, ...) and a Markdown body that is the system prompt.

use serde_saphyr::Spanned;

use super::emit::{Draft, PersonaDraft};
use super::node::Node;
use super::{Cx, Owner, SourceKind, model_of, servers};
use crate::tools::foreign;

/// Read the frontmatter `root` and the `body` into `draft`.
pub(super) fn import(cx: &mut Cx, root: &Spanned<Node>, body: &str, draft: &mut Draft) {
    // Servers first: a Copilot tool `server/tool` names one of them.
    if cx.kind == SourceKind::CopilotAgent
        && let Some((key, value)) = root
            .value
            .entries()
            .iter()
            .find(|(k, _)| k.value == "mcp-servers")
    {
        servers::from_mapping(cx, key, value, draft);
    }
    for (key, value) in root.value.entries() {
        match key.value.as_str() {
            "name" => {}
            "description" => match value.value.text() {
                Some(text) => draft.description = Some(one_line(&text)),
                None => cx.unknown(Owner::Top, key, &value.value),
            },
            "tools" => draft.allow = tools(cx, key, value, draft),
            "disallowedTools" | "disallowed-tools" if cx.kind == SourceKind::ClaudeAgent => {
                draft.deny = tools(cx, key, value, draft).unwrap_or_default();
            }
            "model" => draft.model = model_of(cx, key, &value.value),
            "mcp-servers" if cx.kind == SourceKind::CopilotAgent => {}
            _ => cx.unknown(Owner::Top, key, &value.value),
        }
    }
    let body = body.trim();
    if !body.is_empty() {
        let verbatim = ["{{", "{%", "{#"].iter().any(|t| body.contains(t));
        draft.persona = Some(PersonaDraft {
            text: body.to_owned(),
            template: !verbatim,
        });
    }
}

/// A description on one line (a folded or literal block joined).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The tool names of `tools:` (a comma-separated string or a list) as ours; each name
/// with no equivalent is a warning at the value. `None`: every tool (`*`).
fn tools(
    cx: &mut Cx,
    key: &Spanned<String>,
    value: &Spanned<Node>,
    draft: &Draft,
) -> Option<Vec<String>> {
    let words: Vec<String> = match &value.value {
        Node::Seq(_) => value.value.words(),
        other => match other.text() {
            Some(text) => foreign::split_tool_list(&text)
                .into_iter()
                .map(str::to_owned)
                .collect(),
            None => {
                cx.unknown(Owner::Top, key, other);
                return None;
            }
        },
    };
    let mut ours: Vec<String> = Vec::new();
    for word in &words {
        // Copilot's `server/tool` and `server/*`: a tool of a server it declares.
        if let Some((server, tool)) = word.split_once('/')
            && let Some(declared) = draft.servers.iter().find(|s| s.original == server)
        {
            let name = format!("mcp__{}__{tool}", declared.name);
            if !ours.contains(&name) {
                ours.push(name);
            }
            continue;
        }
        if word == "*" {
            continue;
        }
        let mut unmapped = Vec::new();
        for t in foreign::map_tools(&[word.as_str()], &mut unmapped) {
            if !ours.iter().any(|o| o == t) {
                ours.push(t.to_owned());
            }
        }
        for name in unmapped {
            let help = foreign::tool_help(&name).unwrap_or_else(|| {
                format!(
                    "no built-in tool is `{name}`: declare an MCP server or a command tool that does its work, \
                     and allow it in `tools.allow`"
                )
            });
            cx.not_carried_at(
                value,
                format!(
                    "the tool `{name}` of `{}` is not carried: it is left out",
                    key.value
                ),
                help,
            );
        }
    }
    // `*`: every tool, no restriction.
    (!words.iter().any(|w| w == "*")).then_some(ours)
}
