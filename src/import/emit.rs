//! The preset an import writes, as a [`Draft`] of the keys it fills in, and that draft
//! as YAML text: block style, each key in the order of docs/format.md, every scalar
//! plain when YAML reads it back as the same text and double-quoted otherwise.

use std::fmt::Write as _;

/// A model block to write.
#[derive(Clone, Debug, Default)]
pub(crate) struct ModelDraft {
    pub(crate) provider: String,
    pub(crate) name: String,
    pub(crate) api_key_env: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) temperature: Option<f64>,
}

/// A variable to declare.
#[derive(Clone, Debug, Default)]
pub(crate) struct VariableDraft {
    pub(crate) name: String,
    pub(crate) description: String,
    /// `string` (left out), `integer`, `number` or `boolean`.
    pub(crate) value_type: Option<&'static str>,
    pub(crate) choices: Vec<String>,
    pub(crate) default: Option<String>,
    pub(crate) required: bool,
}

/// A header of a `url` server.
#[derive(Clone, Debug)]
pub(crate) enum HeaderDraft {
    FromEnv { name: String, prefix: String },
    Value(String),
}

/// An MCP server to declare.
#[derive(Clone, Debug, Default)]
pub(crate) struct ServerDraft {
    pub(crate) name: String,
    /// The name the input gave it.
    pub(crate) original: String,
    /// A comment written above it (the name it had).
    pub(crate) note: Option<String>,
    pub(crate) command: Vec<String>,
    pub(crate) url: Option<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) pass_env: Vec<String>,
    pub(crate) headers: Vec<(String, HeaderDraft)>,
    pub(crate) tool_timeout: Option<String>,
}

/// A success check to declare.
#[derive(Clone, Debug, Default)]
pub(crate) struct CheckDraft {
    pub(crate) run: Vec<String>,
    pub(crate) retries: Option<u32>,
    pub(crate) timeout: Option<String>,
}

/// The system prompt text the import carries: the persona section.
#[derive(Clone, Debug)]
pub(crate) struct PersonaDraft {
    pub(crate) text: String,
    /// `false`: sent verbatim (Markdown that holds `{{`).
    pub(crate) template: bool,
}

/// Everything an import writes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Draft {
    /// Comment lines at the top (without `# `).
    pub(crate) header: Vec<String>,
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) model: Option<ModelDraft>,
    pub(crate) persona: Option<PersonaDraft>,
    pub(crate) variables: Vec<VariableDraft>,
    pub(crate) allow: Option<Vec<String>>,
    pub(crate) deny: Vec<String>,
    pub(crate) servers: Vec<ServerDraft>,
    pub(crate) max_steps: Option<u32>,
    pub(crate) output_schema: Option<serde_json::Value>,
    pub(crate) output_retries: Option<u32>,
    pub(crate) checks: Vec<CheckDraft>,
}

/// The built-in every import extends: its working rules, tool guidance and runtime
/// context stay; the imported text takes the place of its `persona` section.
pub(crate) const PARENT: &str = "standard";

/// The name of the section holding the imported prompt.
pub(crate) const SECTION: &str = "instructions";

impl Draft {
    /// The preset file's text.
    pub(crate) fn to_yaml(&self) -> String {
        let mut out = String::new();
        for line in &self.header {
            if line.is_empty() {
                out.push_str("#\n");
            } else {
                let _ = writeln!(out, "# {line}");
            }
        }
        out.push_str("version: 1\n");
        let _ = writeln!(out, "name: {}", scalar(&self.name));
        if let Some(description) = &self.description {
            let _ = writeln!(out, "description: {}", scalar(description));
        }
        let _ = writeln!(out, "extends: {PARENT}");
        if let Some(model) = &self.model {
            out.push_str("\nmodel:\n");
            let _ = writeln!(out, "  provider: {}", scalar(&model.provider));
            let _ = writeln!(out, "  name: {}", scalar(&model.name));
            if let Some(url) = &model.base_url {
                let _ = writeln!(out, "  baseUrl: {}", scalar(url));
            }
            if let Some(env) = &model.api_key_env {
                let _ = writeln!(out, "  apiKeyEnv: {}", scalar(env));
            }
            if let Some(t) = model.temperature {
                let _ = writeln!(out, "  temperature: {t}");
            }
        }
        if let Some(persona) = &self.persona {
            // `standard`'s one-line persona gives way to the imported prompt (removed
            // rather than replaced: the replacement need not say its `{{ model }}`).
            out.push_str("\npersona:\n  sections:\n");
            let _ = writeln!(out, "    - name: {SECTION}\n      order: 0");
            if !persona.template {
                out.push_str("      template: false\n");
            }
            out.push_str("      text:");
            block(&mut out, &persona.text, 8);
            out.push_str("  remove: [persona]\n");
        }
        if !self.variables.is_empty() {
            out.push_str("\nvariables:\n");
            for v in &self.variables {
                let _ = writeln!(out, "  {}:", key(&v.name));
                let _ = writeln!(out, "    description: {}", scalar(&v.description));
                if let Some(t) = v.value_type {
                    let _ = writeln!(out, "    type: {t}");
                }
                if !v.choices.is_empty() {
                    let _ = writeln!(out, "    enum: {}", flow(&v.choices));
                }
                if let Some(default) = &v.default {
                    let text = match v.value_type {
                        Some(_) => default.clone(),
                        None => scalar_quoted(default),
                    };
                    let _ = writeln!(out, "    default: {text}");
                }
                if v.required {
                    out.push_str("    required: true\n");
                }
            }
        }
        if self.allow.is_some() || !self.deny.is_empty() {
            out.push_str("\ntools:\n");
            if let Some(allow) = &self.allow {
                let _ = writeln!(out, "  allow: {}", flow(allow));
            }
            if !self.deny.is_empty() {
                let _ = writeln!(out, "  deny: {}", flow(&self.deny));
            }
        }
        if !self.servers.is_empty() {
            out.push_str("\nmcpServers:\n");
            for s in &self.servers {
                if let Some(note) = &s.note {
                    let _ = writeln!(out, "  # {note}");
                }
                let _ = writeln!(out, "  {}:", key(&s.name));
                if !s.command.is_empty() {
                    let _ = writeln!(out, "    command: {}", flow(&s.command));
                }
                if let Some(url) = &s.url {
                    let _ = writeln!(out, "    url: {}", scalar(url));
                }
                if !s.env.is_empty() {
                    out.push_str("    env:\n");
                    for (k, v) in &s.env {
                        let _ = writeln!(out, "      {}: {}", key(k), scalar_quoted(v));
                    }
                }
                if !s.pass_env.is_empty() {
                    let _ = writeln!(out, "    passEnv: {}", flow(&s.pass_env));
                }
                if !s.headers.is_empty() {
                    out.push_str("    headers:\n");
                    for (k, h) in &s.headers {
                        let value = match h {
                            HeaderDraft::FromEnv { name, prefix } if prefix.is_empty() => {
                                format!("{{fromEnv: {}}}", scalar(name))
                            }
                            HeaderDraft::FromEnv { name, prefix } => format!(
                                "{{fromEnv: {}, prefix: {}}}",
                                scalar(name),
                                scalar_quoted(prefix)
                            ),
                            HeaderDraft::Value(v) => format!("{{value: {}}}", scalar_quoted(v)),
                        };
                        let _ = writeln!(out, "      {}: {value}", key(k));
                    }
                }
                if let Some(t) = &s.tool_timeout {
                    let _ = writeln!(out, "    toolTimeout: {}", scalar(t));
                }
            }
        }
        if let Some(steps) = self.max_steps {
            let _ = writeln!(out, "\nlimits:\n  maxSteps: {steps}");
        }
        if let Some(schema) = &self.output_schema {
            out.push_str("\noutput:\n");
            // JSON is YAML: the schema as the recipe wrote it, on one line.
            let _ = writeln!(out, "  schema: {}", json_flow(schema));
            if let Some(retries) = self.output_retries {
                let _ = writeln!(out, "  retries: {retries}");
            }
        }
        if !self.checks.is_empty() {
            out.push_str("\nchecks:\n");
            for c in &self.checks {
                let _ = writeln!(out, "  - run: {}", flow(&c.run));
                if let Some(r) = c.retries {
                    let _ = writeln!(out, "    retries: {r}");
                }
                if let Some(t) = &c.timeout {
                    let _ = writeln!(out, "    timeout: {}", scalar(t));
                }
            }
        }
        out
    }
}

/// `text` as a literal block (`|`) indented by `indent`, after a key whose `:` ends
/// `out`; a text a block cannot hold as is (leading spaces, control characters) is
/// written double-quoted instead.
fn block(out: &mut String, text: &str, indent: usize) {
    let text = text.trim_end();
    let blockable = !text.is_empty()
        && !text.starts_with([' ', '\t'])
        && !text
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{feff}');
    if !blockable {
        let _ = writeln!(out, " {}", quoted(text));
        return;
    }
    out.push_str(" |\n");
    let pad = " ".repeat(indent);
    for line in text.lines() {
        if line.trim().is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{pad}{line}");
        }
    }
}

/// A JSON value on one line, `{"a": 1, "b": [true]}`: JSON, and YAML flow style.
fn json_flow(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(json_flow).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", quoted(k), json_flow(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        other => other.to_string(),
    }
}

/// A flow list: `[a, b, "c d"]`.
fn flow(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|i| scalar(i)).collect();
    format!("[{}]", items.join(", "))
}

/// A mapping key: plain when it is a simple name, else quoted.
fn key(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !text.starts_with('-')
        && !is_yaml_word(text);
    if plain { text.to_owned() } else { quoted(text) }
}

/// A scalar YAML reads back as this text: plain when it is safe, else double-quoted.
pub(crate) fn scalar(text: &str) -> String {
    let mut chars = text.chars();
    let plain = match chars.next() {
        Some(first) => {
            (first.is_ascii_alphabetic() || first == '_' || first == '/' || first == '.')
                && chars.all(|c| c.is_ascii_alphanumeric() || "-_./@+".contains(c))
        }
        None => false,
    } && !is_yaml_word(text);
    if plain || crate::preset::spec::parse_duration(text).is_some() {
        text.to_owned()
    } else {
        quoted(text)
    }
}

/// Always double-quoted (a value the reader should see is text: an env value).
fn scalar_quoted(text: &str) -> String {
    quoted(text)
}

/// Words YAML 1.1 or 1.2 read as something other than text.
fn is_yaml_word(text: &str) -> bool {
    matches!(
        text.to_ascii_lowercase().as_str(),
        "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n" | "~"
    ) || text.starts_with(".inf")
        || text.starts_with(".nan")
}

/// A double-quoted scalar (JSON's string syntax is YAML's).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_read_back_as_text() {
        assert_eq!(scalar("read_file"), "read_file");
        assert_eq!(scalar("-y"), "\"-y\"");
        assert_eq!(scalar("true"), "\"true\"");
        assert_eq!(scalar("1.5"), "\"1.5\"");
        assert_eq!(scalar("300s"), "300s");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(
            scalar("@modelcontextprotocol/x"),
            "\"@modelcontextprotocol/x\""
        );
        assert_eq!(key("GITHUB_TOKEN"), "GITHUB_TOKEN");
        assert_eq!(key("a b"), "\"a b\"");
        let schema = serde_json::json!({"type": "object", "required": ["a"]});
        assert_eq!(
            json_flow(&schema),
            "{\"type\": \"object\", \"required\": [\"a\"]}"
        );
    }

    #[test]
    fn texts_are_blocks_unless_they_cannot_be() {
        let mut out = String::from("text:");
        block(&mut out, "Hello\n\n  indented\n", 2);
        assert_eq!(out, "text: |\n  Hello\n\n    indented\n");
        let mut out = String::from("text:");
        block(&mut out, "  starts indented", 2);
        assert_eq!(out, "text: \"  starts indented\"\n");
    }
}
