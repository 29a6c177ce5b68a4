//! Parameter schemas generated from Rust types with `schemars`, in two renderings:
//! *portable* (draft 2020-12 as schemars makes it) and *strict* (OpenAI/DeepSeek strict
//! function calling rules).

use schemars::JsonSchema;
use serde_json::Value;

use crate::diagnostic::{Diagnostic, DiagnosticKind};

/// Both renderings of one tool's parameter schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSchemas {
    /// Draft 2020-12, as schemars generates it (with `$schema` and `title` removed).
    pub portable: Value,
    /// Strict-mode rendering: every object closed, every property required (optional ones
    /// nullable), no keywords strict mode rejects.
    pub strict: Value,
}

impl ToolSchemas {
    /// Generate both renderings for `T`.
    pub fn for_type<T: JsonSchema>() -> Result<Self, Diagnostic> {
        let portable = portable_schema::<T>();
        let strict = strict_schema::<T>();
        for schema in [&portable, &strict] {
            if !schema.is_object() || schema.get("type") != Some(&Value::from("object")) {
                return Err(Diagnostic::new(
                    DiagnosticKind::WrongType,
                    "a tool's parameter schema must describe a JSON object",
                ));
            }
        }
        Ok(ToolSchemas { portable, strict })
    }
}

fn settings() -> schemars::generate::SchemaSettings {
    schemars::generate::SchemaSettings::draft2020_12()
}

fn strip_meta(mut value: Value) -> Value {
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    value
}

/// The portable rendering of `T`'s schema.
pub fn portable_schema<T: JsonSchema>() -> Value {
    let schema = settings().into_generator().into_root_schema_for::<T>();
    strip_meta(schema.to_value())
}

/// The strict rendering of `T`'s schema.
pub fn strict_schema<T: JsonSchema>() -> Value {
    // Placeholder until the strict transform lands: same as portable.
    portable_schema::<T>()
}
