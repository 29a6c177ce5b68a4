//! The warnings a build can find without the caller's values: restrictions that leave no
//! tools (`no-tools`), overrides that drop the original's placeholders
//! (`override-drops-placeholder`) and `complete` sections that can be effective together
//! (`complete-may-conflict`).

use std::collections::{BTreeMap, BTreeSet};

use minijinja::Value;

use super::template_scan::{ComparedLiteral, LiteralComparison};
use super::variables::VariableDecl;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::prompt::section::{Replaced, SectionName};
use crate::suggest::help_did_you_mean;
use crate::tools::{ToolCatalog, ToolPattern, ToolRestriction, visible_tools};

/// How many value combinations `complete-may-conflict` evaluates at most.
const MAX_COMBINATIONS: usize = 4096;
/// How many candidate values one variable contributes at most.
const MAX_CANDIDATES: usize = 16;

/// `no-tools`: a non-empty `allow` list all of whose entries end up hidden (by an
/// ancestor's restriction, its own `deny`, or a nearer layer), so the preset has no tools.
pub(super) fn no_tools(
    catalog: &ToolCatalog,
    restrictions: &[(&str, &ToolRestriction)],
    any_visible: bool,
) -> Vec<Diagnostic> {
    if any_visible {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, (label, r)) in restrictions.iter().enumerate() {
        let Some(allow) = r.allow.as_ref().filter(|a| !a.is_empty()) else {
            continue;
        };
        let before: Vec<String> = visible_tools(catalog, restrictions[..i].iter().map(|(_, r)| *r))
            .iter()
            .map(|n| n.as_str().to_owned())
            .collect();
        // Only the restriction that leaves nothing is to blame (not a parent whose tools a
        // child narrowed away).
        let after = visible_tools(catalog, restrictions[..=i].iter().map(|(_, r)| *r));
        if before.is_empty() || !after.is_empty() {
            continue;
        }
        let listed = allow
            .iter()
            .map(|p| format!("`{}`", p.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        let inherited = if i == 0 {
            String::new()
        } else {
            format!(
                " (the presets it builds on allow only {})",
                before.join(", ")
            )
        };
        let span = allow
            .first()
            .and_then(|p| p.span().cloned())
            .or_else(|| r.span.clone());
        out.push(
            Diagnostic::new(
                DiagnosticKind::NoTools,
                format!("`{label}` allows {listed}, but every one of them ends up hidden{inherited}: the preset has no tools"),
            )
            .at(span)
            .help(if i == 0 {
                "allow tools its `deny` does not hide, or write `allow: []` if the preset should have no tools".to_owned()
            } else {
                format!(
                    "allow some of {} (a child can only narrow its parent's tools), or write `allow: []` if the preset should have no tools",
                    before.join(", ")
                )
            }),
        );
    }
    out
}

/// `impossible-condition`: the comparisons of a `when` condition (`comparisons`, found
/// once per file) that can never match, for the variables this chain declares
/// (`declared`, nearest declaration) and the tools `catalog` knows. `span_of` locates a
/// byte offset of the condition `expression`.
pub(super) fn impossible_comparisons(
    piece: (&str, &str),
    expression: &str,
    comparisons: &[LiteralComparison],
    declared: &BTreeMap<String, VariableDecl>,
    catalog: &ToolCatalog,
    span_of: &dyn Fn(Option<usize>) -> Option<Span>,
) -> Vec<Diagnostic> {
    let (kind, name) = piece;
    let mut out = Vec::new();
    for c in comparisons {
        let Some(written) = expression.get(c.range.clone()) else {
            continue;
        };
        let (bad, why, candidates): (Vec<_>, String, Vec<String>) = if c.subject == "tools" {
            let bad: Vec<_> = c
                .literals
                .iter()
                .filter(|(l, _)| match l {
                    ComparedLiteral::Text(t) => !catalog.contains(t),
                    ComparedLiteral::Integer(_) => true,
                })
                .collect();
            let Some((first, _)) = bad.first() else {
                continue;
            };
            (
                bad.clone(),
                format!("no tool is named `{}`", literal_text(first)),
                catalog.names().map(str::to_owned).collect(),
            )
        } else {
            let Some(decl) = declared.get(&c.subject).filter(|d| !d.choices.is_empty()) else {
                continue;
            };
            let bad: Vec<_> = c
                .literals
                .iter()
                .filter(|(l, _)| !decl.is_choice(&literal_value(l)))
                .collect();
            if bad.is_empty() {
                continue;
            }
            let choices = decl.choice_texts();
            let listed: Vec<String> = bad
                .iter()
                .map(|(l, _)| format!("`{}`", literal_text(l)))
                .collect();
            let is = if listed.len() == 1 { "is" } else { "are" };
            (
                bad.clone(),
                format!(
                    "{} {is} not a choice of `{}` ({})",
                    listed.join(", "),
                    c.subject,
                    choices
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                choices,
            )
        };
        let all_bad = bad.len() == c.literals.len();
        let verdict = match (all_bad, c.negated) {
            (true, false) => "is never true".to_owned(),
            (true, true) => "is always true".to_owned(),
            (false, _) => format!(
                "never matches {}",
                bad.iter()
                    .map(|(l, _)| format!("`{}`", literal_text(l)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let (first, range) = bad[0];
        let suggestion = match first {
            ComparedLiteral::Text(t) => help_did_you_mean(t, candidates.iter().map(String::as_str)),
            ComparedLiteral::Integer(_) => None,
        };
        let help = suggestion.unwrap_or_else(|| {
            if c.subject == "tools" {
                "`tools` holds the names of the tools the model can call; check the name with `agent-presets show`".to_owned()
            } else {
                format!(
                    "compare `{}` with one of its choices: {}",
                    c.subject,
                    candidates.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
                )
            }
        });
        let len = expression
            .get(range.clone())
            .map_or(1, |t| u32::try_from(t.chars().count()).unwrap_or(u32::MAX));
        out.push(
            Diagnostic::new(
                DiagnosticKind::ImpossibleCondition,
                format!("the `when` of {kind} `{name}`: `{written}` {verdict}: {why}"),
            )
            .at(span_of(Some(range.start)).map(|s| s.with_len(len)))
            .help(help),
        );
    }
    out
}

fn literal_value(literal: &ComparedLiteral) -> Value {
    match literal {
        ComparedLiteral::Text(t) => Value::from(t.as_str()),
        ComparedLiteral::Integer(n) => Value::from(*n),
    }
}

fn literal_text(literal: &ComparedLiteral) -> String {
    match literal {
        ComparedLiteral::Text(t) => t.clone(),
        ComparedLiteral::Integer(n) => n.to_string(),
    }
}

/// `allow-denied-by-parent`: an `allow` entry that can never make a tool visible, because
/// restrictions along `extends` intersect:
///
/// - a name (not a glob) that an earlier layer's `deny` removes: the warning names that
///   `deny` entry;
/// - a name, or a glob every match of which is such a tool, that an earlier layer's
///   `allow` leaves out: the warning names that `allow` (a child of `minimal` allowing
///   `read_file` or its own command tool). Only when `any_visible`: a preset left with no
///   tools gets `no-tools`, which names what the parents allow, instead.
pub(super) fn allow_denied_by_parent(
    catalog: &ToolCatalog,
    restrictions: &[(&str, &ToolRestriction)],
    any_visible: bool,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, (label, r)) in restrictions.iter().enumerate() {
        let Some(allow) = &r.allow else {
            continue;
        };
        let outer = &restrictions[..i];
        for entry in allow {
            let tool = entry.as_str();
            let span = entry.span().cloned().or_else(|| r.span.clone());
            if entry.is_glob() {
                if any_visible {
                    out.extend(
                        glob_outside_parent_allow(catalog, label, entry, outer).map(|d| d.at(span)),
                    );
                }
                continue;
            }
            if !catalog.contains(tool) {
                continue;
            }
            // The nearest outer layer whose `deny` removes the tool.
            let Some((parent, deny)) = outer.iter().rev().find_map(|(parent, pr)| {
                pr.deny
                    .iter()
                    .find(|d| d.matches(tool))
                    .map(|d| (*parent, d))
            }) else {
                if any_visible {
                    out.extend(outside_parent_allow(label, tool, None, outer).map(|d| d.at(span)));
                }
                continue;
            };
            let place = deny
                .span()
                .map(|s| format!(", {}:{}", s.file, s.line))
                .unwrap_or_default();
            let at = deny
                .span()
                .map(|s| format!(" ({}:{})", s.file, s.line))
                .unwrap_or_default();
            let pattern = deny.as_str();
            out.push(
                Diagnostic::new(
                    DiagnosticKind::AllowDeniedByParent,
                    format!(
                        "`{label}` allows `{tool}`, but `{parent}`, which it extends, denies it (`{pattern}` in its `deny`{place}): the tool stays hidden"
                    ),
                )
                .at(span)
                .help(format!(
                    "a child can only narrow its parent's tools: remove `{tool}` from this `allow`; if `{label}` needs the tool, remove `{pattern}` from the `deny` of `{parent}`{at}, or extend a preset that keeps it"
                )),
            );
        }
    }
    out
}

/// The nearest of `outer` whose `allow` leaves `tool` out, with where that `allow` is
/// written (its first entry, else its `tools` key).
fn excluding_allow<'r>(
    tool: &str,
    outer: &[(&'r str, &'r ToolRestriction)],
) -> Option<(&'r str, Option<&'r Span>)> {
    outer.iter().rev().find_map(|(parent, pr)| {
        let allow = pr.allow.as_ref()?;
        if allow.iter().any(|p| p.matches(tool)) {
            return None;
        }
        let span = allow
            .first()
            .and_then(ToolPattern::span)
            .or(pr.span.as_ref());
        Some((*parent, span))
    })
}

/// The warning for `allow` entry `written` (the tool's name, or `glob` matching only
/// tools like it) when an outer layer's `allow` leaves `tool` out.
fn outside_parent_allow(
    label: &str,
    tool: &str,
    glob: Option<&str>,
    outer: &[(&str, &ToolRestriction)],
) -> Option<Diagnostic> {
    let (parent, span) = excluding_allow(tool, outer)?;
    let place = span
        .map(|s| format!(", {}:{}", s.file, s.line))
        .unwrap_or_default();
    let at = span
        .map(|s| format!(" ({}:{})", s.file, s.line))
        .unwrap_or_default();
    let (message, written) = match glob {
        None => (
            format!(
                "`{label}` allows `{tool}`, but `{parent}`, which it extends, does not allow it (its `allow`{place}): the tool stays hidden"
            ),
            tool,
        ),
        Some(glob) => (
            format!(
                "`{label}` allows `{glob}`, but `{parent}`, which it extends, does not allow `{tool}` (its `allow`{place}), and no tool the glob matches is left visible by the presets `{label}` extends"
            ),
            glob,
        ),
    };
    Some(
        Diagnostic::new(DiagnosticKind::AllowDeniedByParent, message).help(format!(
            "a child can only narrow its parent's tools: to have `{tool}`, extend a preset that allows it, or add `{tool}` to the `allow` of `{parent}`{at}; otherwise remove `{written}` from this `allow`"
        )),
    )
}

/// A glob `allow` entry that matches known tools, every one of which an outer layer's
/// `allow` leaves out: the warning for the first of them.
fn glob_outside_parent_allow(
    catalog: &ToolCatalog,
    label: &str,
    entry: &ToolPattern,
    outer: &[(&str, &ToolRestriction)],
) -> Option<Diagnostic> {
    let matched: Vec<&str> = catalog.names().filter(|n| entry.matches(n)).collect();
    let first = *matched.first()?;
    if !matched.iter().all(|n| excluding_allow(n, outer).is_some()) {
        return None;
    }
    outside_parent_allow(label, first, Some(entry.as_str()), outer)
}

/// `override-drops-placeholder`: `new` replaces `old` (a section of an outer layer) and no
/// longer uses variables `old` used.
pub(super) fn override_drops(
    name: &str,
    old: (Option<&BTreeSet<String>>, &str),
    after: &BTreeSet<String>,
    span: Option<Span>,
) -> Option<Diagnostic> {
    // `None`: the old section is not a template, so it used no variables.
    let (before, old_label) = old;
    let before = before?;
    // `tools` and `runtime_context` are conditions the assembler derives, not facts a
    // placeholder carries: a replacement may well not need them.
    let dropped: Vec<String> = before
        .difference(after)
        .filter(|v| !super::variables::is_derived_variable(v))
        .map(|v| format!("`{v}`"))
        .collect();
    if dropped.is_empty() {
        return None;
    }
    let list = dropped.join(", ");
    let example = before
        .difference(after)
        .find(|v| !super::variables::is_derived_variable(v))
        .map_or_else(String::new, |v| format!(" (e.g. `{{{{ {v} }}}}`)"));
    Some(
        Diagnostic::new(
            DiagnosticKind::OverrideDropsPlaceholder,
            format!(
                "section `{name}` replaces the one from `{old_label}` but no longer uses {list}"
            ),
        )
        .at(span)
        .help(format!(
            "use them in the new text{example}; if dropping them is intended, `remove: [{name}]` and add your section under another name"
        )),
    )
}

/// `implicit-override` and `override-nothing`: a piece (`kind`, `name`, whether it says
/// `override: true`) that replaces the inherited piece `replaces` without saying so, or
/// says so and replaces nothing (`inherited`: the names it could have meant).
pub(super) fn override_marker<'n>(
    piece: (&str, &SectionName, bool),
    replaces: Option<&Replaced>,
    inherited: impl Iterator<Item = &'n SectionName>,
    span: Option<Span>,
) -> Option<Diagnostic> {
    let (kind, name, marked) = piece;
    match (replaces, marked) {
        (Some(old), false) => Some(
            Diagnostic::new(
                DiagnosticKind::ImplicitOverride,
                format!("{kind} `{name}` replaces {old} without `override: true`"),
            )
            .at(span)
            .help(format!(
                "if replacing it is intended, add `override: true` to this {kind}; to keep the inherited one, give yours another name"
            )),
        ),
        (None, true) => {
            let names: Vec<&str> = inherited.map(SectionName::as_str).collect();
            let help = help_did_you_mean(name.as_str(), names.iter().copied())
                .map(|d| format!("{d} otherwise remove `override: true`"))
                .unwrap_or_else(|| {
                    format!("remove `override: true`: no preset this one extends has a {kind} of that name")
                });
            Some(
                Diagnostic::new(
                    DiagnosticKind::OverrideNothing,
                    format!(
                        "{kind} `{name}` says `override: true`, but there is no inherited {kind} `{name}` to replace"
                    ),
                )
                .at(span)
                .help(help),
            )
        }
        _ => None,
    }
}

/// One `complete` section, for [`complete_conflicts`].
pub(super) struct CompleteCandidate<'a> {
    pub(super) name: &'a str,
    /// `None`: no `when`, always effective.
    pub(super) when: Option<(
        &'a super::template::FrozenTemplate,
        &'a BTreeSet<String>,
        &'a str,
    )>,
    pub(super) layer: usize,
    pub(super) span: Option<Span>,
}

/// What a variable may hold when the conditions are explored.
pub(super) struct VariableSample {
    /// Its default, or the example value of a built-in.
    pub(super) usual: Option<Value>,
    /// It may have no value at all (an optional variable).
    pub(super) may_be_absent: bool,
}

/// `complete-may-conflict`: two or more `complete` sections whose `when` conditions can
/// hold together. The conditions are evaluated over every combination of representative
/// values of the variables they reference: each literal the conditions mention (so
/// `os == 'macos'` tries `macos`), the variable's default or example value, a value none
/// of them mention, and no value for optional variables. Derived variables (`tools`,
/// `runtime_context`) are what they are.
pub(super) fn complete_conflicts(
    candidates: &[CompleteCandidate<'_>],
    samples: &BTreeMap<String, VariableSample>,
    derived: &BTreeMap<String, Value>,
) -> Option<Diagnostic> {
    if candidates.len() < 2 || candidates.iter().all(|c| c.when.is_none()) {
        // Fewer than two, or all unconditional (`multiple-complete` says that already).
        return None;
    }
    let mut literals: Vec<Value> = Vec::new();
    let mut vars: BTreeSet<&str> = BTreeSet::new();
    for c in candidates {
        if let Some((_, v, source)) = c.when {
            vars.extend(v.iter().map(String::as_str));
            for lit in literals_of(source) {
                if !literals.contains(&lit) {
                    literals.push(lit);
                }
            }
        }
    }
    vars.retain(|v| !super::variables::is_derived_variable(v));
    let axes: Vec<(&str, Vec<Option<Value>>)> = vars
        .iter()
        .map(|v| {
            let sample = samples.get(*v);
            let mut values: Vec<Option<Value>> = Vec::new();
            if let Some(usual) = sample.and_then(|s| s.usual.clone()) {
                values.push(Some(usual));
            }
            values.extend(literals.iter().cloned().map(Some));
            values.push(Some(Value::from(format!("<another {v}>"))));
            if sample.is_some_and(|s| s.may_be_absent) {
                values.push(None);
            }
            values.dedup();
            values.truncate(MAX_CANDIDATES);
            (*v, values)
        })
        .collect();
    let total = axes
        .iter()
        .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len().max(1)));
    let exhaustive = total.is_some_and(|t| t <= MAX_COMBINATIONS);
    let mut index = vec![0usize; axes.len()];
    for _ in 0..MAX_COMBINATIONS {
        let mut map: BTreeMap<String, Value> = derived.clone();
        let mut witness = Vec::new();
        for ((name, values), i) in axes.iter().zip(&index) {
            if let Some(Some(v)) = values.get(*i) {
                map.insert((*name).to_owned(), v.clone());
                witness.push(format!("{name}={v}"));
            } else {
                witness.push(format!("{name} unset"));
            }
        }
        let ctx = Value::from(map);
        let on: Vec<&CompleteCandidate<'_>> = candidates
            .iter()
            .filter(|c| match c.when {
                None => true,
                Some((when, ..)) => when.eval_condition(&ctx).unwrap_or(false),
            })
            .collect();
        if on.len() >= 2 {
            let (list, span) = named_and_nearest(on.iter().copied());
            let example = if witness.is_empty() {
                String::new()
            } else {
                format!(", e.g. with {}", witness.join(", "))
            };
            return Some(
                Diagnostic::new(
                    DiagnosticKind::CompleteMayConflict,
                    format!(
                        "complete sections {list} can be effective together{example}; such a render fails with multiple-complete"
                    ),
                )
                .at(span)
                .help("make their `when` conditions exclude each other (e.g. add `and shell != 'zsh'`), or keep `complete` on one of them only"),
            );
        }
        // Next combination (odometer); stop after the last.
        let mut k = 0;
        loop {
            let Some(slot) = index.get_mut(k) else {
                return (!exhaustive).then(|| cannot_tell(candidates));
            };
            *slot += 1;
            if *slot < axes[k].1.len().max(1) {
                break;
            }
            *slot = 0;
            k += 1;
        }
    }
    (!exhaustive).then(|| cannot_tell(candidates))
}

/// The sections' names, sorted and quoted, and where the nearest layer's one is.
fn named_and_nearest<'c, 'a: 'c>(
    sections: impl Iterator<Item = &'c CompleteCandidate<'a>> + Clone,
) -> (String, Option<Span>) {
    let span = sections
        .clone()
        .max_by_key(|c| c.layer)
        .and_then(|c| c.span.clone());
    (sorted_names(sections.map(|c| c.name)), span)
}

/// `` `a`, `b` ``: names in byte order, quoted, for messages.
pub(super) fn sorted_names<'n>(names: impl IntoIterator<Item = &'n str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cannot_tell(candidates: &[CompleteCandidate<'_>]) -> Diagnostic {
    let (list, span) = named_and_nearest(candidates.iter());
    Diagnostic::new(
        DiagnosticKind::CompleteMayConflict,
        format!(
            "complete sections {list} depend on too many values to show that their conditions exclude each other"
        ),
    )
    .at(span)
    .help("keep `complete` on one section, or base the conditions on fewer variables")
}

/// The string and number literals of an expression, as values.
fn literals_of(source: &str) -> Vec<Value> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\'' || b == b'"' {
            let start = i + 1;
            let mut j = start;
            let mut text = String::new();
            while j < bytes.len() && bytes[j] != b {
                if bytes[j] == b'\\' && j + 1 < bytes.len() {
                    j += 1;
                }
                let ch_len = source[j..].chars().next().map_or(1, char::len_utf8);
                text.push_str(&source[j..j + ch_len]);
                j += ch_len;
            }
            out.push(Value::from(text));
            i = j + 1;
        } else if b.is_ascii_digit() && (i == 0 || !is_ident_byte(bytes[i - 1])) {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            let text = &source[start..i];
            if let Ok(n) = text.parse::<i64>() {
                out.push(Value::from(n));
            } else if let Ok(f) = text.parse::<f64>() {
                out.push(Value::from(f));
            }
        } else {
            i += 1;
        }
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_denied_by_an_outer_deny_only() {
        let catalog = ToolCatalog::builtin();
        let base = ToolRestriction::default()
            .with_deny(["*_file", "bash"])
            .unwrap();
        // Its own `deny` is not a parent's; a glob entry and an unknown name are left to
        // other checks.
        let child = ToolRestriction::allow(["read_file", "grep", "bash", "*_dir", "nope"])
            .unwrap()
            .with_deny(["grep"])
            .unwrap();
        let found = allow_denied_by_parent(&catalog, &[("base", &base), ("child", &child)], true);
        let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`child` allows `read_file`, but `base`, which it extends, denies it (`*_file` in its `deny`): the tool stays hidden",
                "`child` allows `bash`, but `base`, which it extends, denies it (`bash` in its `deny`): the tool stays hidden",
            ]
        );
        assert!(
            found
                .iter()
                .all(|d| d.kind == DiagnosticKind::AllowDeniedByParent)
        );
        assert!(allow_denied_by_parent(&catalog, &[("child", &child)], true).is_empty());
    }

    #[test]
    fn allow_outside_an_outer_allow_names_that_allow() {
        let catalog = ToolCatalog::builtin();
        let span = |line| Some(Span::new("base.yaml".into(), line, 11));
        let mut base = ToolRestriction::allow(["bash", "edit_file"]).unwrap();
        base.allow = Some(vec![
            ToolPattern::new("bash", span(5)).unwrap(),
            ToolPattern::new("edit_file", span(6)).unwrap(),
        ]);
        // `read_file` and the glob `*_dir` (matching only tools base leaves out) warn;
        // `bash`, allowed by base, and `*_file` (which matches `edit_file`) do not.
        let child = ToolRestriction::allow(["bash", "read_file", "*_dir", "*_file"]).unwrap();
        let found = allow_denied_by_parent(&catalog, &[("base", &base), ("child", &child)], true);
        let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`child` allows `read_file`, but `base`, which it extends, does not allow it (its `allow`, base.yaml:5): the tool stays hidden",
                "`child` allows `*_dir`, but `base`, which it extends, does not allow `list_dir` (its `allow`, base.yaml:5), and no tool the glob matches is left visible by the presets `child` extends",
            ]
        );
        assert!(
            found
                .iter()
                .all(|d| d.kind == DiagnosticKind::AllowDeniedByParent)
        );
        assert!(
            found[0]
                .help
                .as_deref()
                .unwrap()
                .contains("extend a preset that allows it, or add `read_file` to the `allow` of `base` (base.yaml:5)")
        );
        // A nearer parent without `allow` changes nothing; the grandparent's still counts.
        let middle = ToolRestriction::default().with_deny(["grep"]).unwrap();
        let found = allow_denied_by_parent(
            &catalog,
            &[("base", &base), ("middle", &middle), ("child", &child)],
            true,
        );
        assert_eq!(found.len(), 2);
        // With no tool visible at all, `no-tools` says it instead.
        let found = allow_denied_by_parent(
            &catalog,
            &[("base", &base), ("middle", &middle), ("child", &child)],
            false,
        );
        assert!(found.is_empty());
        // Without an outer `allow`, nothing.
        assert!(
            allow_denied_by_parent(&catalog, &[("middle", &middle), ("child", &child)], true)
                .is_empty()
        );
    }

    #[test]
    fn literals() {
        let got =
            literals_of("os == 'macos' or shell in [\"zsh\", 'fi\\'sh'] or n > 3 or x2 == 1.5");
        let want: Vec<Value> = vec![
            "macos".into(),
            "zsh".into(),
            "fi'sh".into(),
            3.into(),
            1.5.into(),
        ];
        assert_eq!(got, want);
    }
}
