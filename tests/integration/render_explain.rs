//! `render --explain`: where each piece of a request comes from, with sizes whose totals
//! are the sums of the parts and equal what `render` itself reports.
#![cfg(feature = "cli")]

use serde_json::Value;

use crate::support::project;

use project::Project;

/// Every built-in variable pinned, so output is the same on every machine.
const PINNED: &[&str] = &[
    "--var",
    "date=2030-01-01",
    "--var",
    "cwd=/workspace/demo",
    "--var",
    "os=linux",
    "--var",
    "shell=bash",
];

fn run(project: &Project, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend_from_slice(PINNED);
    let run = project.run(&all);
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn sum(list: &Value, key: &str) -> u64 {
    list.as_array()
        .unwrap()
        .iter()
        .map(|x| x[key].as_u64().unwrap())
        .sum()
}

#[test]
fn explain_standard_text() {
    let out = run(&Project::new(), &["render", "standard", "--explain"]);
    insta::assert_snapshot!(out);
}

#[test]
fn totals_are_the_sums_of_the_parts_and_what_render_reports() {
    let project = Project::new();
    project.write(
        ".agent-presets/reviewer.yaml",
        "version: 1\nname: reviewer\nextends: standard\npersona:\n  sections:\n    - name: rules\n      order: 150\n      text: Cite file and line.\ncontexts:\n  - name: ticket\n    order: 50\n    text: \"Ticket: {{ ticket }}\"\nvariables:\n  ticket: { description: The ticket, default: T-1 }\ntools:\n  allow: [read_file, \"g*\"]\n",
    );
    for preset in ["standard", "minimal", "reviewer"] {
        let explained = json(&run(
            &project,
            &["render", preset, "--explain", "--format", "json"],
        ));
        let rendered = json(&run(&project, &["render", preset, "--format", "json"]));
        let totals = &explained["totals"];
        assert_eq!(
            sum(&explained["sections"], "bytes"),
            totals["system"]["bytes"]
        );
        assert_eq!(
            sum(&explained["sections"], "tokens"),
            totals["system"]["tokens"]
        );
        assert_eq!(
            sum(&explained["contexts"], "bytes"),
            totals["context"]["bytes"]
        );
        assert_eq!(
            sum(&explained["contexts"], "tokens"),
            totals["context"]["tokens"]
        );
        assert_eq!(
            sum(&explained["tools"], "tokens"),
            totals["tools"]["tokens"]
        );
        // The same numbers `render` reports for the whole.
        assert_eq!(
            totals["system"]["bytes"],
            rendered["system"].as_str().unwrap().len() as u64,
            "{preset}"
        );
        assert_eq!(
            totals["system"]["tokens"], rendered["tokens"]["system"],
            "{preset}"
        );
        assert_eq!(
            totals["tools"]["tokens"], rendered["tokens"]["tools"],
            "{preset}"
        );
        let context_tokens = rendered["tokens"]["context"].as_u64().unwrap_or(0);
        assert_eq!(totals["context"]["tokens"], context_tokens, "{preset}");
        assert_eq!(
            explained["fingerprint"], rendered["fingerprint"],
            "{preset}"
        );
        let names: Vec<&Value> = rendered["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["name"])
            .collect();
        let explained_names: Vec<&Value> = explained["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["name"])
            .collect();
        assert_eq!(names, explained_names, "{preset}");
        for s in explained["sections"].as_array().unwrap() {
            assert_eq!(s["inPrefix"], true);
        }
        for c in explained["contexts"].as_array().unwrap() {
            assert_eq!(c["inPrefix"], false);
        }
    }
}

#[test]
fn sources_and_admitting_rules() {
    let project = Project::new();
    project.write(
        ".agent-presets/reviewer.yaml",
        "version: 1\nname: reviewer\nextends: standard\npersona:\n  sections:\n    - name: rules\n      order: 150\n      text: Cite file and line.\ntools:\n  allow: [read_file, \"g*\"]\n",
    );
    let v = json(&run(
        &project,
        &["render", "reviewer", "--explain", "--format", "json"],
    ));
    let section = |name: &str| {
        v["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no section {name}: {v:#}"))
    };
    let rules = section("rules");
    assert_eq!(rules["order"], 150.0);
    assert_eq!(
        rules["declaredAt"],
        serde_json::json!({"file": ".agent-presets/reviewer.yaml", "line": 6, "column": 13})
    );
    assert_eq!(
        section("persona")["declaredAt"]["file"],
        "<builtin>/standard.yaml"
    );
    assert_eq!(section("tool:grep")["declaredAt"], Value::Null);
    let tool = |name: &str| {
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        tool("glob")["admittedBy"],
        serde_json::json!({"preset": "reviewer", "pattern": "g*", "file": ".agent-presets/reviewer.yaml", "line": 10, "column": 22})
    );
    assert_eq!(tool("read_file")["admittedBy"]["pattern"], "read_file");
    let text = run(&project, &["render", "reviewer", "--explain"]);
    assert!(
        text.contains("`g*` in reviewer's allow (.agent-presets/reviewer.yaml:10:22)"),
        "{text}"
    );
    let run = project.run(&["render", "reviewer", "--explain", "--format", "openai"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn rendered_pieces_joined_are_the_assembly() {
    use agent_presets::ToolCatalog;
    use agent_presets::preset::{PresetCatalog, validate_in_catalog};
    let tools = ToolCatalog::builtin();
    let presets = PresetCatalog::builtin();
    for name in ["standard", "minimal"] {
        let preset = validate_in_catalog(&presets, name, &tools).preset.unwrap();
        let values = preset
            .default_values()
            .with("cwd", "/w")
            .with("os", "linux")
            .with("shell", "bash")
            .with("date", "2030-01-01");
        let assembly = preset.assembler().assemble(&values).unwrap();
        let join = |pieces: Vec<agent_presets::prompt::RenderedPiece>| {
            pieces
                .into_iter()
                .map(|p| p.text)
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        let sections = preset.assembler().rendered_sections(&values).unwrap();
        assert_eq!(join(sections), assembly.system, "{name}");
        let contexts = join(preset.assembler().rendered_contexts(&values).unwrap());
        assert_eq!(
            Some(contexts.as_str()).filter(|c| !c.is_empty()),
            assembly.context.as_deref(),
            "{name}"
        );
    }
}
