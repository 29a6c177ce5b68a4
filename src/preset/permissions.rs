//! `permissions:` along a chain: the merged rule lists a run decides with
//! ([`policy_of`]), and what `validate` says about the leaf's rules ([`check`]):
//! syntax (`permission-syntax`), unknown tools with "did you mean"
//! (`permission-unknown-tool`), rules on hidden tools (`permission-hidden-tool`), rules an
//! earlier or broader one always decides first (`permission-shadowed`), patterns that
//! cannot match (`permission-never-matches`), and a child's rule that tries to loosen an
//! inherited deny without `override: true` (`permission-loosens-deny`).

use std::collections::BTreeSet;

use super::source::ParsedPreset;
use super::spec::{PermissionsSpec, Spanned};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::policy::{Arguments, GlobKind, List, Policy, PolicyError, Rule, shell};
use crate::tools::ToolCatalog;

/// One rule of the merged lists, with the preset (index in the chain) that wrote it.
struct Entry<'a> {
    at: usize,
    list: List,
    text: &'a Spanned<String>,
}

fn lists(spec: &PermissionsSpec) -> [(List, &[Spanned<String>]); 3] {
    [
        (List::Deny, spec.deny.as_deref().unwrap_or_default()),
        (List::Ask, spec.ask.as_deref().unwrap_or_default()),
        (List::Allow, spec.allow.as_deref().unwrap_or_default()),
    ]
}

/// The rules in force at the chain's leaf, in evaluation order (deny, ask, allow; root
/// first within each): the lists add up, and `override: true` starts them over.
fn merged<'a>(chain: &[&'a ParsedPreset]) -> Vec<Entry<'a>> {
    let start = chain
        .iter()
        .rposition(|p| {
            p.file
                .permissions
                .as_ref()
                .and_then(|s| s.overrides.as_ref())
                .is_some_and(|o| o.value)
        })
        .unwrap_or(0);
    let mut out = Vec::new();
    for list in [List::Deny, List::Ask, List::Allow] {
        for (at, preset) in chain.iter().enumerate().skip(start) {
            let Some(spec) = &preset.file.permissions else {
                continue;
            };
            for (l, rules) in lists(spec) {
                if l == list {
                    out.extend(rules.iter().map(|text| Entry { at, list, text }));
                }
            }
        }
    }
    out
}

/// The rules in force at the chain's leaf as written, in evaluation order, each with the
/// preset that wrote it: what `show` writes as one flattened `permissions:`.
pub fn rules_in_force<'a>(
    chain: &[&'a ParsedPreset],
) -> Vec<(List, &'a ParsedPreset, &'a Spanned<String>)> {
    merged(chain)
        .into_iter()
        .map(|e| (e.list, chain[e.at], e.text))
        .collect()
}

/// The compiled rules in force for the chain's leaf. Rules that do not parse are left out
/// (`validate` reports them); `Err` only lists them.
pub fn policy_of(chain: &[&ParsedPreset]) -> Result<Policy, Vec<PolicyError>> {
    let entries = merged(chain);
    let of = |list: List| -> Vec<&str> {
        entries
            .iter()
            .filter(|e| e.list == list)
            .map(|e| e.text.value.as_str())
            .collect()
    };
    Policy::new(&of(List::Deny), &of(List::Ask), &of(List::Allow))
}

/// `validate`'s findings on the leaf's own rules, given the catalog the chain sees and
/// the names of the tools the model is shown.
pub fn check(
    chain: &[&ParsedPreset],
    tools: &ToolCatalog,
    visible: &BTreeSet<&str>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(leaf) = chain.last() else { return out };
    let leaf_at = chain.len() - 1;
    if leaf.file.permissions.is_none() {
        return out;
    }
    let servers = super::chain_settings::server_names_of(chain);
    let entries = merged(chain);
    let parsed: Vec<Option<Rule>> = entries
        .iter()
        .map(|e| Rule::parse(&e.text.value).ok())
        .collect();
    for (i, entry) in entries.iter().enumerate() {
        if entry.at != leaf_at {
            continue;
        }
        let span = leaf.span_of(entry.text);
        let rule = match Rule::parse(&entry.text.value) {
            Ok(rule) => rule,
            Err(error) => {
                out.push(
                    Diagnostic::new(DiagnosticKind::PermissionSyntax, format!("permission rule `{}`: {error}", entry.text.value))
                        .at(span.clone())
                        .help("a rule is `tool`, `bash(COMMAND PATTERN)` or `tool(key=glob, …)`: `bash(git push *)`, `write_file(path=.github/**)`"),
                );
                continue;
            }
        };
        let matching: Vec<&str> = tools.names().filter(|n| rule.names_tool(n)).collect();
        let tool_text = tool_part(&rule.source);
        if matching.is_empty() {
            let mcp_of_declared = tool_text
                .strip_prefix("mcp__")
                .and_then(|rest| rest.split("__").next())
                .is_some_and(|server| servers.contains(server));
            if !mcp_of_declared {
                let mut d = Diagnostic::new(
                    DiagnosticKind::PermissionUnknownTool,
                    format!("permission rule `{}` names the tool `{tool_text}`, which no registry knows", rule.source),
                )
                .at(span);
                d = match crate::suggest::help_did_you_mean(tool_text, tools.names()) {
                    Some(help) => d.help(help),
                    None => d.help("`agent-presets show NAME` lists the tools; MCP tools are `mcp__<server>__<tool>` of a declared server"),
                };
                out.push(d);
                continue;
            }
        } else if !matching.iter().any(|n| visible.contains(n)) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::PermissionHiddenTool,
                    format!("permission rule `{}` is about `{tool_text}`, which this preset hides: it never applies", rule.source),
                )
                .at(span.clone())
                .help("show the tool (its `tools.allow`), or remove the rule"),
            );
        }
        if let Some(why) = never_matches(&rule, tools) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::PermissionNeverMatches,
                    format!("permission rule `{}` can never match: {why}", rule.source),
                )
                .at(span),
            );
            continue;
        }
        // The first earlier rule (in evaluation order) that decides every call this one would.
        let earlier = entries[..i]
            .iter()
            .zip(&parsed[..i])
            .find(|(_, r)| r.as_ref().is_some_and(|r| covers(r, &rule)));
        if let Some((by, _)) = earlier {
            let inherited = by.at != leaf_at;
            if inherited && by.list == List::Deny && entry.list != List::Deny {
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::PermissionLoosensDeny,
                        format!(
                            "permission rule `{}` in `{}` would loosen `{}`, denied by `{}`, which this preset extends: the deny is checked first and still decides",
                            rule.source,
                            entry.list.as_str(),
                            by.text.value,
                            chain[by.at].name()
                        ),
                    )
                    .at(span.clone())
                    .help("to loosen an inherited deny, say so: `permissions: {override: true, …}` drops every inherited rule, then restate the denies to keep"),
                );
            } else {
                let whose = if inherited {
                    format!(" of `{}`", chain[by.at].name())
                } else {
                    String::new()
                };
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::PermissionShadowed,
                        format!(
                            "permission rule `{}` in `{}` never decides: `{}` in `{}`{whose} is checked first and matches every call it does",
                            rule.source,
                            entry.list.as_str(),
                            by.text.value,
                            by.list.as_str()
                        ),
                    )
                    .at(span.clone())
                    .help("remove it, or make the earlier rule narrower (lists are checked deny, ask, allow; within a list, in order)"),
                );
            }
        }
    }
    out
}

fn tool_part(source: &str) -> &str {
    source.split('(').next().unwrap_or(source).trim()
}

/// Why a parsed rule cannot match any call, if it cannot.
fn never_matches(rule: &Rule, tools: &ToolCatalog) -> Option<String> {
    match &rule.arguments {
        Arguments::Any => None,
        Arguments::Command(glob) => {
            // A pattern is matched against one simple command: one that is itself a
            // compound line (`cd x && make`) matches none.
            let text = glob.as_str().replace('*', "x");
            match shell::split(&text) {
                shell::Split::Commands(commands) if commands.len() > 1 => Some(format!(
                    "it spells {} commands, and a command pattern matches one simple command at a time: write one rule per command",
                    commands.len()
                )),
                _ => None,
            }
        }
        Arguments::Conditions(conditions) => {
            for c in conditions {
                if c.glob.kind() == GlobKind::Path {
                    let g = c.glob.as_str();
                    if g.starts_with('/') {
                        return Some(format!(
                            "`{}` is absolute, and paths are matched beneath the workspace (`src/**`, not `/…/src/**`)",
                            c.key
                        ));
                    }
                    if g.split('/').any(|s| s == "..") {
                        return Some(format!(
                            "`{}` has a `..` segment, and the matched paths are normalised (no `..`)",
                            c.key
                        ));
                    }
                }
                // A key the tool's parameters do not have (for a rule on one known tool).
                let Some(def) = tools.get(tool_part(&rule.source)) else {
                    continue;
                };
                let first = c
                    .pointer
                    .trim_start_matches('/')
                    .split('/')
                    .next()
                    .unwrap_or_default();
                let props = def
                    .schemas()
                    .portable
                    .get("properties")
                    .and_then(|p| p.as_object());
                if let Some(props) = props
                    && !props.contains_key(first)
                {
                    let mut why = format!("`{}` has no argument `{first}`", def.name());
                    if let Some(s) =
                        crate::suggest::did_you_mean(first, props.keys().map(String::as_str))
                    {
                        why.push_str(&format!(" (did you mean `{s}`?)"));
                    }
                    return Some(why);
                }
            }
            None
        }
    }
}

/// Does `a` match every call `b` matches? Sound, not complete: equal rules, whole-tool
/// rules, literal patterns, and prefix patterns (`git *` covers `git push *`).
fn covers(a: &Rule, b: &Rule) -> bool {
    if !glob_covers(a.tool.as_str(), b.tool.as_str(), GlobKind::Text, false) {
        return false;
    }
    match (&a.arguments, &b.arguments) {
        (Arguments::Any, _) => true,
        (Arguments::Command(ga), Arguments::Command(gb)) => {
            glob_covers(ga.as_str(), gb.as_str(), GlobKind::Text, true)
        }
        (Arguments::Conditions(ca), Arguments::Conditions(cb)) => ca.iter().all(|x| {
            cb.iter().any(|y| {
                y.pointer == x.pointer
                    && glob_covers(x.glob.as_str(), y.glob.as_str(), x.glob.kind(), false)
            })
        }),
        _ => false,
    }
}

/// The unescaped text before the first wildcard, and whether there is none.
fn literal_prefix(glob: &str) -> (String, bool) {
    let mut out = String::new();
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '*' | '?' => return (out, false),
            other => out.push(other),
        }
    }
    (out, true)
}

fn glob_covers(a: &str, b: &str, kind: GlobKind, command: bool) -> bool {
    if a == b {
        return true;
    }
    let Ok(compiled) = crate::policy::Glob::new(a, kind, command) else {
        return false;
    };
    let (b_prefix, b_literal) = literal_prefix(b);
    if b_literal {
        return compiled.is_match(&b_prefix);
    }
    // `a` is a prefix form: one wildcard, at its end.
    let (a_prefix, a_literal) = literal_prefix(a);
    if a_literal {
        return false;
    }
    let tail = &a[a.len() - a.chars().rev().take_while(|c| *c == '*').count()..];
    let head_len = a.len() - tail.len();
    if literal_prefix(&a[..head_len]).1
        && a_prefix.len() == head_len - a[..head_len].matches('\\').count()
    {
        match (kind, tail) {
            (GlobKind::Text, "*") if command && a_prefix.ends_with(' ') => {
                let word = a_prefix.trim_end();
                b_prefix == word || b_prefix.starts_with(&a_prefix)
            }
            (GlobKind::Text, "*") => b_prefix.starts_with(&a_prefix),
            (GlobKind::Path, "**") if a_prefix.ends_with('/') || a_prefix.is_empty() => {
                b_prefix.starts_with(&a_prefix)
            }
            _ => false,
        }
    } else {
        false
    }
}
