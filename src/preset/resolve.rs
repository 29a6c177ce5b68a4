//! `extends` resolution: from a preset name to its chain (root first, the preset last),
//! with cycles reported as the whole chain and a depth limit.

use super::source::ParsedPreset;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics};
use crate::suggest::help_did_you_mean;

/// How many presets one chain may hold (the preset itself included).
pub const MAX_EXTENDS_DEPTH: usize = 16;

/// What a lookup of a preset name found.
#[derive(Debug)]
pub enum Lookup<'a> {
    /// A parsed preset.
    Found(&'a ParsedPreset),
    /// The preset exists but does not parse.
    Invalid(&'a Diagnostics),
    /// Nobody offers that name.
    Missing,
}

impl<'a> From<Option<Result<&'a ParsedPreset, &'a Diagnostics>>> for Lookup<'a> {
    /// A catalog's answer for a name: nothing, or the entry's parse result.
    fn from(entry: Option<Result<&'a ParsedPreset, &'a Diagnostics>>) -> Self {
        match entry {
            Some(Ok(p)) => Lookup::Found(p),
            Some(Err(ds)) => Lookup::Invalid(ds),
            None => Lookup::Missing,
        }
    }
}

/// A resolved chain: root first, the requested preset last.
#[derive(Debug, Clone)]
pub struct PresetChain<'a> {
    presets: Vec<&'a ParsedPreset>,
}

impl<'a> PresetChain<'a> {
    /// Root first, the requested preset last.
    pub fn presets(&self) -> &[&'a ParsedPreset] {
        &self.presets
    }

    /// The requested preset.
    pub fn leaf(&self) -> Option<&'a ParsedPreset> {
        self.presets.last().copied()
    }

    /// Names, root first.
    pub fn names(&self) -> Vec<&'a str> {
        self.presets
            .iter()
            .map(|p| p.file.name.value.as_str())
            .collect()
    }
}

/// Resolve `leaf`'s `extends` chain. `lookup` finds presets by name; `names` lists every
/// name on offer (for "did you mean").
pub fn resolve_chain<'a, L, N>(
    leaf: &'a ParsedPreset,
    lookup: L,
    names: N,
) -> Result<PresetChain<'a>, Diagnostics>
where
    L: Fn(&str) -> Lookup<'a>,
    N: Fn() -> Vec<String>,
{
    let mut chain: Vec<&'a ParsedPreset> = vec![leaf];
    let leaf_span = || match &leaf.file.extends {
        Some(e) => leaf.span_of(e),
        None => leaf.source.start(),
    };
    loop {
        let current = chain[chain.len() - 1];
        let Some(parent) = &current.file.extends else {
            break;
        };
        let parent_name = parent.value.as_str();
        let span = current.span_of(parent);
        if let Some(pos) = chain.iter().position(|p| p.file.name.value == parent_name) {
            // Show the loop in `extends` direction (a -> b -> c -> a), and report it at
            // the preset being validated, so every member of the loop is flagged in its
            // own file.
            let mut names: Vec<&str> = chain[pos..]
                .iter()
                .map(|p| p.file.name.value.as_str())
                .collect();
            names.push(parent_name);
            let message = if pos == 0 {
                format!("`extends` forms a cycle: {}", names.join(" -> "))
            } else {
                format!("`extends` leads into a cycle: {}", names.join(" -> "))
            };
            return Err(Diagnostic::new(DiagnosticKind::ExtendsCycle, message)
                .at(leaf_span())
                .help("break the cycle: one preset in it must not extend the others")
                .into());
        }
        if chain.len() >= MAX_EXTENDS_DEPTH {
            return Err(Diagnostic::new(
                DiagnosticKind::LimitExceeded,
                format!(
                    "`extends` chain of `{}` is deeper than {MAX_EXTENDS_DEPTH} presets",
                    leaf.file.name.value
                ),
            )
            .at(leaf_span())
            .help("flatten the chain: merge some intermediate presets")
            .into());
        }
        match lookup(parent_name) {
            Lookup::Found(p) => chain.push(p),
            Lookup::Invalid(ds) => {
                let mut list = vec![
                    Diagnostic::new(
                        DiagnosticKind::MissingParent,
                        format!("parent preset `{parent_name}` is invalid"),
                    )
                    .at(span)
                    .help(format!("fix the errors in `{parent_name}` first")),
                ];
                list.extend(ds.iter().cloned());
                return Err(Diagnostics::from_vec(list));
            }
            Lookup::Missing => {
                let all = names();
                let help = help_did_you_mean(parent_name, all.iter().map(String::as_str))
                    .unwrap_or_else(|| format!("available presets: {}", all.join(", ")));
                return Err(Diagnostic::new(
                    DiagnosticKind::MissingParent,
                    format!("`extends` names `{parent_name}`, but no such preset exists"),
                )
                .at(span)
                .help(help)
                .maybe_fix(
                    parent_name,
                    crate::suggest::did_you_mean(parent_name, all.iter().map(String::as_str)),
                )
                .into());
            }
        }
    }
    chain.reverse();
    Ok(PresetChain { presets: chain })
}
