//! The prompt assembler: sections, runtime contexts, templates and the context snapshot.

mod assembler;
mod fingerprint;
mod layer;
pub mod origin;
mod prompt_text;
mod section;
mod snapshot;
mod step_cache;
mod substitution;
mod template;
mod template_scan;
mod variables;
mod warnings;

pub(crate) use assembler::LayerTemplates;
pub use assembler::{AssemblerBuilder, Assembly, PromptAssembler, RenderedPiece};
pub use fingerprint::Fingerprint;
pub use layer::{Layer, RemoveEntry, TokenBudget, TokenLimit};
pub use origin::TextOrigin;
pub use prompt_text::PromptText;
pub use section::{Order, PromptContext, PromptSection, Replaced, SectionName, SectionOrigin};
pub use snapshot::{ContextSnapshot, SnapshotUpdate};
pub use template::{TEMPLATE_FUEL, TEMPLATE_OUTPUT_BYTES, TEMPLATE_RECURSION_LIMIT, TemplateError};
pub use variables::{
    BUILTIN_VARIABLES, BuiltinVariable, MODEL_VARIABLE, PROVIDER_VARIABLE,
    RUNTIME_CONTEXT_VARIABLE, TOOLS_VARIABLE, Values, VariableDecl, VariableName, VariableType,
    builtin_variable, is_derived_variable,
};
