//! The built-in text says only what is true: under every subset of hidden tools, with and
//! without runtime context, `standard` (its sections, its contexts and the guidance of
//! every built-in tool) never names a tool the model cannot see, mentions the
//! runtime-context message only when one can be sent, and says what the agent cannot do
//! exactly when the tool that would do it is hidden (no commands without `bash`, no file
//! changes without `write_file` and `edit_file`, no new files without `write_file`);
//! `minimal` says the same under every subset of its tools.

use agent_presets::DiagnosticKind;
use agent_presets::preset::{PresetCatalog, validate_in_catalog};
use agent_presets::prompt::Values;
use agent_presets::tools::ToolCatalog;
use agent_presets::tools::builtin::BUILTIN_TOOL_NAMES as TOOLS;

/// What `standard` and `minimal` say when `bash` is hidden.
const NO_COMMANDS: &str =
    "You cannot run commands: do not claim to have run tests, builds or any other command.";
/// What `standard` says when neither `write_file` nor `edit_file` is visible.
const NO_FILE_CHANGES: &str =
    "You cannot create or change files: do not claim to have changed anything.";
/// What `standard` says when `edit_file` is visible but `write_file` is not.
const NO_NEW_FILES: &str = "You cannot create new files or replace whole files";
/// `standard`'s identity: which instruction wins when two conflict.
const CONFLICT_RULE: &str = "When instructions conflict, the user's most recent request takes precedence over the working rules and style of this prompt, but never over its safety rules";
/// What `minimal` says when `edit_file` is hidden (it never has `write_file`).
const MINIMAL_NO_FILE_CHANGES: &str =
    "You cannot change files: do not claim to have changed anything;";

fn names_word(text: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(is_word)
            && !text[i + word.len()..].chars().next().is_some_and(is_word)
    })
}

#[test]
fn standard_never_mentions_a_hidden_tool_or_an_absent_runtime_context() {
    let tools = ToolCatalog::builtin();
    let values = Values::new()
        .with("model", "m")
        .with("provider", "deepseek")
        .with("cwd", "/w")
        .with("os", "linux")
        .with("shell", "sh")
        .with("date", "2030-01-01");
    let mut checked = 0;
    for mask in 0u32..(1 << TOOLS.len()) {
        let hidden: Vec<&str> = TOOLS
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, t)| *t)
            .collect();
        for suppress in [false, true] {
            let mut yaml = String::from("version: 1\nname: child\nextends: standard\n");
            if suppress {
                yaml.push_str("persona:\n  includeRuntimeContext: false\n");
            }
            if !hidden.is_empty() {
                yaml.push_str(&format!("tools:\n  deny: [{}]\n", hidden.join(", ")));
            }
            let mut catalog = PresetCatalog::builtin();
            catalog
                .add_text("child", "child.yaml", yaml.as_str())
                .expect("add preset");
            let validation = validate_in_catalog(&catalog, "child", &tools);
            let warnings: Vec<String> = validation
                .diagnostics
                .iter()
                .map(ToString::to_string)
                .collect();
            assert!(
                warnings.is_empty(),
                "hidden {hidden:?}, suppressed {suppress}: {warnings:#?}"
            );
            let preset = validation.preset.expect("valid");
            let assembly = preset.assembler().assemble(&values).expect("renders");
            for tool in &hidden {
                assert!(
                    !names_word(&assembly.system, tool),
                    "hidden {hidden:?}: the prompt names `{tool}`:\n{}",
                    assembly.system
                );
            }
            for tool in TOOLS.iter().filter(|t| !hidden.contains(t)) {
                assert!(
                    assembly.system.contains(&format!("Use {tool} ")),
                    "visible `{tool}` lacks its guidance"
                );
            }
            assert_eq!(
                assembly.system.contains("runtime-context"),
                !suppress,
                "suppressed {suppress}:\n{}",
                assembly.system
            );
            assert_eq!(assembly.context.is_some(), !suppress);
            for tool in &hidden {
                assert!(
                    !assembly
                        .context
                        .as_deref()
                        .is_some_and(|c| names_word(c, tool)),
                    "hidden {hidden:?}: the runtime context names `{tool}`"
                );
            }
            // Which instruction wins is said whatever the tools.
            assert!(assembly.system.contains(CONFLICT_RULE), "hidden {hidden:?}");
            let is_hidden = |t: &str| hidden.contains(&t);
            let says = |sentence: &str| assembly.system.contains(sentence);
            assert_eq!(says(NO_COMMANDS), is_hidden("bash"), "hidden {hidden:?}");
            assert_eq!(
                says(NO_FILE_CHANGES),
                is_hidden("write_file") && is_hidden("edit_file"),
                "hidden {hidden:?}"
            );
            assert_eq!(
                says(NO_NEW_FILES),
                is_hidden("write_file") && !is_hidden("edit_file"),
                "hidden {hidden:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 512);
}

/// `minimal` (one `complete` section) says what it cannot do under every subset of its
/// two tools, and nothing more while both are visible: its prompt stays one sentence.
#[test]
fn minimal_says_what_it_cannot_do_under_every_subset_of_its_tools() {
    let tools = ToolCatalog::builtin();
    let values = Values::new()
        .with("model", "m")
        .with("provider", "deepseek")
        .with("cwd", "/w")
        .with("os", "linux")
        .with("shell", "sh")
        .with("date", "2030-01-01");
    for hidden in [&[][..], &["bash"], &["edit_file"], &["bash", "edit_file"]] {
        let mut yaml = String::from("version: 1\nname: child\nextends: minimal\n");
        if !hidden.is_empty() {
            yaml.push_str(&format!("tools:\n  deny: [{}]\n", hidden.join(", ")));
        }
        let mut catalog = PresetCatalog::builtin();
        catalog
            .add_text("child", "child.yaml", yaml.as_str())
            .expect("add preset");
        let validation = validate_in_catalog(&catalog, "child", &tools);
        let kinds: Vec<DiagnosticKind> = validation.diagnostics.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, [], "hidden {hidden:?}");
        let preset = validation.preset.expect("valid");
        let system = preset
            .assembler()
            .assemble(&values)
            .expect("renders")
            .system;
        for tool in hidden {
            assert!(!names_word(&system, tool), "{system}");
        }
        assert_eq!(
            system.contains(NO_COMMANDS),
            hidden.contains(&"bash"),
            "{system}"
        );
        assert_eq!(
            system.contains(MINIMAL_NO_FILE_CHANGES),
            hidden.contains(&"edit_file"),
            "{system}"
        );
        if hidden.is_empty() {
            assert_eq!(&*system, "You are a helpful software engineer assistant.");
        }
    }
}

/// The check itself works: a section naming a hidden tool is a located warning.
#[test]
fn a_section_naming_a_hidden_tool_is_a_warning() {
    let yaml = "version: 1\nname: child\nextends: standard\npersona:\n  sections:\n    - name: rules\n      order: 150\n      text: Edit with edit_file, never with write_file.\ntools:\n  deny: [edit_file]\n";
    let mut catalog = PresetCatalog::builtin();
    catalog
        .add_text("child", "child.yaml", yaml)
        .expect("add preset");
    let v = validate_in_catalog(&catalog, "child", &ToolCatalog::builtin());
    let kinds: Vec<DiagnosticKind> = v.diagnostics.iter().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        vec![DiagnosticKind::MentionsHiddenTool],
        "{:#?}",
        v.diagnostics
    );
    let d = &v.diagnostics[0];
    assert!(d.message.contains("`edit_file`") && !d.message.contains("write_file"));
    let span = d.span.as_ref().expect("located");
    assert_eq!((span.line, span.column), (8, 23));
}

/// Contexts are checked like sections: a runtime context naming a hidden tool is a
/// located warning too (the model reads it after the conversation).
#[test]
fn a_context_naming_a_hidden_tool_is_a_warning() {
    let yaml = "version: 1\nname: child\nextends: standard\ncontexts:\n  - name: repo\n    order: 40\n    text: \"Search this repository with grep before editing.\"\ntools:\n  deny: [grep]\n";
    let mut catalog = PresetCatalog::builtin();
    catalog
        .add_text("child", "child.yaml", yaml)
        .expect("add preset");
    let v = validate_in_catalog(&catalog, "child", &ToolCatalog::builtin());
    let kinds: Vec<DiagnosticKind> = v.diagnostics.iter().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        vec![DiagnosticKind::MentionsHiddenTool],
        "{:#?}",
        v.diagnostics
    );
    let d = &v.diagnostics[0];
    assert!(
        d.message.starts_with("context `repo` mentions `grep`"),
        "{d}"
    );
    let span = d.span.as_ref().expect("located");
    assert_eq!((span.line, span.column), (7, 40));
}

/// `standard` tells the model the sandbox `run` enforces, in the words of
/// `SandboxMode::summary` (the same text the refusal notes use), and its runtime context
/// names the mode; without a value it assumes the default, `workspace-write`.
#[test]
fn standard_states_the_sandbox_mode_in_the_profiles_own_words() {
    use agent_presets::tools::sandbox::SandboxMode;
    let catalog = PresetCatalog::builtin();
    let preset = validate_in_catalog(&catalog, "standard", &ToolCatalog::builtin())
        .preset
        .expect("valid");
    let base = || {
        Values::new()
            .with("cwd", "/w")
            .with("os", "linux")
            .with("shell", "bash")
            .with("date", "2030-01-01")
            .with("model", "m")
            .with("provider", "deepseek")
    };
    for mode in SandboxMode::ALL {
        let assembly = preset
            .assembler()
            .assemble(&base().with("sandbox", mode.as_str()))
            .expect("renders");
        assert!(assembly.system.contains(mode.summary()), "{mode}");
        for other in SandboxMode::ALL.into_iter().filter(|m| *m != mode) {
            assert!(
                !assembly.system.contains(other.summary()),
                "{mode}: {other}"
            );
        }
        let context = format!("{:?}", assembly);
        assert!(
            context.contains(&format!("Command sandbox: {mode}")),
            "{mode}"
        );
    }
    let default = preset.assembler().assemble(&base()).expect("renders");
    assert!(
        default
            .system
            .contains(SandboxMode::WorkspaceWrite.summary())
    );
}
