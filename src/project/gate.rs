//! The run gate's policy: what must hold before anything is sent or started. The
//! endpoint must not be plain http off the loopback unless allowed (the preset's
//! `model.allowInsecure` for its own provider, or the caller's opt-in), and a preset
//! that reaches outside through files the user did not write must be trusted
//! ([`crate::trust`]). Asking the user and printing are the caller's.

use std::path::Path;

use crate::endpoint::{EndpointError, ModelSettings, Transport, check_base_url};
use crate::preset::ValidPreset;
use crate::trust::{PresetReach, TrustPolicy};

use super::Project;

/// How requests to `settings`' endpoint travel, or why they may not: plain http to
/// another host needs `allow_insecure` (the caller's opt-in, `run --allow-insecure`) or
/// the preset's `model.allowInsecure` for the provider in use.
pub fn check_transport(
    preset: &ValidPreset,
    settings: &ModelSettings,
    allow_insecure: bool,
) -> Result<Transport, EndpointError> {
    let allowed = allow_insecure
        || preset.model().is_some_and(|m| {
            m.provider.value == settings.provider
                && m.allow_insecure.as_ref().is_some_and(|a| a.value)
        });
    check_base_url(&settings.base_url, allowed)
}

/// What the user must trust before `preset` runs against `settings` in the working
/// directory `workspace`, or `None` when nothing needs trust. The reach without the
/// endpoint is asked for when it needs trust on its own (so one decision covers every
/// endpoint); else the reach at run time (an endpoint chosen at run time that makes it
/// need trust). Either way it carries the digests the approval binds
/// ([`PresetReach::with_digests`]): the lock entries of the servers it reaches, as this
/// project's tools hold them, and the workspace files their argv names.
pub fn reach_to_trust(
    project: &Project,
    preset: &ValidPreset,
    settings: &ModelSettings,
    policy: &TrustPolicy,
    workspace: &Path,
) -> Option<PresetReach> {
    let at_run = PresetReach::of(preset, &project.presets, policy, Some(settings));
    if !at_run.needs_trust() {
        return None;
    }
    let reach = PresetReach::of(preset, &project.presets, policy, None);
    let reach = if reach.needs_trust() { reach } else { at_run };
    Some(reach.with_digests(preset, workspace, project.tools.listings()))
}
