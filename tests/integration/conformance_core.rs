//! Data-driven conformance cases for the assembler core: every `*.yaml` file under
//! `tests/conformance/core/` is one case (format: `tests/conformance/README.md`).

use std::collections::BTreeMap;
use std::path::Path;

use agent_presets::prompt::{
    AssemblerBuilder, Layer, PromptContext, PromptSection, Values, VariableDecl,
};
use agent_presets::tools::{
    Tool, ToolCatalog, ToolContext, ToolError, ToolGuidance, ToolRestriction,
};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    #[allow(dead_code)]
    description: String,
    #[serde(default)]
    tools: Vec<FakeToolSpec>,
    layers: Vec<LayerSpec>,
    #[serde(default)]
    suppress_runtime_context: bool,
    #[serde(default)]
    values: BTreeMap<String, String>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FakeToolSpec {
    name: String,
    guidance: Option<String>,
    guidance_order: Option<f64>,
    #[serde(default)]
    guidance_template: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct LayerSpec {
    label: String,
    #[serde(default)]
    sections: Vec<SectionSpec>,
    #[serde(default)]
    contexts: Vec<SectionSpec>,
    #[serde(default)]
    remove: Vec<String>,
    include_runtime_context: Option<bool>,
    tools: Option<ToolsSpec>,
    #[serde(default)]
    variables: BTreeMap<String, VarSpec>,
    max_system_tokens: Option<u32>,
    max_tool_tokens: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SectionSpec {
    name: String,
    order: f64,
    text: String,
    #[serde(default)]
    complete: bool,
    when: Option<String>,
    template: Option<bool>,
    /// `override: true`: replaces an inherited piece on purpose.
    #[serde(default, rename = "override")]
    overrides: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ToolsSpec {
    allow: Option<Vec<String>>,
    #[serde(default)]
    deny: Vec<String>,
    order: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct VarSpec {
    #[serde(default)]
    description: String,
    default: Option<String>,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    volatile: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Expect {
    /// Expected system prompt (exact bytes).
    system: Option<String>,
    /// Expected visible tool names in wire order.
    tools: Option<Vec<String>>,
    /// Expected runtime context text; `~` means none.
    #[serde(default, deserialize_with = "double_option")]
    context: Option<Option<String>>,
    /// Expected build error kinds (all of them, in any order), e.g. `[unknown-tool]`.
    build_errors: Option<Vec<String>>,
    /// Expected assemble error kinds.
    assemble_errors: Option<Vec<String>>,
    /// Expected build warning kinds.
    warnings: Option<Vec<String>>,
    /// Substrings every error message together must contain (names, suggestions).
    #[serde(default)]
    messages_contain: Vec<String>,
}

fn double_option<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

struct FakeTool {
    name: String,
    guidance: Option<ToolGuidance>,
}

impl Tool for FakeTool {
    type Args = NoArgs;
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "a fake tool"
    }
    fn guidance(&self) -> Option<ToolGuidance> {
        self.guidance.clone()
    }
    #[allow(clippy::manual_async_fn)] // the trait wants a 'static future
    fn call(
        &self,
        _args: NoArgs,
        _ctx: ToolContext,
    ) -> impl std::future::Future<Output = Result<String, ToolError>> + Send + 'static {
        async { Ok(String::new()) }
    }
}

fn build_layer(spec: &LayerSpec) -> Result<Layer, String> {
    let mut layer = Layer::new(spec.label.clone());
    for s in &spec.sections {
        let mut section = PromptSection::new(&s.name, s.order, s.text.clone())
            .map_err(|d| d.kind.name().to_owned())?
            .complete(s.complete)
            .template(s.template.unwrap_or(true))
            .overrides(s.overrides);
        if let Some(w) = &s.when {
            section = section.when(w.clone());
        }
        layer = layer.section(section);
    }
    for c in &spec.contexts {
        let ctx = PromptContext::new(&c.name, c.order, c.text.clone())
            .map_err(|d| d.kind.name().to_owned())?
            .template(c.template.unwrap_or(true))
            .overrides(c.overrides);
        layer = layer.context(ctx);
    }
    for r in &spec.remove {
        layer = layer.remove(r.clone());
    }
    if let Some(i) = spec.include_runtime_context {
        layer = layer.include_runtime_context(i);
    }
    if let Some(t) = &spec.tools {
        let mut r = match &t.allow {
            Some(a) => ToolRestriction::allow(a).map_err(|d| d.kind.name().to_owned())?,
            None => ToolRestriction::default(),
        };
        r = r.with_deny(&t.deny).map_err(|d| d.kind.name().to_owned())?;
        if let Some(o) = &t.order {
            r = r.with_order(o);
        }
        layer = layer.tools(r);
    }
    if let Some(n) = spec.max_system_tokens {
        layer = layer.max_system_tokens(n);
    }
    if let Some(n) = spec.max_tool_tokens {
        layer = layer.max_tool_tokens(n);
    }
    for (name, v) in &spec.variables {
        let mut decl = VariableDecl::new(name, v.description.clone())
            .map_err(|d| d.kind.name().to_owned())?
            .required(v.required)
            .volatile(v.volatile);
        if let Some(d) = &v.default {
            decl = decl.with_default(d.clone());
        }
        layer = layer.variable(decl);
    }
    Ok(layer)
}

fn kinds(list: &[agent_presets::Diagnostic]) -> Vec<String> {
    let mut k: Vec<String> = list.iter().map(|d| d.kind.name().to_owned()).collect();
    k.sort();
    k
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn run_case(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let case: Case = serde_saphyr::from_str(&text).map_err(|e| format!("bad case file: {e}"))?;
    let mut catalog = ToolCatalog::new();
    for t in &case.tools {
        let guidance = t.guidance.as_ref().map(|text| ToolGuidance {
            order: t.guidance_order.unwrap_or(1000.0),
            text: text.clone(),
            template: t.guidance_template,
        });
        catalog
            .register(FakeTool {
                name: t.name.clone(),
                guidance,
            })
            .map_err(|d| d.to_string())?;
    }
    let mut builder = AssemblerBuilder::new(&catalog);
    let mut construct_errors = Vec::new();
    for l in &case.layers {
        match build_layer(l) {
            Ok(layer) => builder = builder.layer(layer),
            Err(kind) => construct_errors.push(kind),
        }
    }
    if case.suppress_runtime_context {
        builder = builder.suppress_runtime_context();
    }
    let expect = &case.expect;
    if !construct_errors.is_empty() {
        // Invalid names / orders are refused when the section is constructed.
        return match &expect.build_errors {
            Some(want) if sorted(want.clone()) == sorted(construct_errors.clone()) => Ok(()),
            _ => Err(format!(
                "unexpected construction errors {construct_errors:?}"
            )),
        };
    }
    let assembler = match builder.build() {
        Ok(a) => a,
        Err(ds) => {
            let got = kinds(ds.as_slice());
            let all = ds.to_string();
            return match &expect.build_errors {
                Some(want) if sorted(want.clone()) == got => check_messages(&all, expect),
                _ => Err(format!("unexpected build errors:\n{all}")),
            };
        }
    };
    if let Some(want) = &expect.build_errors {
        return Err(format!("expected build errors {want:?}, build succeeded"));
    }
    if let Some(want) = &expect.warnings {
        let got = kinds(assembler.warnings());
        if sorted(want.clone()) != got {
            return Err(format!("warnings: want {want:?}, got {got:?}"));
        }
        check_messages(
            &assembler
                .warnings()
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            expect,
        )?;
    }
    let values: Values = case
        .values
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let assembly = match assembler.assemble(&values) {
        Ok(a) => a,
        Err(ds) => {
            let got = kinds(ds.as_slice());
            let all = ds.to_string();
            return match &expect.assemble_errors {
                Some(want) if sorted(want.clone()) == got => check_messages(&all, expect),
                _ => Err(format!("unexpected assemble errors:\n{all}")),
            };
        }
    };
    if let Some(want) = &expect.assemble_errors {
        return Err(format!("expected assemble errors {want:?}, got success"));
    }
    if let Some(want) = &expect.system {
        let want = want.trim_end_matches('\n');
        if assembly.system != want {
            return Err(format!(
                "system prompt differs\n--- want\n{want}\n--- got\n{}",
                assembly.system
            ));
        }
    }
    if let Some(want) = &expect.tools {
        let got: Vec<String> = assembly.tools.iter().map(|t| t.name.clone()).collect();
        if &got != want {
            return Err(format!("tools: want {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &expect.context {
        let want = want.as_deref().map(|w| w.trim_end_matches('\n'));
        if assembly.context.as_deref() != want {
            return Err(format!(
                "context: want {want:?}, got {:?}",
                assembly.context
            ));
        }
    }
    Ok(())
}

fn check_messages(all: &str, expect: &Expect) -> Result<(), String> {
    for needle in &expect.messages_contain {
        if !all.contains(needle.as_str()) {
            return Err(format!("messages lack `{needle}`:\n{all}"));
        }
    }
    Ok(())
}

#[test]
fn conformance_core() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/core");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("conformance dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 20,
        "expected the core cases, found {}",
        paths.len()
    );
    let mut failures = Vec::new();
    for p in &paths {
        if let Err(e) = run_case(p) {
            failures.push(format!("{}: {e}", p.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n\n")
    );
}
