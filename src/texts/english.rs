//! The built-in English texts, one constant each; [`ALL`] lists them in id order.
//!
//! A tool's description and guidance are here rather than in its file so that every text
//! the model reads has one home and one id. Guidance that is a template (over `tools`)
//! says so in the tool's `guidance()`; its `{% … %}` blocks and the tool names inside
//! them are what a translation keeps (declared below).

use super::BuiltinText;

/// `agent.check.failed`: a success check of the preset (`checks:`) failed after a final
/// answer; the agent goes back to work (a user message).
pub const AGENT_CHECK_FAILED: BuiltinText = BuiltinText {
    id: "agent.check.failed",
    text: "The work is not done yet: the preset's check `{{ check }}` failed ({{ ending }}). Its output:\n{{ output }}\nFix what it reports, then answer again.",
    protected: &[],
};

/// `checks.ending.exit`: how a failed check ended, inside `agent.check.failed`.
pub const CHECKS_ENDING_EXIT: BuiltinText = BuiltinText {
    id: "checks.ending.exit",
    text: "exit code {{ code }}",
    protected: &[],
};

/// `checks.ending.not-started`.
pub const CHECKS_ENDING_NOT_STARTED: BuiltinText = BuiltinText {
    id: "checks.ending.not-started",
    text: "could not start: {{ reason }}",
    protected: &[],
};

/// `checks.ending.signal`.
pub const CHECKS_ENDING_SIGNAL: BuiltinText = BuiltinText {
    id: "checks.ending.signal",
    text: "killed by {{ signal }}",
    protected: &[],
};

/// `checks.ending.timed-out`.
pub const CHECKS_ENDING_TIMED_OUT: BuiltinText = BuiltinText {
    id: "checks.ending.timed-out",
    text: "timed out after {{ after }} and was killed",
    protected: &[],
};

/// `hooks.exit-2`: the reason of a hook that blocked by exiting with 2 and wrote
/// nothing on stderr.
pub const HOOKS_EXIT_2: BuiltinText = BuiltinText {
    id: "hooks.exit-2",
    text: "the hook exited with 2",
    protected: &[],
};

/// `hooks.failed.bad-decision`: why a hook failed (the reason the model reads
/// when it fails closed).
pub const HOOKS_FAILED_BAD_DECISION: BuiltinText = BuiltinText {
    id: "hooks.failed.bad-decision",
    text: "its `decision` is `{{ value }}`, not `block`",
    protected: &["decision", "block"],
};

/// `hooks.failed.bad-permission`.
pub const HOOKS_FAILED_BAD_PERMISSION: BuiltinText = BuiltinText {
    id: "hooks.failed.bad-permission",
    text: "its `permissionDecision` is `{{ value }}`, not `allow`, `deny` or `ask`",
    protected: &["permissionDecision", "allow", "deny", "ask"],
};

/// `hooks.failed.bad-updated-input`.
pub const HOOKS_FAILED_BAD_UPDATED_INPUT: BuiltinText = BuiltinText {
    id: "hooks.failed.bad-updated-input",
    text: "its `updatedInput` is not a JSON object",
    protected: &["updatedInput"],
};

/// `hooks.failed.exit`.
pub const HOOKS_FAILED_EXIT: BuiltinText = BuiltinText {
    id: "hooks.failed.exit",
    text: "it exited with {{ code }}",
    protected: &[],
};

/// `hooks.failed.not-json`.
pub const HOOKS_FAILED_NOT_JSON: BuiltinText = BuiltinText {
    id: "hooks.failed.not-json",
    text: "its stdout starts like JSON but is not a JSON object",
    protected: &[],
};

/// `hooks.failed.not-started`.
pub const HOOKS_FAILED_NOT_STARTED: BuiltinText = BuiltinText {
    id: "hooks.failed.not-started",
    text: "it could not be started: {{ reason }}",
    protected: &[],
};

/// `hooks.failed.signal`.
pub const HOOKS_FAILED_SIGNAL: BuiltinText = BuiltinText {
    id: "hooks.failed.signal",
    text: "it was killed ({{ signal }})",
    protected: &[],
};

/// `hooks.failed.stderr`: a failure with what the hook wrote on stderr.
pub const HOOKS_FAILED_STDERR: BuiltinText = BuiltinText {
    id: "hooks.failed.stderr",
    text: "{{ failure }}; its stderr:\n{{ stderr }}",
    protected: &[],
};

/// `hooks.failed.timed-out`.
pub const HOOKS_FAILED_TIMED_OUT: BuiltinText = BuiltinText {
    id: "hooks.failed.timed-out",
    text: "it did not finish within its timeout and was killed",
    protected: &[],
};

/// `hooks.no-reason`: the reason of a hook that blocked without giving one.
pub const HOOKS_NO_REASON: BuiltinText = BuiltinText {
    id: "hooks.no-reason",
    text: "the hook blocked it without a reason",
    protected: &[],
};

/// `hooks.wait-failed`: why a hook or check counts as not started when it could
/// not be waited for.
pub const HOOKS_WAIT_FAILED: BuiltinText = BuiltinText {
    id: "hooks.wait-failed",
    text: "could not wait for it: {{ reason }}",
    protected: &[],
};

/// `agent.output.invalid`: the final answer broke the preset's output contract
/// (`output:`); the model answers again (a user message).
pub const AGENT_OUTPUT_INVALID: BuiltinText = BuiltinText {
    id: "agent.output.invalid",
    text: "Your final answer does not satisfy the required output schema:\n{{ problems }}\nAnswer again with one JSON object, and nothing else, that satisfies the schema.",
    protected: &[],
};

/// `agent.output.not-json`: the final answer is not JSON (one problem of
/// `agent.output.invalid`).
pub const AGENT_OUTPUT_NOT_JSON: BuiltinText = BuiltinText {
    id: "agent.output.not-json",
    text: "the answer is not one JSON object ({{ error }}): {{ start }}",
    protected: &[],
};

/// `agent.output.instruction`: where the provider cannot enforce the output schema
/// (DeepSeek's JSON mode), the schema goes to the model in this instruction, right after
/// the system prompt, the same bytes every step.
pub const AGENT_OUTPUT_INSTRUCTION: BuiltinText = BuiltinText {
    id: "agent.output.instruction",
    text: "Your final answer must be one JSON object, and nothing else, that satisfies this JSON Schema:\n{{ schema }}",
    protected: &[],
};

/// `agent.invalid-json`.
pub const AGENT_INVALID_JSON: BuiltinText = BuiltinText {
    id: "agent.invalid-json",
    text: "Error: the arguments of this `{{ tool }}` call are not valid JSON ({{ error }}): `{{ arguments }}`\nHint: send the arguments as one JSON object that matches the tool's parameter schema, and call it again.",
    protected: &[],
};

/// `agent.hook.blocked`: a `preToolUse` hook of the preset blocked the call.
pub const AGENT_HOOK_BLOCKED: BuiltinText = BuiltinText {
    id: "agent.hook.blocked",
    text: "Error: `{{ tool }}` was not run: the preset's hook `{{ hook }}` blocked it: {{ reason }}\nHint: do not retry it unchanged or work around the hook; change the call as the reason says, or continue without it.",
    protected: &[],
};

/// `agent.hook.invalid-rewrite`: a `preToolUse` hook rewrote the arguments into ones the
/// tool's schema refuses.
pub const AGENT_HOOK_INVALID_REWRITE: BuiltinText = BuiltinText {
    id: "agent.hook.invalid-rewrite",
    text: "Error: `{{ tool }}` was not run: the preset's hook `{{ hook }}` rewrote its arguments into ones that do not fit the tool's parameters: {{ problems }}\nHint: this is a mistake in the preset's hook, not in your call; continue without it, or tell the user.",
    protected: &[],
};

/// `agent.hook.post-blocked`: a `postToolUse` hook reported a problem after the call ran
/// (after the tool's output).
pub const AGENT_HOOK_POST_BLOCKED: BuiltinText = BuiltinText {
    id: "agent.hook.post-blocked",
    text: "Error: `{{ tool }}` ran, but the preset's hook `{{ hook }}` reported a problem afterwards: {{ reason }}\nHint: fix what it reports before going on.",
    protected: &[],
};

/// `agent.hook.stop`: a `stop` hook sent the agent back to work (a user message).
pub const AGENT_HOOK_STOP: BuiltinText = BuiltinText {
    id: "agent.hook.stop",
    text: "The work is not done yet: the preset's hook `{{ hook }}` did not let the run end: {{ reason }}\nContinue until it is satisfied, then answer again.",
    protected: &[],
};

/// `agent.refused.declined`.
pub const AGENT_REFUSED_DECLINED: BuiltinText = BuiltinText {
    id: "agent.refused.declined",
    text: "Error: the user declined to run `{{ tool }}` with these arguments.\nHint: ask the user how to proceed, or continue without it.",
    protected: &[],
};

/// `agent.refused.by-rule`: a permission rule of the preset denies the call.
pub const AGENT_REFUSED_BY_RULE: BuiltinText = BuiltinText {
    id: "agent.refused.by-rule",
    text: "Error: `{{ tool }}` was not run: the preset's permission rule `{{ rule }}` denies it{{ part }}.\nHint: do not retry it or work around the rule; continue without it, or tell the user what you need.",
    protected: &[],
};

/// `agent.refused.large-arguments`.
pub const AGENT_REFUSED_LARGE_ARGUMENTS: BuiltinText = BuiltinText {
    id: "agent.refused.large-arguments",
    text: "Error: `{{ tool }}` was not run: its arguments are {{ bytes }} bytes, more than the {{ max }} allowed.\nHint: send smaller arguments (e.g. write a large file in parts).",
    protected: &[],
};

/// `agent.refused.long-name`.
pub const AGENT_REFUSED_LONG_NAME: BuiltinText = BuiltinText {
    id: "agent.refused.long-name",
    text: "Error: no tool was run: the tool name `{{ tool }}` is longer than {{ max }} characters.\nHint: call one of the tools you were given, by its exact name.",
    protected: &[],
};

/// `agent.refused.no-tty`.
pub const AGENT_REFUSED_NO_TTY: BuiltinText = BuiltinText {
    id: "agent.refused.no-tty",
    text: "Error: `{{ tool }}` was not run: it changes files or runs commands, and the user could not be asked (agent-presets runs without a terminal and without `--yes`)\nHint: continue without it, or tell the user what you would run and why.",
    protected: &[],
};

/// `agent.refused.not-run`.
pub const AGENT_REFUSED_NOT_RUN: BuiltinText = BuiltinText {
    id: "agent.refused.not-run",
    text: "Error: `{{ tool }}` was not run: {{ reason }}\nHint: continue without it, or tell the user what you would run and why.",
    protected: &[],
};

/// `agent.refused.too-long-to-review`.
pub const AGENT_REFUSED_TOO_LONG_TO_REVIEW: BuiltinText = BuiltinText {
    id: "agent.refused.too-long-to-review",
    text: "Error: `{{ tool }}` was not run: its arguments are too long for the user to review on their terminal ({{ size }} on a {{ rows }}-line screen).\nHint: split the work into smaller calls, or ask the user to rerun with `--yes`.",
    protected: &[],
};

/// `agent.refused.too-many-calls`.
pub const AGENT_REFUSED_TOO_MANY_CALLS: BuiltinText = BuiltinText {
    id: "agent.refused.too-many-calls",
    text: "Error: this tool call was not run: the answer made {{ total }} tool calls and at most {{ max }} run per answer (`--max-tool-calls`); this is call {{ number }}.\nHint: make fewer calls at a time; call it again in a later answer if it is still needed.",
    protected: &[],
};

/// `agent.size.bytes`.
pub const AGENT_SIZE_BYTES: BuiltinText = BuiltinText {
    id: "agent.size.bytes",
    text: "{{ count }} bytes",
    protected: &[],
};

/// `agent.size.lines`.
pub const AGENT_SIZE_LINES: BuiltinText = BuiltinText {
    id: "agent.size.lines",
    text: "{{ count }} lines",
    protected: &[],
};

/// `context.approval.always`: added to the runtime context once the user answered
/// "always" at an approval prompt (`{{ tools }}`: the tools, `` `a`, `b` ``).
pub const CONTEXT_APPROVAL_ALWAYS: BuiltinText = BuiltinText {
    id: "context.approval.always",
    text: "Tool approval for the rest of this run: the user answered \"always\" for {{ tools }}, so those calls run without asking; other calls that change files or run commands are still asked about.",
    protected: &[],
};

/// `context.notice`.
pub const CONTEXT_NOTICE: BuiltinText = BuiltinText {
    id: "context.notice",
    text: "No runtime context applies any more: disregard the facts in earlier runtime-context messages.",
    protected: &["runtime-context"],
};

/// `context.wrapper`.
pub const CONTEXT_WRAPPER: BuiltinText = BuiltinText {
    id: "context.wrapper",
    text: "<runtime-context>\n{{ context }}\n</runtime-context>",
    protected: &[],
};

/// `tool.bash.description`.
pub const TOOL_BASH_DESCRIPTION: BuiltinText = BuiltinText {
    id: "tool.bash.description",
    text: "Run a shell command with `bash -c` in the workspace root and get its exit status, \
         stdout and stderr (each capped; long output keeps its beginning and end). The \
         command is killed after `timeout_secs` (default 120, at most 600). When it ends, \
         every process it started is killed too, background jobs and `setsid` or `nohup` \
         ones included. Only a few environment variables are passed (PATH, HOME, locale).",
    protected: &[],
};

/// `tool.bash.guidance`.
pub const TOOL_BASH_GUIDANCE: BuiltinText = BuiltinText {
    id: "tool.bash.guidance",
    text: "{% macro words(names, last) %}{% for n in names %}{% if not loop.first %}\
             {% if loop.last %} {{ last }} {% else %}, {% endif %}{% endif %}{{ n }}\
             {% endfor %}{% endmacro %}\
             {% set readers = ['read_file', 'grep', 'glob', 'list_dir'] | select('in', tools) | list %}\
             {% set writers = ['edit_file', 'write_file'] | select('in', tools) | list %}\
             Use bash to build, run tests, and use command-line tools.\
             {% if readers or writers %} Prefer \
             {% if readers %}{{ words(readers, 'and') }} for reading and searching{% endif %}\
             {% if readers and writers %}, and {% endif %}\
             {% if writers %}{{ words(writers, 'or') }} for changing files{% endif %}\
             {% if (readers | length) + (writers | length) > 1 %}: they are confined to the \
             workspace and their output is easier to use.\
             {% else %}: it is confined to the workspace and its output is easier to use.\
             {% endif %}{% endif %} Commands cannot be interactive (stdin is empty); \
             background jobs are killed when the command ends, so do not start servers you \
             expect to keep running or detach processes with setsid or nohup-style \
             daemonizing; instead start a server, use it and stop it within one command. \
             Redirect very long output to a file and read it in \
             parts.",
    protected: &[
        "bash",
        "['read_file', 'grep', 'glob', 'list_dir']",
        "['edit_file', 'write_file']",
    ],
};

/// `tool.edit_file.description`.
pub const TOOL_EDIT_FILE_DESCRIPTION: BuiltinText = BuiltinText {
    id: "tool.edit_file.description",
    text: "Edit a text file by exact string replacement: `old_string` is replaced by \
         `new_string`. Fails when `old_string` is not in the file, or occurs more than once \
         and `replace_all` is not set. The file is rewritten atomically.",
    protected: &[],
};

/// `tool.edit_file.guidance`.
pub const TOOL_EDIT_FILE_GUIDANCE: BuiltinText = BuiltinText {
    id: "tool.edit_file.guidance",
    text: "Use edit_file for targeted changes to existing files. Read the file first \
             and copy `old_string` exactly as it appears, with its indentation\
             {% if 'read_file' in tools %}, but without the line-number prefix read_file \
             shows{% endif %}. Include enough surrounding lines that it matches exactly \
             once; set `replace_all` only when you mean every occurrence (e.g. renaming a \
             variable). For several separate changes, make several calls.",
    protected: &["edit_file", "'read_file' in tools"],
};

/// `tool.glob.description`.
pub const TOOL_GLOB_DESCRIPTION: BuiltinText = BuiltinText {
    id: "tool.glob.description",
    text: "Find files whose path matches a glob pattern, e.g. `**/*.rs` or `docs/**/*.md`. \
         Returns workspace-relative paths sorted by name. Files ignored by .gitignore and \
         hidden files are skipped (unless the pattern names a hidden directory, like \
         `.github/**`).",
    protected: &[".gitignore"],
};

/// `tool.glob.guidance`.
pub const TOOL_GLOB_GUIDANCE: BuiltinText = BuiltinText {
    id: "tool.glob.guidance",
    text: "Use glob to find files by name or extension. `*.rs` only matches in the \
             search directory itself; use `**/*.rs` to search all subdirectories.\
             {% if 'grep' in tools %} To find files by what they contain, use grep.\
             {% endif %}",
    protected: &["glob", "'grep' in tools"],
};

/// `tool.grep.description`.
pub const TOOL_GREP_DESCRIPTION: BuiltinText = BuiltinText {
    id: "tool.grep.description",
    text: "Search file contents in the workspace with a regular expression, line by line (like \
         ripgrep). Files ignored by .gitignore, hidden files and binary files are skipped. \
         Returns matching lines as `path:line:text`, or only file paths, or counts.",
    protected: &[".gitignore"],
};

/// `tool.grep.guidance`.
pub const TOOL_GREP_GUIDANCE: BuiltinText = BuiltinText {
    id: "tool.grep.guidance",
    text: "Use grep to find where something is defined or used before reading whole \
             files. Narrow big searches with a `path` and a file pattern such as `*.rs`, \
             and use output_mode `files_with_matches` when you only need to know which \
             files match. The pattern is a regular expression: escape special characters \
             to search for literal code such as `foo\\(`.",
    protected: &["grep", "output_mode"],
};

/// `tool.list_dir.description`.
pub const TOOL_LIST_DIR_DESCRIPTION: BuiltinText = BuiltinText {
    id: "tool.list_dir.description",
    text: "List one directory of the workspace (not recursive), sorted by name. Directories \
         end with `/`, symbolic links show their target, files show their size in bytes. \
         Hidden and ignored files are included.",
    protected: &[],
};

/// `tool.list_dir.guidance`.
pub const TOOL_LIST_DIR_GUIDANCE: BuiltinText = BuiltinText {
    id: "tool.list_dir.guidance",
    text: "Use list_dir to get your bearings in a directory you have not seen yet.\
             {% if 'glob' in tools %} To find files by name across many directories, use \
             glob instead of listing directory after directory.{% endif %}",
    protected: &["list_dir", "'glob' in tools"],
};

/// `tool.read_file.description`.
pub const TOOL_READ_FILE_DESCRIPTION: BuiltinText = BuiltinText {
    id: "tool.read_file.description",
    text: "Read a UTF-8 text file from the workspace. Lines are numbered from 1 (like `cat -n`: \
         the number, a tab, then the line). Long files are shown a window at a time: use \
         `offset` and `limit` to page through them.",
    protected: &[],
};

/// `tool.read_file.guidance`.
pub const TOOL_READ_FILE_GUIDANCE: BuiltinText = BuiltinText {
    id: "tool.read_file.guidance",
    text: "Use read_file to look at a file before you change it or answer questions \
             about it; do not guess at contents. The line numbers and the tab after them \
             are not part of the file\
             {% if 'edit_file' in tools %}: leave them out when you copy text into \
             edit_file{% endif %}. When the output says it was truncated, continue with \
             the `offset` it names instead of reading the whole file again. Binary files \
             are refused.",
    protected: &["read_file", "'edit_file' in tools"],
};

/// `tool.todo_write.description`.
pub const TOOL_TODO_WRITE_DESCRIPTION: BuiltinText = BuiltinText {
    id: "tool.todo_write.description",
    text: "Replace the task list for this session and get it back. Each task has `content` \
         and a `status` of `pending`, `in_progress` or `completed`. Send the whole list \
         every time; an empty list clears it.",
    protected: &[],
};

/// `tool.todo_write.guidance`.
pub const TOOL_TODO_WRITE_GUIDANCE: BuiltinText = BuiltinText {
    id: "tool.todo_write.guidance",
    text: "Use todo_write to plan and track work that takes three or more steps, or when \
             the user gives you several things to do. Keep exactly one task `in_progress` \
             while you work, and mark a task `completed` as soon as it is done rather than \
             in batches. Skip the list for a single, simple task.",
    protected: &["todo_write"],
};

/// `tool.write_file.description`.
pub const TOOL_WRITE_FILE_DESCRIPTION: BuiltinText = BuiltinText {
    id: "tool.write_file.description",
    text: "Create a file, or replace an existing file's entire contents, inside the workspace. \
         The write is atomic: the file ends up either unchanged or fully written.",
    protected: &[],
};

/// `tool.write_file.guidance`.
pub const TOOL_WRITE_FILE_GUIDANCE: BuiltinText = BuiltinText {
    id: "tool.write_file.guidance",
    text: "Use write_file to create new files or to rewrite a file completely. \
             {% if 'edit_file' in tools %}To change part of an existing file, prefer \
             edit_file: it is shorter and cannot drop content you did not mean to touch. \
             {% endif %}Read a file before you overwrite it, and send the full contents — \
             nothing is appended.",
    protected: &["write_file", "'edit_file' in tools"],
};

/// `tools.error`.
pub const TOOLS_ERROR: BuiltinText = BuiltinText {
    id: "tools.error",
    text: "Error: {{ message }}",
    protected: &[],
};

/// `tools.error-with-hint`.
pub const TOOLS_ERROR_WITH_HINT: BuiltinText = BuiltinText {
    id: "tools.error-with-hint",
    text: "Error: {{ message }}\nHint: {{ hint }}",
    protected: &[],
};

/// `tools.invalid-arguments`.
pub const TOOLS_INVALID_ARGUMENTS: BuiltinText = BuiltinText {
    id: "tools.invalid-arguments",
    text: "Error: invalid arguments for `{{ tool }}`:\n- {{ problems }}\nHint: fix the arguments to match the tool's parameter schema and call it again.",
    protected: &[],
};

/// `tools.timeout`.
pub const TOOLS_TIMEOUT: BuiltinText = BuiltinText {
    id: "tools.timeout",
    text: "Error: `{{ tool }}` did not finish within {{ seconds }} s and was stopped.\nHint: narrow the request or split it into smaller steps.",
    protected: &[],
};

/// `tools.unknown-tool`.
pub const TOOLS_UNKNOWN_TOOL: BuiltinText = BuiltinText {
    id: "tools.unknown-tool",
    text: "Error: unknown tool `{{ tool }}`.\nHint: call only the tools listed in this request.",
    protected: &[],
};

/// `tools.unknown-tool.suggestion`.
pub const TOOLS_UNKNOWN_TOOL_SUGGESTION: BuiltinText = BuiltinText {
    id: "tools.unknown-tool.suggestion",
    text: "Error: unknown tool `{{ tool }}`.\nHint: did you mean `{{ suggestion }}`?",
    protected: &[],
};

/// Every built-in text, in id order.
pub(super) const ALL: &[&BuiltinText] = &[
    &AGENT_CHECK_FAILED,
    &AGENT_HOOK_BLOCKED,
    &AGENT_HOOK_INVALID_REWRITE,
    &AGENT_HOOK_POST_BLOCKED,
    &AGENT_HOOK_STOP,
    &AGENT_INVALID_JSON,
    &AGENT_OUTPUT_INSTRUCTION,
    &AGENT_OUTPUT_INVALID,
    &AGENT_OUTPUT_NOT_JSON,
    &AGENT_REFUSED_BY_RULE,
    &AGENT_REFUSED_DECLINED,
    &AGENT_REFUSED_LARGE_ARGUMENTS,
    &AGENT_REFUSED_LONG_NAME,
    &AGENT_REFUSED_NO_TTY,
    &AGENT_REFUSED_NOT_RUN,
    &AGENT_REFUSED_TOO_LONG_TO_REVIEW,
    &AGENT_REFUSED_TOO_MANY_CALLS,
    &AGENT_SIZE_BYTES,
    &AGENT_SIZE_LINES,
    &CHECKS_ENDING_EXIT,
    &CHECKS_ENDING_NOT_STARTED,
    &CHECKS_ENDING_SIGNAL,
    &CHECKS_ENDING_TIMED_OUT,
    &CONTEXT_APPROVAL_ALWAYS,
    &CONTEXT_NOTICE,
    &CONTEXT_WRAPPER,
    &HOOKS_EXIT_2,
    &HOOKS_FAILED_BAD_DECISION,
    &HOOKS_FAILED_BAD_PERMISSION,
    &HOOKS_FAILED_BAD_UPDATED_INPUT,
    &HOOKS_FAILED_EXIT,
    &HOOKS_FAILED_NOT_JSON,
    &HOOKS_FAILED_NOT_STARTED,
    &HOOKS_FAILED_SIGNAL,
    &HOOKS_FAILED_STDERR,
    &HOOKS_FAILED_TIMED_OUT,
    &HOOKS_NO_REASON,
    &HOOKS_WAIT_FAILED,
    &TOOL_BASH_DESCRIPTION,
    &TOOL_BASH_GUIDANCE,
    &TOOL_EDIT_FILE_DESCRIPTION,
    &TOOL_EDIT_FILE_GUIDANCE,
    &TOOL_GLOB_DESCRIPTION,
    &TOOL_GLOB_GUIDANCE,
    &TOOL_GREP_DESCRIPTION,
    &TOOL_GREP_GUIDANCE,
    &TOOL_LIST_DIR_DESCRIPTION,
    &TOOL_LIST_DIR_GUIDANCE,
    &TOOL_READ_FILE_DESCRIPTION,
    &TOOL_READ_FILE_GUIDANCE,
    &TOOL_TODO_WRITE_DESCRIPTION,
    &TOOL_TODO_WRITE_GUIDANCE,
    &TOOL_WRITE_FILE_DESCRIPTION,
    &TOOL_WRITE_FILE_GUIDANCE,
    &TOOLS_ERROR,
    &TOOLS_ERROR_WITH_HINT,
    &TOOLS_INVALID_ARGUMENTS,
    &TOOLS_TIMEOUT,
    &TOOLS_UNKNOWN_TOOL,
    &TOOLS_UNKNOWN_TOOL_SUGGESTION,
];
