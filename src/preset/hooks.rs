//! `hooks:` along a chain: the hooks a run uses ([`hooks_of`]: each event's lists append,
//! root first), and what `validate` says about the leaf's own hooks ([`check`]): an empty
//! `run` (`hook-empty-run`), a `match` that names no known tool (`hook-unknown-tool`, with
//! "did you mean") or only hidden ones (`hook-hidden-tool`), a `match` that cannot be read
//! (`hook-bad-match`) or is on an event about no tool (`hook-match-not-tool-event`), and a
//! timeout that is not a duration of at most ten minutes (`hook-bad-timeout`).

use std::collections::BTreeSet;
use std::time::Duration;

use super::source::ParsedPreset;
use super::spec::{HookOnError, HookSpec, HooksSpec, parse_duration};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::hooks::{
    DEFAULT_HOOK_TIMEOUT, Hook, HookEvent, Hooks, MAX_HOOK_TIMEOUT, OnError, ToolMatcher,
};
use crate::tools::ToolCatalog;

/// The list of `event` in `spec`.
pub fn list(spec: &HooksSpec, event: HookEvent) -> &[HookSpec] {
    match event {
        HookEvent::PreToolUse => spec.pre_tool_use.as_deref(),
        HookEvent::PostToolUse => spec.post_tool_use.as_deref(),
        HookEvent::Stop => spec.stop.as_deref(),
        HookEvent::UserPromptSubmit => spec.user_prompt_submit.as_deref(),
    }
    .unwrap_or_default()
}

/// `PRESET.<event>[i]`: how trust and the lock name the `i`th hook of `event` in the
/// preset `preset`.
pub fn hook_key(preset: &str, event: HookEvent, i: usize) -> String {
    format!("{preset}.{}[{i}]", event.key())
}

/// Every hook the chain declares, root first, with its key ([`hook_key`]), the index of
/// its preset in the chain, and its declaration.
pub fn declared<'a>(chain: &[&'a ParsedPreset]) -> Vec<(String, usize, &'a HookSpec)> {
    let mut out = Vec::new();
    for (at, preset) in chain.iter().enumerate() {
        let Some(spec) = &preset.file.hooks else {
            continue;
        };
        for event in HookEvent::ALL {
            for (i, hook) in list(spec, event).iter().enumerate() {
                out.push((hook_key(preset.name(), event, i), at, hook));
            }
        }
    }
    out
}

/// The timeout a hook runs with (`None`: not a usable duration).
pub fn timeout_of(spec: &HookSpec) -> Option<Duration> {
    match &spec.timeout {
        None => Some(DEFAULT_HOOK_TIMEOUT),
        Some(t) => parse_duration(&t.value).filter(|d| *d <= MAX_HOOK_TIMEOUT),
    }
}

/// The hooks in force at the chain's leaf: for each event, the root's first. Hooks that
/// `validate` refuses (an empty `run`, a bad `match` or timeout) are left out; a valid
/// preset has none.
pub fn hooks_of(chain: &[&ParsedPreset]) -> Hooks {
    let mut out = Vec::new();
    for event in HookEvent::ALL {
        for preset in chain {
            let Some(spec) = &preset.file.hooks else {
                continue;
            };
            for h in list(spec, event) {
                let run: Vec<String> = h.run.value.iter().map(|a| a.value.clone()).collect();
                if run.first().is_none_or(|p| p.is_empty()) {
                    continue;
                }
                let matcher = match &h.matcher {
                    Some(m) if event.is_tool_event() => match ToolMatcher::new(&m.value) {
                        Ok(m) => Some(m),
                        Err(_) => continue,
                    },
                    Some(_) => continue,
                    None => None,
                };
                let Some(timeout) = timeout_of(h) else {
                    continue;
                };
                out.push(Hook {
                    event,
                    matcher,
                    run,
                    timeout,
                    on_error: match h.on_error.as_ref().map(|o| o.value) {
                        Some(HookOnError::Continue) => OnError::Continue,
                        Some(HookOnError::Block) | None => OnError::Block,
                    },
                });
            }
        }
    }
    Hooks::new(out)
}

/// `validate`'s findings on the leaf's own hooks, given the catalog the chain sees and the
/// names of the tools the model is shown.
pub fn check(
    chain: &[&ParsedPreset],
    tools: &ToolCatalog,
    visible: &BTreeSet<&str>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(leaf) = chain.last() else { return out };
    let Some(spec) = &leaf.file.hooks else {
        return out;
    };
    let servers = super::chain_settings::server_names_of(chain);
    for event in HookEvent::ALL {
        for h in list(spec, event) {
            let key = event.key();
            match h.run.value.first() {
                None => out.push(
                    Diagnostic::new(
                        DiagnosticKind::HookEmptyRun,
                        format!("a `{key}` hook has an empty `run`: it has no program to run"),
                    )
                    .at(leaf.span_of(&h.run))
                    .help("give the program and its arguments as a list: `run: [python3, .agent-presets/hooks/guard.py]`"),
                ),
                Some(p) if p.value.trim().is_empty() => out.push(
                    Diagnostic::new(
                        DiagnosticKind::HookEmptyRun,
                        format!("a `{key}` hook's `run` starts with an empty program name"),
                    )
                    .at(leaf.span_of(p))
                    .help("the first entry is the program to run"),
                ),
                Some(_) => {}
            }
            if let Some(t) = &h.timeout
                && timeout_of(h).is_none()
            {
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::HookBadTimeout,
                        format!(
                            "`{}` is not a hook timeout: hooks run while the agent waits, for at most 10m",
                            t.value
                        ),
                    )
                    .at(leaf.span_of(t))
                    .help("write a whole number and a unit, between 1ms and 10m: `500ms`, `5s`, `2m` (the default is 10s)"),
                );
            }
            let Some(m) = &h.matcher else { continue };
            let span = leaf.span_of(m);
            if !event.is_tool_event() {
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::HookMatchNotToolEvent,
                        format!("a `{key}` hook has `match: {}`, but `{key}` is about no tool call: the hook would run every time", m.value),
                    )
                    .at(span)
                    .help("remove `match` (only `preToolUse` and `postToolUse` hooks take it)"),
                );
                continue;
            }
            let matcher = match ToolMatcher::new(&m.value) {
                Ok(matcher) => matcher,
                Err(e) => {
                    out.push(
                        Diagnostic::new(
                            DiagnosticKind::HookBadMatch,
                            format!("the `match` of a `{key}` hook cannot be read: {e}"),
                        )
                        .at(span)
                        .help("`match` is a tool name, a glob (`mcp__github__*`) or alternatives (`write_file|edit_file`)"),
                    );
                    continue;
                }
            };
            for alt in matcher.alternatives() {
                let Ok(one) = ToolMatcher::new(alt) else {
                    continue;
                };
                let matching: Vec<&str> = tools.names().filter(|n| one.matches(n)).collect();
                if matching.is_empty() {
                    let mcp_of_declared = alt
                        .strip_prefix("mcp__")
                        .and_then(|rest| rest.split("__").next())
                        .is_some_and(|server| servers.contains(server));
                    if mcp_of_declared {
                        continue;
                    }
                    let d = Diagnostic::new(
                        DiagnosticKind::HookUnknownTool,
                        format!("the `{key}` hook's `match` names `{alt}`, which no registry knows: the hook never runs"),
                    )
                    .at(span.clone());
                    out.push(match crate::suggest::help_did_you_mean(alt, tools.names()) {
                        Some(help) => d.help(help),
                        None => d.help("`agent-presets show NAME` lists the tools; MCP tools are `mcp__<server>__<tool>` of a declared server"),
                    });
                } else if !matching.iter().any(|n| visible.contains(n)) {
                    out.push(
                        Diagnostic::new(
                            DiagnosticKind::HookHiddenTool,
                            format!("the `{key}` hook's `match` names `{alt}`, which this preset hides: the model cannot call it, so the hook never runs for it"),
                        )
                        .at(span.clone())
                        .help("show the tool (its `tools.allow`), or drop it from `match`"),
                    );
                }
            }
        }
    }
    out
}
