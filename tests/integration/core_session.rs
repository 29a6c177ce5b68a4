//! Byte stability across a simulated agent session, and the request envelope.

use agent_presets::prompt::{
    AssemblerBuilder, ContextSnapshot, Layer, PromptContext, PromptSection, Values,
};
use agent_presets::request::{Fingerprint, Message, RequestEnvelope, Role};
use agent_presets::tools::{Tool, ToolCatalog, ToolContext, ToolError, ToolGuidance};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PathArgs {
    /// A path.
    #[allow(dead_code)]
    path: String,
}

struct Fake(&'static str);

impl Tool for Fake {
    type Args = PathArgs;
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "fake"
    }
    fn guidance(&self) -> Option<ToolGuidance> {
        Some(ToolGuidance::new(1000.0, format!("Use {} well.", self.0)))
    }
    #[allow(clippy::manual_async_fn)] // the trait wants a 'static future
    fn call(
        &self,
        _: PathArgs,
        _: ToolContext,
    ) -> impl std::future::Future<Output = Result<String, ToolError>> + Send + 'static {
        async { Ok(String::new()) }
    }
}

fn assembler() -> agent_presets::prompt::PromptAssembler {
    let mut catalog = ToolCatalog::new();
    for t in ["read_file", "grep", "bash"] {
        catalog.register(Fake(t)).expect("register");
    }
    let preset = Layer::new("preset")
        .section(
            PromptSection::new(
                "persona",
                0.0,
                "You are a coding agent powered by the {{ model }} model.",
            )
            .expect("section"),
        )
        .section(
            PromptSection::new("rules", 100.0, "Be brief. Tools: {{ tools | join(', ') }}")
                .expect("section"),
        )
        .context(PromptContext::new("workspace", 0.0, "Working directory: {{ cwd }}").expect("ctx"))
        .context(PromptContext::new("date", 10.0, "Date: {{ date }}").expect("ctx"));
    AssemblerBuilder::new(&catalog)
        .layer(preset)
        .build()
        .expect("build")
}

#[test]
fn twenty_steps_with_changing_facts_keep_the_prefix_byte_identical() {
    let assembler = assembler();
    let mut history = vec![Message::user("Fix the bug.")];
    let mut snapshot = ContextSnapshot::new();
    let mut first: Option<(String, String, Fingerprint)> = None;
    let mut sent_on = Vec::new();
    for step in 0..20 {
        // Facts change on steps 5 (cwd), 12 (date) and 13 (cwd back); nothing else does.
        let cwd = if (5..13).contains(&step) {
            "/w/sub"
        } else {
            "/w"
        };
        let date = if step >= 12 {
            "2030-01-02"
        } else {
            "2030-01-01"
        };
        let values = Values::new()
            .with("model", "deepseek-v4-flash")
            .with("cwd", cwd)
            .with("date", date);
        let assembly = assembler.assemble(&values).expect("assemble");
        let before = history.len();
        let envelope = RequestEnvelope::build(&assembly, &mut history, &mut snapshot);
        if history.len() > before {
            sent_on.push(step);
            let last = history.last().expect("snapshot message");
            assert_eq!(last.role, Role::User);
            assert!(last.content.contains(cwd) && last.content.contains(date));
            assert_eq!(envelope.messages.last(), Some(last), "snapshot goes last");
        }
        let tools_json = serde_json::to_string(&envelope.tools).expect("json");
        match &first {
            None => {
                first = Some((
                    envelope.system.to_string(),
                    tools_json,
                    envelope.fingerprint,
                ))
            }
            Some((system, tools, fp)) => {
                assert_eq!(&envelope.system, system, "system changed at step {step}");
                assert_eq!(&tools_json, tools, "tools changed at step {step}");
                assert_eq!(
                    &envelope.fingerprint, fp,
                    "fingerprint changed at step {step}"
                );
            }
        }
        // The model answers; the history grows.
        history.push(Message::assistant(format!("step {step}"), Vec::new()));
    }
    assert_eq!(sent_on, vec![0, 5, 12, 13]);
    let (system, _, _) = first.expect("ran");
    assert!(
        !system.contains("/w") && !system.contains("2030"),
        "{system}"
    );
}

#[test]
fn fingerprint_changes_iff_prefix_bytes_change() {
    let a = assembler()
        .assemble(
            &Values::new()
                .with("model", "m")
                .with("cwd", "/a")
                .with("date", "d"),
        )
        .expect("assemble");
    let b = assembler()
        .assemble(
            &Values::new()
                .with("model", "m")
                .with("cwd", "/b")
                .with("date", "e"),
        )
        .expect("assemble");
    let c = assembler()
        .assemble(
            &Values::new()
                .with("model", "m2")
                .with("cwd", "/a")
                .with("date", "d"),
        )
        .expect("assemble");
    let fa = Fingerprint::of(None, Some("m"), &a.system, &a.tools);
    assert_eq!(
        a.fingerprint, fa,
        "the assembly carries the same fingerprint"
    );
    assert_eq!(b.fingerprint, fa);
    assert_ne!(c.fingerprint, fa);
    assert_eq!(
        fa,
        Fingerprint::of(None, Some("m"), &b.system, &b.tools),
        "context is not prefix"
    );
    assert_eq!(
        c.fingerprint,
        Fingerprint::of(None, Some("m2"), &c.system, &c.tools)
    );
    assert_ne!(
        fa,
        Fingerprint::of(None, Some("m2"), &a.system, &a.tools),
        "a provider caches per model: the same bytes for another model are another prefix"
    );
    assert_ne!(
        fa,
        Fingerprint::of(Some("deepseek"), Some("m"), &a.system, &a.tools),
        "provider changed"
    );
    assert_ne!(
        fa,
        Fingerprint::of(None, Some("m"), &a.system, &a.tools[1..]),
        "tools changed"
    );
    // Moving bytes between fields changes the fingerprint (no ambiguity).
    assert_ne!(
        Fingerprint::of(None, None, "ab", &[]),
        Fingerprint::of(None, None, "a", &[])
    );
    assert_ne!(
        Fingerprint::of(Some("a"), Some("b"), "", &[]),
        Fingerprint::of(Some("ab"), None, "", &[])
    );
    assert_ne!(
        Fingerprint::of(None, Some(""), "", &[]),
        Fingerprint::of(None, None, "", &[])
    );
    let s = fa.to_string();
    assert!(s.starts_with("sha256:") && s.len() == 7 + 64, "{s}");
}

#[test]
fn cleared_context_sends_a_notice_once() {
    let mut catalog = ToolCatalog::new();
    catalog.register(Fake("grep")).expect("register");
    let assembler = AssemblerBuilder::new(&catalog)
        .layer(
            Layer::new("p")
                .section(PromptSection::new("persona", 0.0, "Hi").expect("s"))
                .context(
                    PromptContext::new("todo", 0.0, "{% if cwd != '/' %}In {{ cwd }}{% endif %}")
                        .expect("c"),
                ),
        )
        .build()
        .expect("build");
    let mut history = Vec::new();
    let mut snap = ContextSnapshot::new();
    let mut appended = Vec::new();
    for cwd in ["/a", "/a", "/", "/", "/b"] {
        let asm = assembler
            .assemble(&Values::new().with("cwd", cwd))
            .expect("assemble");
        let before = history.len();
        RequestEnvelope::build(&asm, &mut history, &mut snap);
        appended.push(history.len() - before);
    }
    assert_eq!(appended, vec![1, 0, 1, 0, 1]);
    assert!(history[1].content.contains("No runtime context applies"));
}

#[test]
fn a_long_lived_assembler_matches_a_fresh_one_at_every_step() {
    // The assembler re-renders a part only when a variable it depends on changed; this
    // must never change the bytes: compare against a fresh assembler at every step.
    let long_lived = assembler();
    let steps: [(&str, &str, &str); 7] = [
        ("m1", "/a", "d1"),
        ("m1", "/a", "d1"),
        ("m2", "/a", "d1"),
        ("m2", "/b", "d1"),
        ("m1", "/b", "d2"),
        ("m1", "/b", "d2"),
        ("m2", "/a", "d1"),
    ];
    let mut systems = Vec::new();
    for (model, cwd, date) in steps {
        let values = Values::new()
            .with("model", model)
            .with("cwd", cwd)
            .with("date", date);
        let got = long_lived.assemble(&values).expect("assemble");
        let fresh = assembler().assemble(&values).expect("assemble");
        assert_eq!(got, fresh, "step with {model} {cwd} {date}");
        systems.push(got.system);
    }
    assert_ne!(
        systems[1], systems[2],
        "model change must reach the system prompt"
    );
    assert_eq!(systems[0], systems[4]);
    // An error is not cached: a missing value fails every time, then recovers.
    let missing = Values::new().with("cwd", "/a").with("date", "d1");
    assert!(long_lived.assemble(&missing).is_err());
    assert!(long_lived.assemble(&missing).is_err());
    let ok = Values::new()
        .with("model", "m1")
        .with("cwd", "/a")
        .with("date", "d1");
    assert_eq!(long_lived.assemble(&ok).expect("ok").system, systems[0]);
}
