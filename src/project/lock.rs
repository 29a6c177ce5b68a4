//! Prompt-drift locks: `lock` writes `presets.lock`, and `validate --locked` fails when a
//! preset's cacheable prefix no longer matches it, with a unified diff naming what
//! changed.
//!
//! Each preset's entry is its prefix rendered with pinned representative values (the
//! built-in variables' examples, the preset's own model and provider, `<name>` for
//! required variables), so the same presets give the same lock on every machine: its
//! fingerprint, token counts, and the prefix itself — every section (name, order, tokens,
//! text as a list of lines, so the lock diffs well in review) and every tool (name,
//! tokens, the definition sent). Runtime contexts are not in the prefix, so editing one
//! never changes the lock.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use similar::TextDiff;

use super::Project;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::preset::{ParsedPreset, ProvenanceError, ValidPreset};
use crate::prompt::{
    BUILTIN_VARIABLES, MODEL_VARIABLE, PROVIDER_VARIABLE, Values, is_derived_variable,
};
use crate::report::{order_json, pretty};
use crate::tokens;

/// The lock file's name, in the project directory.
pub const LOCK_FILE: &str = "presets.lock";

/// The format version of the lock file.
const LOCK_VERSION: u64 = 1;

/// Why a lock cannot be read or an entry not written.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The file exists but cannot be read.
    #[error("cannot read `{}`: {error}", path.display())]
    Read {
        /// The lock file.
        path: PathBuf,
        /// Why.
        error: crate::bounded::BoundedReadError,
    },
    /// The file is not a lock this build wrote.
    #[error("`{}` is not a lock file agent-presets wrote: {what}", path.display())]
    Corrupt {
        /// The lock file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// The preset's prefix could not be rendered with the pinned values.
    #[error("cannot lock `{preset}`: {what}")]
    Render {
        /// The preset.
        preset: String,
        /// What failed.
        what: String,
    },
}

impl LockError {
    /// How to fix it.
    pub fn help(&self) -> Option<&'static str> {
        match self {
            LockError::Corrupt { .. } => Some("run `agent-presets lock` to write it again"),
            LockError::Read { .. } | LockError::Render { .. } => None,
        }
    }
}

/// `presets.lock`: one entry per preset, by name.
#[derive(Debug, Default)]
pub struct LockFile {
    presets: BTreeMap<String, Value>,
}

impl LockFile {
    /// Where the lock lives for this project.
    pub fn path(project: &Project) -> PathBuf {
        project.project_dir.join(LOCK_FILE)
    }

    /// Read the lock; `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<LockFile>, LockError> {
        let bytes = match crate::bounded::read_bounded(path, MAX_LOCK_BYTES) {
            Ok(bytes) => bytes,
            Err(crate::bounded::BoundedReadError::NotFound) => return Ok(None),
            Err(error) => {
                return Err(LockError::Read {
                    path: path.to_path_buf(),
                    error,
                });
            }
        };
        let corrupt = |what: String| LockError::Corrupt {
            path: path.to_path_buf(),
            what,
        };
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        if value["version"] != LOCK_VERSION {
            return Err(corrupt(format!(
                "its `version` is {}, this build writes {LOCK_VERSION}",
                value["version"]
            )));
        }
        let presets = value["presets"]
            .as_object()
            .ok_or_else(|| corrupt("no `presets` object".into()))?
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Some(LockFile { presets }))
    }

    /// The file's text: pretty JSON, presets by name, a final newline.
    pub fn to_text(&self) -> String {
        let values: Map<String, Value> = pinned_runtime_values()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::from(v)))
            .collect();
        let presets: Map<String, Value> = self
            .presets
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        pretty(&json!({
            "version": LOCK_VERSION,
            "encoding": tokens::ENCODING,
            "values": values,
            "presets": presets,
        }))
    }

    /// The locked entry of `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.presets.get(name)
    }

    /// Lock `name` with `entry` (from [`entry`]), replacing what was locked.
    pub fn insert(&mut self, name: String, entry: Value) {
        self.presets.insert(name, entry);
    }

    /// Locked preset names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.presets.keys().map(String::as_str)
    }
}

/// A lock is JSON text a few KiB per preset; anything past this is not one.
const MAX_LOCK_BYTES: u64 = 64 * 1024 * 1024;

/// The runtime facts every entry is rendered with (the built-in variables' examples).
fn pinned_runtime_values() -> Vec<(&'static str, &'static str)> {
    BUILTIN_VARIABLES
        .iter()
        .filter(|b| !is_derived_variable(b.name))
        .filter(|b| b.name != MODEL_VARIABLE && b.name != PROVIDER_VARIABLE)
        .map(|b| (b.name, b.example))
        .collect()
}

/// The values a preset is locked with: the pinned runtime facts, the preset's model and
/// provider (the examples when it names none), and `<name>` for each required variable.
fn lock_values(preset: &ValidPreset) -> Values {
    let mut values = Values::new();
    for b in BUILTIN_VARIABLES
        .iter()
        .filter(|b| !is_derived_variable(b.name))
    {
        values.set(b.name, b.example);
    }
    for (name, value) in preset.default_values().iter() {
        values.set(name, value.clone());
    }
    for name in preset.assembler().required_variables() {
        values.set(name, format!("<{name}>"));
    }
    values
}

/// The lock entry of a valid preset.
pub fn entry(preset: &ValidPreset) -> Result<Value, LockError> {
    let values = lock_values(preset);
    let failed = |what: String| LockError::Render {
        preset: preset.name().to_owned(),
        what,
    };
    let assembly = preset
        .assembler()
        .assemble(&values)
        .map_err(|ds| failed(ds.to_string()))?;
    let provenance = preset.provenance(&values).map_err(|e| match e {
        ProvenanceError::Render(ds) => failed(ds.to_string()),
        ProvenanceError::Tokenizer(e) => failed(e.to_string()),
    })?;
    let text_value = |name: &str| values.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let sections: Vec<Value> = provenance
        .sections
        .iter()
        .map(|s| {
            json!({
                "name": s.piece.name,
                "order": order_json(s.piece.order),
                "tokens": s.size.tokens,
                "text": s.piece.text.lines().collect::<Vec<_>>(),
            })
        })
        .collect();
    let tools: Vec<Value> = assembly
        .tools
        .iter()
        .zip(&provenance.tools)
        .map(|(tool, p)| json!({ "name": tool.name, "tokens": p.tokens, "definition": tool }))
        .collect();
    Ok(json!({
        "provider": text_value(PROVIDER_VARIABLE),
        "model": text_value(MODEL_VARIABLE),
        "fingerprint": assembly.fingerprint.to_string(),
        "tokens": {
            "system": provenance.system.tokens,
            "tools": provenance.tool_tokens,
            "prefix": provenance.system.tokens + provenance.tool_tokens,
        },
        "sections": sections,
        "tools": tools,
    }))
}

/// A preset whose cacheable prefix differs from the lock: the whole story for people
/// and programs, one short finding per change for pull-request annotations.
#[derive(Debug)]
pub struct Drift {
    /// The preset.
    pub preset: String,
    /// Every change and its full unified diff (the human and JSON outputs).
    pub diagnostic: Diagnostic,
    /// One diagnostic per changed section, tool or model, each with a short, bounded
    /// diff and pinned on the line of the preset's own file that declares or inherits
    /// it (GitHub annotations and SARIF results); for a preset built into the binary,
    /// one without a location, since no file of the repository holds it.
    pub changes: Vec<Diagnostic>,
    /// The files the changes may come from (the layer that declares each changed item;
    /// the repository files of the chain for an item declared nowhere any more; the
    /// built-in tools): drifts that share one come from one edit, and are re-locked
    /// together.
    causes: BTreeSet<Arc<str>>,
}

/// Most diff lines an annotation shows; the rest are counted.
const MAX_DIFF_LINES: usize = 8;
/// Most characters of one diff line an annotation shows.
const MAX_DIFF_LINE_CHARS: usize = 160;
/// Most items of a tool's change summary an annotation shows.
const MAX_TOOL_CHANGES: usize = 6;
/// Most preset names one re-lock command lists; past this, `agent-presets lock` (all).
const MAX_RELOCK_NAMES: usize = 20;

/// What changed, for [`origin`].
#[derive(Clone, Copy)]
enum Item<'a> {
    /// A section written in a preset (declared, replaced or removed along the chain).
    Section(&'a str),
    /// A tool (or its guidance section) that became visible or hidden: the `tools`
    /// restriction along the chain decides.
    Listed(&'a str),
    /// A tool's definition or guidance, which comes with the tool registry.
    Definition(&'a str),
    /// The model or provider.
    Model,
    /// The prefix as a whole (order, fingerprint, token counts).
    Whole,
}

/// Where a change is reported and where it comes from.
struct Origin {
    /// A line of the preset's own file: where it declares the item, or its `extends`.
    span: Option<Span>,
    /// ", inherited from …", when the preset does not declare the item itself.
    from: String,
    /// The files (or the tool registry) the change may come from.
    causes: Vec<Arc<str>>,
}

const BUILTIN_PREFIX: &str = "<builtin>/";
const TOOL_REGISTRY: &str = "<built-in tools>";

fn is_builtin(p: &ParsedPreset) -> bool {
    p.source.display.starts_with(BUILTIN_PREFIX)
}

/// The layer (index in the chain) that declares `item`, and where.
fn declaring(chain: &[ParsedPreset], item: Item<'_>) -> Option<(usize, Span)> {
    let rev = chain.iter().enumerate().rev();
    match item {
        Item::Section(name) => rev.clone().find_map(|(i, p)| {
            let persona = p.file.persona.as_ref()?;
            let declared = persona
                .sections
                .iter()
                .flatten()
                .find(|s| s.name.value == name)
                .map(|s| p.span_of(&s.name));
            let removed = || {
                persona
                    .remove
                    .iter()
                    .flatten()
                    .find(|r| r.value == name)
                    .map(|r| p.span_of(r))
            };
            declared.or_else(removed).map(|span| (i, span))
        }),
        Item::Listed(tool) => rev.clone().find_map(|(i, p)| {
            let tools = p.file.tools.as_ref()?;
            let spec = &tools.value;
            let entry = [&spec.allow, &spec.deny, &spec.order]
                .into_iter()
                .flatten()
                .flatten()
                .find(|e| e.value == tool)
                .map(|e| p.span_of(e));
            Some((i, entry.unwrap_or_else(|| p.span_of(tools))))
        }),
        Item::Model => rev.clone().find_map(|(i, p)| {
            let model = p.file.model.as_ref()?;
            Some((i, p.span_of(&model.name)))
        }),
        Item::Definition(_) | Item::Whole => None,
    }
}

/// Where to report a change of `item` in `preset`, and where it comes from.
fn origin(preset: &ValidPreset, item: Item<'_>) -> Origin {
    let chain = preset.chain();
    let Some(leaf) = chain.last() else {
        return Origin {
            span: None,
            from: String::new(),
            causes: vec![TOOL_REGISTRY.into()],
        };
    };
    let leaf_index = chain.len() - 1;
    let extends_span = leaf.file.extends.as_ref().map(|e| leaf.span_of(e));
    let name_span = leaf.span_of(&leaf.file.name);
    let own = |span: Span| (!is_builtin(leaf)).then_some(span);
    match (item, declaring(chain, item)) {
        (_, Some((i, span))) if i == leaf_index => Origin {
            span: own(span),
            from: String::new(),
            causes: vec![leaf.source.display.clone()],
        },
        (_, Some((i, span))) => {
            let parent = &chain[i];
            let via = chain
                .get(leaf_index.saturating_sub(1))
                .filter(|_| i + 1 < leaf_index)
                .map(|p| format!(" through `{}`", p.name()))
                .unwrap_or_default();
            let from = if is_builtin(parent) {
                format!(
                    ", inherited from the built-in preset `{}`{via} (the lock was written with another version of it, by another agent-presets release?)",
                    parent.name()
                )
            } else {
                format!(", inherited from `{}`{via} ({span})", parent.name())
            };
            Origin {
                span: own(extends_span.unwrap_or(name_span)),
                from,
                causes: vec![parent.source.display.clone()],
            }
        }
        (Item::Definition(tool), None) => {
            let tools = leaf.file.tools.as_ref().map(|t| leaf.span_of(t));
            Origin {
                span: own(tools.or(extends_span).unwrap_or(name_span)),
                from: format!(
                    " (`{tool}` is a built-in tool: the lock was written with another version of it, by another agent-presets release?)"
                ),
                causes: vec![TOOL_REGISTRY.into()],
            }
        }
        (item, None) => Origin {
            span: own(extends_span.unwrap_or(name_span)),
            from: match (item, &leaf.file.extends) {
                (Item::Section(_), Some(parent)) => format!(
                    ", declared by neither `{name}` nor the presets it extends (`{}`, …) any more",
                    parent.value,
                    name = leaf.name()
                ),
                _ => String::new(),
            },
            // Declared nowhere now (removed from a parent, say): any file of the chain in
            // the repository may have done it.
            causes: {
                let files: Vec<Arc<str>> = chain
                    .iter()
                    .filter(|p| !is_builtin(p))
                    .map(|p| p.source.display.clone())
                    .collect();
                if files.is_empty() {
                    vec![leaf.source.display.clone()]
                } else {
                    files
                }
            },
        },
    }
}

/// The drift of `preset` when `now` (its entry as it renders today) differs from
/// `locked`: what changed, a unified diff of each changed section and tool, and one
/// short finding per change.
pub fn drift(preset: &ValidPreset, locked: &Value, now: &Value) -> Option<Drift> {
    if locked == now {
        return None;
    }
    let name = preset.name();
    let mut changes: Vec<String> = Vec::new();
    let mut parts: Vec<(Origin, String)> = Vec::new();
    let mut diff = String::new();
    for key in [PROVIDER_VARIABLE, MODEL_VARIABLE] {
        if locked[key] != now[key] {
            let what = format!("{key} {} → {}", shown(&locked[key]), shown(&now[key]));
            parts.push((origin(preset, Item::Model), what.clone()));
            changes.push(what);
        }
    }
    let (old_sections, new_sections) = (items(locked, "sections"), items(now, "sections"));
    for (section, old, new) in paired(&old_sections, &new_sections) {
        let (what, changed_text) = match (old, new) {
            (Some(o), Some(n)) if o == n => continue,
            (Some(o), Some(n)) if o["text"] == n["text"] => (
                format!(
                    "section `{section}` moved (order {} → {})",
                    o["order"], n["order"]
                ),
                false,
            ),
            (Some(_), Some(_)) => (format!("section `{section}` changed"), true),
            (Some(_), None) => (format!("section `{section}` removed"), true),
            (None, _) => (format!("section `{section}` added"), true),
        };
        let (old_text, new_text) = (
            old.map(section_text).unwrap_or_default(),
            new.map(section_text).unwrap_or_default(),
        );
        diff.push_str(&unified(
            &format!("section `{section}`"),
            &old_text,
            &new_text,
        ));
        let item = match section.strip_prefix("tool:") {
            Some(tool) if old.is_some() && new.is_some() => Item::Definition(tool),
            Some(tool) => Item::Listed(tool),
            None => Item::Section(&section),
        };
        let mut text = what.clone();
        if changed_text {
            text.push('\n');
            text.push_str(&bounded_diff(&old_text, &new_text, name));
        }
        parts.push((origin(preset, item), text));
        changes.push(what);
    }
    let (old_tools, new_tools) = (items(locked, "tools"), items(now, "tools"));
    for (tool, old, new) in paired(&old_tools, &new_tools) {
        let (what, item, summary) = match (old, new) {
            (Some(o), Some(n)) if o["definition"] == n["definition"] => continue,
            (Some(o), Some(n)) => (
                format!("tool `{tool}` changed"),
                Item::Definition(&tool),
                tool_summary(&o["definition"], &n["definition"]),
            ),
            (Some(_), None) => (
                format!("tool `{tool}` removed"),
                Item::Listed(&tool),
                vec![],
            ),
            (None, n) => (
                format!("tool `{tool}` added"),
                Item::Listed(&tool),
                n.map(|n| parameter_list(&n["definition"]))
                    .into_iter()
                    .flatten()
                    .collect(),
            ),
        };
        diff.push_str(&unified(
            &format!("tool `{tool}`"),
            &old.map(|t| pretty(&t["definition"])).unwrap_or_default(),
            &new.map(|t| pretty(&t["definition"])).unwrap_or_default(),
        ));
        let text = if summary.is_empty() {
            what.clone()
        } else {
            format!("{what}: {}", summary.join(", "))
        };
        parts.push((origin(preset, item), text));
        changes.push(what);
    }
    let order = |v: &[&Value]| v.iter().map(|s| s["name"].clone()).collect::<Vec<_>>();
    let mut whole = |what: &str, changes: &mut Vec<String>| {
        parts.push((origin(preset, Item::Whole), what.to_owned()));
        changes.push(what.to_owned());
    };
    if changes.is_empty() && order(&old_sections) != order(&new_sections) {
        whole("the order of the sections changed", &mut changes);
    }
    if changes.is_empty() && order(&old_tools) != order(&new_tools) {
        whole("the wire order of the tools changed", &mut changes);
    }
    if changes.is_empty() && locked["fingerprint"] != now["fingerprint"] {
        // Same prefix, another fingerprint: the lock predates the fingerprint's encoding.
        whole(
            "its fingerprint changed (the lock was written by a build that encoded fingerprints differently)",
            &mut changes,
        );
    }
    if changes.is_empty() {
        // Same prefix, other counts (e.g. a new tokenizer): the lock is merely stale.
        whole("its token counts changed", &mut changes);
    }
    let message = format!(
        "the cacheable prefix of `{name}` differs from {LOCK_FILE}: {}\n{}",
        changes.join(", "),
        diff.trim_end()
    );
    let help = relock_help(&[name], &BTreeSet::new());
    let span = parts
        .iter()
        .find_map(|(o, _)| o.span.clone())
        .or_else(|| preset_name_span(preset));
    let diagnostic = Diagnostic::new(DiagnosticKind::PrefixDrift, message.trim_end())
        .at(span)
        .help(help.clone());
    let causes = parts
        .iter()
        .flat_map(|(o, _)| o.causes.iter().cloned())
        .collect();
    let changes = if preset.chain().last().is_some_and(is_builtin) {
        // No file of the repository holds a built-in preset: one finding without a
        // location, the changes named (the diff is in the human and JSON outputs).
        vec![
            Diagnostic::new(
                DiagnosticKind::PrefixDrift,
                format!(
                    "the built-in preset `{name}` differs from {LOCK_FILE} (the lock was written by another agent-presets release?): {}",
                    cut(&changes.join(", "), 4 * MAX_DIFF_LINE_CHARS)
                ),
            )
            .help(help.clone()),
        ]
    } else {
        parts
            .into_iter()
            .map(|(o, text)| {
                let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
                let mut message = format!("`{name}`: {first}{}", o.from);
                if !rest.is_empty() {
                    message.push('\n');
                    message.push_str(rest.trim_end());
                }
                Diagnostic::new(DiagnosticKind::PrefixDrift, message)
                    .at(o.span)
                    .help(help.clone())
            })
            .collect()
    };
    Some(Drift {
        preset: name.to_owned(),
        diagnostic,
        changes,
        causes,
    })
}

/// The help of drifts that come from one edit: name them all and re-lock them with one
/// command. Each drift is grouped with every other that shares a cause (a file a
/// changed item comes from), transitively.
pub fn relate(drifts: &mut [&mut Drift]) {
    let n = drifts.len();
    let mut group: Vec<usize> = (0..n).collect();
    fn find(group: &mut [usize], mut i: usize) -> usize {
        while group[i] != i {
            group[i] = group[group[i]];
            i = group[i];
        }
        i
    }
    let mut first_with: BTreeMap<&Arc<str>, usize> = BTreeMap::new();
    for (i, d) in drifts.iter().enumerate() {
        for cause in &d.causes {
            match first_with.get(cause) {
                Some(&j) => {
                    let (a, b) = (find(&mut group, i), find(&mut group, j));
                    group[a.max(b)] = a.min(b);
                }
                None => {
                    first_with.insert(cause, i);
                }
            }
        }
    }
    let roots: Vec<usize> = (0..n).map(|i| find(&mut group, i)).collect();
    let helps: Vec<Option<String>> = (0..n)
        .map(|i| {
            let members: Vec<usize> = (0..n).filter(|&j| roots[j] == roots[i]).collect();
            if members.len() < 2 {
                return None;
            }
            let names: Vec<&str> = members.iter().map(|&j| drifts[j].preset.as_str()).collect();
            // The causes this drift shares with the others of its group.
            let shared: BTreeSet<Arc<str>> = drifts[i]
                .causes
                .iter()
                .filter(|c| {
                    members
                        .iter()
                        .any(|&j| j != i && drifts[j].causes.contains(*c))
                })
                .cloned()
                .collect();
            Some(relock_help(&names, &shared))
        })
        .collect();
    for (d, help) in drifts.iter_mut().zip(helps) {
        if let Some(help) = help {
            d.diagnostic.help = Some(help.clone());
            for c in &mut d.changes {
                c.help = Some(help.clone());
            }
        }
    }
}

/// "if the change is intended, run `agent-presets lock a b` and commit presets.lock",
/// naming the presets that drifted through one edit of `causes`.
fn relock_help(names: &[&str], causes: &BTreeSet<Arc<str>>) -> String {
    let command = if names.len() > MAX_RELOCK_NAMES {
        "agent-presets lock".to_owned()
    } else {
        format!("agent-presets lock {}", names.join(" "))
    };
    if names.len() < 2 {
        return format!("if the change is intended, run `{command}` and commit {LOCK_FILE}");
    }
    let listed: Vec<String> = names
        .iter()
        .take(MAX_RELOCK_NAMES)
        .map(|n| format!("`{n}`"))
        .collect();
    let more = names.len().saturating_sub(MAX_RELOCK_NAMES);
    let mut who = listed.join(", ");
    if more > 0 {
        who.push_str(&format!(" and {more} more"));
    }
    let through = if causes.is_empty() {
        String::new()
    } else {
        let files: Vec<String> = causes.iter().map(|c| cause_text(c)).collect();
        format!(" through a change of {}", files.join(" and "))
    };
    format!(
        "{} presets drifted{through}: {who}; if the change is intended, re-lock them all with `{command}` and commit {LOCK_FILE}",
        names.len()
    )
}

/// A cause as a sentence shows it: `` `.agent-presets/x.yaml` ``, "the built-in preset
/// `standard`", "the built-in tools".
fn cause_text(cause: &str) -> String {
    if cause == TOOL_REGISTRY {
        "the built-in tools".to_owned()
    } else if let Some(file) = cause.strip_prefix(BUILTIN_PREFIX) {
        let name = file.strip_suffix(".yaml").unwrap_or(file);
        format!("the built-in preset `{name}`")
    } else {
        format!("`{cause}`")
    }
}

/// A few lines of the diff of `old` and `new` (hunk headers and changed lines, each
/// cut at [`MAX_DIFF_LINE_CHARS`]), at most [`MAX_DIFF_LINES`], then how many more.
fn bounded_diff(old: &str, new: &str, preset: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let text = diff.unified_diff().context_radius(0).to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(MAX_DIFF_LINES)
        .map(|l| cut(l, MAX_DIFF_LINE_CHARS))
        .collect();
    if lines.len() > MAX_DIFF_LINES {
        out.push(format!(
            "… {} more diff lines: `agent-presets validate --locked {preset}` shows them all",
            lines.len() - MAX_DIFF_LINES
        ));
    }
    out.join("\n")
}

fn cut(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// The parameters of a tool definition: "parameters `a`, `b`".
fn parameter_list(definition: &Value) -> Option<String> {
    let props = definition["parameters"]["properties"].as_object()?;
    if props.is_empty() {
        return None;
    }
    let names: Vec<String> = props.keys().map(|k| format!("`{k}`")).collect();
    Some(format!("parameters {}", names.join(", ")))
}

/// What differs between two definitions of a tool, in a few words each: "`description`
/// changed", "parameter `x` added", "parameter `y`: `type` changed", "`x` now required".
fn tool_summary(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    keys_changed(old, new, &["parameters"], "", &mut out);
    let (op, np) = (&old["parameters"], &new["parameters"]);
    keys_changed(op, np, &["properties", "required"], "parameters ", &mut out);
    let empty = Map::new();
    let (oprops, nprops) = (
        op["properties"].as_object().unwrap_or(&empty),
        np["properties"].as_object().unwrap_or(&empty),
    );
    for (k, v) in nprops {
        match oprops.get(k) {
            None => out.push(format!("parameter `{k}` added")),
            Some(o) if o != v => {
                let mut inner = Vec::new();
                keys_changed(o, v, &[], "", &mut inner);
                if inner.is_empty() {
                    out.push(format!("parameter `{k}` changed"));
                } else {
                    out.push(format!("parameter `{k}`: {}", inner.join(", ")));
                }
            }
            Some(_) => {}
        }
    }
    for k in oprops.keys().filter(|k| !nprops.contains_key(*k)) {
        out.push(format!("parameter `{k}` removed"));
    }
    let required = |v: &Value| -> BTreeSet<String> {
        v["required"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (oreq, nreq) = (required(op), required(np));
    for k in nreq.difference(&oreq) {
        out.push(format!("`{k}` now required"));
    }
    for k in oreq.difference(&nreq).filter(|k| nprops.contains_key(*k)) {
        out.push(format!("`{k}` no longer required"));
    }
    if out.is_empty() {
        out.push("its definition changed".to_owned());
    }
    if out.len() > MAX_TOOL_CHANGES {
        let more = out.len() - MAX_TOOL_CHANGES;
        out.truncate(MAX_TOOL_CHANGES);
        out.push(format!("{more} more changes"));
    }
    out
}

/// "`key` changed / added / removed" for each top-level key of two objects that differs,
/// except `skip`.
fn keys_changed(old: &Value, new: &Value, skip: &[&str], prefix: &str, out: &mut Vec<String>) {
    let empty = Map::new();
    let (o, n) = (
        old.as_object().unwrap_or(&empty),
        new.as_object().unwrap_or(&empty),
    );
    for (k, v) in n {
        if skip.contains(&k.as_str()) {
            continue;
        }
        match o.get(k) {
            None => out.push(format!("{prefix}`{k}` added")),
            Some(ov) if ov != v => out.push(format!("{prefix}`{k}` changed")),
            Some(_) => {}
        }
    }
    for k in o
        .keys()
        .filter(|k| !n.contains_key(*k) && !skip.contains(&k.as_str()))
    {
        out.push(format!("{prefix}`{k}` removed"));
    }
}

/// `prefix-drift` for a valid preset that the lock does not know.
pub fn not_locked(preset: &ValidPreset) -> Drift {
    let diagnostic = not_locked_diagnostic(preset);
    Drift {
        preset: preset.name().to_owned(),
        changes: vec![diagnostic.clone()],
        diagnostic,
        causes: BTreeSet::new(),
    }
}

fn not_locked_diagnostic(preset: &ValidPreset) -> Diagnostic {
    let name = preset.name();
    Diagnostic::new(
        DiagnosticKind::PrefixDrift,
        format!("`{name}` is not in {LOCK_FILE}"),
    )
    .at(preset_name_span(preset))
    .help(format!(
        "run `agent-presets lock {name}` and commit {LOCK_FILE}"
    ))
}

/// `prefix-drift` for a locked preset nobody offers any more.
pub fn gone(name: &str) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::PrefixDrift,
        format!("{LOCK_FILE} locks `{name}`, which is no longer on offer"),
    )
    .help(format!(
        "run `agent-presets lock` to drop it (or restore the preset), and commit {LOCK_FILE}"
    ))
}

fn shown(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

fn items<'a>(entry: &'a Value, key: &str) -> Vec<&'a Value> {
    entry[key]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// Items of two lists matched by `name`: those of `new` in its order, then the ones only
/// `old` has.
fn paired<'a>(
    old: &[&'a Value],
    new: &[&'a Value],
) -> Vec<(String, Option<&'a Value>, Option<&'a Value>)> {
    let name = |v: &Value| v["name"].as_str().unwrap_or_default().to_owned();
    let mut out: Vec<(String, Option<&Value>, Option<&Value>)> = new
        .iter()
        .map(|n| {
            let key = name(n);
            let o = old.iter().copied().find(|o| name(o) == key);
            (key, o, Some(*n))
        })
        .collect();
    for o in old {
        let key = name(o);
        if !new.iter().any(|n| name(n) == key) {
            out.push((key, Some(*o), None));
        }
    }
    out
}

/// A section's text as the lock stores it (lines), joined back.
fn section_text(section: &Value) -> String {
    let lines: Vec<&str> = section["text"]
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// A unified diff of one item, headed by what it is.
fn unified(what: &str, old: &str, new: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut text = diff
        .unified_diff()
        .context_radius(2)
        .header(&format!("{LOCK_FILE}: {what}"), &format!("now: {what}"))
        .to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

fn preset_name_span(preset: &ValidPreset) -> Option<Span> {
    preset.chain().last().map(|p| p.span_of(&p.file.name))
}

/// Locked presets, other than `locked`, that extend one of `locked` and whose prefix no
/// longer matches their entry in `lock`: after `lock docs-writer`, a `strict-docs` that
/// extends it.
pub fn stale_descendants(project: &Project, lock: &LockFile, locked: &[String]) -> Vec<String> {
    let mut stale = Vec::new();
    for name in lock.names() {
        if locked.iter().any(|l| l == name) || !project.presets.contains(name) {
            continue;
        }
        let Some(preset) = project.validate(name).preset else {
            continue;
        };
        let extends_locked = preset
            .chain()
            .iter()
            .any(|p| p.name() != name && locked.iter().any(|l| l == p.name()));
        if extends_locked && entry(&preset).ok().as_ref() != lock.get(name) {
            stale.push(name.to_owned());
        }
    }
    stale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_annotation_diff_is_bounded_in_lines_and_characters() {
        let old: String = (0..30).map(|i| format!("line {i}\n")).collect();
        let new = format!("{}\n", "x".repeat(8_496));
        let text = bounded_diff(&old, &new, "big");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), MAX_DIFF_LINES + 1, "{text}");
        assert!(
            lines
                .iter()
                .all(|l| l.chars().count() <= MAX_DIFF_LINE_CHARS + 1),
            "{text}"
        );
        assert_eq!(
            lines[MAX_DIFF_LINES],
            "… 24 more diff lines: `agent-presets validate --locked big` shows them all"
        );
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("hé", 2), "hé");
    }

    #[test]
    fn a_tool_schema_change_is_summarised() {
        let old = json!({
            "name": "t",
            "description": "Old.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "A path." },
                    "gone": { "type": "string" }
                },
                "required": ["path"]
            }
        });
        let new = json!({
            "name": "t",
            "description": "New.",
            "parameters": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "The path." },
                    "limit": { "type": "integer" }
                },
                "required": ["path", "limit"]
            }
        });
        assert_eq!(
            tool_summary(&old, &new),
            [
                "`description` changed",
                "parameters `additionalProperties` added",
                "parameter `path`: `description` changed",
                "parameter `limit` added",
                "parameter `gone` removed",
                "`limit` now required"
            ]
        );
        assert_eq!(tool_summary(&old, &old), ["its definition changed"]);
        assert_eq!(
            parameter_list(&new).as_deref(),
            Some("parameters `path`, `limit`")
        );
    }

    #[test]
    fn a_relock_command_names_at_most_a_few_presets() {
        assert_eq!(
            relock_help(&["a"], &BTreeSet::new()),
            "if the change is intended, run `agent-presets lock a` and commit presets.lock"
        );
        let names: Vec<String> = (0..25).map(|i| format!("p{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let causes = BTreeSet::from([Arc::from("<builtin>/standard.yaml")]);
        let help = relock_help(&refs, &causes);
        assert!(
            help.starts_with(
                "25 presets drifted through a change of the built-in preset `standard`: `p0`, "
            ),
            "{help}"
        );
        assert!(
            help.ends_with(
                "`p19` and 5 more; if the change is intended, re-lock them all with `agent-presets lock` and commit presets.lock"
            ),
            "{help}"
        );
    }
}
