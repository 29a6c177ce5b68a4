//! `todo_write`: the session's task list, replaced whole on every call.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::future::Future;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::texts::*;
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance, vals};

/// Most tasks one list may hold.
pub(crate) const MAX_TODOS: usize = 100;
/// Longest task text accepted, in characters.
pub(crate) const MAX_TODO_CHARS: usize = 500;

/// Arguments of `todo_write`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteArgs {
    /// The complete, updated task list. It replaces the previous list, so include every task you want to keep.
    pub todos: Vec<TodoItem>,
}

/// One task of the session's list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What to do, as a short imperative sentence.
    pub content: String,
    /// `pending` (not started), `in_progress` (being worked on now) or `completed`.
    pub status: TodoStatus,
}

/// Where a task stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on now.
    InProgress,
    /// Done.
    Completed,
}

impl TodoStatus {
    /// The wire spelling (`in_progress`).
    pub fn as_str(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Completed => "completed",
        }
    }
}

// Written by hand: the derive would turn the documented variants into a `oneOf` of
// `const`s, longer on the wire than this plain string enum (the field says what each means).
impl JsonSchema for TodoStatus {
    fn schema_name() -> Cow<'static, str> {
        "TodoStatus".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "enum": ["pending", "in_progress", "completed"]
        })
    }
}

/// The `todo_write` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct TodoWrite;

impl Tool for TodoWrite {
    type Args = TodoWriteArgs;

    fn name(&self) -> &str {
        "todo_write"
    }

    fn description(&self) -> &str {
        TOOL_TODO_WRITE_DESCRIPTION.text
    }

    fn read_only(&self) -> bool {
        true
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        Some(ToolGuidance::new(1070.0, TOOL_TODO_WRITE_GUIDANCE.text))
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(5))
    }

    fn call(
        &self,
        args: TodoWriteArgs,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        handle(args, ctx)
    }
}

/// The work of `todo_write` (a free function, so the future borrows nothing from the tool).
async fn handle(args: TodoWriteArgs, ctx: ToolContext) -> Result<String, ToolError> {
    if args.todos.len() > MAX_TODOS {
        return Err(ToolError::text(
            &TOOL_TODO_WRITE_ERROR_TOO_MANY,
            vals![count = args.todos.len(), max = MAX_TODOS],
        )
        .hint_text(&TOOL_TODO_WRITE_HINT_TOO_MANY, vec![]));
    }
    for (i, item) in args.todos.iter().enumerate() {
        if item.content.trim().is_empty() {
            return Err(
                ToolError::text(&TOOL_TODO_WRITE_ERROR_EMPTY, vals![number = i + 1])
                    .hint_text(&TOOL_TODO_WRITE_HINT_EMPTY, vec![]),
            );
        }
        // The list is rendered one task per line: a line break (or another control
        // character) in a task could forge further lines of it, and a bidirectional
        // control (U+202E) could make it read differently from what it says.
        if let Some(c) = item.content.chars().find(|&c| is_forbidden(c)) {
            return Err(ToolError::text(
                &TOOL_TODO_WRITE_ERROR_CONTROL,
                vals![
                    number = i + 1,
                    character = format!("U+{:04X}", u32::from(c))
                ],
            )
            .hint_text(&TOOL_TODO_WRITE_HINT_CONTROL, vec![]));
        }
        if item.content.chars().count() > MAX_TODO_CHARS {
            return Err(ToolError::text(
                &TOOL_TODO_WRITE_ERROR_LONG,
                vals![number = i + 1, max = MAX_TODO_CHARS],
            )
            .hint_text(&TOOL_TODO_WRITE_HINT_LONG, vec![]));
        }
    }
    let rendered = render(ctx.texts(), &args.todos);
    ctx.session().set_todo_list(args.todos);
    Ok(rendered)
}

/// Characters a task may not hold: control characters but tab, the Unicode line and
/// paragraph separators, and the bidirectional text controls (U+061C, U+200E, U+200F,
/// U+202A–U+202E, U+2066–U+2069), which reorder how the rest of a line is displayed.
fn is_forbidden(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// The list as the model reads it back.
fn render(texts: &crate::texts::Texts, todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return texts.get(&TOOL_TODO_WRITE_RESULT_CLEARED).to_owned();
    }
    let count = |s: TodoStatus| todos.iter().filter(|t| t.status == s).count().to_string();
    let header = if todos.len() == 1 {
        &TOOL_TODO_WRITE_RESULT_ONE
    } else {
        &TOOL_TODO_WRITE_RESULT_MANY
    };
    let mut out = texts.render(
        header,
        &[
            ("count", &todos.len().to_string()),
            ("completed", &count(TodoStatus::Completed)),
            ("in_progress", &count(TodoStatus::InProgress)),
            ("pending", &count(TodoStatus::Pending)),
        ],
    );
    out.push('\n');
    for (i, t) in todos.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. [{}] {}",
            i + 1,
            t.status.as_str(),
            t.content.trim()
        );
    }
    out
}
