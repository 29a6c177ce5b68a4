//! Tool registry rules: projection, refusal of hidden tools, argument validation,
//! registration errors.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_presets::DiagnosticKind;
use agent_presets::tools::{
    Tool, ToolCallError, ToolCatalog, ToolContext, ToolError, ToolGuidance, ToolRegistry,
    ToolRestriction,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Arguments of the counting tool.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CountArgs {
    /// How much to add.
    amount: u32,
    /// An optional note.
    #[allow(dead_code)]
    note: Option<String>,
}

struct Counter {
    name: &'static str,
    calls: Arc<AtomicUsize>,
}

impl Tool for Counter {
    type Args = CountArgs;
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Adds to a counter."
    }
    fn guidance(&self) -> Option<ToolGuidance> {
        Some(ToolGuidance::new(1000.0, "HOST-ONLY GUIDANCE"))
    }
    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_millis(200))
    }
    #[allow(clippy::manual_async_fn)] // the trait wants a 'static future
    fn call(
        &self,
        args: CountArgs,
        _ctx: ToolContext,
    ) -> impl std::future::Future<Output = Result<String, ToolError>> + Send + 'static {
        let calls = Arc::clone(&self.calls);
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            if args.amount == 13 {
                return Err(ToolError::new("13 is unlucky").hint("use another amount"));
            }
            if args.amount == 99 {
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
            Ok(format!("added {}", args.amount))
        }
    }
}

fn catalog(calls: &Arc<AtomicUsize>) -> ToolCatalog {
    let mut c = ToolCatalog::new();
    for name in ["count", "tally", "other"] {
        c.register(Counter {
            name,
            calls: Arc::clone(calls),
        })
        .expect("register");
    }
    c
}

fn ctx() -> ToolContext {
    ToolContext::new(std::env::temp_dir()).unwrap()
}

#[test]
fn projection_has_exactly_three_fields_and_is_a_deep_copy() {
    let calls = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::unrestricted(&catalog(&calls));
    let mut first = registry.schemas();
    for tool in &first {
        let v = serde_json::to_value(tool).expect("serialize");
        let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["name", "description", "parameters"]);
        let text = v.to_string();
        assert!(!text.contains("HOST-ONLY"), "guidance leaked: {text}");
        assert!(!text.contains("timeout"), "timeout leaked: {text}");
    }
    let pristine = registry.schemas();
    std::sync::Arc::make_mut(&mut first[0].parameters)["properties"]["amount"] =
        json!({"type": "string"});
    first[0].description.push_str(" MUTATED");
    assert_eq!(registry.schemas(), pristine);
}

#[tokio::test]
async fn hidden_tool_is_refused_exactly_like_an_unknown_one() {
    let calls = Arc::new(AtomicUsize::new(0));
    let full = catalog(&calls);
    let restricted = ToolRegistry::restricted(
        &full,
        [&ToolRestriction::allow(["count", "other"]).expect("restriction")],
    );
    let mut without = ToolCatalog::new();
    for name in ["count", "other"] {
        without
            .register(Counter {
                name,
                calls: Arc::clone(&calls),
            })
            .expect("register");
    }
    let never_known = ToolRegistry::unrestricted(&without);
    let hidden = restricted
        .call("tally", json!({"amount": 1}), &ctx())
        .await
        .expect_err("hidden tool must be refused");
    let unknown = never_known
        .call("tally", json!({"amount": 1}), &ctx())
        .await
        .expect_err("unknown tool must be refused");
    assert_eq!(hidden, unknown);
    assert_eq!(hidden.to_output(), unknown.to_output());
    assert!(matches!(hidden, ToolCallError::UnknownTool { .. }));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "handler ran for a hidden tool"
    );
    // A suggestion never names a hidden tool.
    let typo = restricted
        .call("tallly", json!({}), &ctx())
        .await
        .expect_err("typo");
    assert!(!typo.to_output().content.contains("tally`"), "{typo:?}");
}

#[tokio::test]
async fn arguments_are_validated_before_the_handler_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::unrestricted(&catalog(&calls));
    for bad in [
        json!({"amount": "three"}),
        json!({"amount": 1, "extra": true}),
        json!({}),
        json!({"amount": -1}),
        json!("not an object"),
    ] {
        let err = registry
            .call("count", bad.clone(), &ctx())
            .await
            .expect_err("invalid arguments must be refused");
        assert!(
            matches!(err, ToolCallError::InvalidArguments { .. }),
            "{bad}: {err:?}"
        );
        let out = err.to_output();
        assert!(out.is_error && out.content.contains("invalid arguments"));
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "handler ran on bad arguments"
    );
    let ok = registry
        .call("count", json!({"amount": 2, "note": null}), &ctx())
        .await
        .expect("valid call");
    assert_eq!(ok.content, "added 2");
    assert!(!ok.is_error);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn handler_errors_and_timeouts_become_results_the_model_can_act_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::unrestricted(&catalog(&calls));
    let out = registry
        .call_for_model("count", json!({"amount": 13}), &ctx())
        .await;
    assert!(out.is_error);
    assert_eq!(
        out.content,
        "Error: 13 is unlucky\nHint: use another amount"
    );
    let err = registry
        .call("count", json!({"amount": 99}), &ctx())
        .await
        .expect_err("timeout");
    assert!(matches!(err, ToolCallError::Timeout { .. }), "{err:?}");
}

#[test]
fn registration_refuses_duplicates_and_bad_names() {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut c = catalog(&calls);
    let dup = c
        .register(Counter {
            name: "count",
            calls: Arc::clone(&calls),
        })
        .expect_err("duplicate");
    assert_eq!(dup.kind, DiagnosticKind::DuplicateTool);
    // Up to 128 characters register (Anthropic takes them); validation refuses more than
    // 64 for OpenAI-dialect providers (`tool-name-rejected`).
    for bad in ["", "has space", "dot.name", &"x".repeat(129), "émoji"] {
        let name: &'static str = Box::leak(bad.to_owned().into_boxed_str());
        let err = c
            .register(Counter {
                name,
                calls: Arc::clone(&calls),
            })
            .expect_err("bad name");
        assert_eq!(err.kind, DiagnosticKind::InvalidName, "{bad:?}");
    }
    let ok: &'static str = Box::leak("A-b_9".repeat(25).into_boxed_str());
    assert_eq!(ok.len(), 125);
    assert!(c.register(Counter { name: ok, calls }).is_ok());
}
