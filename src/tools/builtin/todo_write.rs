//! `todo_write`: the session's task list, replaced whole on every call.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::future::Future;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::texts::{TOOL_TODO_WRITE_DESCRIPTION, TOOL_TODO_WRITE_GUIDANCE};
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance};

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
        return Err(ToolError::new(format!(
            "the list has {} tasks; at most {MAX_TODOS} are kept",
            args.todos.len()
        ))
        .hint("merge small tasks or drop completed ones"));
    }
    for (i, item) in args.todos.iter().enumerate() {
        if item.content.trim().is_empty() {
            return Err(ToolError::new(format!("task {} has empty content", i + 1))
                .hint("describe every task in a short sentence"));
        }
        // The list is rendered one task per line: a line break (or another control
        // character) in a task could forge further lines of it, and a bidirectional
        // control (U+202E) could make it read differently from what it says.
        if let Some(c) = item.content.chars().find(|&c| is_forbidden(c)) {
            return Err(ToolError::new(format!(
                "task {} contains a line break or another control character (U+{:04X})",
                i + 1,
                u32::from(c)
            ))
            .hint(
                "write each task on one line of plain text; split a long task into several tasks",
            ));
        }
        if item.content.chars().count() > MAX_TODO_CHARS {
            return Err(ToolError::new(format!(
                "task {} is longer than {MAX_TODO_CHARS} characters",
                i + 1
            ))
            .hint("keep each task to one short sentence"));
        }
    }
    let rendered = render(&args.todos);
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
fn render(todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return "Task list cleared (no tasks).".to_owned();
    }
    let count = |s: TodoStatus| todos.iter().filter(|t| t.status == s).count();
    let mut out = format!(
        "Task list updated ({} task{}: {} completed, {} in progress, {} pending):\n",
        todos.len(),
        if todos.len() == 1 { "" } else { "s" },
        count(TodoStatus::Completed),
        count(TodoStatus::InProgress),
        count(TodoStatus::Pending),
    );
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
