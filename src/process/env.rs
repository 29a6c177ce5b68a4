//! The environment of the programs the agent runs (`bash` commands, command tools, stdio
//! MCP servers): an allowlist, not a guess at secret names.
//!
//! A command gets only the variables named in [`BASE_COMMAND_ENV`] and those the preset
//! declares in `passEnv` ([`EnvRules::passed`]), taken from the agent's
//! environment — and of those, none that the host withholds
//! ([`EnvRules::hidden`], e.g. the preset's `apiKeyEnv`), none whose name looks
//! like it holds a credential and none whose value looks like one
//! ([`is_credential_name`], [`is_credential_value`]). `PAGER` and `GIT_PAGER` are set to
//! `cat` so no command waits for a pager.

use std::ffi::OsString;

use crate::secrets::{is_credential_name, is_credential_value};

/// The variables every command gets from the agent's environment (when set): `PATH`,
/// `HOME`, `USER`, `LOGNAME`, `SHELL`, `LANG`, `LANGUAGE`, every `LC_*`, `TERM`, `TZ`,
/// `TMPDIR`, and the machine's network settings: the certificate authorities
/// (`SSL_CERT_FILE`, `SSL_CERT_DIR`, `NODE_EXTRA_CA_CERTS`, `REQUESTS_CA_BUNDLE`,
/// `CURL_CA_BUNDLE`) and the proxies (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
/// `NO_PROXY`, in either case). Without them a server that `npx`, `uvx` or `pipx`
/// downloads behind a company's proxy or TLS inspection fails to start; a proxy URL with
/// a password in it is a credential and is not passed (as every credential value). A preset
/// adds more with `passEnv`.
pub const BASE_COMMAND_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "TZ",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
];

/// The rules for one program's environment besides [`BASE_COMMAND_ENV`]: the names the
/// preset passes (`passEnv`) and the names the host withholds (the model's API key).
/// A tool context gives its own (`ToolContext::env_rules`).
#[derive(Clone, Copy, Debug, Default)]
pub struct EnvRules<'a> {
    passed: &'a [String],
    hidden: &'a [String],
}

impl<'a> EnvRules<'a> {
    /// Pass `passed` too (unless credential-looking); never pass `hidden`.
    pub fn new(passed: &'a [String], hidden: &'a [String]) -> Self {
        EnvRules { passed, hidden }
    }

    /// The names passed besides the allowlist.
    pub fn passed(&self) -> &'a [String] {
        self.passed
    }

    /// The names never passed.
    pub fn hidden(&self) -> &'a [String] {
        self.hidden
    }
}

/// Is `name` in [`BASE_COMMAND_ENV`]?
fn is_base(name: &str) -> bool {
    BASE_COMMAND_ENV
        .iter()
        .any(|allowed| match allowed.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix) && name.len() > prefix.len(),
            None => name == *allowed,
        })
}

/// The environment for a command run under `rules`, from `vars` (the agent's environment).
pub(crate) fn command_env<I>(rules: EnvRules<'_>, vars: I) -> Vec<(OsString, OsString)>
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
            (is_base(name) || rules.passed().iter().any(|p| p == name))
                && !rules.hidden().iter().any(|h| h == name)
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
/// withholds ([`EnvRules::hidden`]: the model's API key) are never passed.
pub(crate) fn program_env<'a>(
    rules: EnvRules<'_>,
    vars: &[(OsString, OsString)],
    pass_env: impl IntoIterator<Item = &'a str>,
    literal: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(OsString, OsString)> {
    let mut env = command_env(rules, vars.iter().cloned());
    let hidden = |name: &str| rules.hidden().iter().any(|h| h == name);
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

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<&str> {
        env.iter().map(|(k, _)| k.to_str().unwrap()).collect()
    }

    #[test]
    fn the_machine_s_certificate_authorities_and_proxies_reach_commands_without_a_password() {
        // A cold `npx -y`/`uvx` server behind TLS inspection or a proxy needs them to
        // download its package (uv: "invalid peer certificate: UnknownIssuer").
        let vars = [
            ("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
            ("NODE_EXTRA_CA_CERTS", "/etc/ssl/corp.pem"),
            ("HTTPS_PROXY", "http://proxy.corp:3128"),
            ("no_proxy", "localhost,127.0.0.1"),
            ("http_proxy", "http://alice:hunter2@proxy.corp:3128"),
            ("ALL_PROXY", "socks5://proxy.corp:1080"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = command_env(EnvRules::default(), vars);
        assert_eq!(
            names(&env),
            [
                "SSL_CERT_FILE",
                "NODE_EXTRA_CA_CERTS",
                "HTTPS_PROXY",
                "no_proxy",
                "ALL_PROXY",
                "PAGER",
                "GIT_PAGER"
            ]
        );
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
        let env = command_env(EnvRules::default(), vars.clone());
        assert_eq!(names(&env), ["PATH", "LC_ALL", "PAGER", "GIT_PAGER"]);

        // Passing a name lets it through, unless it (or its value) looks like a credential.
        let passed_names = strings(&[
            "CARGO_HOME",
            "OPENAI_KEY_2",
            "STRIPE_SK",
            "PGPASS",
            "SENTRY_DSN",
            "ANTHROPIC_KEY_PROD",
        ]);
        let passed = EnvRules::new(&passed_names, &[]);
        let env = command_env(passed, vars.clone());
        assert_eq!(
            names(&env),
            ["PATH", "LC_ALL", "CARGO_HOME", "PAGER", "GIT_PAGER"]
        );
        // A passed pager is replaced, not doubled: commands never wait for one.
        let pager_names = strings(&["PAGER", "GIT_PAGER"]);
        let pagers = EnvRules::new(&pager_names, &[]);
        let env = command_env(
            pagers,
            [("PAGER", "less"), ("GIT_PAGER", "less")]
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        assert_eq!(
            env,
            [("PAGER", "cat"), ("GIT_PAGER", "cat")].map(|(k, v)| (k.into(), v.into()))
        );
        // The host can withhold any name, allowlisted ones included.
        let hidden_names = strings(&["PATH", "CARGO_HOME"]);
        let hidden = EnvRules::new(&passed_names, &hidden_names);
        assert_eq!(
            names(&command_env(hidden, vars)),
            ["LC_ALL", "PAGER", "GIT_PAGER"]
        );
    }
}
