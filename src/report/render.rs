//! `render`'s output: a rendered step as labelled text blocks ([`text_output`]) or as
//! JSON ([`json_output`]), with its token counts ([`TokenCounts`]).

use serde_json::{Value, json};

use super::pretty;
use crate::endpoint::ModelSettings;
use crate::prompt::Assembly;
use crate::tokens;

/// Token counts of the three parts of a request (o200k_base).
pub struct TokenCounts {
    /// The system prompt's.
    pub system: usize,
    /// The tools' (as sent).
    pub tools: usize,
    /// The runtime context's, when there is one.
    pub context: Option<usize>,
}

impl TokenCounts {
    /// Count the parts of `assembly`.
    pub fn of(assembly: &Assembly) -> Result<Self, tokens::TokenizerError> {
        Ok(TokenCounts {
            system: tokens::count(&assembly.system)?,
            tools: tokens::count_tools(&assembly.tools)?,
            context: assembly.context.as_deref().map(tokens::count).transpose()?,
        })
    }
}

/// `render`'s labelled blocks: system, tools, context, fingerprint, token counts.
pub fn text_output(assembly: &Assembly, counts: &TokenCounts) -> String {
    let mut out = String::new();
    out.push_str("=== system ===\n");
    out.push_str(&assembly.system);
    out.push_str("\n\n");
    out.push_str(&format!("=== tools ({}) ===\n", assembly.tools.len()));
    if assembly.tools.is_empty() {
        out.push_str("(none)\n");
    }
    for tool in assembly.tools.iter() {
        out.push_str(&tool.name);
        out.push('\n');
    }
    out.push_str("\n=== context ===\n");
    out.push_str(assembly.context.as_deref().unwrap_or("(none)"));
    out.push_str("\n\n=== fingerprint ===\n");
    out.push_str(&assembly.fingerprint.to_string());
    out.push('\n');
    out.push_str(&format!("\n=== tokens ({}) ===\n", tokens::ENCODING));
    out.push_str(&format!("system: {}\n", counts.system));
    out.push_str(&format!("tools: {}\n", counts.tools));
    match counts.context {
        Some(n) => out.push_str(&format!("context: {n}\n")),
        None => out.push_str("context: (none)\n"),
    }
    out
}

/// `{provider, name, baseUrl, maxTokens}` of the model `run` would call.
fn model_json(settings: &ModelSettings) -> Value {
    json!({
        "provider": settings.provider.as_str(),
        "name": settings.name,
        "baseUrl": settings.base_url,
        "maxTokens": settings.max_tokens,
    })
}

/// `render --format json`: `{"preset", "model", "system", "tools", "context",
/// "fingerprint", "tokens"}`.
pub fn json_output(
    preset: &str,
    settings: Option<&ModelSettings>,
    assembly: &Assembly,
    counts: &TokenCounts,
) -> String {
    let value = json!({
        "preset": preset,
        "model": settings.map(model_json),
        "system": assembly.system,
        "tools": &*assembly.tools,
        "context": assembly.context,
        "fingerprint": assembly.fingerprint.to_string(),
        "tokens": {
            "encoding": tokens::ENCODING,
            "system": counts.system,
            "tools": counts.tools,
            "context": counts.context,
        },
    });
    pretty(&value)
}
