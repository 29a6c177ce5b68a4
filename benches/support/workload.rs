//! The shared per-step workload (`benches/fixtures/workload.json`, a copy of the
//! workload every baseline assembles: the Python seed and jinja2 assemblers, the plain-JS
//! one and DSH's npm package), set up the way a host would: 8 tools with their JSON-Schema
//! parameters in the catalog, the 12 sections in one host layer in the file's (shuffled)
//! order, `project` declared, and the step's four values.
//!
//! Used by `benches/workload.rs` and by `tests/integration/workload_fixture.rs`, which pins the bytes
//! the baselines agree on.

#![allow(dead_code)] // each user needs a different part

use std::borrow::Cow;
use std::sync::OnceLock;

use agent_presets::prompt::{
    AssemblerBuilder, Assembly, Layer, PromptAssembler, PromptSection, Values, VariableDecl,
};
use agent_presets::tools::{Tool, ToolCatalog, ToolContext, ToolError};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The workload, byte for byte as the baselines read it.
pub const WORKLOAD_JSON: &str = include_str!("../fixtures/workload.json");

/// sha256 of the rendered system prompt every baseline produces (5,890 bytes).
pub const SYSTEM_SHA256: &str = "037f147fe5968a580c4d8a33af768c4ed581f96e493af147bc7e17f4c7f06378";
/// sha256 of the tool list as compact JSON (`[{name, description, parameters}, ...]`).
pub const TOOLS_SHA256: &str = "23e9fe6aabb833be42fe1c0d91038ff98d9bd2cd3c5e6d647aea38dc317889fc";

/// The parsed workload (`serde_json` keeps key order, so the schemas serialize as written).
pub fn workload() -> &'static Value {
    static WORKLOAD: OnceLock<Value> = OnceLock::new();
    WORKLOAD.get_or_init(|| serde_json::from_str(WORKLOAD_JSON).expect("workload.json parses"))
}

fn tools() -> &'static [Value] {
    workload()["tools"].as_array().expect("tools is a list")
}

/// The arguments of the workload's `I`-th tool: its schema is the workload's JSON Schema,
/// as written (a host registering a tool from a schema it already has).
#[derive(serde::Deserialize)]
pub struct WorkloadArgs<const I: usize>(#[allow(dead_code)] Value);

impl<const I: usize> schemars::JsonSchema for WorkloadArgs<I> {
    fn schema_name() -> Cow<'static, str> {
        Cow::Owned(format!("WorkloadArgs{I}"))
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::Schema::try_from(tools()[I]["parameters"].clone()).expect("an object schema")
    }
}

/// The workload's `I`-th tool (its handler is never called here).
pub struct WorkloadTool<const I: usize>;

impl<const I: usize> Tool for WorkloadTool<I> {
    type Args = WorkloadArgs<I>;

    fn name(&self) -> &str {
        tools()[I]["name"].as_str().expect("a name")
    }

    fn description(&self) -> &str {
        tools()[I]["description"].as_str().expect("a description")
    }

    #[allow(clippy::manual_async_fn)] // the trait wants a 'static future
    fn call(
        &self,
        _: Self::Args,
        _: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        async { Ok(String::new()) }
    }
}

/// A catalog holding exactly the workload's 8 tools, in the file's order.
pub fn catalog() -> ToolCatalog {
    assert_eq!(tools().len(), 8, "the workload has 8 tools");
    let mut catalog = ToolCatalog::new();
    catalog.register(WorkloadTool::<0>).expect("tool 0");
    catalog.register(WorkloadTool::<1>).expect("tool 1");
    catalog.register(WorkloadTool::<2>).expect("tool 2");
    catalog.register(WorkloadTool::<3>).expect("tool 3");
    catalog.register(WorkloadTool::<4>).expect("tool 4");
    catalog.register(WorkloadTool::<5>).expect("tool 5");
    catalog.register(WorkloadTool::<6>).expect("tool 6");
    catalog.register(WorkloadTool::<7>).expect("tool 7");
    catalog
}

/// The host layer: the 12 sections in the file's order, `project` declared.
pub fn layer() -> Layer {
    let mut layer = Layer::new("host");
    for s in workload()["sections"].as_array().expect("sections") {
        let section = PromptSection::new(
            s["name"].as_str().expect("name"),
            s["order"].as_f64().expect("order"),
            s["text"].as_str().expect("text"),
        )
        .expect("a valid section");
        layer = layer.section(section);
    }
    layer
        .variables
        .push(VariableDecl::new("project", "The project's name").expect("a valid name"));
    layer
}

/// The assembler over `catalog`: compile the sections, check every reference.
pub fn assembler(catalog: &ToolCatalog) -> PromptAssembler {
    AssemblerBuilder::new(catalog)
        .layer(layer())
        .build()
        .expect("the workload builds")
}

/// The step's values (`model`, `cwd`, `os`, `project`), as the baselines' providers
/// return them.
pub fn values() -> Values {
    workload()["variables"]
        .as_object()
        .expect("variables")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("a string").to_owned()))
        .collect()
}

/// Lower-case hex sha256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// (system sha256, tools sha256) of an assembly, hashed as the baselines hash them.
pub fn digests(assembly: &Assembly) -> (String, String) {
    let tools = serde_json::to_string(&*assembly.tools).expect("tools serialize");
    (
        sha256_hex(assembly.system.as_bytes()),
        sha256_hex(tools.as_bytes()),
    )
}
