//! What the server answers about a position: hover, completion, go to definition,
//! document symbols and quick fixes. Positions come in the negotiated encoding.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::check::{Checker, Published, range};
use super::text::{self, Encoding, Key};
use super::{Document, uri_of_path};
use crate::DiagnosticKind;
use crate::preset::catalog::PresetEntry;
use crate::preset::spec::VariableEntry;
use crate::preset::texts::known_texts;
use crate::prompt::BUILTIN_VARIABLES;

/// One request about an open buffer.
pub(crate) struct Context<'a> {
    pub(crate) path: &'a Path,
    pub(crate) text: &'a str,
    pub(crate) encoding: Encoding,
    pub(crate) checker: &'a Checker,
}

/// The cursor: its line (0-based), that line's text, the byte in it, and the keys above.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
    keys: Vec<Key>,
}

impl Context<'_> {
    fn cursor(&self, params: &Value) -> Option<Cursor<'_>> {
        let line = u32::try_from(params.pointer("/position/line")?.as_u64()?).ok()?;
        let column = u32::try_from(params.pointer("/position/character")?.as_u64()?).ok()?;
        let text = text::line_of(self.text, line)?;
        let at = text::byte_of_column(text, column, self.encoding);
        Some(Cursor {
            text,
            at,
            keys: text::keys_above(self.text, line, at),
        })
    }

    /// The preset this buffer is and the ones it extends, nearest first.
    fn chain(&self) -> Vec<&PresetEntry> {
        let catalog = &self.checker.project.presets;
        let mut out: Vec<&PresetEntry> = Vec::new();
        let mut next = self.checker.entry_at(self.path);
        while let Some(entry) = next {
            if out.len() > crate::preset::resolve::MAX_EXTENDS_DEPTH
                || out.iter().any(|e| e.name() == entry.name())
            {
                break;
            }
            out.push(entry);
            next = entry
                .parsed()
                .ok()
                .and_then(|p| p.file.extends.as_ref())
                .and_then(|e| catalog.get(&e.value));
        }
        out
    }

    fn variable(&self, name: &str) -> Option<(&PresetEntry, &VariableEntry)> {
        self.chain().into_iter().find_map(|entry| {
            let v = entry.parsed().ok()?.file.variables.as_ref()?.get(name)?;
            Some((entry, v))
        })
    }

    fn variable_names(&self) -> Vec<String> {
        let mut names: Vec<String> = BUILTIN_VARIABLES
            .iter()
            .map(|b| b.name.to_owned())
            .collect();
        for entry in self.chain() {
            if let Some(vars) = entry.parsed().ok().and_then(|p| p.file.variables.as_ref()) {
                names.extend(vars.iter().map(|v| v.name.value.clone()));
            }
        }
        names.sort();
        names.dedup();
        names
    }

    fn location(&self, path: &Path, line: u32, from: u32, to: u32) -> Value {
        json!({"uri": uri_of_path(path), "range": range(line, from, line, to)})
    }
}

fn under(keys: &[Key], name: &str) -> bool {
    keys.iter().any(|k| k.name == name)
}

fn markdown(value: String) -> Value {
    json!({"contents": {"kind": "markdown", "value": value}})
}

// ---- hover ----

pub(crate) fn hover(ctx: &Context<'_>, params: &Value) -> Value {
    let Some(cursor) = ctx.cursor(params) else {
        return Value::Null;
    };
    let Some((word, _, _)) = text::word_at(cursor.text, cursor.at) else {
        return Value::Null;
    };
    let line_key = text::key_of(cursor.text).map(|(k, _)| k);
    let tools = &ctx.checker.project.tools;
    // A variable: in a template, a `when:`, or its declaration.
    if (text::in_template(cursor.text, cursor.at)
        || line_key == Some("when")
        || cursor.keys.first().is_some_and(|k| k.name == "variables"))
        && let Some(text) = variable_hover(ctx, word)
    {
        return markdown(text);
    }
    if line_key == Some("extends")
        && let Some(entry) = ctx.checker.project.presets.get(word)
    {
        return markdown(format!(
            "**preset `{}`** ({})\n\n{}",
            entry.name(),
            entry.display(),
            entry.description().unwrap_or_default()
        ));
    }
    if (under(&cursor.keys, "texts") || line_key == Some("texts"))
        && let Some(text) = text_hover(ctx, word)
    {
        return markdown(text);
    }
    if line_key == Some("name")
        && (under(&cursor.keys, "sections") || under(&cursor.keys, "contexts"))
    {
        return markdown(section_hover(ctx, word, under(&cursor.keys, "contexts")));
    }
    if let Some(tool) = tools.get(word) {
        let schema = serde_json::to_string_pretty(&tool.schemas().portable).unwrap_or_default();
        return markdown(format!(
            "**tool `{}`**\n\n{}\n\n```json\n{schema}\n```",
            tool.name().as_str(),
            tool.description()
        ));
    }
    Value::Null
}

fn variable_hover(ctx: &Context<'_>, name: &str) -> Option<String> {
    if let Some((entry, v)) = ctx.variable(name) {
        let spec = &v.spec;
        let mut out = format!(
            "**variable `{name}`** (declared in `{}`)\n\n{}\n",
            entry.name(),
            spec.description
        );
        let ty = spec
            .value_type
            .as_ref()
            .and_then(|t| serde_json::to_value(t.value).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "string".to_owned());
        out.push_str(&format!("\n- type: `{ty}`"));
        if let Some(default) = &spec.default {
            out.push_str(&format!("\n- default: `{}`", default.value));
        }
        if let Some(choices) = &spec.choices {
            let list: Vec<String> = choices.iter().map(|c| format!("`{}`", c.value)).collect();
            out.push_str(&format!("\n- allowed: {}", list.join(", ")));
        }
        if spec.required == Some(true) {
            out.push_str("\n- required");
        }
        return Some(out);
    }
    BUILTIN_VARIABLES.iter().find(|b| b.name == name).map(|b| {
        format!(
            "**built-in variable `{}`**\n\n{}\n\n- example: `{}`{}",
            b.name,
            b.description,
            b.example,
            if b.volatile {
                "\n- volatile: keep it in a runtime context"
            } else {
                ""
            }
        )
    })
}

fn text_hover(ctx: &Context<'_>, id: &str) -> Option<String> {
    let known = known_texts().iter().find(|k| k.id == id)?;
    let mut out = format!(
        "**text `{id}`** ({})\n\n```text\n{}\n```",
        known
            .preset
            .map_or_else(|| "built-in".to_owned(), |p| format!("section of `{p}`")),
        known.english
    );
    for pack in ctx.checker.project.presets.packs().iter() {
        if let Some(entry) = pack.get(id) {
            out.push_str(&format!(
                "\n\n`{}` ({}):\n```text\n{}\n```",
                pack.locale, pack.display, entry.text
            ));
        }
    }
    Some(out)
}

/// Where a section or context comes from: this file, and the ones it replaces.
fn section_hover(ctx: &Context<'_>, name: &str, context: bool) -> String {
    let what = if context { "context" } else { "section" };
    let mut out = format!("**{what} `{name}`**");
    let chain = ctx.chain();
    let mut replaced = false;
    for entry in chain.iter().skip(1) {
        if let Some((line, body)) = declared_in(entry, name, context) {
            out.push_str(&format!(
                "\n\nreplaces the one in `{}` ({}:{}):\n```text\n{}\n```",
                entry.name(),
                entry.display(),
                line + 1,
                body
            ));
            replaced = true;
            break;
        }
    }
    if !replaced {
        out.push_str("\n\nnew here: it replaces no inherited one");
    }
    if let Some((_, body)) = chain.first().and_then(|e| declared_in(e, name, context)) {
        out.push_str(&format!("\n\nits text:\n```text\n{body}\n```"));
    }
    match chain
        .first()
        .and_then(|e| rendered_piece(ctx, e.name(), name, context))
    {
        Some(Some(rendered)) => out.push_str(&format!(
            "\n\nrendered with the default values (built-in facts as examples):\n```text\n{rendered}\n```"
        )),
        Some(None) => out.push_str(
            "\n\nrendered with the default values (built-in facts as examples): nothing is sent (its `when` is false, or a `complete` section above it leaves no room)",
        ),
        None => {}
    }
    out
}

/// The text piece `name` of preset `preset` renders to with its variables' defaults and
/// example values for the built-in facts, as `validate` renders it: `None` when the
/// preset is not valid yet, `Some(None)` when the piece is not sent (it renders empty,
/// or a `complete` section leaves it out).
fn rendered_piece(
    ctx: &Context<'_>,
    preset: &str,
    name: &str,
    context: bool,
) -> Option<Option<String>> {
    let valid = ctx.checker.project.validate(preset).preset?;
    let assembler = valid.assembler();
    let mut values = crate::preset::validate::representative_values(assembler);
    for (k, v) in valid.default_values().iter() {
        values.set(k, v.clone());
    }
    let pieces = if context {
        assembler.rendered_contexts(&values).ok()?
    } else {
        assembler.rendered_sections(&values).ok()?
    };
    Some(pieces.into_iter().find(|p| p.name == name).map(|p| p.text))
}

/// The line (0-based) of the `name:` of section (or context) `name` in `entry`, and its
/// text.
fn declared_in(entry: &PresetEntry, name: &str, context: bool) -> Option<(u32, String)> {
    let parsed = entry.parsed().ok()?;
    if context {
        let c = parsed
            .file
            .contexts
            .as_ref()?
            .iter()
            .find(|c| c.name.value == name)?;
        Some((line_of_spanned(&c.name), c.text.value.clone()))
    } else {
        let s = parsed
            .file
            .persona
            .as_ref()?
            .sections
            .as_ref()?
            .iter()
            .find(|s| s.name.value == name)?;
        Some((line_of_spanned(&s.name), s.text.value.clone()))
    }
}

// ---- completion ----

fn items(labels: impl IntoIterator<Item = String>, kind: u32) -> Vec<Value> {
    labels
        .into_iter()
        .map(|l| json!({"label": l, "kind": kind}))
        .collect()
}

pub(crate) fn completion(ctx: &Context<'_>, params: &Value) -> Value {
    let Some(cursor) = ctx.cursor(params) else {
        return Value::Null;
    };
    let before = cursor.text.get(..cursor.at).unwrap_or(cursor.text);
    let line_key = text::key_of(cursor.text).map(|(k, _)| k);
    let after_colon = line_key.is_some() && before.contains(": ") || before.ends_with(':');
    let catalog = &ctx.checker.project.presets;
    // Constants of the completion item kinds.
    const VARIABLE: u32 = 6;
    const FUNCTION: u32 = 3;
    const MODULE: u32 = 9;
    const FIELD: u32 = 5;
    const VALUE: u32 = 12;
    const TEXT: u32 = 1;
    let list: Vec<Value> =
        if text::in_template(cursor.text, cursor.at) || (line_key == Some("when") && after_colon) {
            items(ctx.variable_names(), VARIABLE)
        } else if line_key == Some("extends") && after_colon {
            items(
                catalog
                    .names()
                    .filter(|n| Some(*n) != ctx.checker.entry_at(ctx.path).map(|e| e.name()))
                    .map(str::to_owned),
                MODULE,
            )
        } else if line_key == Some("locale") && after_colon {
            let mut locales: Vec<String> = catalog
                .packs()
                .locales()
                .into_iter()
                .map(str::to_owned)
                .collect();
            locales.push("en".to_owned());
            locales.sort();
            locales.dedup();
            items(locales, VALUE)
        } else if under(&cursor.keys, "tools")
            && ["allow", "deny", "order"]
                .iter()
                .any(|k| under(&cursor.keys, k) || line_key == Some(k))
        {
            let tools = &ctx.checker.project.tools;
            let mut names: Vec<String> = tools.names().map(str::to_owned).collect();
            let mut servers: Vec<String> = tools
                .declared_servers()
                .map(|(s, _)| format!("mcp__{s}__*"))
                .collect();
            names.append(&mut servers);
            names.push("*".to_owned());
            items(names, FUNCTION)
        } else if cursor.keys.last().is_some_and(|k| k.name == "texts") && !after_colon {
            items(known_texts().iter().map(|k| k.id.clone()), TEXT)
        } else {
            let path: Vec<&str> = cursor.keys.iter().map(|k| k.name.as_str()).collect();
            match (line_key, after_colon) {
                (Some(key), true) => items(schema_values(&path, key), VALUE),
                _ => items(schema_keys(&path), FIELD),
            }
        };
    json!({"isIncomplete": false, "items": list})
}

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(crate::preset::spec::preset_json_schema)
}

/// `node` with `$ref`s followed, arrays stepped into.
fn resolved(node: &Value) -> &Value {
    let mut node = node;
    for _ in 0..8 {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            match r
                .strip_prefix("#/$defs/")
                .and_then(|n| schema().get("$defs")?.get(n))
            {
                Some(def) => node = def,
                None => return node,
            }
        } else if node.get("type").and_then(Value::as_str) == Some("array")
            && let Some(items) = node.get("items")
        {
            node = items;
        } else {
            return node;
        }
    }
    node
}

/// The schema branches of a node (itself, or those of its `anyOf`/`oneOf`/`allOf`).
fn branches(node: &Value) -> Vec<&Value> {
    let node = resolved(node);
    let mut out = vec![node];
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(list) = node.get(key).and_then(Value::as_array) {
            out.extend(list.iter().flat_map(branches));
        }
    }
    out
}

fn property<'a>(node: &'a Value, key: &str) -> Option<&'a Value> {
    branches(node)
        .into_iter()
        .find_map(|b| b.get("properties")?.get(key))
}

fn at_path<'a>(path: &[&str]) -> Option<&'a Value> {
    let mut node = schema();
    for key in path {
        node = property(node, key)?;
    }
    Some(node)
}

fn schema_keys(path: &[&str]) -> Vec<String> {
    let Some(node) = at_path(path) else {
        return Vec::new();
    };
    let mut keys: Vec<String> = branches(node)
        .into_iter()
        .filter_map(|b| b.get("properties")?.as_object())
        .flat_map(|p| p.keys().cloned())
        .collect();
    keys.dedup();
    keys
}

fn schema_values(path: &[&str], key: &str) -> Vec<String> {
    let Some(node) = at_path(path).and_then(|n| property(n, key)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for b in branches(node) {
        if let Some(list) = b.get("enum").and_then(Value::as_array) {
            out.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        if let Some(c) = b.get("const").and_then(Value::as_str) {
            out.push(c.to_owned());
        }
        if b.get("type").and_then(Value::as_str) == Some("boolean") {
            out.extend(["true".to_owned(), "false".to_owned()]);
        }
    }
    out.dedup();
    out
}

// ---- definition ----

pub(crate) fn definition(ctx: &Context<'_>, params: &Value) -> Value {
    let Some(cursor) = ctx.cursor(params) else {
        return Value::Null;
    };
    let line_key = text::key_of(cursor.text).map(|(k, _)| k);
    if let Some((name, _)) = text::value_of(cursor.text, "extends")
        && let Some(path) = ctx.checker.project.presets.get(name).and_then(|e| e.path())
    {
        return ctx.location(path, 0, 0, 0);
    }
    if let Some((file, _)) = text::value_of(cursor.text, "textFile")
        && let Some(dir) = ctx.path.parent()
    {
        return ctx.location(&dir.join(file), 0, 0, 0);
    }
    if line_key == Some("name")
        && let Some((name, _)) = text::value_of(cursor.text, "name")
        && (under(&cursor.keys, "sections") || under(&cursor.keys, "contexts"))
    {
        let context = under(&cursor.keys, "contexts");
        for entry in ctx.chain().iter().skip(1) {
            if let (Some((line, _)), Some(path)) = (declared_in(entry, name, context), entry.path())
            {
                return ctx.location(path, line, 0, 0);
            }
        }
        return Value::Null;
    }
    if under(&cursor.keys, "texts")
        && let Some((id, _)) = text::key_of(cursor.text)
    {
        for pack in ctx.checker.project.presets.packs().iter() {
            if let Some(entry) = pack.get(id)
                && !pack.display.starts_with('<')
            {
                let path = ctx.checker.project.project_dir.join(&*pack.display);
                let path = if Path::new(&*pack.display).is_absolute() {
                    Path::new(&*pack.display).to_path_buf()
                } else {
                    std::env::current_dir().map_or(path, |d| d.join(&*pack.display))
                };
                let line = entry.key.line.saturating_sub(1);
                return ctx.location(&path, line, 0, 0);
            }
        }
    }
    Value::Null
}

// ---- document symbols ----

pub(crate) fn symbols(ctx: &Context<'_>, _params: &Value) -> Value {
    const CLASS: u32 = 5;
    const FUNCTION: u32 = 12;
    const VARIABLE: u32 = 13;
    const MODULE: u32 = 2;
    const EVENT: u32 = 24;
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut out = Vec::new();
    for (n, raw) in ctx.text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        let key = text::key_of(line);
        let level = key.map_or(indent, |(_, start)| start);
        while stack
            .last()
            .is_some_and(|(i, _)| *i >= level.min(indent.max(1)) && *i >= indent)
        {
            stack.pop();
        }
        let path: Vec<&str> = stack.iter().map(|(_, k)| k.as_str()).collect();
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let mut push = |name: &str, kind: u32, from: usize| {
            let c1 = text::column_of_byte(line, from, ctx.encoding);
            let c2 = text::column_of_byte(line, from + name.len(), ctx.encoding);
            let r = range(n, c1, n, c2);
            out.push(json!({"name": name, "kind": kind, "range": r, "selectionRange": r}));
        };
        match (path.as_slice(), key) {
            (["persona", "sections"] | ["contexts"], Some(("name", _))) => {
                if let Some((value, at)) = text::value_of(line, "name") {
                    push(value, if path[0] == "contexts" { EVENT } else { CLASS }, at);
                }
            }
            (["variables"] | ["servers"] | ["commands"], Some((k, at))) if indent > 0 => {
                let kind = match path[0] {
                    "variables" => VARIABLE,
                    "servers" => MODULE,
                    _ => FUNCTION,
                };
                push(k, kind, at);
            }
            (["tools", "allow"], None) => {
                if let Some(name) = trimmed.strip_prefix("- ") {
                    let name = name.split(" #").next().unwrap_or_default().trim();
                    let at = line.len() - trimmed.len() + 2;
                    push(name.trim_matches(['"', '\'']), FUNCTION, at);
                }
            }
            _ => {}
        }
        if let Some((k, start)) = key {
            stack.push((start, k.to_owned()));
        }
    }
    Value::Array(out)
}

// ---- quick fixes ----

pub(crate) fn code_actions(
    uri: &str,
    doc: &Document,
    published: &[Published],
    params: &Value,
    encoding: Encoding,
) -> Value {
    let first = params
        .pointer("/range/start/line")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let last = params
        .pointer("/range/end/line")
        .and_then(Value::as_u64)
        .unwrap_or(first);
    let mut out = Vec::new();
    for p in published {
        if u64::from(p.line) < first || u64::from(p.line) > last {
            continue;
        }
        if let Some(fix) = &p.fix
            && let Some((edit, title)) = fix_edit(&doc.text, fix, encoding)
        {
            out.push(action(uri, &title, &p.lsp, edit));
        }
        if p.kind == DiagnosticKind::ImplicitOverride
            && let Some(edit) = override_edit(&doc.text, p.line, encoding)
        {
            out.push(action(uri, "Add `override: true`", &p.lsp, edit));
        }
    }
    Value::Array(out)
}

fn action(uri: &str, title: &str, diagnostic: &Value, edit: Value) -> Value {
    json!({
        "title": title,
        "kind": "quickfix",
        "diagnostics": [diagnostic],
        "isPreferred": true,
        "edit": {"changes": {uri: [edit]}},
    })
}

/// The text edit a [`Fix`](crate::diagnostic::Fix) describes, found on its line: at its
/// column, just after it (a quote), or the one place on the line that holds the text.
fn fix_edit(
    text: &str,
    fix: &crate::diagnostic::Fix,
    encoding: Encoding,
) -> Option<(Value, String)> {
    let line = fix.span.line.checked_sub(1)?;
    let line_text = text::line_of(text, line)?;
    let start = line_text
        .char_indices()
        .nth(fix.span.column.saturating_sub(1) as usize)
        .map_or(line_text.len(), |(i, _)| i);
    let found = [start, start + 1]
        .into_iter()
        .find(|&at| {
            line_text
                .get(at..)
                .is_some_and(|rest| rest.starts_with(&fix.replace))
        })
        .or_else(|| {
            let mut all = line_text.match_indices(&fix.replace);
            match (all.next(), all.next()) {
                (Some((at, _)), None) => Some(at),
                _ => None,
            }
        })?;
    let from = text::column_of_byte(line_text, found, encoding);
    let to = text::column_of_byte(line_text, found + fix.replace.len(), encoding);
    let title = if fix.replace.chars().count() > 40 || fix.with.chars().count() > 40 {
        "Write the line as the help says".to_owned()
    } else {
        format!(
            "Replace `{}` with `{}`",
            fix.replace.trim(),
            fix.with.trim()
        )
    };
    Some((
        json!({"range": range(line, from, line, to), "newText": fix.with}),
        title,
    ))
}

/// `override: true` added to the section or context whose name is on `line`.
fn override_edit(text: &str, line: u32, encoding: Encoding) -> Option<Value> {
    let line_text = text::line_of(text, line)?;
    let (_, start) = text::key_of(line_text)?;
    let indent = " ".repeat(line_text[..start].chars().count());
    if text::line_of(text, line + 1).is_some() {
        Some(json!({
            "range": range(line + 1, 0, line + 1, 0),
            "newText": format!("{indent}override: true\n"),
        }))
    } else {
        let end = text::column_of_byte(line_text, line_text.len(), encoding);
        Some(json!({
            "range": range(line, end, line, end),
            "newText": format!("\n{indent}override: true"),
        }))
    }
}

/// The line (0-based) a value is written on.
fn line_of_spanned<T>(value: &serde_saphyr::Spanned<T>) -> u32 {
    u32::try_from(value.referenced.line())
        .unwrap_or(u32::MAX)
        .saturating_sub(1)
}
