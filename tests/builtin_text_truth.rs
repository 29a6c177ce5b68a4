//! The built-in text says only what is true: under every subset of hidden tools (of those
//! any built-in text names), with and
//! without runtime context, `standard` (its sections and the guidance of every built-in
//! tool) never names a tool the model cannot see, and mentions the runtime-context
//! message only when one can be sent.

use agent_presets::DiagnosticKind;
use agent_presets::preset::{PresetCatalog, validate_in_catalog};
use agent_presets::prompt::Values;
use agent_presets::tools::ToolCatalog;
use agent_presets::tools::builtin::BUILTIN_TOOL_NAMES as TOOLS;

/// The tools some built-in text mentions: hidden in every combination (bash and
/// todo_write are named by no other text, so hiding them alone adds nothing).
const MENTIONED: [&str; 6] = [
    "edit_file",
    "glob",
    "grep",
    "list_dir",
    "read_file",
    "write_file",
];

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
    for mask in 0u32..(1 << MENTIONED.len()) {
        let hidden: Vec<&str> = MENTIONED
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
            checked += 1;
        }
    }
    assert_eq!(checked, 128);
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
