//! What a tool is: the typed [`Tool`] trait a tool author implements, and the erased
//! [`ToolDefinition`] the catalog stores.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::context::ToolContext;
use super::name::ToolName;
use super::schema::ToolSchemas;

/// Guidance for the model on when and how to use a tool. It becomes the prompt section
/// `tool:<name>` while (and only while) the tool is visible.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolGuidance {
    /// Position in the prompt; must lie in the tool-guidance band 1000–1999.
    pub order: f64,
    /// The text, sent verbatim (not a template).
    pub text: String,
}

/// What a tool handed back to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text the model reads.
    pub content: String,
    /// `true` when the call failed; `content` then says what went wrong and what to try.
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed result the model can act on.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
        }
    }
}

/// A handler's failure: what went wrong, and what the model should try instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What went wrong ("old_string occurs 3 times").
    pub message: String,
    /// What to try ("include more surrounding context so it matches once").
    pub hint: Option<String>,
}

impl ToolError {
    /// A failure without a hint.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            hint: None,
        }
    }

    /// Add what to try instead.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The text a model reads: the message, then the hint.
    pub fn to_model_text(&self) -> String {
        match &self.hint {
            Some(h) => format!("Error: {}\nHint: {}", self.message, h),
            None => format!("Error: {}", self.message),
        }
    }
}

/// The future a handler returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<String, ToolError>> + Send>>;

/// A tool, typed by its argument struct. Implement this; register it with
/// [`ToolCatalog::register`](super::ToolCatalog::register).
///
/// The argument type's `JsonSchema` derive is the single source of the parameter schema
/// (doc comments become descriptions); arguments are validated against that schema
/// before [`Tool::call`] runs.
pub trait Tool: Send + Sync + 'static {
    /// The argument struct (derive `Deserialize` + `JsonSchema`, `deny_unknown_fields`).
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// The wire name, `^[a-zA-Z0-9_-]{1,64}$`.
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// When and how to use it, for the model (becomes section `tool:<name>`).
    fn guidance(&self) -> Option<ToolGuidance> {
        None
    }

    /// How long one call may run before the registry gives up on it.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Do the work. `Err` becomes an error result the model can act on.
    fn call(
        &self,
        args: Self::Args,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static;
}

type ErasedHandler = dyn Fn(serde_json::Value, ToolContext) -> ToolFuture + Send + Sync;

/// A tool as the catalog stores it: wire data (name, description, schemas) plus
/// host-only data (guidance, timeout, handler) that never reaches the wire.
#[derive(Clone)]
pub struct ToolDefinition {
    pub(crate) name: ToolName,
    pub(crate) description: String,
    pub(crate) schemas: Arc<ToolSchemas>,
    pub(crate) guidance: Option<ToolGuidance>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) handler: Arc<ErasedHandler>,
    pub(crate) validator: Arc<jsonschema::Validator>,
}

impl ToolDefinition {
    /// Erase a typed tool. Fails only on a bad name or a schema that does not compile.
    pub fn from_tool<T: Tool>(tool: T) -> Result<Self, crate::Diagnostic> {
        let name = ToolName::new(tool.name())?;
        let description = tool.description().to_owned();
        let guidance = tool.guidance();
        let timeout = tool.timeout();
        let schemas = Arc::new(ToolSchemas::for_type::<T::Args>()?);
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schemas.portable)
            .map_err(|e| {
                crate::Diagnostic::new(
                    crate::DiagnosticKind::InvalidValue,
                    format!("the parameter schema of tool `{name}` does not compile: {e}"),
                )
            })?;
        let tool = Arc::new(tool);
        let handler: Arc<ErasedHandler> = Arc::new(move |args, ctx| {
            let tool = Arc::clone(&tool);
            Box::pin(async move {
                let args: T::Args = serde_json::from_value(args).map_err(|e| {
                    ToolError::new(format!("invalid arguments: {e}"))
                        .hint("check the argument names and types against the tool's schema")
                })?;
                tool.call(args, ctx).await
            }) as ToolFuture
        });
        Ok(ToolDefinition {
            name,
            description,
            schemas,
            guidance,
            timeout,
            handler,
            validator: Arc::new(validator),
        })
    }

    /// The wire name.
    pub fn name(&self) -> &ToolName {
        &self.name
    }

    /// The description sent to the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Both renderings of the parameter schema.
    pub fn schemas(&self) -> &ToolSchemas {
        &self.schemas
    }

    /// Host-only guidance (becomes a prompt section, never a wire field).
    pub fn guidance(&self) -> Option<&ToolGuidance> {
        self.guidance.as_ref()
    }

    /// Host-only timeout.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("guidance", &self.guidance)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}
