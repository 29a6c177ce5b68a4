//! Data-driven permission-rule cases: every `*.yaml` file under
//! `tests/conformance/permissions/` is one table of calls with the verdict the rules must
//! give (format: `tests/conformance/README.md`). Path arguments are resolved in a
//! temporary workspace built from the case's `files` and `symlinks`, through the same
//! walk the file tools use (`tools::builtin::policy_path`).

use std::collections::BTreeMap;
use std::path::Path;

use agent_presets::policy::{Call, Policy, Verdict};
use agent_presets::tools::{ToolCatalog, ToolContext, builtin::policy_path};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    #[allow(dead_code)]
    description: String,
    #[serde(default)]
    permissions: Lists,
    #[serde(default)]
    files: Vec<String>,
    /// link → target, created as symbolic links in the workspace.
    #[serde(default)]
    symlinks: BTreeMap<String, String>,
    calls: Vec<CallSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Lists {
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CallSpec {
    tool: String,
    /// `bash`'s command line.
    command: Option<String>,
    /// A file tool's `path`; `{ws}` is replaced by the workspace's absolute path.
    path: Option<String>,
    /// Other arguments.
    #[serde(default)]
    arguments: serde_json::Map<String, serde_json::Value>,
    expect: String,
    /// The rule that must have decided (as written), if any.
    rule: Option<String>,
    /// `--yes` answered.
    #[serde(default)]
    yes: bool,
}

fn verdict(name: &str) -> Verdict {
    match name {
        "allow" => Verdict::Allow,
        "ask" => Verdict::Ask,
        "deny" => Verdict::Deny,
        other => panic!("unknown verdict `{other}`"),
    }
}

fn run_case(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let case: Case =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let policy = Policy::new(
        &case.permissions.deny,
        &case.permissions.ask,
        &case.permissions.allow,
    )
    .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::create_dir(dir.path().join("outside")).unwrap();
    for file in &case.files {
        let p = ws.join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }
    for (link, target) in &case.symlinks {
        let p = ws.join(link);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
    }
    let ctx = ToolContext::new(&ws).unwrap();
    let catalog = ToolCatalog::builtin();
    let mut failures = Vec::new();
    for call in &case.calls {
        let mut arguments = call.arguments.clone();
        if let Some(command) = &call.command {
            let command = command.replace("{ws}", ws.to_str().unwrap());
            arguments.insert("command".into(), command.into());
        }
        let raw_path = call
            .path
            .as_ref()
            .map(|p| p.replace("{ws}", ws.to_str().unwrap()));
        if let Some(p) = &raw_path {
            arguments.insert("path".into(), p.clone().into());
        }
        let arguments = serde_json::Value::Object(arguments);
        let resolved = raw_path.as_deref().and_then(|p| policy_path(&ctx, p));
        let read_only = catalog.get(&call.tool).is_some_and(|t| t.read_only());
        let decision = policy.decide(&Call {
            tool: &call.tool,
            arguments: &arguments,
            read_only,
            path: resolved.as_deref(),
            workspace: ws.to_str(),
        });
        let decision = if call.yes {
            decision.answered_yes()
        } else {
            decision
        };
        let shown = format!("{} {}", call.tool, arguments);
        if decision.verdict != verdict(&call.expect) {
            failures.push(format!(
                "{}: {shown}: expected {}, got {} ({})",
                path.display(),
                call.expect,
                decision.verdict.as_str(),
                decision.explain()
            ));
        }
        if let Some(rule) = &call.rule {
            let named = decision.rule().map(|r| r.rule.as_str());
            if named != Some(rule.as_str()) {
                failures.push(format!(
                    "{}: {shown}: expected the rule `{rule}` to decide, got {named:?} ({})",
                    path.display(),
                    decision.explain()
                ));
            }
        }
    }
    failures
}

#[test]
fn permission_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/permissions");
    let mut paths: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 3, "the permission cases are missing");
    let failures: Vec<String> = paths.iter().flat_map(|p| run_case(p)).collect();
    assert!(
        failures.is_empty(),
        "{} failing calls:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
