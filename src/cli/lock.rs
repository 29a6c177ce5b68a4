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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Map, Value, json};
use similar::TextDiff;

use super::project_file::write_confined;
use super::report::{order_json, pretty};
use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::preset::{ProvenanceError, ValidPreset};
use crate::prompt::{
    BUILTIN_VARIABLES, MODEL_VARIABLE, PROVIDER_VARIABLE, Values, is_derived_variable,
};
use crate::tokens;

/// The lock file's name, in the project directory.
pub(crate) const LOCK_FILE: &str = "presets.lock";

/// The format version of the lock file.
const LOCK_VERSION: u64 = 1;

/// Arguments of `lock`.
#[derive(Debug, Args)]
pub(crate) struct LockArgs {
    /// Presets to lock (their entries are replaced, the others kept). Default: every
    /// preset on offer, built-ins included, and entries of presets no longer on offer are
    /// dropped.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
}

/// `presets.lock`: one entry per preset, by name.
#[derive(Debug, Default)]
pub(crate) struct LockFile {
    presets: BTreeMap<String, Value>,
}

impl LockFile {
    /// Where the lock lives for this workspace.
    pub(crate) fn path(workspace: &Workspace) -> PathBuf {
        workspace.project_dir.join(LOCK_FILE)
    }

    /// Read the lock; `Ok(None)` when there is none. A lock that cannot be read or
    /// parsed is a usage error (exit 2).
    pub(crate) fn load(path: &Path) -> Result<Option<LockFile>, CliError> {
        let bytes = match crate::bounded::read_bounded(path, MAX_LOCK_BYTES) {
            Ok(bytes) => bytes,
            Err(crate::bounded::BoundedReadError::NotFound) => return Ok(None),
            Err(e) => {
                return Err(CliError::usage(format!(
                    "cannot read `{}`: {e}",
                    path.display()
                )));
            }
        };
        let corrupt = |what: String| {
            CliError::usage_with(
                format!(
                    "`{}` is not a lock file agent-presets wrote: {what}",
                    path.display()
                ),
                Some("run `agent-presets lock` to write it again".into()),
            )
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
    fn to_text(&self) -> String {
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
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.presets.get(name)
    }

    /// Locked preset names.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
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
pub(crate) fn entry(preset: &ValidPreset) -> Result<Value, CliError> {
    let values = lock_values(preset);
    let failed = |what: String| CliError::usage(format!("cannot lock `{}`: {what}", preset.name()));
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

/// `prefix-drift` when `now` (the entry of `preset` as it renders today) differs from
/// `locked`: what changed, then a unified diff of each changed section and tool.
pub(crate) fn drift(preset: &ValidPreset, locked: &Value, now: &Value) -> Option<Diagnostic> {
    if locked == now {
        return None;
    }
    let name = preset.name();
    let mut changes: Vec<String> = Vec::new();
    let mut diff = String::new();
    let mut first_changed: Option<String> = None;
    for key in [PROVIDER_VARIABLE, MODEL_VARIABLE] {
        if locked[key] != now[key] {
            changes.push(format!(
                "{key} {} → {}",
                shown(&locked[key]),
                shown(&now[key])
            ));
        }
    }
    let (old_sections, new_sections) = (items(locked, "sections"), items(now, "sections"));
    for (section, old, new) in paired(&old_sections, &new_sections) {
        let what = match (old, new) {
            (Some(o), Some(n)) if o == n => continue,
            (Some(o), Some(n)) if o["text"] == n["text"] => format!(
                "section `{section}` moved (order {} → {})",
                o["order"], n["order"]
            ),
            (Some(_), Some(_)) => format!("section `{section}` changed"),
            (Some(_), None) => format!("section `{section}` removed"),
            (None, _) => format!("section `{section}` added"),
        };
        if new.is_some() && first_changed.is_none() {
            first_changed = Some(section.to_owned());
        }
        diff.push_str(&unified(
            &format!("section `{section}`"),
            &old.map(section_text).unwrap_or_default(),
            &new.map(section_text).unwrap_or_default(),
        ));
        changes.push(what);
    }
    let (old_tools, new_tools) = (items(locked, "tools"), items(now, "tools"));
    for (tool, old, new) in paired(&old_tools, &new_tools) {
        let what = match (old, new) {
            (Some(o), Some(n)) if o["definition"] == n["definition"] => continue,
            (Some(_), Some(_)) => format!("tool `{tool}` changed"),
            (Some(_), None) => format!("tool `{tool}` removed"),
            (None, _) => format!("tool `{tool}` added"),
        };
        diff.push_str(&unified(
            &format!("tool `{tool}`"),
            &old.map(|t| pretty(&t["definition"])).unwrap_or_default(),
            &new.map(|t| pretty(&t["definition"])).unwrap_or_default(),
        ));
        changes.push(what);
    }
    let order = |v: &[&Value]| v.iter().map(|s| s["name"].clone()).collect::<Vec<_>>();
    if changes.is_empty() && order(&old_sections) != order(&new_sections) {
        changes.push("the order of the sections changed".to_owned());
    }
    if changes.is_empty() && order(&old_tools) != order(&new_tools) {
        changes.push("the wire order of the tools changed".to_owned());
    }
    if changes.is_empty() && locked["fingerprint"] != now["fingerprint"] {
        // Same prefix, another fingerprint: the lock predates the fingerprint's encoding.
        changes.push(
            "its fingerprint changed (the lock was written by a build that encoded fingerprints differently)"
                .to_owned(),
        );
    }
    if changes.is_empty() {
        // Same prefix, other counts (e.g. a new tokenizer): the lock is merely stale.
        changes.push("its token counts changed".to_owned());
    }
    let message = format!(
        "the cacheable prefix of `{name}` differs from {LOCK_FILE}: {}\n{}",
        changes.join(", "),
        diff.trim_end()
    );
    let span = first_changed
        .and_then(|section| section_span(preset, &section))
        .or_else(|| preset_name_span(preset));
    Some(
        Diagnostic::new(DiagnosticKind::PrefixDrift, message.trim_end())
            .at(span)
            .help(format!(
                "if the change is intended, run `agent-presets lock {name}` and commit {LOCK_FILE}"
            )),
    )
}

/// `prefix-drift` for a valid preset that the lock does not know.
pub(crate) fn not_locked(preset: &ValidPreset) -> Diagnostic {
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
pub(crate) fn gone(name: &str) -> Diagnostic {
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

/// Where the preset (the nearest in its chain) declares `section`.
fn section_span(preset: &ValidPreset, section: &str) -> Option<Span> {
    preset.chain().iter().rev().find_map(|p| {
        let sections = p.file.persona.as_ref()?.sections.as_ref()?;
        sections
            .iter()
            .find(|s| s.name.value == section)
            .map(|s| p.span_of(&s.name))
    })
}

fn preset_name_span(preset: &ValidPreset) -> Option<Span> {
    preset.chain().last().map(|p| p.span_of(&p.file.name))
}

pub(crate) fn run(global: &GlobalArgs, args: &LockArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    let workspace = Workspace::discover(global)?;
    let path = LockFile::path(&workspace);
    let mut lock = if args.names.is_empty() {
        LockFile::default()
    } else {
        LockFile::load(&path)?.unwrap_or_default()
    };
    let names: Vec<String> = if args.names.is_empty() {
        workspace.presets.names().map(str::to_owned).collect()
    } else {
        for name in &args.names {
            workspace.require(name)?;
        }
        args.names.clone()
    };
    let mut problems: Vec<Diagnostic> = Vec::new();
    let mut entries = Vec::new();
    for name in &names {
        problems.extend(workspace.problems_about(name));
        let validation = workspace.validate(name);
        match validation.preset {
            Some(preset) if !workspace.is_ambiguous(name) => {
                entries.push((name.clone(), entry(&preset)?));
            }
            _ => problems.extend(
                validation
                    .diagnostics
                    .into_iter()
                    .filter(Diagnostic::is_error),
            ),
        }
    }
    if problems.iter().any(Diagnostic::is_error) {
        let mut list = Vec::new();
        for d in problems {
            if !list.contains(&d) {
                list.push(d);
            }
        }
        return Err(CliError::Diagnostics {
            list,
            exit: Exit::Invalid,
            sources: workspace.presets.source_files(),
        });
    }
    let before = LockFile::load(&path).ok().flatten().unwrap_or_default();
    let changed = entries
        .iter()
        .filter(|(name, e)| before.get(name) != Some(e))
        .count();
    let count = entries.len();
    for (name, e) in entries {
        lock.presets.insert(name, e);
    }
    let noun = if count == 1 { "preset" } else { "presets" };
    // The path as given when the project is the current directory.
    let shown = match std::env::current_dir() {
        Ok(cwd) if cwd == workspace.project_dir => LOCK_FILE.to_owned(),
        _ => path.display().to_string(),
    };
    // Never through a link out of the project (a cloned repository may commit one).
    write_confined(
        &workspace.project_dir,
        &path,
        &shown,
        lock.to_text().as_bytes(),
    )?;
    writeln!(
        io.out,
        "locked {count} {noun} in {shown} ({changed} changed)"
    )?;
    Ok(Exit::Ok)
}
