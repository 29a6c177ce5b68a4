//! What a resolved `extends` chain sets for the programs its preset runs, read from the
//! chain alone (no validation needed: `lock --connect` starts the servers of a preset
//! that is not valid until they are locked). [`ValidPreset`](super::ValidPreset) answers
//! with these too, so `run` and `--connect` decide alike.

use std::path::{Path, PathBuf};

use super::source::ParsedPreset;
use crate::endpoint::{ModelSettings, Provider, default_api_key_env};
use crate::process::sandbox::{SandboxMode, SandboxProfile};

/// The environment variables the chain's `passEnv` lists (root first, each once).
pub fn pass_env_of<'a>(chain: &[&'a ParsedPreset]) -> Vec<&'a str> {
    let mut names: Vec<&str> = Vec::new();
    for name in chain.iter().flat_map(|p| p.file.pass_env.iter().flatten()) {
        if !names.contains(&name.value.as_str()) {
            names.push(&name.value);
        }
    }
    names
}

/// The nearest `sandbox` of the chain, else `workspace-write`.
pub fn sandbox_mode_of(chain: &[&ParsedPreset]) -> SandboxMode {
    chain
        .iter()
        .rev()
        .find_map(|p| p.file.sandbox.as_ref())
        .map_or(SandboxMode::WorkspaceWrite, |s| s.value.mode())
}

/// The names of the MCP servers the chain declares (what `mcp__<server>__…` rules and
/// hook matches may name).
pub fn server_names_of<'a>(chain: &[&'a ParsedPreset]) -> std::collections::BTreeSet<&'a str> {
    chain
        .iter()
        .flat_map(|p| {
            p.file
                .mcp_servers
                .iter()
                .flat_map(super::spec::NamedMap::iter)
        })
        .map(|(name, _)| name.value.as_str())
        .collect()
}

/// The chain's `allowRead` paths (root first, each once), as written.
pub fn allow_read_of<'a>(chain: &[&'a ParsedPreset]) -> Vec<&'a str> {
    let mut paths: Vec<&str> = Vec::new();
    for path in chain
        .iter()
        .flat_map(|p| p.file.allow_read.iter().flatten())
    {
        if !paths.contains(&path.value.as_str()) {
            paths.push(&path.value);
        }
    }
    paths
}

/// A sandbox of `mode` with the chain's `allowRead` resolved against `workspace`: the
/// one profile commands, command tools and servers of the preset run in.
pub fn sandbox_profile_of(
    chain: &[&ParsedPreset],
    mode: SandboxMode,
    workspace: &Path,
) -> SandboxProfile {
    let allow_read: Vec<PathBuf> = allow_read_of(chain)
        .iter()
        .map(|p| workspace.join(p))
        .collect();
    SandboxProfile::new(mode).with_allow_read(allow_read)
}

/// The variables that hold a model provider's API key: every provider's default
/// (`DEEPSEEK_API_KEY`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`).
pub fn provider_key_vars() -> Vec<&'static str> {
    [Provider::Deepseek, Provider::Openai, Provider::Anthropic]
        .into_iter()
        .filter_map(default_api_key_env)
        .collect()
}

/// The variable the chain's nearest `model` block reads the key from (`apiKeyEnv`, else
/// the provider's default).
pub fn api_key_env_of(chain: &[&ParsedPreset]) -> Option<String> {
    let spec = chain.iter().rev().find_map(|p| p.file.model.as_ref())?;
    ModelSettings::from_spec(spec).api_key_env
}

/// What a program the preset starts never gets, whatever `passEnv` says: every
/// provider's key variable and `api_key_env` (the key the run sends).
pub fn withheld_env(api_key_env: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = provider_key_vars().into_iter().map(str::to_owned).collect();
    if let Some(key) = api_key_env
        && !out.iter().any(|k| k == key)
    {
        out.push(key.to_owned());
    }
    out
}
