//! `show`: a preset resolved along its `extends` chain, written as one flattened preset
//! in YAML, with comments saying which file and line each piece comes from
//! ([`resolved_yaml`]).
//!
//! Sections are listed in prompt order (before `when` is evaluated), tool guidance
//! included; shadowed and removed sections are gone (removals are noted in comments).
//! Contexts and variables are the merged ones; `tools.allow` lists the visible tools and
//! `tools.order` their wire order when it is not the plain name order.

use std::collections::BTreeMap;

use super::yaml::{entry, number, scalar, text_entry};
use crate::preset::PresetCatalog;
use crate::preset::source::ParsedPreset;
use crate::preset::spec::{ContextSpec, ModelSpec, SectionSpec, VariableEntry, VariableType};
use crate::preset::validate::ValidPreset;
use crate::prompt::{BUILTIN_VARIABLES, Order, Replaced};
use crate::tools::{REST, ToolCatalog};

/// `file:line` of a position in one preset of the chain.
fn at(preset: &ParsedPreset, line: u32) -> String {
    format!("{}:{line}", preset.source.display)
}

/// For each preset of the chain that hides files of lower sources (a project preset
/// over a user one): its name and the hidden files, `FILE (source)`.
pub fn shadowed(preset: &ValidPreset, presets: &PresetCatalog) -> Vec<(String, String)> {
    preset
        .chain()
        .iter()
        .filter_map(|p| {
            let entry = presets
                .entries()
                .find(|e| *e.display() == p.source.display)?;
            if entry.shadows().is_empty() {
                return None;
            }
            let hidden: Vec<String> = entry
                .shadows()
                .iter()
                .map(|s| format!("{} ({})", s.display, s.source))
                .collect();
            Some((p.name().to_owned(), hidden.join(", ")))
        })
        .collect()
}

/// The flattened preset, annotated: what `agent-presets show` prints. `shadowed` is
/// what [`shadowed`] returns (or nothing, for a preset outside a catalog).
pub fn resolved_yaml(
    preset: &ValidPreset,
    tools: &ToolCatalog,
    shadowed: &[(String, String)],
) -> String {
    let chain = preset.chain();
    let mut out = String::new();
    out.push_str(&format!(
        "# Resolved preset `{}`: its `extends` chain flattened into one preset.\n",
        preset.name()
    ));
    out.push_str("# Chain, root first:\n");
    let width = chain.iter().map(|p| p.name().len()).max().unwrap_or(0);
    for p in chain {
        out.push_str(&format!("#   {:width$}  {}\n", p.name(), p.source.display));
    }
    for (name, hidden) in shadowed {
        out.push_str(&format!("# `{name}` shadows {hidden}\n"));
    }
    out.push_str("# Comments give the file:line each piece comes from.\n");
    entry(&mut out, 0, "version", "1", None);
    entry(&mut out, 0, "name", &scalar(preset.name()), None);
    if let Some(description) = preset.description() {
        entry(&mut out, 0, "description", &scalar(description), None);
    }
    model(&mut out, chain);
    persona(&mut out, preset, tools);
    contexts(&mut out, preset);
    variables(&mut out, chain);
    tool_restriction(&mut out, preset, tools);
    budget(&mut out, chain);
    pass_env(&mut out, preset);
    texts(&mut out, preset);
    out
}

/// Is `id` a text `show` writes where it is used (a section, a built-in preset's
/// context, tool guidance)?
fn written_in_place(id: &str) -> bool {
    id.starts_with("section.")
        || id.ends_with(".guidance")
        || (id.starts_with("context.") && id.matches('.').count() >= 2)
}

/// The locale in force and the chain's `texts:` replacements of library texts (a pack's
/// are not copied: `locale` selects them again; section, context and guidance texts are
/// already written out in place).
fn texts(out: &mut String, preset: &ValidPreset) {
    let texts = preset.texts();
    if let Some(locale) = texts.locale() {
        entry(out, 0, "locale", &scalar(locale), None);
    }
    let own: Vec<_> = texts
        .replacements()
        .filter_map(|(id, e)| match &e.source {
            crate::texts::TextSource::Preset { at, .. } if !written_in_place(id) => {
                Some((id, e, at))
            }
            _ => None,
        })
        .collect();
    if own.is_empty() {
        return;
    }
    entry(out, 0, "texts", "", None);
    for (id, e, at) in own {
        out.push_str(&format!("  # {}:{}\n", at.file, at.line));
        text_entry(out, 2, id, &e.text);
    }
}

/// The token budget in force: per key, the nearest preset that sets it.
fn budget(out: &mut String, chain: &[ParsedPreset]) {
    let nearest = |get: fn(&crate::preset::BudgetSpec) -> Option<&crate::preset::Spanned<u32>>| {
        chain.iter().rev().find_map(|p| {
            p.file
                .budget
                .as_ref()
                .and_then(get)
                .map(|v| (v.value, at(p, p.span_of(v).line)))
        })
    };
    let system = nearest(|b| b.max_system_tokens.as_ref());
    let tools = nearest(|b| b.max_tool_tokens.as_ref());
    if system.is_none() && tools.is_none() {
        return;
    }
    entry(out, 0, "budget", "", Some("o200k_base tokens"));
    if let Some((n, from)) = system {
        entry(out, 2, "maxSystemTokens", &n.to_string(), Some(&from));
    }
    if let Some((n, from)) = tools {
        entry(out, 2, "maxToolTokens", &n.to_string(), Some(&from));
    }
}

fn model(out: &mut String, chain: &[ParsedPreset]) {
    let Some((from, spec)) = chain
        .iter()
        .rev()
        .find_map(|p| p.file.model.as_ref().map(|m| (p, m)))
    else {
        out.push_str("# model: none in the chain (`render` needs --model)\n");
        return;
    };
    let ModelSpec {
        provider,
        name,
        base_url,
        api_key_env,
        max_tokens,
        strict_tools,
        allow_insecure,
        temperature,
        top_p,
        seed,
        stop,
        reasoning_effort,
        thinking_budget,
    } = spec;
    let first_line = [
        Some(from.span_of(provider).line),
        Some(from.span_of(name).line),
        base_url.as_ref().map(|u| from.span_of(u).line),
        api_key_env.as_ref().map(|k| from.span_of(k).line),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(1);
    entry(out, 0, "model", "", Some(&at(from, first_line)));
    entry(out, 2, "provider", provider.value.as_str(), None);
    entry(out, 2, "name", &scalar(&name.value), None);
    if let Some(url) = base_url {
        entry(out, 2, "baseUrl", &scalar(&url.value), None);
    }
    if let Some(env) = api_key_env {
        entry(out, 2, "apiKeyEnv", &scalar(&env.value), None);
    }
    if let Some(max) = max_tokens {
        entry(out, 2, "maxTokens", &max.value.to_string(), None);
    }
    if let Some(strict) = strict_tools {
        entry(out, 2, "strictTools", &strict.value.to_string(), None);
    }
    if let Some(insecure) = allow_insecure {
        entry(out, 2, "allowInsecure", &insecure.value.to_string(), None);
    }
    if let Some(t) = temperature {
        entry(out, 2, "temperature", &t.value.to_string(), None);
    }
    if let Some(p) = top_p {
        entry(out, 2, "topP", &p.value.to_string(), None);
    }
    if let Some(s) = seed {
        entry(out, 2, "seed", &s.value.to_string(), None);
    }
    if let Some(stop) = stop {
        let items: Vec<String> = stop.value.iter().map(|s| scalar(&s.value)).collect();
        entry(out, 2, "stop", &format!("[{}]", items.join(", ")), None);
    }
    if let Some(e) = reasoning_effort {
        entry(out, 2, "reasoningEffort", e.value.as_str(), None);
    }
    if let Some(b) = thinking_budget {
        entry(out, 2, "thinkingBudget", &b.value.to_string(), None);
    }
}

fn persona(out: &mut String, preset: &ValidPreset, tools: &ToolCatalog) {
    let chain = preset.chain();
    entry(out, 0, "persona", "", None);

    // `false` anywhere wins; else the nearest `true`; else the default.
    let flags: Vec<(&ParsedPreset, bool, u32)> = chain
        .iter()
        .filter_map(|p| {
            let flag = p.file.persona.as_ref()?.include_runtime_context.as_ref()?;
            Some((p, flag.value, p.span_of(flag).line))
        })
        .collect();
    let (value, origin) = match flags.iter().find(|(_, v, _)| !v) {
        Some((p, _, line)) => ("false", at(p, *line)),
        None => match flags.last() {
            Some((p, _, line)) => ("true", at(p, *line)),
            None => ("true", "default".to_owned()),
        },
    };
    entry(out, 2, "includeRuntimeContext", value, Some(&origin));

    let assembler = preset.assembler();
    entry(
        out,
        2,
        "sections",
        "",
        Some("prompt order; `when` is evaluated per request"),
    );
    for name in assembler.section_names() {
        let defined = chain.iter().rev().find_map(|p| {
            p.file
                .persona
                .as_ref()?
                .sections
                .as_ref()?
                .iter()
                .find(|s| s.name.value == name)
                .map(|s| (p, s))
        });
        match defined {
            Some((p, s)) => section(
                out,
                p,
                s,
                assembler.replaced_section(name),
                replaced(preset, "section", p, name),
            ),
            None => guidance(out, name, tools, preset),
        }
    }

    for p in chain {
        for r in p
            .file
            .persona
            .iter()
            .flat_map(|persona| persona.remove.iter().flatten())
        {
            out.push_str(&format!(
                "  # removed: {} ({})\n",
                r.value,
                at(p, p.span_of(r).line)
            ));
        }
    }
}

/// The text a locale pack or `texts:` puts in place of a built-in preset's section or
/// context (`kind` is `section` or `context`).
fn replaced<'a>(
    preset: &'a ValidPreset,
    kind: &str,
    from: &ParsedPreset,
    name: &str,
) -> Option<&'a str> {
    if *from.source.display != *format!("<builtin>/{}.yaml", from.name()) {
        return None;
    }
    preset
        .texts()
        .replacement(&format!("{kind}.{}.{name}", from.name()))
        .map(|e| e.text.as_str())
}

fn section(
    out: &mut String,
    from: &ParsedPreset,
    s: &SectionSpec,
    replaces: Option<&Replaced>,
    replaced: Option<&str>,
) {
    out.push_str("    - ");
    entry(
        out,
        0,
        "name",
        &scalar(&s.name.value),
        Some(&at(from, from.span_of(&s.name).line)),
    );
    override_entry(out, 6, s.overrides, replaces);
    entry(out, 6, "order", &order(s.order.value), None);
    if s.complete == Some(true) {
        entry(out, 6, "complete", "true", None);
    }
    if let Some(when) = &s.when {
        entry(out, 6, "when", &scalar(&when.value), None);
    }
    if s.template == Some(false) {
        entry(out, 6, "template", "false", None);
    }
    if let Some(text) = replaced {
        out.push_str("      # text from the locale pack or `texts:`\n");
        text_entry(out, 6, "text", text);
        return;
    }
    if let Some(file) = from.text_file_of(&s.text) {
        out.push_str(&format!("      # text from {} (textFile)\n", file.display));
    }
    text_entry(out, 6, "text", &s.text.value);
}

/// A `tool:<name>` section no preset defines: the tool's own guidance.
fn guidance(out: &mut String, name: &str, tools: &ToolCatalog, preset: &ValidPreset) {
    let tool = name.strip_prefix("tool:").and_then(|t| tools.get(t));
    let Some(g) = tool.and_then(|t| t.guidance()) else {
        out.push_str(&format!("    - name: {}\n", scalar(name)));
        return;
    };
    out.push_str("    - ");
    entry(
        out,
        0,
        "name",
        &scalar(name),
        Some(&format!(
            "guidance of the tool `{}`",
            name.trim_start_matches("tool:")
        )),
    );
    entry(out, 6, "order", &order(g.order), None);
    if !g.template {
        entry(out, 6, "template", "false", None);
    }
    let text = preset
        .texts()
        .replacement(&format!(
            "tool.{}.guidance",
            name.trim_start_matches("tool:")
        ))
        .map_or(g.text.as_str(), |e| e.text.as_str());
    text_entry(out, 6, "text", text);
}

/// `override: true` as written, with a comment naming what the piece replaced (also
/// when the preset did not say so: `implicit-override` warned about that).
fn override_entry(
    out: &mut String,
    indent: usize,
    marked: Option<bool>,
    replaced: Option<&Replaced>,
) {
    let note = replaced.map(|r| format!("replaces {r}"));
    match (marked, note) {
        (Some(true), note) => entry(out, indent, "override", "true", note.as_deref()),
        (_, Some(note)) => out.push_str(&format!(
            "{:indent$}# {note}, without `override: true`\n",
            ""
        )),
        (_, None) => {}
    }
}

fn order(value: f64) -> String {
    number(Order::new(value).map(Order::get).unwrap_or(value))
}

fn contexts(out: &mut String, preset: &ValidPreset) {
    let mut merged: BTreeMap<&str, (&ParsedPreset, &ContextSpec)> = BTreeMap::new();
    for p in preset.chain() {
        for c in p.file.contexts.iter().flatten() {
            merged.insert(c.name.value.as_str(), (p, c));
        }
    }
    if merged.is_empty() {
        return;
    }
    let mut list: Vec<(&ParsedPreset, &ContextSpec)> = merged.into_values().collect();
    list.sort_by(|(_, a), (_, b)| {
        let key = |c: &ContextSpec| Order::new(c.order.value).ok();
        (key(a), &a.name.value).cmp(&(key(b), &b.name.value))
    });
    let note = if preset.assembler().runtime_context_suppressed() {
        "suppressed: includeRuntimeContext is false"
    } else {
        "sent after the conversation, in this order"
    };
    entry(out, 0, "contexts", "", Some(note));
    for (from, c) in list {
        out.push_str("  - ");
        entry(
            out,
            0,
            "name",
            &scalar(&c.name.value),
            Some(&at(from, from.span_of(&c.name).line)),
        );
        override_entry(
            out,
            4,
            c.overrides,
            preset.assembler().replaced_context(&c.name.value),
        );
        entry(out, 4, "order", &order(c.order.value), None);
        if c.template == Some(false) {
            entry(out, 4, "template", "false", None);
        }
        if let Some(text) = replaced(preset, "context", from, &c.name.value) {
            out.push_str("    # text from the locale pack or `texts:`\n");
            text_entry(out, 4, "text", text);
            continue;
        }
        if let Some(file) = from.text_file_of(&c.text) {
            out.push_str(&format!("    # text from {} (textFile)\n", file.display));
        }
        text_entry(out, 4, "text", &c.text.value);
    }
}

fn variables(out: &mut String, chain: &[ParsedPreset]) {
    let mut merged: Vec<(&ParsedPreset, &VariableEntry)> = Vec::new();
    for p in chain {
        for e in p.file.variables.iter().flat_map(|v| v.iter()) {
            match merged
                .iter_mut()
                .find(|(_, m)| m.name.value == e.name.value)
            {
                Some(slot) => *slot = (p, e),
                None => merged.push((p, e)),
            }
        }
    }
    let builtins: Vec<String> = BUILTIN_VARIABLES
        .iter()
        .map(|b| {
            if b.volatile {
                format!("{} (volatile)", b.name)
            } else {
                b.name.to_owned()
            }
        })
        .collect();
    out.push_str(&format!("# built-in variables: {}\n", builtins.join(", ")));
    if merged.is_empty() {
        return;
    }
    entry(out, 0, "variables", "", None);
    for (from, e) in merged {
        entry(
            out,
            2,
            &e.name.value,
            "",
            Some(&at(from, from.span_of(&e.name).line)),
        );
        entry(out, 4, "description", &scalar(&e.spec.description), None);
        if let Some(value_type) = &e.spec.value_type {
            entry(out, 4, "type", value_type.value.as_str(), None);
        }
        let typed = e
            .spec
            .value_type
            .as_ref()
            .is_some_and(|t| t.value != VariableType::String);
        // A typed value is written plain (`8080`, `true`), as it was in the preset.
        let value = |text: &str| {
            if typed {
                text.trim().to_owned()
            } else {
                scalar(text)
            }
        };
        if let Some(choices) = &e.spec.choices {
            entry(out, 4, "enum", "", None);
            for c in choices {
                out.push_str(&format!("      - {}\n", value(&c.value)));
            }
        }
        if let Some(default) = &e.spec.default {
            entry(out, 4, "default", &value(&default.value), None);
        }
        if let Some(required) = e.spec.required {
            entry(out, 4, "required", &required.to_string(), None);
        }
        if let Some(volatile) = e.spec.volatile {
            entry(out, 4, "volatile", &volatile.to_string(), None);
        }
    }
}

fn tool_restriction(out: &mut String, preset: &ValidPreset, tools: &ToolCatalog) {
    let restricted_by: Vec<String> = preset
        .chain()
        .iter()
        .filter_map(|p| p.file.tools.as_ref().map(|t| at(p, p.span_of(t).line)))
        .collect();
    let note = if restricted_by.is_empty() {
        format!(
            "no restriction in the chain: all {} known tools",
            tools.len()
        )
    } else {
        format!("restricted by {}", restricted_by.join(", "))
    };
    let visible: Vec<&str> = preset
        .assembler()
        .registry()
        .names()
        .map(|n| n.as_str())
        .collect();
    entry(out, 0, "tools", "", Some(&note));
    if visible.is_empty() {
        entry(out, 2, "allow", "[]", Some("every tool hidden"));
        return;
    }
    let mut sorted = visible.clone();
    sorted.sort_unstable();
    entry(out, 2, "allow", "", Some("visible tools, in wire order"));
    for name in &visible {
        out.push_str(&format!("    - {}\n", scalar(name)));
    }
    if sorted != visible {
        entry(
            out,
            2,
            "order",
            "",
            Some("the wire order is not name order"),
        );
        for name in &visible {
            out.push_str(&format!("    - {}\n", scalar(name)));
        }
        out.push_str(&format!("    - {}\n", scalar(REST)));
    }
}

fn pass_env(out: &mut String, preset: &ValidPreset) {
    let names = preset.pass_env();
    if names.is_empty() {
        return;
    }
    entry(
        out,
        0,
        "passEnv",
        "",
        Some("passed to `bash` commands besides PATH, HOME, locale, TERM, TZ, TMPDIR"),
    );
    for name in names {
        let from = preset.chain().iter().find_map(|p| {
            let entry = p.file.pass_env.iter().flatten().find(|e| e.value == name)?;
            Some(at(p, p.span_of(entry).line))
        });
        match from {
            Some(from) => out.push_str(&format!("  - {}  # {from}\n", scalar(name))),
            None => out.push_str(&format!("  - {}\n", scalar(name))),
        }
    }
}
