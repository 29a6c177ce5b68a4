//! [`Layer`]: what one contributor (the host, or one preset in an `extends` chain) adds
//! to an assembly. Layers stack outermost first; the nearest layer wins by name.

use super::section::{PromptContext, PromptSection};
use super::variables::VariableDecl;
use crate::diagnostic::Span;
use crate::tools::ToolRestriction;

/// One entry of `remove`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoveEntry {
    /// The section name to drop (`tool:<name>` drops a tool's guidance).
    pub name: String,
    /// Where it was written.
    pub span: Option<Span>,
}

/// What one contributor adds.
#[derive(Clone, Debug, Default)]
pub struct Layer {
    /// Who contributed it ("host", a preset name), for messages.
    pub label: String,
    /// Sections; a same-named section of an outer layer is replaced entirely.
    pub sections: Vec<PromptSection>,
    /// Runtime contexts; shadow by name the same way.
    pub contexts: Vec<PromptContext>,
    /// Inherited (or tool-guidance) sections to drop.
    pub remove: Vec<RemoveEntry>,
    /// `Some(false)` suppresses every runtime context, for good: no later layer can
    /// re-enable it.
    pub include_runtime_context: Option<bool>,
    /// Where `includeRuntimeContext` was written.
    pub include_runtime_context_span: Option<Span>,
    /// A restriction of the visible tools; restrictions intersect along the chain.
    pub tools: Option<ToolRestriction>,
    /// Declared variables; a nearer declaration shadows an outer one.
    pub variables: Vec<VariableDecl>,
    /// Token budgets; per key, the nearest layer that sets one wins.
    pub budget: TokenBudget,
}

/// The most tokens (o200k_base, see [`crate::tokens`]) parts of a request may take.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenBudget {
    /// The system prompt.
    pub max_system_tokens: Option<TokenLimit>,
    /// The tool definitions.
    pub max_tool_tokens: Option<TokenLimit>,
    /// The runtime context.
    pub max_context_tokens: Option<TokenLimit>,
}

impl TokenBudget {
    /// Does it limit anything?
    pub fn is_empty(&self) -> bool {
        self.max_system_tokens.is_none()
            && self.max_tool_tokens.is_none()
            && self.max_context_tokens.is_none()
    }
}

/// One limit of a [`TokenBudget`], with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenLimit {
    /// The most tokens.
    pub tokens: u32,
    /// Where the limit was written.
    pub span: Option<Span>,
}

impl Layer {
    /// An empty layer.
    pub fn new(label: impl Into<String>) -> Self {
        Layer {
            label: label.into(),
            ..Layer::default()
        }
    }

    /// Add a section.
    pub fn section(mut self, section: PromptSection) -> Self {
        self.sections.push(section);
        self
    }

    /// Add a runtime context.
    pub fn context(mut self, context: PromptContext) -> Self {
        self.contexts.push(context);
        self
    }

    /// Drop an inherited section.
    pub fn remove(mut self, name: impl Into<String>) -> Self {
        self.remove.push(RemoveEntry {
            name: name.into(),
            span: None,
        });
        self
    }

    /// Set `includeRuntimeContext`.
    pub fn include_runtime_context(mut self, include: bool) -> Self {
        self.include_runtime_context = Some(include);
        self
    }

    /// Restrict the visible tools.
    pub fn tools(mut self, restriction: ToolRestriction) -> Self {
        self.tools = Some(restriction);
        self
    }

    /// Declare a variable.
    pub fn variable(mut self, decl: VariableDecl) -> Self {
        self.variables.push(decl);
        self
    }

    /// Limit the tokens of the system prompt.
    pub fn max_system_tokens(mut self, tokens: u32) -> Self {
        self.budget.max_system_tokens = Some(TokenLimit { tokens, span: None });
        self
    }

    /// Limit the tokens of the tool definitions.
    pub fn max_context_tokens(mut self, tokens: u32) -> Self {
        self.budget.max_context_tokens = Some(TokenLimit { tokens, span: None });
        self
    }

    /// Limit the tool definitions to `tokens`.
    pub fn max_tool_tokens(mut self, tokens: u32) -> Self {
        self.budget.max_tool_tokens = Some(TokenLimit { tokens, span: None });
        self
    }
}
