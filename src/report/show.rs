//! `show`: a preset resolved along its `extends` chain, written as one flattened preset
//! in YAML, with comments saying which file and line each piece comes from
//! ([`resolved_yaml`]).
//!
//! Sections are listed in prompt order (before `when` is evaluated), tool guidance
//! included; shadowed and removed sections are gone (removals are noted in comments).
//! Contexts and variables are the merged ones; `tools.allow` lists the visible tools and
//! `tools.order` their wire order when it is not the plain name order.

use std::collections::BTreeMap;

use super::yaml::{entry, number, scalar, text_entry, value_entry};
use crate::preset::source::ParsedPreset;
use crate::preset::spec::{ContextSpec, ModelSpec, SectionSpec, VariableEntry, VariableType};
use crate::preset::validate::ValidPreset;
use crate::preset::{PresetCatalog, Spanned};
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
    sandbox(&mut out, chain);
    allow_read(&mut out, preset);
    own_tools(&mut out, preset);
    permissions(&mut out, chain);
    hooks(&mut out, chain);
    limits(&mut out, chain);
    output(&mut out, chain);
    checks(&mut out, chain);
    texts(&mut out, preset);
    out
}

/// `key: <spec>` for a declaration written out whole (a server, a command tool).
fn spec_entry(
    out: &mut String,
    indent: usize,
    key: &str,
    spec: &impl serde::Serialize,
    from: &str,
) {
    match serde_json::to_value(spec) {
        Ok(value) => value_entry(out, indent, key, &value, Some(from)),
        // Not reached for the spec types (string keys, no failing serializer); said
        // rather than dropped all the same.
        Err(e) => out.push_str(&format!(
            "{:indent$}# {key} ({from}) could not be written: {e}\n",
            ""
        )),
    }
}

/// The nearest `sandbox` of the chain (none: the default, `workspace-write`).
fn sandbox(out: &mut String, chain: &[ParsedPreset]) {
    if let Some((p, s)) = chain
        .iter()
        .rev()
        .find_map(|p| p.file.sandbox.as_ref().map(|s| (p, s)))
    {
        entry(
            out,
            0,
            "sandbox",
            s.value.mode().as_str(),
            Some(&at(p, p.span_of(s).line)),
        );
    }
}

/// The chain's `allowRead` paths, each once, root first.
fn allow_read(out: &mut String, preset: &ValidPreset) {
    let paths = preset.allow_read();
    if paths.is_empty() {
        return;
    }
    entry(out, 0, "allowRead", "", None);
    for path in paths {
        let from = preset.chain().iter().find_map(|p| {
            let e = p
                .file
                .allow_read
                .iter()
                .flatten()
                .find(|e| e.value == path)?;
            Some(at(p, p.span_of(e).line))
        });
        match from {
            Some(from) => out.push_str(&format!("  - {}  # {from}\n", scalar(path))),
            None => out.push_str(&format!("  - {}\n", scalar(path))),
        }
    }
}

/// The MCP servers and command tools in force: along `extends`, the nearest declaration
/// of each name, written out whole.
fn own_tools(out: &mut String, preset: &ValidPreset) {
    let servers = preset.mcp_servers();
    if !servers.is_empty() {
        entry(out, 0, "mcpServers", "", None);
        for s in servers {
            let from = at(s.preset, s.preset.span_of(s.name).line);
            spec_entry(out, 2, &s.name.value, s.spec, &from);
        }
    }
    // A command tool the leaf hides is left out: the flattened preset would declare a tool
    // nobody sees (`hidden-own-tool`), and the model never sees it either way.
    let visible: Vec<&str> = preset
        .assembler()
        .registry()
        .names()
        .map(|n| n.as_str())
        .collect();
    let (shown, hidden): (Vec<_>, Vec<_>) = preset
        .commands()
        .into_iter()
        .partition(|c| visible.contains(&c.name.value.as_str()));
    if !shown.is_empty() {
        entry(out, 0, "commands", "", None);
        for c in shown {
            let from = at(c.preset, c.preset.span_of(c.name).line);
            spec_entry(out, 2, &c.name.value, c.spec, &from);
        }
    }
    for c in hidden {
        out.push_str(&format!(
            "# command tool `{}` ({}) is hidden here: left out\n",
            c.name.value,
            at(c.preset, c.preset.span_of(c.name).line)
        ));
    }
}

/// The permission rules in force, merged along the chain into one `permissions:` (no
/// `override` needed: the flattened preset has no parent).
fn permissions(out: &mut String, chain: &[ParsedPreset]) {
    use crate::policy::List;
    let refs: Vec<&ParsedPreset> = chain.iter().collect();
    let rules = crate::preset::permissions::rules_in_force(&refs);
    if rules.is_empty() {
        return;
    }
    entry(
        out,
        0,
        "permissions",
        "",
        Some("evaluated deny, then ask, then allow"),
    );
    for (list, key) in [
        (List::Deny, "deny"),
        (List::Ask, "ask"),
        (List::Allow, "allow"),
    ] {
        let mut of_list = rules.iter().filter(|(l, _, _)| *l == list).peekable();
        if of_list.peek().is_none() {
            continue;
        }
        entry(out, 2, key, "", None);
        for (_, p, rule) in of_list {
            out.push_str(&format!(
                "    - {}  # {}\n",
                scalar(&rule.value),
                at(p, p.span_of(*rule).line)
            ));
        }
    }
}

/// The hooks in force: each event's lists along the chain, root first, written out whole.
fn hooks(out: &mut String, chain: &[ParsedPreset]) {
    let mut started = false;
    for event in crate::hooks::HookEvent::ALL {
        let specs: Vec<(&ParsedPreset, &crate::preset::HookSpec)> = chain
            .iter()
            .flat_map(|p| {
                p.file.hooks.iter().flat_map(move |h| {
                    crate::preset::hooks::list(h, event)
                        .iter()
                        .map(move |s| (p, s))
                })
            })
            .collect();
        let Some((first, spec)) = specs.first() else {
            continue;
        };
        if !started {
            entry(
                out,
                0,
                "hooks",
                "",
                Some("each event's hooks along extends, root first"),
            );
            started = true;
        }
        let values: Vec<serde_json::Value> = specs
            .iter()
            .filter_map(|(_, s)| serde_json::to_value(s).ok())
            .collect();
        let from = at(first, first.span_of(&spec.run).line);
        value_entry(
            out,
            2,
            event.key(),
            &serde_json::Value::Array(values),
            Some(&from),
        );
    }
}

/// The success checks in force: the lists along the chain, root first, written out whole.
fn checks(out: &mut String, chain: &[ParsedPreset]) {
    let specs: Vec<(&ParsedPreset, &crate::preset::spec::CheckSpec)> = chain
        .iter()
        .flat_map(|p| p.file.checks.iter().flatten().map(move |c| (p, c)))
        .collect();
    let Some((first, spec)) = specs.first() else {
        return;
    };
    let values: Vec<serde_json::Value> = specs
        .iter()
        .filter_map(|(_, s)| serde_json::to_value(s).ok())
        .collect();
    let from = format!(
        "the checks along extends, root first; {}",
        at(first, first.span_of(&spec.run).line)
    );
    value_entry(
        out,
        0,
        "checks",
        &serde_json::Value::Array(values),
        Some(&from),
    );
}

/// The run limits: each from the nearest preset that sets it.
fn limits(out: &mut String, chain: &[ParsedPreset]) {
    let nearest = |get: fn(&crate::preset::spec::LimitsSpec) -> Option<&Spanned<u32>>| {
        nearest_number(chain, |f| f.limits.as_ref(), get)
    };
    let steps = nearest(|l| l.max_steps.as_ref());
    let calls = nearest(|l| l.max_tool_calls.as_ref());
    if steps.is_none() && calls.is_none() {
        return;
    }
    entry(out, 0, "limits", "", None);
    if let Some((n, from)) = steps {
        entry(out, 2, "maxSteps", &n.to_string(), Some(&from));
    }
    if let Some((n, from)) = calls {
        entry(out, 2, "maxToolCalls", &n.to_string(), Some(&from));
    }
}

/// The output contract: the nearest preset's `output`, whole, its schema inline (a
/// `schemaFile` was read into it).
fn output(out: &mut String, chain: &[ParsedPreset]) {
    let Some((preset, spec)) = chain
        .iter()
        .rev()
        .find_map(|p| p.file.output.as_ref().map(|o| (p, o)))
    else {
        return;
    };
    let Some(schema) = &spec.schema else {
        return;
    };
    let from = at(preset, preset.span_of(schema).line);
    entry(out, 0, "output", "", None);
    value_entry(out, 2, "schema", &schema.value, Some(&from));
    if let Some(retries) = &spec.retries {
        let from = at(preset, preset.span_of(retries).line);
        entry(out, 2, "retries", &retries.value.to_string(), Some(&from));
    }
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

/// A number of a block along the chain (`budget`, `limits`): from the nearest preset that
/// sets it, with its `file:line`.
fn nearest_number<'a, S: 'a>(
    chain: &'a [ParsedPreset],
    block: fn(&'a crate::preset::spec::PresetFile) -> Option<&'a S>,
    get: fn(&S) -> Option<&Spanned<u32>>,
) -> Option<(u32, String)> {
    chain.iter().rev().find_map(|p| {
        block(&p.file)
            .and_then(get)
            .map(|v| (v.value, at(p, p.span_of(v).line)))
    })
}

/// The token budget in force: per key, the nearest preset that sets it.
fn budget(out: &mut String, chain: &[ParsedPreset]) {
    let nearest = |get: fn(&crate::preset::BudgetSpec) -> Option<&Spanned<u32>>| {
        nearest_number(chain, |f| f.budget.as_ref(), get)
    };
    let system = nearest(|b| b.max_system_tokens.as_ref());
    let tools = nearest(|b| b.max_tool_tokens.as_ref());
    let context = nearest(|b| b.max_context_tokens.as_ref());
    if system.is_none() && tools.is_none() && context.is_none() {
        return;
    }
    entry(out, 0, "budget", "", Some("o200k_base tokens"));
    if let Some((n, from)) = system {
        entry(out, 2, "maxSystemTokens", &n.to_string(), Some(&from));
    }
    if let Some((n, from)) = tools {
        entry(out, 2, "maxToolTokens", &n.to_string(), Some(&from));
    }
    if let Some((n, from)) = context {
        entry(out, 2, "maxContextTokens", &n.to_string(), Some(&from));
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
    let defined_as = |name: &str| {
        chain.iter().rev().find_map(|p| {
            p.file
                .persona
                .as_ref()?
                .sections
                .as_ref()?
                .iter()
                .find(|s| s.name.value == name)
                .map(|s| (p, s))
        })
    };
    // Under a `complete` section without `when`, a tool's own guidance is never sent:
    // written out, it would be a section of the flattened preset that is never sent.
    let whole = assembler.section_names().any(|name| {
        defined_as(name).is_some_and(|(_, s)| s.complete == Some(true) && s.when.is_none())
    });
    for name in assembler.section_names() {
        let defined = defined_as(name);
        if defined.is_none() && whole {
            out.push_str(&format!(
                "    # {name}: the tool's guidance, never sent beside the `complete` section\n"
            ));
            continue;
        }
        match defined {
            Some((p, s)) => section(
                out,
                p,
                s,
                Replaces {
                    what: assembler.replaced_section(name),
                    guidance: name
                        .strip_prefix("tool:")
                        .and_then(|t| tools.get(t))
                        .is_some_and(|t| t.guidance().is_some()),
                },
                replaced(preset, "section", p, name),
            ),
            None => guidance(out, name, tools, preset),
        }
    }

    // A removed section is simply not written; a removed tool guidance is written as a
    // removal, or the flattened preset would get the visible tool's guidance back.
    let written: Vec<&str> = assembler.section_names().collect();
    let visible: Vec<&str> = assembler.registry().names().map(|n| n.as_str()).collect();
    let mut kept = Vec::new();
    for p in chain {
        for r in p
            .file
            .persona
            .iter()
            .flat_map(|persona| persona.remove.iter().flatten())
        {
            let from = at(p, p.span_of(r).line);
            let guidance_back = r.value.strip_prefix("tool:").is_some_and(|t| {
                visible.contains(&t) && tools.get(t).is_some_and(|t| t.guidance().is_some())
            });
            if guidance_back && !written.contains(&r.value.as_str()) {
                if !kept.iter().any(|(v, _): &(&str, String)| *v == r.value) {
                    kept.push((r.value.as_str(), from));
                }
            } else {
                out.push_str(&format!("  # removed: {} ({from})\n", r.value));
            }
        }
    }
    if !kept.is_empty() {
        entry(out, 2, "remove", "", Some("tool guidance left out"));
        for (name, from) in kept {
            out.push_str(&format!("    - {}  # {from}\n", scalar(name)));
        }
    }
}

/// The text a locale pack or `texts:` puts in place of a section or context of the chain
/// (`kind` is `section` or `context`; the id names the preset that wrote it, which the
/// flattened preset does not keep, so the text is written in place).
fn replaced<'a>(
    preset: &'a ValidPreset,
    kind: &str,
    from: &ParsedPreset,
    name: &str,
) -> Option<&'a str> {
    preset
        .texts()
        .replacement(&format!("{kind}.{}.{name}", from.name()))
        .map(|e| e.text.as_str())
}

/// What a written section replaces: along the chain (`what`), and whether it still
/// replaces a tool's own guidance in the flattened preset.
struct Replaces<'a> {
    what: Option<&'a Replaced>,
    guidance: bool,
}

fn section(
    out: &mut String,
    from: &ParsedPreset,
    s: &SectionSpec,
    replaces: Replaces<'_>,
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
    override_entry(out, 6, replaces.guidance, replaces.what);
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
    // Written out, it replaces the guidance it copies: marked, so the flattened preset
    // validates without an `implicit-override` warning.
    entry(out, 6, "override", "true", None);
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

/// A comment naming what the piece replaced along the chain; `override: true` only where
/// the flattened preset still has something it replaces (`still_replaces`: a `tool:`
/// section replaces the tool's own guidance), since there is no parent left to replace
/// (`override-without-parent` would warn).
fn override_entry(
    out: &mut String,
    indent: usize,
    still_replaces: bool,
    replaced: Option<&Replaced>,
) {
    let note = replaced.map(|r| format!("replaces {r}"));
    if still_replaces {
        entry(out, indent, "override", "true", note.as_deref());
    } else if let Some(note) = note {
        out.push_str(&format!("{:indent$}# {note}\n", ""));
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
            false,
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
        // The host's tools and the preset's own (command tools, server tools).
        format!(
            "no restriction in the chain: all {} known tools",
            preset
                .assembler()
                .registry()
                .names()
                .count()
                .max(tools.len())
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
        Some(
            "passed to `bash` commands besides PATH, HOME, locale, TERM, TZ, TMPDIR, CA and proxy settings",
        ),
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
