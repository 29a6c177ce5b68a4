//! The ready-to-copy CI recipes of `docs/ci.md` (the README's "In CI" links there) —
//! the GitHub Actions workflow using this repository's Action, the pre-commit
//! framework's configuration using its hook, and a plain Git hook — checked against
//! `action.yml`, `.pre-commit-hooks.yaml` and the manifest's `repository`, and run
//! against a valid, a broken and a drifted project with `agent-presets` being the binary
//! under test. (`scripts/test-readme-ci.sh` runs them from a fresh Git repository
//! against a local clone, pre-commit included.)
#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::project;
use crate::support::sarif_schema;

use project::Project;

fn ci_page() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap()
}

/// The body of the page's fenced block whose first line is `first_line`.
fn block(page: &str, fence: &str, first_line: &str) -> String {
    let start = format!("```{fence}\n{first_line}\n");
    let at = page
        .find(&start)
        .unwrap_or_else(|| panic!("docs/ci.md has no ```{fence} block starting `{first_line}`"));
    let body = &page[at + "```".len() + fence.len() + 1..];
    let end = body.find("```\n").unwrap();
    body[..end].to_owned()
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("not YAML ({e}):\n{text}"))
}

/// A project whose presets are valid and locked (`presets.lock` committed).
fn valid() -> Project {
    let project = Project::new();
    project.write(
        ".agent-presets/reviewer.yaml",
        "version: 1\nname: reviewer\nextends: standard\npersona:\n  sections:\n    - name: rules\n      order: 150\n      text: Cite file and line.\ntools:\n  allow: [read_file, grep]\n",
    );
    let run = project.run(&["lock"]);
    assert_eq!(run.code, 0, "{run:?}");
    project
}

/// A locked project whose preset then got an unknown tool.
fn broken() -> Project {
    let project = valid();
    edit(&project, "[read_file, grep]", "[read_fiel, grep]");
    project
}

/// A locked project whose preset's prompt then changed without re-locking.
fn drifted() -> Project {
    let project = valid();
    edit(&project, "Cite file and line.", "Cite the file and line.");
    project
}

fn edit(project: &Project, from: &str, to: &str) {
    let path = project.path().join(".agent-presets/reviewer.yaml");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace(from, to)).unwrap();
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn yaml_file(name: &str) -> Value {
    yaml(&fs::read_to_string(manifest_dir().join(name)).unwrap())
}

/// `owner/name` of the manifest's `repository` (`https://github.com/owner/name`).
fn github_repository() -> String {
    let manifest = fs::read_to_string(manifest_dir().join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("repository = "))
        .expect("a `repository` in Cargo.toml");
    let url = line.trim_start_matches("repository = ").trim_matches('"');
    url.strip_prefix("https://github.com/")
        .unwrap_or_else(|| panic!("not a GitHub repository: {url}"))
        .to_owned()
}

fn release_tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// `scripts/action.sh validate` (the Action's validate step) with these inputs, the
/// binary under test standing in for the installed one.
fn action_validate(project: &Project, inputs: &[(&str, &str)]) -> project::Run {
    let mut args: Vec<String> = vec![format!(
        "AGENT_PRESETS_BIN={}",
        env!("CARGO_BIN_EXE_agent-presets")
    )];
    for (name, value) in inputs {
        args.push(format!(
            "INPUT_{}={value}",
            name.to_uppercase().replace('-', "_")
        ));
    }
    args.push("bash".into());
    args.push(
        manifest_dir()
            .join("scripts/action.sh")
            .to_string_lossy()
            .into_owned(),
    );
    args.push("validate".into());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    project.run_program("env", &refs)
}

#[test]
fn github_workflow_uses_the_action_of_this_repository() {
    let workflow = yaml(&block(
        &ci_page(),
        "yaml",
        "# .github/workflows/presets.yml",
    ));
    let steps = workflow["jobs"]["presets"]["steps"].as_array().unwrap();
    let expected = format!("{}@{}", github_repository(), release_tag());
    let step = steps
        .iter()
        .find(|s| s["uses"].as_str() == Some(&expected))
        .unwrap_or_else(|| panic!("no step `uses: {expected}` in {steps:#?}"));
    // A Rust toolchain comes first (the Action builds with cargo when its cache is cold).
    let toolchain = steps.iter().position(|s| {
        s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("dtolnay/rust-toolchain@"))
    });
    let action_at = steps.iter().position(|s| s == step);
    assert!(toolchain < action_at && toolchain.is_some(), "{steps:#?}");

    let action = yaml_file("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let inputs = action["inputs"].as_object().unwrap();
    let with = step["with"].as_object().unwrap();
    for key in with.keys() {
        assert!(
            inputs.contains_key(key),
            "`{key}` is not an input of action.yml"
        );
    }
    if with.get("sarif").and_then(Value::as_bool) == Some(true) {
        assert_eq!(workflow["permissions"]["security-events"], "write");
    }

    // The Action's validate step with the inputs of docs/ci.md's workflow.
    let given: Vec<(String, String)> = with
        .iter()
        .map(|(k, v)| {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            (k.clone(), v)
        })
        .collect();
    let mut inputs: Vec<(&str, &str)> = given
        .iter()
        .filter(|(k, _)| k != "sarif")
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    inputs.push(("sarif-file", "presets.sarif"));
    let validator = sarif_schema::validator();
    for (project, exit, rule) in [
        (valid(), 0, None),
        (broken(), 1, Some("P0103")),
        (drifted(), 1, Some("P0302")),
    ] {
        let run = action_validate(&project, &inputs);
        assert_eq!(run.code, exit, "{run:?}");
        assert_eq!(
            run.stdout
                .contains("::error file=.agent-presets/reviewer.yaml"),
            exit == 1,
            "{run:?}"
        );
        let log: Value = serde_json::from_str(
            &fs::read_to_string(project.path().join("presets.sarif")).unwrap(),
        )
        .unwrap();
        assert_eq!(sarif_schema::errors(&validator, &log), Vec::<String>::new());
        let rules: Vec<&str> = log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["ruleId"].as_str())
            .collect();
        assert_eq!(rules, rule.into_iter().collect::<Vec<_>>());
    }
    // An unreadable target: exit 2, whatever the SARIF log holds.
    let mut missing = inputs.clone();
    missing.push(("targets", "missing.yaml"));
    assert_eq!(action_validate(&valid(), &missing).code, 2);
}

#[test]
fn git_pre_commit_hook() {
    let script = block(&ci_page(), "sh", "#!/bin/sh");
    assert!(script.contains("# .git/hooks/pre-commit"), "{script}");
    for (project, exit) in [(valid(), 0), (broken(), 1), (drifted(), 1)] {
        let hook = project.write(".git/hooks/pre-commit", &script);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
        }
        let run = project.run_program(hook.to_str().unwrap(), &[]);
        assert_eq!(run.code, exit, "{run:?}");
    }
}

#[test]
fn pre_commit_framework_uses_the_hook_of_this_repository() {
    let config = yaml(&block(&ci_page(), "yaml", "# .pre-commit-config.yaml"));
    let repo = &config["repos"][0];
    assert_eq!(
        repo["repo"].as_str(),
        Some(format!("https://github.com/{}", github_repository()).as_str())
    );
    assert_eq!(repo["rev"].as_str(), Some(release_tag().as_str()));
    let hooks = yaml_file(".pre-commit-hooks.yaml");
    let hook = hooks
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["id"] == repo["hooks"][0]["id"])
        .expect("the hook id of docs/ci.md in .pre-commit-hooks.yaml");
    assert_eq!(hook["language"], "rust");
    assert_eq!(hook["pass_filenames"], false);
    // It runs when a preset or the lock changes, and not for other files.
    let files = regex::Regex::new(hook["files"].as_str().unwrap()).unwrap();
    assert!(files.is_match(".agent-presets/reviewer.yaml"));
    assert!(files.is_match(".agent-presets/prompts/rules.md"));
    assert!(files.is_match("presets.lock"));
    // The project config, and presets in the directories it names.
    assert!(files.is_match("agent-presets.yaml"));
    assert!(files.is_match("teams/platform/presets/triage.yaml"));
    assert!(files.is_match("ci/presets.lock"));
    assert!(!files.is_match("src/main.rs"));
    assert!(!files.is_match("docs/presets.lock.md"));
    // pre-commit runs `entry` split like a shell would, without a shell.
    let entry: Vec<&str> = hook["entry"].as_str().unwrap().split_whitespace().collect();
    assert_eq!(entry[0], "agent-presets");
    for (project, exit) in [(valid(), 0), (broken(), 1), (drifted(), 1)] {
        let run = project.run_program(entry[0], &entry[1..]);
        assert_eq!(run.code, exit, "{run:?}");
    }
}
