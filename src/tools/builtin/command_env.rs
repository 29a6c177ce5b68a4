//! The environment of commands run by `bash`: an allowlist, not a guess at secret names.
//!
//! A command gets only the variables named in [`BASE_COMMAND_ENV`] and those the preset
//! declares in `passEnv` ([`ToolContext::passed_env`]), taken from the agent's
//! environment — and of those, none that the host withholds
//! ([`ToolContext::hidden_env`], e.g. the preset's `apiKeyEnv`), none whose name looks
//! like it holds a credential and none whose value looks like one
//! ([`is_credential_name`], [`is_credential_value`]). `PAGER` and `GIT_PAGER` are set to
//! `cat` so no command waits for a pager.

use std::ffi::OsString;

use crate::secrets::{is_credential_name, is_credential_value};
use crate::tools::ToolContext;

/// The variables every command gets from the agent's environment (when set): `PATH`,
/// `HOME`, `USER`, `LOGNAME`, `SHELL`, `LANG`, `LANGUAGE`, every `LC_*`, `TERM`, `TZ` and
/// `TMPDIR`. A preset adds more with `passEnv`.
pub const BASE_COMMAND_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "TMPDIR",
];

/// Is `name` in [`BASE_COMMAND_ENV`]?
fn is_base(name: &str) -> bool {
    BASE_COMMAND_ENV
        .iter()
        .any(|allowed| match allowed.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix) && name.len() > prefix.len(),
            None => name == *allowed,
        })
}

/// The environment for a command run in `ctx`, from `vars` (the agent's environment).
pub(crate) fn command_env<I>(ctx: &ToolContext, vars: I) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut env: Vec<(OsString, OsString)> = vars
        .into_iter()
        .filter(|(name, value)| {
            let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
                // Not UTF-8: cannot be checked, so not passed.
                return false;
            };
            (is_base(name) || ctx.passed_env().iter().any(|p| p == name))
                && !ctx.hidden_env().iter().any(|h| h == name)
                && !is_credential_name(name)
                && !is_credential_value(value)
        })
        .collect();
    env.retain(|(name, _)| name != "PAGER" && name != "GIT_PAGER");
    env.push(("PAGER".into(), "cat".into()));
    env.push(("GIT_PAGER".into(), "cat".into()));
    env
}

/// The environment of a program a preset declares (a command tool, a stdio MCP server):
/// [`command_env`] (the allowlist and the preset's `passEnv`, as for `bash`), then the
/// program's own `pass_env` names — passed even when they look like credentials, since
/// the preset names them for this one program — then its literal `env`. Names the host
/// withholds ([`ToolContext::hidden_env`]: the model's API key) are never passed.
pub(crate) fn program_env<'a>(
    ctx: &ToolContext,
    vars: &[(OsString, OsString)],
    pass_env: impl IntoIterator<Item = &'a str>,
    literal: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(OsString, OsString)> {
    let mut env = command_env(ctx, vars.iter().cloned());
    let hidden = |name: &str| ctx.hidden_env().iter().any(|h| h == name);
    for name in pass_env {
        if hidden(name) || env.iter().any(|(n, _)| n == name) {
            continue;
        }
        if let Some((n, v)) = vars.iter().find(|(n, _)| n == name) {
            env.push((n.clone(), v.clone()));
        }
    }
    for (name, value) in literal {
        if hidden(name) {
            continue;
        }
        env.retain(|(n, _)| n != name);
        env.push((OsString::from(name), OsString::from(value)));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ToolContext {
        ToolContext::new(std::env::temp_dir()).unwrap()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<&str> {
        env.iter().map(|(k, _)| k.to_str().unwrap()).collect()
    }

    #[test]
    fn only_allowlisted_and_passed_names_reach_commands() {
        let vars = [
            ("PATH", "/usr/bin:/bin"),
            ("LC_ALL", "C.UTF-8"),
            ("LC_", "x"),
            ("RANDOM_THING", "value"),
            ("CARGO_HOME", "/cargo"),
            ("OPENAI_KEY_2", "not-a-known-format"),
            ("STRIPE_SK", "sk_live_abcdefghijklmnop"),
            ("PGPASS", "hunter2"),
            (
                "SENTRY_DSN",
                "https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/2",
            ),
            (
                "ANTHROPIC_KEY_PROD",
                "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            ),
            ("HOME", "https://user:pw@example.com/"),
            ("PAGER", "less"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = command_env(&ctx(), vars.clone());
        assert_eq!(names(&env), ["PATH", "LC_ALL", "PAGER", "GIT_PAGER"]);

        // Passing a name lets it through, unless it (or its value) looks like a credential.
        let passed = ctx().with_passed_env([
            "CARGO_HOME",
            "OPENAI_KEY_2",
            "STRIPE_SK",
            "PGPASS",
            "SENTRY_DSN",
            "ANTHROPIC_KEY_PROD",
        ]);
        let env = command_env(&passed, vars.clone());
        assert_eq!(
            names(&env),
            ["PATH", "LC_ALL", "CARGO_HOME", "PAGER", "GIT_PAGER"]
        );
        // A passed pager is replaced, not doubled: commands never wait for one.
        let pagers = ctx().with_passed_env(["PAGER", "GIT_PAGER"]);
        let env = command_env(
            &pagers,
            [("PAGER", "less"), ("GIT_PAGER", "less")]
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        assert_eq!(
            env,
            [("PAGER", "cat"), ("GIT_PAGER", "cat")].map(|(k, v)| (k.into(), v.into()))
        );
        // The host can withhold any name, allowlisted ones included.
        let hidden = passed.with_hidden_env(["PATH", "CARGO_HOME"]);
        assert_eq!(
            names(&command_env(&hidden, vars)),
            ["LC_ALL", "PAGER", "GIT_PAGER"]
        );
    }
}
