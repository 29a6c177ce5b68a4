//! MCP servers as other tools declare them: `.mcp.json`'s (and VS Code's) `mcpServers`
//! / `servers`, Copilot's `mcp-servers`, goose's stdio and HTTP extensions, each as an
//! `mcpServers` entry.

use serde_saphyr::Spanned;

use super::emit::{Draft, HeaderDraft, ServerDraft};
use super::node::Node;
use super::{Cx, Owner};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::tools::foreign;

/// An `.mcp.json`: its servers, in a preset that extends `standard`.
pub(super) fn import_mcp_json(
    cx: &mut Cx,
    root: &Spanned<Node>,
    draft: &mut Draft,
) -> Result<(), Vec<Diagnostic>> {
    let Node::Map(entries) = &root.value else {
        return Err(vec![
            Diagnostic::new(
                DiagnosticKind::WrongType,
                format!(
                    "`{}` is {}, not a JSON object",
                    cx.place.file,
                    root.value.what()
                ),
            )
            .at(cx.place.span(&root.referenced)),
        ]);
    };
    let mut found = false;
    for (key, value) in entries {
        match key.value.as_str() {
            "mcpServers" | "servers" => {
                found = true;
                from_mapping(cx, key, value, draft);
            }
            _ => cx.unknown(Owner::Other("an `.mcp.json`"), key, &value.value),
        }
    }
    if !found {
        return Err(vec![
            Diagnostic::new(
                DiagnosticKind::MissingField,
                format!("`{}` declares no servers: it has no `mcpServers`", cx.place.file),
            )
            .at(cx.place.span(&root.referenced))
            .help("an `.mcp.json` is `{\"mcpServers\": {\"NAME\": {\"command\": \"...\", \"args\": [...]}}}`"),
        ]);
    }
    draft.description = Some(format!("The MCP servers of {}.", cx.place.file));
    Ok(())
}

/// A mapping from server name to a server (`mcpServers`, `mcp-servers`).
pub(super) fn from_mapping(
    cx: &mut Cx,
    key: &Spanned<String>,
    value: &Spanned<Node>,
    draft: &mut Draft,
) {
    let Node::Map(entries) = &value.value else {
        cx.not_carried(
            key,
            format!(
                "`{}` is {}, not a mapping of servers: it is left out",
                key.value,
                value.value.what()
            ),
            "write `mcpServers: {NAME: {command: [program, args...]}}`".to_owned(),
        );
        return;
    };
    for (name, server) in entries {
        let Node::Map(fields) = &server.value else {
            cx.not_carried(
                name,
                format!(
                    "the server `{}` is {}, not a mapping: it is left out",
                    name.value,
                    server.value.what()
                ),
                "a server is `{command: ..., args: [...]}` or `{url: https://...}`".to_owned(),
            );
            continue;
        };
        let mut draft_server = new_server(draft, &name.value);
        let mut program: Vec<String> = Vec::new();
        let mut args: Vec<String> = Vec::new();
        for (k, v) in fields {
            match k.value.as_str() {
                "command" => program = v.value.words(),
                "args" => args = v.value.words(),
                "url" => draft_server.url = v.value.text(),
                "env" => env(cx, k, v, &mut draft_server),
                "headers" => headers(cx, k, v, &mut draft_server),
                "type" => match v.value.text().as_deref() {
                    Some("stdio" | "local" | "http" | "streamable-http" | "streamableHttp") => {}
                    _ => cx.not_carried_at(
                        v,
                        format!(
                            "the server `{}`'s transport `{}` is not carried",
                            name.value,
                            v.value.text().unwrap_or_default()
                        ),
                        "a preset's server is `command: [...]` (stdio) or `url: https://...` (Streamable HTTP): \
                         declare the server over one of those"
                            .to_owned(),
                    ),
                },
                // Copilot: which of the server's tools the agent sees; `*` is all.
                "tools" if v.value.words() == ["*"] => {}
                "tools" => cx.not_carried(
                    k,
                    format!("`tools` of the server `{}` is not carried: every tool it lists is visible", name.value),
                    format!(
                        "allow only those in the preset's `tools.allow` (`mcp__{}__NAME`)",
                        draft_server.name
                    ),
                ),
                _ => cx.unknown(Owner::Server, k, &v.value),
            }
        }
        program.extend(args);
        draft_server.command = program;
        draft.servers.push(draft_server);
    }
}

/// A new server named (as our pattern allows) after `original`.
pub(super) fn new_server(draft: &Draft, original: &str) -> ServerDraft {
    let mut name = server_name(original);
    let base = name.clone();
    let mut n = 2;
    while draft.servers.iter().any(|s| s.name == name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    ServerDraft {
        note: (name != original).then(|| format!("{original:?} in the input")),
        name,
        original: original.to_owned(),
        ..ServerDraft::default()
    }
}

/// A server name matching `^[a-z][a-z0-9_-]*$`, without `__` or a trailing `_` (which
/// could alias another server's tools), at most 48 characters.
fn server_name(original: &str) -> String {
    let mut out = String::new();
    for c in original.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
            c
        } else {
            '-'
        };
        if c == '-' && (out.is_empty() || out.ends_with('-')) {
            continue;
        }
        if out.is_empty() && c.is_ascii_digit() {
            out.push('s');
        }
        out.push(c);
    }
    let mut out: String = out.trim_end_matches('-').chars().take(48).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "server".to_owned()
    } else {
        out
    }
}

/// `env:` of a server: literal values stay `env`, a `${NAME}` of the same name becomes
/// `passEnv`, any other reference is a warning.
pub(super) fn env(
    cx: &mut Cx,
    key: &Spanned<String>,
    value: &Spanned<Node>,
    server: &mut ServerDraft,
) {
    for (k, text) in text_entries(cx, key, value, "variable", "an `env` value is text") {
        match foreign::split_env_reference(&text) {
            Some(("", name)) if name == k.value => {
                if !server.pass_env.iter().any(|p| p == name) {
                    server.pass_env.push(name.to_owned());
                }
            }
            Some((_, name)) => cx.not_carried(
                k,
                format!(
                    "the variable `{}` = `{text}` is not carried: a server gets a variable of your environment \
                     under its own name only",
                    k.value
                ),
                format!(
                    "pass `{name}` with `passEnv: [{name}]` and have the server read `{name}`, or set `{}` in your \
                     environment and write `passEnv: [{}]`",
                    k.value, k.value
                ),
            ),
            None => server.env.push((k.value.clone(), text)),
        }
    }
}

/// The entries of the mapping `value` (under `key`) whose values are text; a value that
/// is not is a warning (`the WHAT `k` is …, not text`, with `help`), and a `value` that
/// is no mapping is an unknown shape.
fn text_entries<'v>(
    cx: &mut Cx,
    key: &Spanned<String>,
    value: &'v Spanned<Node>,
    what: &str,
    help: &str,
) -> Vec<(&'v Spanned<String>, String)> {
    let Node::Map(entries) = &value.value else {
        cx.unknown(Owner::Server, key, &value.value);
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in entries {
        match v.value.text() {
            Some(text) => out.push((k, text)),
            None => cx.not_carried(
                k,
                format!(
                    "the {what} `{}` is {}, not text: it is left out",
                    k.value,
                    v.value.what()
                ),
                help.to_owned(),
            ),
        }
    }
    out
}

/// `headers:` of a server: `Bearer ${TOKEN}` becomes `{fromEnv: TOKEN, prefix: "Bearer "}`.
fn headers(cx: &mut Cx, key: &Spanned<String>, value: &Spanned<Node>, server: &mut ServerDraft) {
    for (k, text) in text_entries(cx, key, value, "header", "a header is text") {
        let header = match foreign::split_env_reference(&text) {
            Some((prefix, name)) => HeaderDraft::FromEnv {
                name: name.to_owned(),
                prefix: prefix.to_owned(),
            },
            None => HeaderDraft::Value(text),
        };
        server.headers.push((k.value.clone(), header));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_follow_the_pattern() {
        assert_eq!(server_name("github"), "github");
        assert_eq!(server_name("GitHub MCP"), "github-mcp");
        assert_eq!(server_name("my__server_"), "my-server");
        assert_eq!(server_name("7zip"), "s7zip");
        assert_eq!(server_name("!!"), "server");
    }
}
