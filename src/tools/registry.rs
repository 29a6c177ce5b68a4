//! [`ToolRegistry`]: the tools one preset makes visible, in wire order; projects them for
//! the wire and runs the calls a model makes, refusing any it cannot see.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::builtin::echo;
use super::catalog::ToolCatalog;
use super::context::ToolContext;
use super::name::ToolName;
use super::restriction::{ToolRestriction, visible_tools};
use super::tool::{ToolDefinition, ToolError, ToolOutput};
use crate::suggest::did_you_mean;
use crate::texts::{
    TOOLS_BAD_DEFINITION, TOOLS_BAD_DEFINITION_HINT, TOOLS_INVALID_ARGUMENTS,
    TOOLS_INVALID_ARGUMENTS_MORE, TOOLS_TIMEOUT, TOOLS_UNKNOWN_TOOL, TOOLS_UNKNOWN_TOOL_SUGGESTION,
    Texts,
};

/// Most schema problems listed for one call; the rest are counted.
const MAX_LISTED_PROBLEMS: usize = 10;
/// Longest part of an argument's value quoted in a problem.
const MAX_QUOTED_VALUE_CHARS: usize = 80;
/// Longest problem description.
const MAX_PROBLEM_CHARS: usize = 500;

/// One schema violation as the model reads it, in the registry's texts: where, and what
/// is wrong, quoting at most a short prefix of the offending value (a 1 MB argument is not
/// echoed back). The validator's own messages are English only, so each kind of problem
/// has a text of its own (`tools.argument.*`).
pub(crate) fn describe_problem(e: &jsonschema::ValidationError<'_>, texts: &Texts) -> String {
    use crate::texts::*;
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    let json = |v: &serde_json::Value| quoted_value(&v.to_string(), texts);
    let value = json(e.instance());
    let list = |items: &mut dyn Iterator<Item = String>| items.collect::<Vec<_>>().join(", ");
    let (text, values): (&BuiltinText, Vec<(&str, String)>) = match e.kind() {
        K::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => format!("\"{t}\""),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| format!("\"{t}\""))
                    .collect::<Vec<_>>()
                    .join(texts.get(&TOOLS_ARGUMENT_TYPE_OR)),
            };
            (
                &TOOLS_ARGUMENT_TYPE,
                vec![("value", value), ("expected", expected)],
            )
        }
        K::Required { property } => (&TOOLS_ARGUMENT_REQUIRED, vec![("property", json(property))]),
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => (
            &TOOLS_ARGUMENT_UNEXPECTED,
            vec![(
                "names",
                list(
                    &mut unexpected
                        .iter()
                        .map(|n| format!("`{}`", quoted_value(n, texts))),
                ),
            )],
        ),
        K::Enum { options } => {
            let options = match options.as_array() {
                Some(items) => list(&mut items.iter().map(json)),
                None => json(options),
            };
            (
                &TOOLS_ARGUMENT_ENUM,
                vec![("value", value), ("options", options)],
            )
        }
        K::Constant { expected_value } => (
            &TOOLS_ARGUMENT_CONST,
            vec![("value", value), ("expected", json(expected_value))],
        ),
        K::Minimum { limit } => (
            &TOOLS_ARGUMENT_MINIMUM,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::Maximum { limit } => (
            &TOOLS_ARGUMENT_MAXIMUM,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::ExclusiveMinimum { limit } => (
            &TOOLS_ARGUMENT_EXCLUSIVE_MINIMUM,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::ExclusiveMaximum { limit } => (
            &TOOLS_ARGUMENT_EXCLUSIVE_MAXIMUM,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::MinLength { limit } => (
            &TOOLS_ARGUMENT_MIN_LENGTH,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::MaxLength { limit } => (
            &TOOLS_ARGUMENT_MAX_LENGTH,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::MinItems { limit } => (
            &TOOLS_ARGUMENT_MIN_ITEMS,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::MaxItems { limit } => (
            &TOOLS_ARGUMENT_MAX_ITEMS,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::MinProperties { limit } => (
            &TOOLS_ARGUMENT_MIN_PROPERTIES,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::MaxProperties { limit } => (
            &TOOLS_ARGUMENT_MAX_PROPERTIES,
            vec![("value", value), ("limit", limit.to_string())],
        ),
        K::Pattern { pattern } => (
            &TOOLS_ARGUMENT_PATTERN,
            vec![("value", value), ("pattern", quoted_value(pattern, texts))],
        ),
        K::UniqueItems => (&TOOLS_ARGUMENT_UNIQUE, vec![("value", value)]),
        K::MultipleOf { multiple_of } => (
            &TOOLS_ARGUMENT_MULTIPLE_OF,
            vec![("value", value), ("multiple", multiple_of.to_string())],
        ),
        K::Format { format } => (
            &TOOLS_ARGUMENT_FORMAT,
            vec![("value", value), ("format", quoted_value(format, texts))],
        ),
        K::AnyOf { .. } | K::OneOfNotValid { .. } => {
            (&TOOLS_ARGUMENT_NO_FORM, vec![("value", value)])
        }
        K::OneOfMultipleValid { .. } => (&TOOLS_ARGUMENT_MANY_FORMS, vec![("value", value)]),
        K::Not { .. } => (&TOOLS_ARGUMENT_NOT, vec![("value", value)]),
        K::FalseSchema => (&TOOLS_ARGUMENT_NOTHING, vec![("value", value)]),
        other => (
            &TOOLS_ARGUMENT_OTHER,
            vec![("value", value), ("keyword", other.keyword().to_owned())],
        ),
    };
    let pairs: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let problem = texts.render(text, &pairs);
    let path = e.instance_path().to_string();
    if path.is_empty() {
        shorten(&problem, texts)
    } else {
        let at = texts.render(
            &TOOLS_ARGUMENT_AT,
            &[("path", &path), ("problem", &problem)],
        );
        shorten(&at, texts)
    }
}

/// A value (JSON or a name) as a problem quotes it: at most [`MAX_QUOTED_VALUE_CHARS`]
/// characters, then how long it is in all.
fn quoted_value(value: &str, texts: &Texts) -> String {
    cut_at(value, MAX_QUOTED_VALUE_CHARS, texts)
}

/// `text`, or its first `max` characters and a note of the length.
fn cut_at(text: &str, max: usize, texts: &Texts) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((end, _)) => texts.render(
            &crate::texts::TOOLS_CUT,
            &[
                ("start", &text[..end]),
                ("count", &text.chars().count().to_string()),
            ],
        ),
    }
}

/// `text`, or its first [`MAX_PROBLEM_CHARS`] characters and a note of the length.
fn shorten(text: &str, texts: &Texts) -> String {
    cut_at(text, MAX_PROBLEM_CHARS, texts)
}

/// The compact JSON of a tool list in wire order: what the prefix fingerprint hashes and
/// the tool token count measures.
pub(crate) fn wire_json(tools: &[WireTool]) -> String {
    serde_json::to_string(tools).unwrap_or_default()
}

/// A tool as a model sees it: exactly `name`, `description`, `parameters`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireTool {
    /// The wire name.
    pub name: String,
    /// The description.
    pub description: String,
    /// The parameter schema, shared with the tool's definition (comparing two projections
    /// of one tool is a pointer comparison; `Arc::make_mut` gives a private copy to change).
    pub parameters: Arc<serde_json::Value>,
}

/// Which rendering of the parameter schemas to project.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchemaDialect {
    /// Draft 2020-12 as schemars generates it.
    #[default]
    Portable,
    /// OpenAI/DeepSeek strict function calling.
    Strict,
}

/// Why a call was refused or failed. Every variant renders to a tool result the model can
/// act on ([`ToolCallError::to_output`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolCallError {
    /// No visible tool has this name. Hidden tools get exactly this error too.
    #[error("unknown tool `{}`", echo(name))]
    UnknownTool {
        /// The name the model used.
        name: String,
        /// A close *visible* name, if any.
        suggestion: Option<String>,
    },
    /// The arguments do not match the tool's schema; the handler did not run.
    #[error("invalid arguments for tool `{tool}`: {}", problems.join("; "))]
    InvalidArguments {
        /// The tool.
        tool: String,
        /// Each schema violation, with its JSON path.
        problems: Vec<String>,
    },
    /// The handler ran past the tool's timeout.
    #[error("tool `{tool}` timed out after {seconds} s")]
    Timeout {
        /// The tool.
        tool: String,
        /// The limit.
        seconds: u64,
    },
    /// The handler reported a failure.
    #[error("tool `{tool}` failed: {error}")]
    Failed {
        /// The tool.
        tool: String,
        /// What it said.
        error: ToolError,
    },
}

impl ToolCallError {
    /// The error as a tool result for the model (English).
    pub fn to_output(&self) -> ToolOutput {
        self.to_output_with(&Texts::english())
    }

    /// The error as a tool result for the model, in the given texts (`tools.*` ids).
    pub fn to_output_with(&self, texts: &Texts) -> ToolOutput {
        let text = match self {
            ToolCallError::UnknownTool { name, suggestion } => match suggestion {
                Some(s) => texts.render(
                    &TOOLS_UNKNOWN_TOOL_SUGGESTION,
                    &[("tool", &echo(name).told(texts)), ("suggestion", s)],
                ),
                None => texts.render(&TOOLS_UNKNOWN_TOOL, &[("tool", &echo(name).told(texts))]),
            },
            ToolCallError::InvalidArguments { tool, problems } => texts.render(
                &TOOLS_INVALID_ARGUMENTS,
                &[("tool", tool), ("problems", &problems.join("\n- "))],
            ),
            ToolCallError::Timeout { tool, seconds } => texts.render(
                &TOOLS_TIMEOUT,
                &[("tool", tool), ("seconds", &seconds.to_string())],
            ),
            ToolCallError::Failed { error, .. } => error.to_model_text_with(texts),
        };
        ToolOutput::error(text)
    }
}

/// The visible tools of one preset, in wire order.
#[derive(Clone, Debug)]
pub struct ToolRegistry {
    visible: Vec<Arc<ToolDefinition>>,
    index: HashMap<String, usize>,
    /// The texts refusals and errors are told in.
    texts: Arc<Texts>,
}

impl ToolRegistry {
    /// Every catalog tool, visible, in byte order (no restriction).
    pub fn unrestricted(catalog: &ToolCatalog) -> Self {
        Self::restricted(catalog, std::iter::empty())
    }

    /// The catalog narrowed by restrictions (outermost first). Callers check the
    /// restrictions first ([`ToolRestriction::check`]); unknown names here are ignored.
    pub fn restricted<'a, I>(catalog: &ToolCatalog, restrictions: I) -> Self
    where
        I: IntoIterator<Item = &'a ToolRestriction>,
    {
        let names = visible_tools(catalog, restrictions);
        let visible: Vec<_> = names
            .iter()
            .filter_map(|n| catalog.get(n.as_str()).cloned())
            .collect();
        let index = visible
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name().as_str().to_owned(), i))
            .collect();
        ToolRegistry {
            visible,
            index,
            texts: Texts::english(),
        }
    }

    /// Tell refusals and errors in `texts` (see [`ToolCallError::to_output_with`]).
    pub fn with_texts(mut self, texts: Arc<Texts>) -> Self {
        self.texts = texts;
        self
    }

    /// Send the calls of visible tools to other handlers: for each tool, `handler` says
    /// which (or `None`: keep it). See
    /// [`PromptAssembler::replace_tool_handlers`](crate::prompt::PromptAssembler::replace_tool_handlers).
    pub fn replace_handlers(
        &mut self,
        mut handler: impl FnMut(&ToolDefinition) -> Option<super::ExternalHandler>,
    ) {
        for definition in &mut self.visible {
            if let Some(h) = handler(definition) {
                *definition = Arc::new(definition.with_handler(h));
            }
        }
    }

    /// Visible tool names, in wire order.
    pub fn names(&self) -> impl Iterator<Item = &ToolName> {
        self.visible.iter().map(|d| d.name())
    }

    /// Visible tool definitions, in wire order.
    pub fn definitions(&self) -> &[Arc<ToolDefinition>] {
        &self.visible
    }

    /// The visible tool named `name` (hidden and unknown tools alike: `None`).
    pub fn get(&self, name: &str) -> Option<&Arc<ToolDefinition>> {
        self.index.get(name).map(|&i| &self.visible[i])
    }

    /// Is `name` visible?
    pub fn is_visible(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// The wire projection: exactly `{name, description, parameters}` (the schemas shared with the definitions).
    pub fn schemas(&self) -> Vec<WireTool> {
        self.schemas_for(SchemaDialect::Portable)
    }

    /// The wire projection in a given schema dialect.
    pub fn schemas_for(&self, dialect: SchemaDialect) -> Vec<WireTool> {
        self.visible
            .iter()
            .map(|d| WireTool {
                name: d.name().as_str().to_owned(),
                description: d.description().to_owned(),
                parameters: match dialect {
                    SchemaDialect::Portable => Arc::clone(&d.schemas().portable),
                    SchemaDialect::Strict => Arc::clone(&d.schemas().strict),
                },
            })
            .collect()
    }

    /// Run a call: refuse unknown and hidden tools alike, validate the arguments against
    /// the schema and deserialize them into the tool's argument type before the handler
    /// runs (a failure of either is [`ToolCallError::InvalidArguments`]), enforce the
    /// tool's timeout.
    pub async fn call(
        &self,
        name: &str,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolCallError> {
        let Some(&i) = self.index.get(name) else {
            return Err(ToolCallError::UnknownTool {
                name: name.to_owned(),
                suggestion: did_you_mean(name, self.visible.iter().map(|d| d.name().as_str()))
                    .map(str::to_owned),
            });
        };
        let def = &self.visible[i];
        // A strict-mode model sends `null` for an optional property it leaves out; a
        // schema written by someone else (a command tool's, an MCP server's) may not
        // accept `null` there, so such a `null` means "absent".
        let args = if matches!(def.origin(), super::ToolOrigin::Host) {
            args
        } else {
            super::schema::drop_optional_nulls(&def.schemas().portable, args)
        };
        let validator = def.validator().map_err(|msg| ToolCallError::Failed {
            tool: name.to_owned(),
            error: ToolError::text(
                &TOOLS_BAD_DEFINITION,
                super::vals![tool = name, error = msg],
            )
            .hint_text(&TOOLS_BAD_DEFINITION_HINT, vec![]),
        })?;
        let mut problems: Vec<String> = Vec::new();
        let mut unlisted = 0usize;
        for e in validator.iter_errors(&args) {
            if problems.len() < MAX_LISTED_PROBLEMS {
                problems.push(describe_problem(&e, &self.texts));
            } else {
                unlisted += 1;
            }
        }
        if unlisted > 0 {
            problems.push(self.texts.render(
                &TOOLS_INVALID_ARGUMENTS_MORE,
                &[("count", &unlisted.to_string())],
            ));
        }
        if !problems.is_empty() {
            return Err(ToolCallError::InvalidArguments {
                tool: name.to_owned(),
                problems,
            });
        }
        // Deserializing into the argument type is part of validation too: serde refuses
        // a few values the schema lets through (`4294967296` or `1.0` for a `u32`).
        let call = (def.prepare)(args).map_err(|problems| ToolCallError::InvalidArguments {
            tool: name.to_owned(),
            problems: problems.iter().map(|p| shorten(p, &self.texts)).collect(),
        })?;
        let future = call(ctx.clone().with_texts(Arc::clone(&self.texts)));
        let result = match def.timeout() {
            Some(limit) => match tokio::time::timeout(limit, future).await {
                Ok(r) => r,
                Err(_) => {
                    return Err(ToolCallError::Timeout {
                        tool: name.to_owned(),
                        seconds: limit.as_secs(),
                    });
                }
            },
            None => future.await,
        };
        result
            .map(ToolOutput::ok)
            .map_err(|error| ToolCallError::Failed {
                tool: name.to_owned(),
                error,
            })
    }

    /// Like [`call`](Self::call), but every failure becomes an error result for the model.
    pub async fn call_for_model(
        &self,
        name: &str,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> ToolOutput {
        match self.call(name, args, ctx).await {
            Ok(out) => out,
            Err(e) => e.to_output_with(&self.texts),
        }
    }
}
