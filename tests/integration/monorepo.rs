//! Issue 29, a monorepo's journey: the commands messages print repeat the flags of the
//! command that printed them and run as printed; a lock entry of a preset this command
//! did not see is never advised dropped; a parent's edit that drifts many presets is
//! reported once, at the line that changed.
#![cfg(feature = "cli")]

use crate::support::project::{Project, Run};

/// A preset `name` extending `parent`, in no particular directory.
fn child(name: &str, parent: &str) -> String {
    format!("version: 1\nname: {name}\ndescription: The {name} agent.\nextends: {parent}\n")
}

/// The shared parent: one section of its own over `standard`.
fn parent(safety: &str) -> String {
    format!(
        "version: 1\nname: org-base\ndescription: The organisation's base.\nextends: standard\npersona:\n  sections:\n    - name: safety\n      override: true\n      order: 5\n      text: {safety}\n"
    )
}

/// Every command in backticks that a run printed (`agent-presets …`), as argument
/// lists without the program name, in the order printed.
fn printed_commands(run: &Run) -> Vec<Vec<String>> {
    let text = format!("{}\n{}", run.stdout, run.stderr);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("`agent-presets ") {
        rest = &rest[at + "`agent-presets ".len()..];
        let Some(end) = rest.find('`') else { break };
        let words = rest[..end].split_whitespace().map(str::to_owned).collect();
        out.push(words);
        rest = &rest[end..];
    }
    out
}

/// The first printed command whose subcommand is `sub`.
fn printed(run: &Run, sub: &str) -> Vec<String> {
    printed_commands(run)
        .into_iter()
        .find(|words| words.iter().any(|w| w == sub))
        .unwrap_or_else(|| panic!("no `agent-presets … {sub}` printed:\n{run:?}"))
}

fn run_words(p: &Project, words: &[String]) -> Run {
    let args: Vec<&str> = words.iter().map(String::as_str).collect();
    p.run(&args)
}

#[test]
fn the_relock_command_of_a_drift_repeats_the_preset_dirs_and_runs_as_printed() {
    let p = Project::new();
    p.write("presets/org-base.yaml", &parent("Never push to main."));
    p.write("presets/alpha.yaml", &child("alpha", "org-base"));
    p.write("presets/beta.yaml", &child("beta", "org-base"));
    let flags = ["--no-user", "--preset-dir", "presets"];
    let run = p.run(&[&flags[..], &["lock"]].concat());
    assert_eq!(run.code, 0, "{run:?}");
    p.write(
        "presets/org-base.yaml",
        &parent("Never push to main or release."),
    );

    let run = p.run(&[&flags[..], &["validate", "--locked"]].concat());
    assert_eq!(run.code, 1, "{run:?}");
    let relock = printed(&run, "lock");
    assert!(
        relock.windows(2).any(|w| w == ["--preset-dir", "presets"]),
        "the re-lock command repeats `--preset-dir presets`: {relock:?}"
    );
    let run = run_words(&p, &relock);
    assert_eq!(run.code, 0, "the printed command runs: {run:?}");
    let run = p.run(&[&flags[..], &["validate", "--locked"]].concat());
    assert_eq!(run.code, 0, "green after the printed re-lock: {run:?}");
}

#[test]
fn a_locked_preset_another_directory_offers_is_not_advised_dropped() {
    let p = Project::new();
    p.write("team-a/alpha.yaml", &child("alpha", "standard"));
    p.write("team-b/beta.yaml", &child("beta", "standard"));
    let run = p.run(&[
        "--no-user",
        "--preset-dir",
        "team-a",
        "--preset-dir",
        "team-b",
        "lock",
    ]);
    assert_eq!(run.code, 0, "{run:?}");

    // A teammate who knows only team-a.
    let run = p.run(&[
        "--no-user",
        "--preset-dir",
        "team-a",
        "validate",
        "--locked",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let gone: Vec<&serde_json::Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["message"].as_str().unwrap_or("").contains("`beta`"))
        .collect();
    assert_eq!(gone.len(), 1, "{run:?}");
    let message = gone[0]["message"].as_str().unwrap();
    let help = gone[0]["help"].as_str().unwrap();
    assert!(
        message.contains("not found in the directories searched (`.agent-presets`, `team-a`)"),
        "{message}"
    );
    assert!(!help.contains("drop"), "never advise dropping it: {help}");
    assert!(
        help.contains("--preset-dir") && help.contains("agent-presets.yaml"),
        "{help}"
    );

    // With a project config naming both directories, every command sees `beta`.
    p.write("agent-presets.yaml", "presetDirs: [team-a, team-b]\n");
    let run = p.run(&["--no-user", "validate", "--locked"]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn with_a_project_config_a_preset_gone_from_every_directory_may_be_dropped() {
    let p = Project::new();
    p.write("agent-presets.yaml", "presetDirs: [presets]\n");
    p.write("presets/alpha.yaml", &child("alpha", "standard"));
    p.write("presets/beta.yaml", &child("beta", "standard"));
    assert_eq!(p.run(&["--no-user", "lock"]).code, 0);
    std::fs::remove_file(p.path().join("presets/beta.yaml")).unwrap();
    let run = p.run(&["--no-user", "validate", "--locked"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains(
            "which no preset directory of the project offers any more (`.agent-presets`, `presets`)"
        ),
        "{run:?}"
    );
    let relock = printed(&run, "lock");
    assert_eq!(relock, ["--no-user", "lock"], "{run:?}");
    assert_eq!(run_words(&p, &relock).code, 0);
    let run = p.run(&["--no-user", "validate", "--locked"]);
    assert_eq!(run.code, 0, "{run:?}");
}

/// A project of `org-base` and `n` presets extending it, locked, then one line of
/// `org-base` edited.
fn parent_edited(n: usize) -> Project {
    let p = Project::new();
    p.write(
        "agent-presets.yaml",
        "presetDirs: [presets, teams/*/presets]\n",
    );
    p.write("presets/org-base.yaml", &parent("Never push to main."));
    for i in 0..n {
        let team = if i % 2 == 0 { "a" } else { "b" };
        let name = format!("agent-{i:02}");
        p.write(
            &format!("teams/{team}/presets/{name}.yaml"),
            &child(&name, "org-base"),
        );
    }
    let run = p.run(&["--no-user", "lock"]);
    assert_eq!(run.code, 0, "{run:?}");
    p.write(
        "presets/org-base.yaml",
        &parent("Never push to main or release."),
    );
    p
}

#[test]
fn a_parent_edit_drifting_many_presets_is_reported_once_at_the_changed_line() {
    let p = parent_edited(19);
    let drifting = 20; // the 19 and `org-base` itself

    // For people: one error, at the parent's section, naming them all, one command.
    let run = p.run(&["--no-user", "validate", "--locked"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout.matches("error[P0302]").count(),
        1,
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "error[P0302]: `org-base`'s section `safety` changed: {drifting} presets drift\n"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(" --> presets/org-base.yaml:7:"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout
            .matches("+Never push to main or release.")
            .count(),
        1
    );
    assert_eq!(
        printed_commands(&run)
            .iter()
            .filter(|c| c.contains(&"lock".to_owned()))
            .count(),
        1
    );
    assert!(
        run.stdout.contains("`agent-00`, `agent-01`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.len() < 2500,
        "{} bytes:\n{}",
        run.stdout.len(),
        run.stdout
    );

    // One GitHub annotation, on the changed line; none on files the edit did not touch.
    let run = p.run(&["--no-user", "validate", "--locked", "--format", "github"]);
    let annotations: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    assert_eq!(annotations.len(), 1, "{}", run.stdout);
    assert!(
        annotations[0].starts_with("::error file=presets/org-base.yaml,line=7,"),
        "{}",
        annotations[0]
    );

    // One SARIF result.
    let run = p.run(&["--no-user", "validate", "--locked", "--format", "sarif"]);
    let log: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        7
    );

    // For machines: one entry per preset.
    let run = p.run(&["--no-user", "validate", "--locked", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let drifts = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "P0302")
        .count();
    assert_eq!(drifts, drifting, "{}", run.stdout);
}

#[test]
fn a_preset_with_a_change_of_its_own_keeps_its_own_report_beside_the_shared_one() {
    let p = Project::new();
    p.write("presets/org-base.yaml", &parent("Never push to main."));
    p.write("presets/alpha.yaml", &child("alpha", "org-base"));
    let own = |text: &str| {
        format!(
            "{}persona:\n  sections:\n    - name: own\n      order: 50\n      text: {text}\n",
            child("beta", "org-base")
        )
    };
    p.write("presets/beta.yaml", &own("Mine."));
    let flags = ["--no-user", "--preset-dir", "presets"];
    assert_eq!(p.run(&[&flags[..], &["lock"]].concat()).code, 0);
    p.write(
        "presets/org-base.yaml",
        &parent("Never push to main or release."),
    );
    p.write("presets/beta.yaml", &own("Mine, changed."));
    let run = p.run(&[&flags[..], &["validate", "--locked", "--format", "github"]].concat());
    let annotations: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    // The shared one on org-base, beta's own on beta's section.
    assert_eq!(annotations.len(), 2, "{}", run.stdout);
    assert!(
        annotations
            .iter()
            .any(|l| l.contains("`org-base`'s section `safety` changed: 3 presets drift")),
        "{}",
        run.stdout
    );
    assert!(
        annotations
            .iter()
            .any(|l| l.contains("file=presets/beta.yaml") && l.contains("section `own` changed")),
        "{}",
        run.stdout
    );
    let run = p.run(&[&flags[..], &["validate", "--locked"]].concat());
    // beta's whole report stays (it has a change of its own); alpha's and org-base's
    // are the shared one.
    assert_eq!(
        run.stdout.matches("error[P0302]").count(),
        2,
        "{}",
        run.stdout
    );
}

/// The preset declaring the one MCP server: the test fixture over stdio, logging to
/// `log` (the test binary's directory readable, so the sandbox lets it start).
fn triage(log: &std::path::Path) -> String {
    use crate::support::mcp_fixture;
    let argv = serde_json::to_string(&mcp_fixture::stdio_argv()).unwrap();
    let env: serde_json::Map<String, serde_json::Value> = mcp_fixture::stdio_env("", log)
        .into_iter()
        .map(|(k, v)| (k, serde_json::Value::from(v)))
        .collect();
    let exe_dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    format!(
        "version: 1\nname: triage\ndescription: Triages issues with the fixture server.\nextends: org-base\nallowRead: [{}]\nmcpServers:\n  fx:\n    command: {argv}\n    env: {}\n    startupTimeout: 30s\n    readOnly: true\ntools:\n  allow: [read_file, mcp__fx__echo]\n",
        exe_dir.display(),
        serde_json::Value::Object(env)
    )
}

/// The `presetDirs: [...]` a run printed, if any.
fn printed_preset_dirs(run: &Run) -> Option<String> {
    let at = run.stdout.find("`presetDirs: [")?;
    let rest = &run.stdout[at + 1..];
    Some(rest[..rest.find('`')?].to_owned())
}

/// The monorepo journey of issue 29, with nothing typed that a message did not print
/// (beyond the presets' own text): `init` writes the project config, a second directory
/// is added as `init` says, 22 presets (a shared parent, two preset directories, one MCP
/// server) are locked as `validate` says, one line of the parent changes, the drift is
/// reported once, and its re-lock command, run as printed from a subdirectory, makes it
/// green.
#[test]
fn a_monorepo_goes_from_init_to_a_green_relock_with_printed_commands_only() {
    let p = Project::new();
    let logs = tempfile::tempdir().unwrap();
    let sub = "teams/platform/src";

    // `init` of the shared parent in `presets/`: the project config appears.
    let run = p.run(&["--no-user", "init", "org-base", "--dir", "presets"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("created agent-presets.yaml (presetDirs: [presets])"),
        "{run:?}"
    );
    p.write("presets/org-base.yaml", &parent("Never push to main."));

    // The first team preset, in a second directory: `init` prints the line that adds it.
    let run = p.run(&[
        "--no-user",
        "init",
        "agent-00",
        "--extends",
        "org-base",
        "--dir",
        "teams/platform/presets",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let dirs = printed_preset_dirs(&run).unwrap_or_else(|| panic!("no presetDirs line: {run:?}"));
    assert_eq!(dirs, "presetDirs: [presets, teams/platform/presets]");
    let config = std::fs::read_to_string(p.path().join("agent-presets.yaml")).unwrap();
    let config: String = config
        .lines()
        .map(|l| {
            if l.starts_with("presetDirs:") {
                dirs.as_str()
            } else {
                l
            }
        })
        .map(|l| format!("{l}\n"))
        .collect();
    p.write("agent-presets.yaml", &config);
    for i in 1..20 {
        let name = format!("agent-{i:02}");
        let run = p.run(&[
            "--no-user",
            "init",
            &name,
            "--extends",
            "org-base",
            "--dir",
            "teams/platform/presets",
        ]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(!run.stdout.contains("note:"), "{run:?}");
    }
    p.write("presets/triage.yaml", &triage(&logs.path().join("fx.log")));

    // From a subdirectory, bare `validate` sees all 22 and says how to pin the server.
    let run = p.run_in(sub, &["--no-user", "validate", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mine = report["presets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["file"].as_str().unwrap_or("").starts_with("<builtin>"))
        .count();
    assert_eq!(mine, 22, "{}", run.stdout);
    let invalid: Vec<&str> = report["presets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["valid"] == false)
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(invalid, ["triage"], "{}", run.stdout);
    let connect = printed(&run, "--connect");
    assert_eq!(connect, ["--no-user", "lock", "--connect"], "{run:?}");
    let mut run = run_words_in(&p, sub, &connect);
    if run.code != 0 && run.stderr.contains("pass `--yes`") {
        // The consent question, answered as it says.
        let mut yes = connect.clone();
        yes.push("--yes".into());
        run = run_words_in(&p, sub, &yes);
    }
    assert_eq!(run.code, 0, "the printed `lock --connect` locks: {run:?}");
    assert!(run.stdout.contains("locked 24 presets in "), "{run:?}");
    let run = p.run_in(sub, &["--no-user", "validate", "--locked"]);
    assert_eq!(run.code, 0, "green after locking: {run:?}");

    // One line of the shared parent changes: reported once, at that line.
    p.write(
        "presets/org-base.yaml",
        &parent("Never push to main or to a release branch."),
    );
    let run = p.run_in(sub, &["--no-user", "validate", "--locked"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout.matches("error[P0302]").count(),
        1,
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("`org-base`'s section `safety` changed: 22 presets drift"),
        "{}",
        run.stdout
    );
    let github = p.run_in(
        sub,
        &["--no-user", "validate", "--locked", "--format", "github"],
    );
    assert_eq!(
        github
            .stdout
            .lines()
            .filter(|l| l.starts_with("::error"))
            .count(),
        1,
        "{}",
        github.stdout
    );

    // The printed re-lock command, verbatim, from the same directory: green.
    let relock = printed(&run, "lock");
    let run = run_words_in(&p, sub, &relock);
    assert_eq!(run.code, 0, "the printed re-lock runs: {run:?}");
    let run = p.run_in(sub, &["--no-user", "validate", "--locked"]);
    assert_eq!(run.code, 0, "green after the printed re-lock: {run:?}");
    // The server's pinned tools survived the re-lock without `--connect`.
    let lock = std::fs::read_to_string(p.path().join("presets.lock")).unwrap();
    assert!(lock.contains("\"mcp__fx__echo\""), "{lock}");
}

fn run_words_in(p: &Project, dir: &str, words: &[String]) -> Run {
    let args: Vec<&str> = words.iter().map(String::as_str).collect();
    p.run_in(dir, &args)
}

// ---- trust wording ----

/// A project preset that chooses its endpoint (a reach field, so it needs trust).
fn reaching(base_url: &str) -> String {
    format!(
        "version: 1\nname: helper\nextends: standard\nmodel:\n  provider: openai-compatible\n  name: m\n  baseUrl: {base_url}\n  apiKeyEnv: HELPER_KEY\n"
    )
}

#[test]
fn a_retrust_shows_what_changed_field_by_field() {
    let p = Project::new();
    p.write(
        ".agent-presets/helper.yaml",
        &reaching("http://127.0.0.1:9/v1"),
    );
    let run = p.run(&["--no-user", "trust", "helper"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("trusted helper"), "{run:?}");
    let run = p.run(&["--no-user", "trust", "helper"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("already trusted for what it reaches now"),
        "{run:?}"
    );

    p.write(
        ".agent-presets/helper.yaml",
        &reaching("http://127.0.0.1:10/v1"),
    );
    let run = p.run(&["--no-user", "trust", "helper"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("again; what changed since you last trusted it:"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("~ model.baseUrl: http://127.0.0.1:9/v1 → http://127.0.0.1:10/v1"),
        "{run:?}"
    );
    // Field by field: the unchanged key is not listed again, no JSON.
    assert!(!run.stdout.contains("HELPER_KEY"), "{run:?}");
    assert!(!run.stdout.contains('{'), "{run:?}");
}

#[test]
fn trust_of_an_invalid_preset_says_why_it_trusts_nothing() {
    let p = Project::new();
    p.write(
        ".agent-presets/helper.yaml",
        &format!(
            "{}tools:\n  allow: [read_fiel]\n",
            reaching("http://127.0.0.1:9/v1")
        ),
    );
    let run = p.run(&["--no-user", "trust", "helper"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("unknown tool `read_fiel`"), "{run:?}");
    assert!(
        run.stderr.contains(
            "error: `helper` was not trusted: it is invalid (1 error above), and what a preset reaches is known only once it validates"
        ),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("`agent-presets --no-user validate`"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("trusted"), "{run:?}");
}

#[test]
fn the_consent_of_connect_does_not_call_the_users_project_files_not_theirs() {
    let p = Project::new();
    p.write(
        ".agent-presets/triage.yaml",
        "version: 1\nname: triage\nextends: standard\nmcpServers:\n  fx:\n    command: [sh, -c, 'exit 1']\ntools:\n  allow: [read_file, \"mcp__fx__*\"]\n",
    );
    let run = p.run(&["--no-user", "lock", "--connect"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(!run.stderr.contains("did not write"), "{run:?}");
    assert!(
        run.stderr
            .contains("declared in presets you have not trusted yet"),
        "{run:?}"
    );
    assert!(run.stderr.contains("pass `--yes`"), "{run:?}");
}

#[test]
fn without_a_project_config_a_long_relock_names_every_preset_and_drops_no_entry() {
    let p = Project::new();
    p.write("team-a/org-base.yaml", &parent("Never push to main."));
    for i in 0..21 {
        let name = format!("agent-{i:02}");
        p.write(&format!("team-a/{name}.yaml"), &child(&name, "org-base"));
    }
    p.write("team-b/beta.yaml", &child("beta", "standard"));
    let both = [
        "--no-user",
        "--preset-dir",
        "team-a",
        "--preset-dir",
        "team-b",
        "lock",
    ];
    assert_eq!(p.run(&both).code, 0);
    p.write(
        "team-a/org-base.yaml",
        &parent("Never push to main or release."),
    );

    // A teammate who knows only team-a: 22 presets drift.
    let run = p.run(&[
        "--no-user",
        "--preset-dir",
        "team-a",
        "validate",
        "--locked",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let relock = printed(&run, "lock");
    assert!(
        relock.len() > 22,
        "every preset named, no bare `lock`: {relock:?}"
    );
    assert_eq!(run_words(&p, &relock).code, 0);
    let lock = std::fs::read_to_string(p.path().join("presets.lock")).unwrap();
    assert!(
        lock.contains("\"beta\""),
        "the entry of a preset this run did not see stays"
    );
    let run = p.run(&[
        "--no-user",
        "--preset-dir",
        "team-a",
        "--preset-dir",
        "team-b",
        "validate",
        "--locked",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
}
