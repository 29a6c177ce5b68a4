//! goose recipes: `instructions` (the system prompt), `parameters` (variables),
//! `extensions` (MCP servers), `settings` (the model), `response.json_schema` (the
//! output contract), `retry.checks` (success checks).

use serde_saphyr::Spanned;

use super::emit::{CheckDraft, Draft, ModelDraft, PersonaDraft, VariableDraft};
use super::node::Node;
use super::servers::{env, new_server};
use super::{Cx, Owner};
use crate::preset::spec::{is_valid_env_name, is_valid_variable_name};
use crate::tools::foreign;

/// Read the recipe `root` into `draft`.
pub(super) fn import(cx: &mut Cx, root: &Spanned<Node>, draft: &mut Draft) {
    let mut retries = None;
    for (key, value) in root.value.entries() {
        let v = &value.value;
        match key.value.as_str() {
            // The recipe format's version, not the agent's.
            "version" => {}
            "title" => match v.text() {
                Some(title) => draft.header.push(format!(
                    "goose recipe title: {}",
                    title.split_whitespace().collect::<Vec<_>>().join(" ")
                )),
                None => cx.unknown(Owner::Top, key, v),
            },
            "description" => match v.text() {
                Some(text) => {
                    draft.description = Some(text.split_whitespace().collect::<Vec<_>>().join(" "));
                }
                None => cx.unknown(Owner::Top, key, v),
            },
            "instructions" => match v.text() {
                Some(text) if !text.trim().is_empty() => {
                    draft.persona = Some(PersonaDraft {
                        text: text.trim().to_owned(),
                        template: true,
                    });
                }
                _ => cx.unknown(Owner::Top, key, v),
            },
            "parameters" => parameters(cx, key, value, draft),
            "extensions" => extensions(cx, key, value, draft),
            "settings" => settings(cx, value, draft),
            "response" => response(cx, value, draft),
            "retry" => retries = retry(cx, value, draft),
            _ => cx.unknown(Owner::Top, key, v),
        }
    }
    for check in &mut draft.checks {
        check.retries = retries;
    }
}

/// `parameters:` → `variables:`.
fn parameters(cx: &mut Cx, key: &Spanned<String>, value: &Spanned<Node>, draft: &mut Draft) {
    let Node::Seq(items) = &value.value else {
        cx.unknown(Owner::Top, key, &value.value);
        return;
    };
    for item in items {
        let Some(name) = item.value.get("key").and_then(|k| k.value.text()) else {
            cx.not_carried_at(
                item,
                "a parameter without a `key` is not carried".to_owned(),
                "each parameter is `{key: NAME, input_type: string, requirement: required, description: ...}`"
                    .to_owned(),
            );
            continue;
        };
        if !is_valid_variable_name(&name) {
            cx.not_carried_at(
                item,
                format!("the parameter `{name}` is not carried: a variable name is lowercase letters, digits and `_`"),
                format!("rename it (and each `{{{{ {name} }}}}` that reads it) to a name such as `{}`", name.to_ascii_lowercase().replace(|c: char| !c.is_ascii_alphanumeric(), "_")),
            );
            continue;
        }
        let mut var = VariableDraft {
            description: name.clone(),
            name: name.clone(),
            ..VariableDraft::default()
        };
        let mut required = false;
        for (k, v) in item.value.entries() {
            match k.value.as_str() {
                "key" => {}
                "description" => {
                    if let Some(text) = v.value.text() {
                        var.description = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    }
                }
                "input_type" => match v.value.text().as_deref() {
                    Some("string" | "date") => {}
                    Some("number") => var.value_type = Some("number"),
                    Some("boolean") => var.value_type = Some("boolean"),
                    Some("select") => {}
                    other => cx.not_carried_at(
                        v,
                        format!(
                            "the input type `{}` of `{name}` is not carried: the variable is text",
                            other.unwrap_or_default()
                        ),
                        "a `file` parameter is the file's contents in goose; here the value is the text given \
                         with `--var`: read the file with `read_file` instead"
                            .to_owned(),
                    ),
                },
                "requirement" => {
                    required = matches!(v.value.text().as_deref(), Some("required" | "user_prompt"));
                }
                "default" => var.default = v.value.text(),
                "options" => var.choices = v.value.words(),
                _ => cx.unknown(Owner::Other("a parameter"), k, &v.value),
            }
        }
        if var.default.is_none() {
            if required {
                var.required = true;
            } else if var.value_type.is_none() {
                // An optional text: empty unless given, so `{{ name }}` renders.
                var.default = Some(String::new());
            }
        }
        draft.variables.push(var);
    }
}

/// `extensions:` → `mcpServers:` (stdio and Streamable HTTP ones).
fn extensions(cx: &mut Cx, key: &Spanned<String>, value: &Spanned<Node>, draft: &mut Draft) {
    let Node::Seq(items) = &value.value else {
        cx.unknown(Owner::Top, key, &value.value);
        return;
    };
    for item in items {
        let name = item.value.get("name").and_then(|n| n.value.text());
        let kind = item.value.get("type").and_then(|n| n.value.text());
        let Some(name) = name else {
            cx.not_carried_at(
                item,
                "an extension without a `name` is not carried".to_owned(),
                "give it a name, or declare the server in `mcpServers:` by hand".to_owned(),
            );
            continue;
        };
        match kind.as_deref() {
            Some("stdio" | "streamable_http") => {}
            Some("builtin") => {
                let help = if name == "developer" {
                    "goose's `developer` extension is its shell and file tools: `standard`'s built-in tools \
                     (`bash`, `read_file`, `edit_file`, `write_file`, `grep`, `glob`, `list_dir`) do that work"
                        .to_owned()
                } else {
                    format!(
                        "no built-in tool does what goose's `{name}` extension does: declare an MCP server that does"
                    )
                };
                cx.not_carried_at(
                    item,
                    format!("goose's built-in extension `{name}` is not carried"),
                    help,
                );
                continue;
            }
            other => {
                cx.not_carried_at(
                    item,
                    format!(
                        "the extension `{name}` of type `{}` is not carried",
                        other.unwrap_or("?")
                    ),
                    "a preset's server is `command: [...]` (stdio) or `url: https://...` (Streamable HTTP)"
                        .to_owned(),
                );
                continue;
            }
        }
        let mut server = new_server(draft, &name);
        let mut program = Vec::new();
        let mut args = Vec::new();
        for (k, v) in item.value.entries() {
            match k.value.as_str() {
                "name" | "type" => {}
                "cmd" => program = v.value.words(),
                "args" => args = v.value.words(),
                "uri" => server.url = v.value.text(),
                "envs" => env(cx, k, v, &mut server),
                "env_keys" => {
                    for word in v.value.words() {
                        if is_valid_env_name(&word) && !server.pass_env.contains(&word) {
                            server.pass_env.push(word);
                        }
                    }
                }
                "timeout" => match &v.value {
                    Node::Int(secs) if *secs > 0 => server.tool_timeout = Some(format!("{secs}s")),
                    other => cx.unknown(Owner::Server, k, other),
                },
                _ => cx.unknown(Owner::Server, k, &v.value),
            }
        }
        program.extend(args);
        server.command = program;
        draft.servers.push(server);
    }
}

/// `settings:` → `model:` and `limits.maxSteps`.
fn settings(cx: &mut Cx, value: &Spanned<Node>, draft: &mut Draft) {
    let mut provider: Option<(&Spanned<String>, String)> = None;
    let mut model: Option<(&Spanned<String>, String)> = None;
    let mut temperature: Option<(&Spanned<String>, f64)> = None;
    for (k, v) in value.value.entries() {
        match (k.value.as_str(), &v.value) {
            ("goose_provider", v) if v.text().is_some() => {
                provider = v.text().map(|t| (k, t));
            }
            ("goose_model", v) if v.text().is_some() => model = v.text().map(|t| (k, t)),
            ("temperature", Node::Float(t)) => temperature = Some((k, *t)),
            ("temperature", Node::Int(t)) => temperature = Some((k, *t as f64)),
            ("max_turns", Node::Int(n)) if *n > 0 => {
                draft.max_steps = u32::try_from(*n).ok();
            }
            (_, v) => cx.unknown(Owner::Other("`settings`"), k, v),
        }
    }
    let Some((model_key, name)) = model else {
        if let Some((key, p)) = provider {
            cx.not_carried(
                key,
                format!("the provider `{p}` is not carried without a model name"),
                "write `model: {provider: ..., name: ...}` by hand".to_owned(),
            );
        }
        if let Some((key, _)) = temperature {
            cx.not_carried(
                key,
                "`temperature` is not carried without a model".to_owned(),
                "write `model: {provider: ..., name: ..., temperature: ...}` by hand".to_owned(),
            );
        }
        return;
    };
    let ours = provider
        .as_ref()
        .and_then(|(_, p)| foreign::goose_provider(p))
        .or_else(|| foreign::provider_of(&name));
    match ours {
        Some((provider, key_env)) => {
            draft.model = Some(ModelDraft {
                provider: provider.to_owned(),
                name,
                api_key_env: Some(key_env.to_owned()),
                temperature: temperature.map(|(_, t)| t),
                ..ModelDraft::default()
            });
        }
        None => {
            let (key, about) = match &provider {
                Some((key, p)) => (*key, format!("the provider `{p}`")),
                None => (model_key, format!("the model `{name}`")),
            };
            cx.not_carried(
                key,
                format!("{about} is not carried: no provider of this format is it"),
                format!(
                    "a local server speaking the OpenAI API is `openai-compatible`: write `{}`",
                    foreign::model_block(&name)
                ),
            );
        }
    }
}

/// `response.json_schema` → `output.schema`.
fn response(cx: &mut Cx, value: &Spanned<Node>, draft: &mut Draft) {
    for (k, v) in value.value.entries() {
        match k.value.as_str() {
            "json_schema" => draft.output_schema = Some(v.value.to_json()),
            _ => cx.unknown(Owner::Other("`response`"), k, &v.value),
        }
    }
}

/// `retry.checks` → `checks:`; the retry count, which applies to every check, returned.
fn retry(cx: &mut Cx, value: &Spanned<Node>, draft: &mut Draft) -> Option<u32> {
    let mut retries = None;
    let mut timeout = None;
    for (k, v) in value.value.entries() {
        match (k.value.as_str(), &v.value) {
            ("max_retries", Node::Int(n)) if *n >= 0 => retries = u32::try_from(*n).ok(),
            ("timeout_seconds", Node::Int(n)) if (1..=3600).contains(n) => {
                timeout = Some(format!("{n}s"));
            }
            ("checks", Node::Seq(items)) => {
                for item in items {
                    let kind = item.value.get("type").and_then(|t| t.value.text());
                    let command = item.value.get("command").and_then(|c| c.value.text());
                    match (kind.as_deref(), command) {
                        (Some("shell") | None, Some(command)) => draft.checks.push(CheckDraft {
                            run: vec!["sh".to_owned(), "-c".to_owned(), command],
                            ..CheckDraft::default()
                        }),
                        _ => cx.not_carried_at(
                            item,
                            "a check that is not `{type: shell, command: ...}` is not carried".to_owned(),
                            "write it as `checks: [{run: [program, args...]}]`".to_owned(),
                        ),
                    }
                }
            }
            ("on_failure", _) => cx.not_carried(
                k,
                "`on_failure` is not carried: a check that fails goes back to the model, nothing runs in between"
                    .to_owned(),
                "make the clean-up part of the check's own command, or of a `stop` hook".to_owned(),
            ),
            (_, v) => cx.unknown(Owner::Other("`retry`"), k, v),
        }
    }
    for check in &mut draft.checks {
        check.timeout.clone_from(&timeout);
    }
    retries
}
