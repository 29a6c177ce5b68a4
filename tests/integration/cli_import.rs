//! `agent-presets import`: each kind of input (tests/cli/import/) becomes a preset that
//! `validate` accepts and `render` shows, every field it does not carry is a located
//! `import-not-carried` warning, and a broken input is an error (exit 2), never a panic.
#![cfg(feature = "cli")]

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::mcp_fixture;
use crate::support::project::Project;

/// A fixture of tests/cli/import/, copied into `project` at the same relative path.
fn fixture(project: &Project, case: &str, relative: &str) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/import")
        .join(case)
        .join(relative);
    project.write(relative, &fs::read_to_string(&from).unwrap());
}

/// The `import-not-carried` warnings of a JSON report, as `(line, column, message)`.
fn not_carried(report: &Value) -> Vec<(u64, u64, String)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "P0780")
        .map(|d| {
            assert_eq!(d["severity"], "warning", "{d}");
            (
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn json_report(project: &Project, args: &[&str]) -> Value {
    let run = project.run(args);
    assert_eq!(run.code, 0, "{run:?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

/// Import to `presets/NAME.yaml`, then `validate` and `render` it from there.
fn import_validate_render(project: &Project, input: &str, name: &str, vars: &[&str]) -> String {
    let out = format!("presets/{name}.yaml");
    let run = project.run(&["import", input, "-o", &out]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    assert!(
        run.stderr.contains(&format!("as `{name}` into {out}")),
        "{run:?}"
    );
    let written = fs::read_to_string(project.path().join(&out)).unwrap();
    assert!(
        written.starts_with(&format!(
            "# Imported by `agent-presets import` from {input}"
        )),
        "{written}"
    );
    validate_render(project, name, vars)
}

/// `validate` and `render` the preset `presets/NAME.yaml`.
fn validate_render(project: &Project, name: &str, vars: &[&str]) -> String {
    let run = project.run(&["--preset-dir", "presets", "validate", name]);
    assert_eq!(run.code, 0, "{run:?}");
    let mut args = vec!["--preset-dir", "presets", "render", name];
    for var in vars {
        args.extend(["--var", var]);
    }
    let run = project.run(&args);
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout
}

#[test]
fn a_claude_code_subagent_becomes_a_preset() {
    let project = Project::new();
    let input = ".claude/agents/code-reviewer.md";
    fixture(&project, "claude-agent", input);
    let report = json_report(&project, &["import", input, "--format", "json"]);
    assert_eq!(report["kind"], "claude-agent");
    assert_eq!(report["name"], "code-reviewer");
    assert_eq!(report["valid"], true);
    let preset = report["preset"].as_str().unwrap();
    assert!(
        preset.contains("allow: [read_file, grep, bash]"),
        "{preset}"
    );
    assert!(
        preset.contains("provider: anthropic\n  name: claude-sonnet-4-5"),
        "{preset}"
    );
    let warnings = not_carried(&report);
    let at: Vec<(u64, u64)> = warnings.iter().map(|(l, c, _)| (*l, *c)).collect();
    assert_eq!(at, [(6, 1), (7, 1)], "{warnings:?}");
    assert!(warnings[0].2.contains("`color`"), "{warnings:?}");

    // Human: the warning names the input's line and column; the preset is on stdout.
    let run = project.run(&["import", input]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains(&format!("{input}:6:1")), "{run:?}");
    assert!(run.stderr.contains("P0780"), "{run:?}");
    assert_eq!(run.stdout, preset);

    let rendered = import_validate_render(&project, input, "code-reviewer", &[]);
    assert!(
        rendered.contains("You are a senior code reviewer ensuring high standards"),
        "{rendered}"
    );
    assert!(rendered.contains("Include specific examples of how to fix issues."));
}

#[test]
fn a_copilot_custom_agent_becomes_a_preset() {
    let project = Project::new();
    let input = ".github/agents/planner.agent.md";
    fixture(&project, "copilot-agent", input);
    let report = json_report(&project, &["import", input, "--format", "json"]);
    assert_eq!(report["kind"], "copilot-agent");
    assert_eq!(report["name"], "planner");
    let preset = report["preset"].as_str().unwrap();
    assert!(preset.contains("allow: [grep, read_file]"), "{preset}");
    assert!(preset.contains("name: claude-sonnet-4-5"), "{preset}");
    let warnings = not_carried(&report);
    let at: Vec<(u64, u64)> = warnings.iter().map(|(l, c, _)| (*l, *c)).collect();
    // `fetch` in `tools`, `target`, `handoffs`.
    assert_eq!(at, [(4, 8), (6, 1), (7, 1)], "{warnings:?}");
    assert!(warnings[0].2.contains("`fetch`"), "{warnings:?}");
    assert!(warnings[2].2.contains("`handoffs`"), "{warnings:?}");

    let rendered = import_validate_render(&project, input, "planner", &[]);
    assert!(rendered.contains("You are in planning mode."), "{rendered}");
}

#[test]
fn copilot_mcp_servers_are_declared_and_their_tools_allowed() {
    let project = Project::new();
    let input = ".github/agents/issue-triager.agent.md";
    fixture(&project, "copilot-agent-mcp-servers", input);
    let report = json_report(&project, &["import", input, "--format", "json"]);
    let preset = report["preset"].as_str().unwrap();
    assert!(
        preset.contains("allow: [read_file, grep, \"mcp__github__*\"]"),
        "{preset}"
    );
    assert!(
        preset.contains("command: [npx, \"-y\", \"@modelcontextprotocol/server-github\"]"),
        "{preset}"
    );
    assert!(
        preset.contains("passEnv: [GITHUB_PERSONAL_ACCESS_TOKEN]"),
        "{preset}"
    );
    assert!(not_carried(&report).is_empty(), "{report:#}");
    // Its tools are not locked yet: said, as what is left to do.
    let locked: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "P0501")
        .collect();
    assert_eq!(locked.len(), 1, "{report:#}");
    assert_eq!(locked[0]["severity"], "warning");
    assert!(
        locked[0]["help"]
            .as_str()
            .unwrap()
            .contains("lock --connect issue-triager")
    );
}

#[test]
fn a_goose_recipe_becomes_a_preset() {
    let project = Project::new();
    let input = "recipes/release-notes.yaml";
    fixture(&project, "goose-recipe", input);
    let report = json_report(&project, &["import", input, "--format", "json"]);
    assert_eq!(report["kind"], "goose-recipe");
    let preset = report["preset"].as_str().unwrap();
    for piece in [
        "description: \"Draft release notes from the commits since the last tag.\"",
        "  project:\n    description: \"The project's name as it appears in the notes\"\n    required: true",
        "  max_items:\n    description: \"The most items per group\"\n    type: number\n    default: 10",
        "  git:\n    command: [uvx, mcp-server-git]\n    env:\n      GIT_PAGER: \"cat\"\n    toolTimeout: 300s",
        "  temperature: 0.2",
        "output:\n  schema: {",
        "  - run: [sh, \"-c\", \"test -n \\\"$(git tag --list)\\\"\"]\n    retries: 2\n    timeout: 60s",
    ] {
        assert!(preset.contains(piece), "{piece}\n---\n{preset}");
    }
    let warnings = not_carried(&report);
    let lines: Vec<u64> = warnings.iter().map(|(l, _, _)| *l).collect();
    // author, prompt, the developer extension, its display name... each at its line.
    assert!(lines.contains(&4), "{warnings:?}");
    assert!(lines.contains(&10), "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.2.contains("`developer`")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.2.contains("`on_failure`")),
        "{warnings:?}"
    );

    // The recipe with its stdio extension on this machine instead (a Streamable HTTP
    // one): imported, locked once, then it validates and renders.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = rt.block_on(mcp_fixture::serve_http(
        mcp_fixture::Script::default(),
        None,
    ));
    let text = fs::read_to_string(project.path().join(input)).unwrap();
    let (head, rest) = text.split_once("extensions:\n").unwrap();
    let (_, tail) = rest.split_once("settings:\n").unwrap();
    let local = "recipes/local/release-notes.yaml";
    project.write(
        local,
        &format!(
            "{head}extensions:\n  - type: streamable_http\n    name: git\n    uri: {url}\nsettings:\n{tail}"
        ),
    );
    let run = project.run(&["import", local, "-o", "presets/release-notes.yaml"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = project.run(&[
        "--preset-dir",
        "presets",
        "lock",
        "release-notes",
        "--connect",
        "--yes",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let rendered = validate_render(&project, "release-notes", &["project=Acme"]);
    assert!(
        rendered.contains("You write release notes for Acme."),
        "{rendered}"
    );
    assert!(rendered.contains("at most 10"), "{rendered}");
}

#[test]
fn an_mcp_json_becomes_a_preset_extending_standard() {
    let project = Project::new();
    fixture(&project, "mcp-json", ".mcp.json");
    let report = json_report(
        &project,
        &[
            "import",
            ".mcp.json",
            "--name",
            "team-tools",
            "--format",
            "json",
        ],
    );
    assert_eq!(report["kind"], "mcp-json");
    let preset = report["preset"].as_str().unwrap();
    assert!(preset.contains("extends: standard"), "{preset}");
    assert!(
        preset.contains(
            "  github:\n    url: \"https://api.githubcopilot.com/mcp/\"\n    headers:\n      Authorization: {fromEnv: GITHUB_TOKEN, prefix: \"Bearer \"}"
        ),
        "{preset}"
    );
    assert!(
        preset.contains("command: [npx, \"-y\", \"@modelcontextprotocol/server-filesystem\", .]"),
        "{preset}"
    );
    let warnings = not_carried(&report);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!((warnings[0].0, warnings[0].1), (16, 7), "{warnings:?}");
    assert!(warnings[0].2.contains("`cwd`"), "{warnings:?}");

    // A server on this machine: locked once, then the preset validates and shows its
    // tools.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = rt.block_on(mcp_fixture::serve_http(
        mcp_fixture::Script::default(),
        None,
    ));
    project.write(
        "local/.mcp.json",
        &format!("{{\"mcpServers\": {{\"fx\": {{\"type\": \"http\", \"url\": \"{url}\"}}}}}}\n"),
    );
    let run = project.run(&["import", "local/.mcp.json", "-o", "presets/fx-tools.yaml"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("lock --connect fx-tools"), "{run:?}");
    let run = project.run(&[
        "--preset-dir",
        "presets",
        "lock",
        "fx-tools",
        "--connect",
        "--yes",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = project.run(&["--preset-dir", "presets", "validate", "fx-tools"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = project.run(&["--preset-dir", "presets", "render", "fx-tools"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("mcp__fx__echo"), "{run:?}");
}

#[test]
fn broken_inputs_are_errors_not_panics() {
    let project = Project::new();
    fixture(&project, "bad-frontmatter", ".claude/agents/broken.md");
    fixture(&project, "not-json", ".mcp.json");
    fixture(&project, "unknown-kind", "notes.txt");
    for (input, says) in [
        (".claude/agents/broken.md", ".claude/agents/broken.md:3:"),
        (".mcp.json", ".mcp.json:3:"),
        ("notes.txt", "cannot tell what kind of file"),
        ("missing.md", "cannot read `missing.md`"),
    ] {
        let run = project.run(&["import", input]);
        assert_eq!(run.code, 2, "{input}: {run:?}");
        assert!(run.stderr.contains(says), "{input}: {run:?}");
        assert!(!run.stderr.contains("panicked"), "{input}: {run:?}");
        assert!(run.stdout.is_empty(), "{input}: {run:?}");
        let run = project.run(&["import", input, "--format", "json"]);
        assert_eq!(run.code, 2, "{input}: {run:?}");
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        assert!(!report["diagnostics"].as_array().unwrap().is_empty());
    }
    let project = Project::new();
    project.write("a.md", "---\nname: a\n---\nHi.\n");
    let run = project.run(&["import", "a.md", "--name", "Not A Name"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("--name not-a-name"), "{run:?}");
}

#[test]
fn output_is_never_overwritten_without_force() {
    let project = Project::new();
    project.write("reviewer.md", "---\nname: reviewer\n---\nYou review.\n");
    let run = project.run(&["import", "reviewer.md", "-o", "out/reviewer.yaml"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = project.run(&["import", "reviewer.md", "-o", "out/reviewer.yaml"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("already exists"), "{run:?}");
    let run = project.run(&[
        "import",
        "reviewer.md",
        "-o",
        "out/reviewer.yaml",
        "--force",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    // The file's stem is the name: another one is a usage error that says so.
    let run = project.run(&[
        "import",
        "reviewer.md",
        "-o",
        "out/x.yaml",
        "--name",
        "reviewer",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("reviewer.yaml"), "{run:?}");
}

#[test]
fn an_import_that_does_not_validate_fails_and_writes_nothing() {
    let project = Project::new();
    // A goose parameter the instructions never declared: an unknown variable.
    project.write(
        "r.yaml",
        "version: 1.0.0\ntitle: R\ndescription: D\ninstructions: Work on {{ ticket }}.\n",
    );
    let run = project.run(&["import", "r.yaml", "-o", "presets/r.yaml"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("P0041"), "{run:?}");
    assert!(!project.path().join("presets/r.yaml").exists());
}
