//! What a server's lock entry binds ([`ServerIdentity`]): the argv (or the URL) that
//! `lock --connect` started, and for a program started here its resolved path and the
//! sha256 of that file and of each argument that is a file (a script). `validate --locked`
//! and `run` compare the preset and the program found now with it ([`identity_changes`],
//! the `server-changed` diagnostics of [`changed_diagnostic`]): the pinned tools came
//! from that server, and say nothing about another.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::mcp::{ServerConfig, ServerTransport};
use crate::preset::own_tools::DeclaredServer;
use crate::process::sandbox::{resolve_program, script_arguments};

/// What ran for one server when it was locked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerIdentity {
    /// The argv of a server started here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// The URL of a server reached over HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The program that ran: `command[0]` found on the server's `PATH`, links followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<LockedFile>,
    /// The arguments that named a file (scripts), links followed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<LockedFile>,
}

/// A file and its digest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedFile {
    /// Its path, absolute.
    pub path: String,
    /// `sha256:<hex>` of its bytes.
    pub sha256: String,
}

impl LockedFile {
    /// `path` and its digest, when it can be read.
    fn of(path: &Path) -> Option<LockedFile> {
        Some(LockedFile {
            path: path.to_string_lossy().into_owned(),
            sha256: file_digest(path)?,
        })
    }
}

/// `sha256:<hex>` of the file at `path`, read in pieces; `None` when it cannot be read.
pub fn file_digest(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for byte in hasher.finalize() {
        hex.push_str(&format!("{byte:02x}"));
    }
    Some(hex)
}

/// The identity of a program `argv` started in `cwd` with `PATH` `path`.
fn of_argv(argv: &[String], path: Option<&OsStr>, cwd: &Path) -> ServerIdentity {
    let (program, scripts) = match argv.split_first() {
        Some((program, args)) => (
            resolve_program(program, path, cwd).and_then(|p| LockedFile::of(&p)),
            script_arguments(args, cwd)
                .iter()
                .filter_map(|p| LockedFile::of(p))
                .collect(),
        ),
        None => (None, Vec::new()),
    };
    ServerIdentity {
        command: Some(argv.to_vec()),
        url: None,
        program,
        scripts,
    }
}

/// The identity of the server `config` starts (its argv found on the `PATH` of its
/// environment, in its working directory), or reaches.
pub fn of_config(config: &ServerConfig) -> ServerIdentity {
    match &config.transport {
        ServerTransport::Stdio { argv, env, cwd } => {
            let path = env
                .iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| OsStr::new(v.as_str()));
            of_argv(argv, path, cwd)
        }
        ServerTransport::Http { url, .. } => ServerIdentity {
            url: Some(url.clone()),
            ..ServerIdentity::default()
        },
    }
}

/// The identity of `server` as declared, started in `cwd`: its program looked up on the
/// `PATH` it would get (its literal `env` `PATH`, else the agent's, from `vars`), without
/// starting it.
pub fn of_declared(
    server: &DeclaredServer<'_>,
    vars: &[(OsString, OsString)],
    cwd: &Path,
) -> ServerIdentity {
    if let Some(command) = &server.spec.command {
        let argv: Vec<String> = command.value.iter().map(|a| a.value.clone()).collect();
        let literal = server
            .spec
            .env
            .iter()
            .flat_map(|e| e.iter())
            .find(|(k, _)| k.value == "PATH")
            .map(|(_, v)| OsString::from(&v.value));
        let agent = vars
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone());
        return of_argv(&argv, literal.or(agent).as_deref(), cwd);
    }
    ServerIdentity {
        url: server.spec.url.as_ref().map(|u| u.value.clone()),
        ..ServerIdentity::default()
    }
}

/// What differs between the `locked` identity and the one found `now`, one phrase each
/// naming the old and the new value; empty when nothing does. A program (or script) not
/// found now is not compared: nothing would start. A lock without an identity (written
/// before locks recorded one) is one change.
pub fn identity_changes(locked: Option<&ServerIdentity>, now: &ServerIdentity) -> Vec<String> {
    let Some(locked) = locked else {
        return vec![
            "the lock does not record which server was locked (it was written by an older agent-presets)".to_owned(),
        ];
    };
    let mut out = Vec::new();
    if locked.command != now.command {
        out.push(format!(
            "command {} → {}",
            shown_argv(locked.command.as_deref()),
            shown_argv(now.command.as_deref())
        ));
    }
    if locked.url != now.url {
        out.push(format!(
            "url {} → {}",
            shown(locked.url.as_deref()),
            shown(now.url.as_deref())
        ));
    }
    if locked.command == now.command {
        if let (Some(old), Some(new)) = (&locked.program, &now.program) {
            file_change("program", old, new, &mut out);
        }
        for old in &locked.scripts {
            if let Some(new) = now.scripts.iter().find(|s| s.path == old.path) {
                file_change("script", old, new, &mut out);
            }
        }
    }
    out
}

fn file_change(what: &str, old: &LockedFile, new: &LockedFile, out: &mut Vec<String>) {
    if old.path != new.path {
        out.push(format!("{what} `{}` → `{}`", old.path, new.path));
    } else if old.sha256 != new.sha256 {
        out.push(format!(
            "{what} `{}` changed ({} → {})",
            new.path,
            short(&old.sha256),
            short(&new.sha256)
        ));
    }
}

/// `sha256:` and the first 12 hex digits.
fn short(digest: &str) -> &str {
    digest.get(..19).unwrap_or(digest)
}

fn shown(value: Option<&str>) -> String {
    value.map_or_else(|| "(none)".to_owned(), |v| format!("`{v}`"))
}

fn shown_argv(argv: Option<&[String]>) -> String {
    match argv {
        None => "(none)".to_owned(),
        Some(argv) => format!(
            "`{}`",
            serde_json::to_string(argv).unwrap_or_else(|_| argv.join(" "))
        ),
    }
}

/// The `server-changed` diagnostic of server `server` of `preset` (declared at `span`).
pub fn changed_diagnostic(
    preset: &str,
    server: &str,
    span: Option<Span>,
    changes: &[String],
) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::ServerChanged,
        format!(
            "MCP server `{server}` of `{preset}` is not the server {} recorded: {}",
            super::lock::LOCK_FILE,
            changes.join("; ")
        ),
    )
    .at(span)
    .help(format!(
        "its pinned tools came from the server that was locked; if the change is intended (a new version you installed, another package), run `agent-presets lock --connect {preset}` and commit {}",
        super::lock::LOCK_FILE
    ))
}

/// Where a server's command or URL is written (else its name).
pub fn declared_span(server: &DeclaredServer<'_>) -> Span {
    match (&server.spec.command, &server.spec.url) {
        (Some(c), _) => server.preset.span_of(c),
        (None, Some(u)) => server.preset.span_of(u),
        (None, None) => server.preset.span_of(server.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Option<Vec<String>> {
        Some(a.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn a_swapped_command_url_or_program_is_named_old_and_new() {
        let locked = ServerIdentity {
            command: argv(&["npx", "-y", "@modelcontextprotocol/server-everything"]),
            program: Some(LockedFile {
                path: "/usr/bin/npx".into(),
                sha256: "sha256:0123456789abcdef".into(),
            }),
            ..ServerIdentity::default()
        };
        assert!(identity_changes(Some(&locked), &locked).is_empty());
        let mut swapped = locked.clone();
        swapped.command = argv(&["npx", "-y", "@evil/deploy-mcp"]);
        assert_eq!(
            identity_changes(Some(&locked), &swapped),
            [
                "command `[\"npx\",\"-y\",\"@modelcontextprotocol/server-everything\"]` → `[\"npx\",\"-y\",\"@evil/deploy-mcp\"]`"
            ]
        );
        let mut upgraded = locked.clone();
        upgraded.program.as_mut().unwrap().sha256 = "sha256:fedcba9876543210".into();
        assert_eq!(
            identity_changes(Some(&locked), &upgraded),
            ["program `/usr/bin/npx` changed (sha256:0123456789ab → sha256:fedcba987654)"]
        );
        let mut elsewhere = locked.clone();
        elsewhere.program.as_mut().unwrap().path = "/opt/node/bin/npx".into();
        assert_eq!(
            identity_changes(Some(&locked), &elsewhere),
            ["program `/usr/bin/npx` → `/opt/node/bin/npx`"]
        );
        // Not installed here: only the argv is compared.
        let mut missing = locked.clone();
        missing.program = None;
        assert!(identity_changes(Some(&locked), &missing).is_empty());
        let url = ServerIdentity {
            url: Some("https://a.example/mcp".into()),
            ..ServerIdentity::default()
        };
        let other = ServerIdentity {
            url: Some("https://b.example/mcp".into()),
            ..ServerIdentity::default()
        };
        assert_eq!(
            identity_changes(Some(&url), &other),
            ["url `https://a.example/mcp` → `https://b.example/mcp`"]
        );
        assert_eq!(identity_changes(None, &url).len(), 1);
    }

    #[test]
    fn a_program_and_its_script_are_found_and_digested() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        std::fs::write(cwd.join("server.py"), "print(1)\n").unwrap();
        let id = of_argv(
            &["sh".to_owned(), "server.py".to_owned(), "-u".to_owned()],
            Some(OsStr::new("/usr/bin:/bin")),
            &cwd,
        );
        assert_eq!(id.command.as_ref().unwrap()[0], "sh");
        let program = id.program.as_ref().unwrap();
        assert!(program.path.starts_with('/'), "{program:?}");
        assert!(program.sha256.starts_with("sha256:"), "{program:?}");
        assert_eq!(id.scripts.len(), 1);
        assert_eq!(
            id.scripts[0].sha256,
            file_digest(&cwd.join("server.py")).unwrap()
        );
        // The script rewritten: a change, named.
        std::fs::write(cwd.join("server.py"), "print(2)\n").unwrap();
        let now = of_argv(
            &["sh".to_owned(), "server.py".to_owned(), "-u".to_owned()],
            Some(OsStr::new("/usr/bin:/bin")),
            &cwd,
        );
        let changes = identity_changes(Some(&id), &now);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(changes[0].starts_with("script `"), "{changes:?}");
    }
}
