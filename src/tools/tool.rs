//! What a tool is: the typed [`Tool`] trait a tool author implements, and the erased
//! [`ToolDefinition`] the catalog stores.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::context::ToolContext;
use super::name::ToolName;
use super::schema::ToolSchemas;
use crate::texts::{BuiltinText, TOOLS_ERROR, TOOLS_ERROR_WITH_HINT, Texts};

/// Guidance for the model on when and how to use a tool. It becomes the prompt section
/// `tool:<name>` while (and only while) the tool is visible.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolGuidance {
    /// Position in the prompt; must lie in the tool-guidance band 1000–1999.
    pub order: f64,
    /// The text: sent verbatim, or rendered when `template` is set.
    pub text: String,
    /// `true`: `text` is a template over the built-in variables — typically
    /// `{% if 'edit_file' in tools %}…{% endif %}`, so the guidance mentions another tool
    /// only while that tool is visible.
    pub template: bool,
}

impl ToolGuidance {
    /// Guidance sent verbatim.
    pub fn new(order: f64, text: impl Into<String>) -> Self {
        ToolGuidance {
            order,
            text: text.into(),
            template: false,
        }
    }

    /// Guidance rendered as a template (see [`ToolGuidance::template`]).
    pub fn templated(order: f64, text: impl Into<String>) -> Self {
        ToolGuidance {
            order,
            text: text.into(),
            template: true,
        }
    }
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
///
/// Built from a text id ([`ToolError::text`], [`ToolError::hint_text`]) it is told in the
/// texts of the preset that runs the tool (a locale pack, `texts:`); `message` and `hint`
/// hold the English rendering.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What went wrong ("old_string occurs 3 times").
    pub message: String,
    /// What to try ("include more surrounding context so it matches once").
    pub hint: Option<String>,
    message_text: Option<TextRef>,
    hint_text: Option<TextRef>,
}

/// A value put into a text: as given, or another text (told in the same texts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextValue {
    /// Put in as it is (a path, a number, a quoted pattern).
    Plain(String),
    /// A text of its own (`a FIFO (named pipe)`), itself without placeholders.
    Text(&'static BuiltinText),
    /// The start of a long input and its length in characters, told with `tools.cut`.
    Cut {
        /// The first characters.
        start: String,
        /// How many it has in all.
        count: usize,
    },
}

impl TextValue {
    /// The value in the words of `texts`.
    pub fn told(&self, texts: &Texts) -> String {
        match self {
            TextValue::Plain(s) => s.clone(),
            TextValue::Text(t) => texts.get(t).to_owned(),
            TextValue::Cut { start, count } => texts.render(
                &crate::texts::TOOLS_CUT,
                &[("start", start), ("count", &count.to_string())],
            ),
        }
    }
}

impl From<String> for TextValue {
    fn from(s: String) -> Self {
        TextValue::Plain(s)
    }
}

impl From<&str> for TextValue {
    fn from(s: &str) -> Self {
        TextValue::Plain(s.to_owned())
    }
}

impl From<&String> for TextValue {
    fn from(s: &String) -> Self {
        TextValue::Plain(s.clone())
    }
}

impl From<std::borrow::Cow<'_, str>> for TextValue {
    fn from(s: std::borrow::Cow<'_, str>) -> Self {
        TextValue::Plain(s.into_owned())
    }
}

impl From<&std::borrow::Cow<'_, str>> for TextValue {
    fn from(s: &std::borrow::Cow<'_, str>) -> Self {
        TextValue::Plain(s.to_string())
    }
}

impl From<&'static BuiltinText> for TextValue {
    fn from(t: &'static BuiltinText) -> Self {
        TextValue::Text(t)
    }
}

macro_rules! text_value_from_number {
    ($($t:ty),*) => {$(
        impl From<$t> for TextValue {
            fn from(n: $t) -> Self {
                TextValue::Plain(n.to_string())
            }
        }
    )*};
}
text_value_from_number!(u8, u16, u32, u64, usize, i32, i64);

/// A text id with the values of its placeholders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextRef {
    text: &'static BuiltinText,
    values: Vec<(&'static str, TextValue)>,
}

impl TextRef {
    /// `text` with `values` for its placeholders.
    pub fn new(text: &'static BuiltinText, values: Vec<(&'static str, TextValue)>) -> Self {
        TextRef { text, values }
    }

    /// Rendered in `texts`.
    pub fn render(&self, texts: &Texts) -> String {
        let rendered: Vec<(&str, String)> = self
            .values
            .iter()
            .map(|(k, v)| (*k, v.told(texts)))
            .collect();
        let pairs: Vec<(&str, &str)> = rendered.iter().map(|(k, v)| (*k, v.as_str())).collect();
        texts.render(self.text, &pairs)
    }
}

/// `vals![path = x, bytes = n]`: the values of a [`TextRef`].
macro_rules! vals {
    ($($k:ident = $v:expr),* $(,)?) => {
        vec![$((stringify!($k), $crate::tools::TextValue::from($v))),*]
    };
}
pub(crate) use vals;

impl ToolError {
    /// A failure without a hint.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            hint: None,
            message_text: None,
            hint_text: None,
        }
    }

    /// A failure told by a text id (see [`crate::texts`]), without a hint.
    pub fn text(text: &'static BuiltinText, values: Vec<(&'static str, TextValue)>) -> Self {
        let r = TextRef::new(text, values);
        ToolError {
            message: r.render(&Texts::english()),
            hint: None,
            message_text: Some(r),
            hint_text: None,
        }
    }

    /// Add what to try instead.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self.hint_text = None;
        self
    }

    /// Add what to try instead, told by a text id.
    pub fn hint_text(
        mut self,
        text: &'static BuiltinText,
        values: Vec<(&'static str, TextValue)>,
    ) -> Self {
        let r = TextRef::new(text, values);
        self.hint = Some(r.render(&Texts::english()));
        self.hint_text = Some(r);
        self
    }

    /// The text a model reads: the message, then the hint.
    pub fn to_model_text(&self) -> String {
        self.to_model_text_with(&Texts::english())
    }

    /// [`to_model_text`](Self::to_model_text) in the given texts (`tools.error`,
    /// `tools.error-with-hint`, and the ids the error was built from).
    pub fn to_model_text_with(&self, texts: &Texts) -> String {
        let message = match &self.message_text {
            Some(r) => r.render(texts),
            None => self.message.clone(),
        };
        let hint = match (&self.hint_text, &self.hint) {
            (Some(r), _) => Some(r.render(texts)),
            (None, h) => h.clone(),
        };
        match &hint {
            Some(h) => texts.render(
                &TOOLS_ERROR_WITH_HINT,
                &[("message", &message), ("hint", h)],
            ),
            None => texts.render(&TOOLS_ERROR, &[("message", &message)]),
        }
    }
}

/// The future a handler returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<String, ToolError>> + Send>>;

/// A tool, typed by its argument struct. Implement this; register it with
/// [`ToolCatalog::register`](super::ToolCatalog::register).
///
/// The argument type's `JsonSchema` derive is the single source of the parameter schema
/// (doc comments become descriptions); arguments are validated against that schema and
/// deserialized into `Args` before [`Tool::call`] runs, so arguments that fail either
/// never reach the handler.
pub trait Tool: Send + Sync + 'static {
    /// The argument struct (derive `Deserialize` + `JsonSchema`, `deny_unknown_fields`).
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// The wire name, `^[a-zA-Z0-9_-]{1,128}$`; at most 64 characters for a tool sent to
    /// OpenAI-dialect providers (validation checks it against the preset's provider).
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

    /// `true` when a call only reads (files, session state of its own) and changes
    /// nothing a user would want to approve first. Tools that write files or run
    /// commands keep the default, `false`, and an agent asks before running them.
    fn read_only(&self) -> bool {
        false
    }

    /// Do the work. `Err` becomes an error result the model can act on.
    fn call(
        &self,
        args: Self::Args,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static;
}

/// The handler of an [`ExternalTool`]: takes the arguments (already validated against
/// the tool's schema) and the context.
pub type ExternalHandler = Arc<dyn Fn(Value, ToolContext) -> ToolFuture + Send + Sync>;

/// A tool defined at run time rather than by a Rust type: a preset's command tool, an
/// MCP server's tool, or a host's dynamic tool. Turn it into a catalog entry with
/// [`ToolDefinition::external`].
#[derive(Clone)]
pub struct ExternalTool {
    /// The wire name.
    pub name: ToolName,
    /// What the tool does, for the model.
    pub description: String,
    /// The parameter schema, already normalised (draft 2020-12, an object schema; see
    /// [`normalize_schema`](crate::tools::external::normalize_schema)). It is the
    /// portable rendering; the strict one is derived from it.
    pub schema: Value,
    /// Does a call only read (see [`Tool::read_only`])?
    pub read_only: bool,
    /// How long one call may run before the registry gives up on it.
    pub timeout: Option<Duration>,
    /// Does the work.
    pub handler: ExternalHandler,
}

impl fmt::Debug for ExternalTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("schema", &self.schema)
            .field("read_only", &self.read_only)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A call whose arguments were deserialized into the tool's argument type: run it with a
/// context to get the handler's future.
pub(crate) type PreparedCall = Box<dyn FnOnce(ToolContext) -> ToolFuture + Send>;

/// Deserialize JSON arguments into the tool's argument type. `Err` lists what does not fit
/// (with JSON paths), for [`ToolCallError::InvalidArguments`]; the handler has not run.
///
/// [`ToolCallError::InvalidArguments`]: super::ToolCallError::InvalidArguments
type ErasedPrepare = dyn Fn(serde_json::Value) -> Result<PreparedCall, Vec<String>> + Send + Sync;

/// A tool as the catalog stores it: wire data (name, description, schemas) plus
/// host-only data (guidance, timeout, handler) that never reaches the wire.
#[derive(Clone)]
pub struct ToolDefinition {
    pub(crate) name: ToolName,
    pub(crate) description: String,
    pub(crate) schemas: Arc<ToolSchemas>,
    pub(crate) guidance: Option<ToolGuidance>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) read_only: bool,
    /// Where the tool came from (a Rust tool, a preset's command, an MCP server).
    pub(crate) origin: super::external::ToolOrigin,
    /// Deserializes the arguments (after schema validation) into a ready call.
    pub(crate) prepare: Arc<ErasedPrepare>,
    /// Compiled on first use: most runs (`validate`, `render`) never call a tool, and
    /// compiling every validator up front dominated their start-up.
    pub(crate) validator: Arc<OnceLock<Result<jsonschema::Validator, String>>>,
}

impl ToolDefinition {
    /// Erase a typed tool. Fails on a bad name or a schema that is not an object schema;
    /// the argument validator is compiled on the first call (a schema that does not
    /// compile fails that call with a clear error).
    pub fn from_tool<T: Tool>(tool: T) -> Result<Self, crate::Diagnostic> {
        let name = ToolName::new(tool.name())?;
        let description = tool.description().to_owned();
        let guidance = tool.guidance();
        let timeout = tool.timeout();
        let read_only = tool.read_only();
        let schemas = Arc::new(ToolSchemas::for_type::<T::Args>()?);
        let tool = Arc::new(tool);
        let prepare: Arc<ErasedPrepare> = Arc::new(move |args| {
            let args: T::Args = deserialize_args(&args)?;
            let tool = Arc::clone(&tool);
            Ok(Box::new(move |ctx| Box::pin(tool.call(args, ctx)) as ToolFuture) as PreparedCall)
        });
        Ok(ToolDefinition {
            name,
            description,
            schemas,
            guidance,
            timeout,
            read_only,
            origin: super::external::ToolOrigin::Host,
            prepare,
            validator: Arc::new(OnceLock::new()),
        })
    }

    /// Erase a tool defined at run time. Its schema is the portable rendering as given
    /// (it must be an object schema: `"type": "object"`); the strict rendering is derived
    /// from it the way built-in schemas are ([`StrictMode`](super::schema::StrictMode)).
    /// Arguments are validated against the portable schema before the handler runs, as
    /// for every tool.
    pub fn external(tool: ExternalTool) -> Result<Self, crate::Diagnostic> {
        let schemas = Arc::new(ToolSchemas::from_portable(tool.schema)?);
        let handler = tool.handler;
        let prepare: Arc<ErasedPrepare> = Arc::new(move |args| {
            let handler = Arc::clone(&handler);
            Ok(Box::new(move |ctx| handler(args, ctx)) as PreparedCall)
        });
        Ok(ToolDefinition {
            name: tool.name,
            description: tool.description,
            schemas,
            guidance: None,
            timeout: tool.timeout,
            read_only: tool.read_only,
            origin: super::external::ToolOrigin::Host,
            prepare,
            validator: Arc::new(OnceLock::new()),
        })
    }

    /// The same tool, marked as coming from `origin`.
    pub fn with_origin(mut self, origin: super::external::ToolOrigin) -> Self {
        self.origin = origin;
        self
    }

    /// The same tool (name, description, schemas, timeout, approval) with its calls going
    /// to `handler` instead: how a run connects the MCP tools validation built from the
    /// lock to live servers.
    pub fn with_handler(&self, handler: ExternalHandler) -> Self {
        let prepare: Arc<ErasedPrepare> = Arc::new(move |args| {
            let handler = Arc::clone(&handler);
            Ok(Box::new(move |ctx| handler(args, ctx)) as PreparedCall)
        });
        ToolDefinition {
            prepare,
            ..self.clone()
        }
    }

    /// Where the tool came from.
    pub fn origin(&self) -> &super::external::ToolOrigin {
        &self.origin
    }

    /// The argument validator, compiled on first use (`Err`: why the schema does not
    /// compile).
    pub(crate) fn validator(&self) -> Result<&jsonschema::Validator, &str> {
        self.validator
            .get_or_init(|| {
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(&self.schemas.portable)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
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

    /// The shared schemas (to tell whether two definitions share them).
    pub(crate) fn schemas_arc(&self) -> Arc<ToolSchemas> {
        Arc::clone(&self.schemas)
    }

    /// Host-only guidance (becomes a prompt section, never a wire field).
    pub fn guidance(&self) -> Option<&ToolGuidance> {
        self.guidance.as_ref()
    }

    /// This tool with another description and guidance text (`None`: keep). The schemas,
    /// handler and everything else are shared.
    pub fn with_texts(&self, description: Option<&str>, guidance: Option<&str>) -> Self {
        let mut def = self.clone();
        if let Some(d) = description {
            d.clone_into(&mut def.description);
        }
        if let (Some(text), Some(g)) = (guidance, def.guidance.as_mut()) {
            text.clone_into(&mut g.text);
        }
        def
    }

    /// This tool with its parameter descriptions replaced: `replacement` gets each one's
    /// path (see [`visit_param_descriptions`](super::schema::visit_param_descriptions))
    /// and says its new text (`None`: keep). Both renderings change alike.
    pub fn with_param_texts(&self, replacement: &dyn Fn(&str) -> Option<String>) -> Self {
        let mut schemas = (*self.schemas).clone();
        let mut changed = false;
        for schema in [&mut schemas.portable, &mut schemas.strict] {
            super::schema::visit_param_descriptions(Arc::make_mut(schema), &mut |path, d| {
                if let Some(text) = replacement(path) {
                    *d = text;
                    changed = true;
                }
            });
        }
        let mut def = self.clone();
        if changed {
            def.schemas = Arc::new(schemas);
        }
        def
    }

    /// Host-only timeout.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Does a call only read (see [`Tool::read_only`])?
    pub fn read_only(&self) -> bool {
        self.read_only
    }
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("guidance", &self.guidance)
            .field("timeout", &self.timeout)
            .field("read_only", &self.read_only)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// `args` as the tool's argument type, or what does not fit.
///
/// The JSON Schema check runs first, but it cannot catch everything serde refuses: a
/// `u32` field given `4294967296` (`format: uint32` is not enforced) or `1.0` (an integer
/// by JSON Schema's rules, a float to serde). Those are argument errors as much as a
/// wrong type, so they are reported the same way, with the serde message and the JSON
/// path of the value.
fn deserialize_args<A: DeserializeOwned>(args: &Value) -> Result<A, Vec<String>> {
    A::deserialize(args).map_err(|e| {
        let message = e.to_string();
        vec![match error_pointer::<A>(args) {
            Some(pointer) if !pointer.is_empty() => format!("at `{pointer}`: {message}"),
            _ => message,
        }]
    })
}

/// The JSON pointer of the value that made deserializing `args` fail.
///
/// serde does not track paths, but serde_json's text parser reports the line of an error:
/// lay the arguments out one value per line, remember each line's pointer, parse that
/// text again and look up the line the error names.
fn error_pointer<A: DeserializeOwned>(args: &Value) -> Option<String> {
    let mut text = String::new();
    let mut pointers = Vec::new();
    lay_out(args, "", "", "", &mut text, &mut pointers);
    let e = serde_json::from_str::<A>(&text).err()?;
    pointers.get(e.line().checked_sub(1)?).cloned()
}

/// Write `value` with one scalar, key or bracket per line (`head` before it, `tail` after
/// it on its first/last line), recording the JSON pointer of every line.
fn lay_out(
    value: &Value,
    pointer: &str,
    head: &str,
    tail: &str,
    text: &mut String,
    pointers: &mut Vec<String>,
) {
    let mut line = |content: String| {
        text.push_str(&content);
        text.push('\n');
        pointers.push(pointer.to_owned());
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            line(format!("{head}{{"));
            for (i, (key, child)) in map.iter().enumerate() {
                let child_pointer =
                    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                let key_head = format!("{}: ", Value::String(key.clone()));
                let comma = if i + 1 < map.len() { "," } else { "" };
                lay_out(child, &child_pointer, &key_head, comma, text, pointers);
            }
            text.push_str(&format!("}}{tail}\n"));
            pointers.push(pointer.to_owned());
        }
        Value::Array(items) if !items.is_empty() => {
            line(format!("{head}["));
            for (i, child) in items.iter().enumerate() {
                let comma = if i + 1 < items.len() { "," } else { "" };
                lay_out(child, &format!("{pointer}/{i}"), "", comma, text, pointers);
            }
            text.push_str(&format!("]{tail}\n"));
            pointers.push(pointer.to_owned());
        }
        scalar => line(format!("{head}{scalar}{tail}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        n: u32,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        name: String,
        offset: Option<u32>,
        items: Option<Vec<Inner>>,
        #[serde(rename = "a/b")]
        slashed: Option<u8>,
    }

    #[test]
    fn serde_failures_name_the_json_path() {
        let problems =
            deserialize_args::<Args>(&json!({"name": "x", "offset": 4294967296u64})).unwrap_err();
        assert_eq!(
            problems,
            ["at `/offset`: invalid value: integer `4294967296`, expected u32"]
        );
        let problems = deserialize_args::<Args>(&json!({"name": "x", "offset": 1.0})).unwrap_err();
        assert_eq!(
            problems,
            ["at `/offset`: invalid type: floating point `1.0`, expected u32"]
        );
        let problems =
            deserialize_args::<Args>(&json!({"name": "x", "items": [{"n": 1}, {"n": -1}]}))
                .unwrap_err();
        assert_eq!(
            problems,
            ["at `/items/1/n`: invalid value: integer `-1`, expected u32"]
        );
        let problems = deserialize_args::<Args>(&json!({"name": "x", "a/b": 300})).unwrap_err();
        assert!(problems[0].starts_with("at `/a~1b`: "), "{problems:?}");
        // An error about the whole object has no path.
        let problems = deserialize_args::<Args>(&json!({"offset": 1})).unwrap_err();
        assert_eq!(problems, ["missing field `name`"]);
        assert!(deserialize_args::<Args>(&json!({"name": "x", "offset": null})).is_ok());
    }
}
