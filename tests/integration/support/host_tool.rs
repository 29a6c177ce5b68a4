//! A host program's tool whose parameter schema is given at run time, so tests can
//! register deliberately broken schemas (a real host's come from its Rust types).
//! Include with `#[path = "support/host_tool.rs"] mod host_tool;`.
#![allow(dead_code)]

use std::borrow::Cow;
use std::cell::RefCell;

use agent_presets::tools::{Tool, ToolCatalog, ToolContext, ToolError};
use serde_json::Value;

thread_local! {
    /// The schema the next [`HostArgs`] reports (set just before registering a tool).
    static HOST_SCHEMA: RefCell<Value> = const { RefCell::new(Value::Null) };
}

/// Arguments whose schema is whatever [`register`] was given.
#[derive(serde::Deserialize)]
pub struct HostArgs {}

impl schemars::JsonSchema for HostArgs {
    fn schema_name() -> Cow<'static, str> {
        "HostArgs".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        HOST_SCHEMA.with(|s| schemars::Schema::try_from(s.borrow().clone()).unwrap())
    }
}

/// A tool that does nothing, under any name.
pub struct HostTool(pub String);

impl Tool for HostTool {
    type Args = HostArgs;

    fn name(&self) -> &str {
        &self.0
    }

    fn description(&self) -> &str {
        "A host program's tool."
    }

    // Not `async fn`: the future must not borrow `self` (`'static`).
    #[allow(clippy::manual_async_fn)]
    fn call(
        &self,
        _: HostArgs,
        _: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        async { Ok(String::new()) }
    }
}

/// Register a tool named `name` whose argument type's schema is `schema`.
pub fn register(catalog: &mut ToolCatalog, name: &str, schema: Value) {
    HOST_SCHEMA.with(|s| *s.borrow_mut() = schema);
    catalog
        .register(HostTool(name.to_owned()))
        .unwrap_or_else(|d| panic!("registering `{name}`: {d}"));
}
