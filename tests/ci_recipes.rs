//! The README's ready-to-copy CI recipes — the GitHub Actions workflow, the Git
//! pre-commit hook and the pre-commit framework's configuration — taken from the README
//! as written and run, command by command, against a valid and a broken project, with
//! `agent-presets` on `PATH` being the binary under test.
#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;

use serde_json::Value;

#[path = "support/project.rs"]
mod project;
#[path = "support/sarif_schema.rs"]
mod sarif_schema;

use project::Project;

fn readme() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The body of the README's fenced block whose first line is `first_line`.
fn block(readme: &str, fence: &str, first_line: &str) -> String {
    let start = format!("```{fence}\n{first_line}\n");
    let at = readme
        .find(&start)
        .unwrap_or_else(|| panic!("README has no ```{fence} block starting `{first_line}`"));
    let body = &readme[at + "```".len() + fence.len() + 1..];
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

/// The workflow's steps that run `agent-presets` (not the install step), in order.
fn workflow_commands(workflow: &Value) -> Vec<String> {
    workflow["jobs"]["presets"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|step| step["run"].as_str())
        .filter(|run| run.trim_start().starts_with("agent-presets "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn github_workflow() {
    let text = block(&readme(), "yaml", "# .github/workflows/presets.yml");
    let workflow = yaml(&text);
    assert_eq!(workflow["permissions"]["security-events"], "write");
    let steps = workflow["jobs"]["presets"]["steps"].as_array().unwrap();
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
        })
        .expect("an upload-sarif step");
    let sarif_file = upload["with"]["sarif_file"].as_str().unwrap();
    let commands = workflow_commands(&workflow);
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert!(
        commands[1].contains(&format!("> {sarif_file}")),
        "{commands:?}"
    );

    // GitHub runs `run:` with `bash -e -o pipefail`.
    let validator = sarif_schema::validator();
    let cases = [
        (valid(), 0, None),
        (broken(), 1, Some("P0103")),
        (drifted(), 1, Some("P0302")),
    ];
    for (project, gate_exit, rule) in cases {
        let gate = project.run_program("bash", &["-e", "-o", "pipefail", "-c", &commands[0]]);
        assert_eq!(gate.code, gate_exit, "{gate:?}");
        assert_eq!(
            gate.stdout
                .contains("::error file=.agent-presets/reviewer.yaml"),
            gate_exit == 1,
            "{gate:?}"
        );

        // The report step passes for invalid presets too, so the upload runs.
        let report = project.run_program("bash", &["-e", "-o", "pipefail", "-c", &commands[1]]);
        assert_eq!(report.code, 0, "{report:?}");
        let log: Value =
            serde_json::from_str(&fs::read_to_string(project.path().join(sarif_file)).unwrap())
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

    // An unreadable path (exit 2) fails the report step instead of uploading half a log.
    let project = valid();
    let command = commands[1].replace("validate", "validate missing.yaml");
    let report = project.run_program("bash", &["-e", "-o", "pipefail", "-c", &command]);
    assert_eq!(report.code, 1, "{report:?}");
}

#[test]
fn git_pre_commit_hook() {
    let script = block(&readme(), "sh", "#!/bin/sh");
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
fn pre_commit_framework_hook() {
    let config = yaml(&block(&readme(), "yaml", "# .pre-commit-config.yaml"));
    let hook = &config["repos"][0]["hooks"][0];
    assert_eq!(config["repos"][0]["repo"], "local");
    assert_eq!(hook["language"], "system");
    assert_eq!(hook["pass_filenames"], false);
    // It runs when a preset changes, and not for other files.
    let files = regex::Regex::new(hook["files"].as_str().unwrap()).unwrap();
    assert!(files.is_match(".agent-presets/reviewer.yaml"));
    assert!(files.is_match("presets.lock"));
    assert!(!files.is_match("src/main.rs"));
    // pre-commit runs `entry` split like a shell would, without a shell.
    let entry: Vec<&str> = hook["entry"].as_str().unwrap().split_whitespace().collect();
    for (project, exit) in [(valid(), 0), (broken(), 1), (drifted(), 1)] {
        let run = project.run_program(entry[0], &entry[1..]);
        assert_eq!(run.code, exit, "{run:?}");
    }
}
