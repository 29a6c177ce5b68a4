//! The built-in tools' own messages, one constant each: the errors and hints they hand
//! back (`tool.<name>.error.*`, `tool.<name>.hint.*`, shared ones under `tools.path.*`,
//! `tools.file.*`, `tools.io.*`, `tools.work.*`), and the words of their results
//! (`tool.<name>.result.*`, `tools.output.*`). [`ALL`] lists them; `super::builtin_texts`
//! merges them with the rest in id order.

use super::BuiltinText;

/// One constant per text: `NAME = "id", "text"` (`; protected…` for bare names a
/// translation keeps).
macro_rules! texts {
    ($($name:ident = $id:literal, $text:literal $(; $($p:literal),*)?;)*) => {
        $(
            #[doc = concat!("`", $id, "`.")]
            pub const $name: BuiltinText = BuiltinText {
                id: $id,
                text: $text,
                protected: &[$($($p),*)?],
            };
        )*
        /// The tools' messages (any order).
        pub(super) const ALL: &[&BuiltinText] = &[$(&$name),*];
    };
}

texts! {
    // MCP tools: the frames around what a server said (its own words stay its own)
    TOOLS_MCP_ERROR_NOT_AN_OBJECT = "tools.mcp.error.not-an-object", "the arguments must be a JSON object, not {{ value }}";
    TOOLS_MCP_ERROR_TIMEOUT = "tools.mcp.error.timeout", "tool `{{ tool }}` of MCP server `{{ server }}` did not answer within {{ after }} and was cancelled (`toolTimeout` sets the limit)"; "toolTimeout";
    TOOLS_MCP_ERROR_GONE = "tools.mcp.error.gone", "MCP server `{{ server }}` is gone: {{ detail }}";
    TOOLS_MCP_ERROR_FAILED = "tools.mcp.error.failed", "MCP server `{{ server }}`: tool `{{ tool }}` failed: {{ message }} (JSON-RPC error {{ code }})";
    TOOLS_MCP_ERROR_INPUT = "tools.mcp.error.input", "MCP server `{{ server }}`: tool `{{ tool }}` asked the client for input, which agent-presets does not provide"; "agent-presets";
    TOOLS_MCP_ERROR_TASK = "tools.mcp.error.task", "MCP server `{{ server }}`: tool `{{ tool }}` answered with a long-running task, which agent-presets does not support"; "agent-presets";
    // containment: processes a command started that may have survived it
    TOOLS_CONTAINMENT_SUPERVISOR_DIED = "tools.containment.supervisor-died", "the supervisor of the command ended unexpectedly ({{ status }}); processes the command started may still be running";
    TOOLS_CONTAINMENT_SURVIVORS_ONE = "tools.containment.survivors-one", "1 process the command started could not be killed and may still be running (pid {{ pids }})";
    TOOLS_CONTAINMENT_SURVIVORS_MANY = "tools.containment.survivors-many", "{{ count }} processes the command started could not be killed and may still be running (pid {{ pids }})";
    TOOLS_CONTAINMENT_CGROUP_LEFT = "tools.containment.cgroup-left", "the command's cgroup could not be removed {{ ms }} ms after its processes were killed; some may still be running"; "cgroup";
    // command tools (`commands:`): the frames around what the program printed
    TOOLS_COMMAND_ERROR_SPAWN = "tools.command.error.spawn", "could not start `{{ program }}` for tool `{{ tool }}`: {{ error }}";
    TOOLS_COMMAND_HINT_SPAWN = "tools.command.hint.spawn", "the program this tool runs is missing or cannot run here; do not call this tool again, do the work with the other tools instead";
    TOOLS_COMMAND_ERROR_WAIT = "tools.command.error.wait", "could not wait for tool `{{ tool }}`: {{ error }}";
    TOOLS_COMMAND_HINT_WAIT = "tools.command.hint.wait", "call it again";
    TOOLS_COMMAND_ERROR_TIMEOUT = "tools.command.error.timeout", "tool `{{ tool }}` did not finish within {{ seconds }} and was killed";
    TOOLS_COMMAND_ERROR_TIMEOUT_STDERR = "tools.command.error.timeout-stderr", "tool `{{ tool }}` did not finish within {{ seconds }} and was killed; its stderr:\n{{ stderr }}";
    TOOLS_COMMAND_HINT_TIMEOUT = "tools.command.hint.timeout", "call it with a smaller request, or not at all";
    TOOLS_COMMAND_ERROR_FAILED = "tools.command.error.failed", "tool `{{ tool }}` failed ({{ status }}) with no output on stderr";
    TOOLS_COMMAND_ERROR_FAILED_STDERR = "tools.command.error.failed-stderr", "tool `{{ tool }}` failed ({{ status }}):\n{{ stderr }}";
    TOOLS_COMMAND_HINT_FAILED = "tools.command.hint.failed", "read the error, fix the arguments if they are the cause, and call it again";
    TOOLS_COMMAND_RESULT_NO_OUTPUT = "tools.command.result.no-output", "(no output)";
    TOOLS_COMMAND_RESULT_BOTH = "tools.command.result.both", "--- stdout ---\n{{ stdout }}\n--- stderr ---\n{{ stderr }}"; "--- stdout ---", "--- stderr ---";
    // bash
    TOOL_BASH_ERROR_EMPTY = "tool.bash.error.empty", "the command is empty";
    TOOL_BASH_HINT_EMPTY = "tool.bash.hint.empty", "give the shell command to run, e.g. `cargo test`";
    TOOL_BASH_ERROR_SPAWN = "tool.bash.error.spawn", "could not start `{{ shell }}`: {{ error }}";
    TOOL_BASH_HINT_SPAWN = "tool.bash.hint.spawn", "the host cannot run shell commands; use the file tools instead";
    TOOL_BASH_ERROR_WAIT = "tool.bash.error.wait", "could not wait for the command: {{ error }}";
    TOOL_BASH_HINT_WAIT = "tool.bash.hint.wait", "run it again";
    TOOL_BASH_ERROR_TIMEOUT = "tool.bash.error.timeout", "the command did not finish within {{ seconds }} s; it and every process it started were killed ({{ killed_by }}). Output so far:\n{{ report }}";
    TOOL_BASH_ERROR_TIMEOUT_PARTIAL = "tool.bash.error.timeout-partial", "the command did not finish within {{ seconds }} s and was killed, but not every process it started could be (see the warning). Output so far:\n{{ report }}";
    TOOL_BASH_HINT_TIMEOUT = "tool.bash.hint.timeout", "raise timeout_secs (at most {{ max }}) if it needs longer, or split the work into smaller commands"; "timeout_secs";
    TOOL_BASH_RESULT_REPORT = "tool.bash.result.report", "{{ status }}\n--- stdout ---\n{{ stdout }}\n--- stderr ---\n{{ stderr }}"; "--- stdout ---", "--- stderr ---";
    TOOL_BASH_RESULT_EXIT_CODE = "tool.bash.result.exit-code", "exit code: {{ code }}";
    TOOL_BASH_RESULT_SIGNAL = "tool.bash.result.signal", "killed by signal {{ signal }}";
    TOOL_BASH_RESULT_UNKNOWN_STATUS = "tool.bash.result.unknown-status", "exit status unknown";
    TOOL_BASH_RESULT_TIMED_OUT = "tool.bash.result.timed-out", "timed out after {{ seconds }} s";
    TOOL_BASH_RESULT_EMPTY = "tool.bash.result.empty", "(empty)";
    TOOL_BASH_RESULT_WARNING = "tool.bash.result.warning", "[warning: {{ warning }}]";
    TOOL_BASH_RESULT_GROUP_ONLY = "tool.bash.result.group-only", "[note: on this platform only the command's process group is killed when it ends; processes that left it (setsid) may still run]"; "setsid";
    TOOL_BASH_RESULT_KILLED_CGROUP = "tool.bash.result.killed.cgroup", "through their cgroup";
    TOOL_BASH_RESULT_KILLED_SUBREAPER = "tool.bash.result.killed.subreaper", "by the command's subreaper supervisor";
    TOOL_BASH_RESULT_KILLED_GROUP = "tool.bash.result.killed.process-group", "with the command's process group";
    TOOL_BASH_RESULT_OMITTED = "tool.bash.result.omitted", "[... {{ bytes }} bytes (about {{ lines }} lines) of {{ stream }} omitted here; to see all of it, redirect the output to a file (e.g. `command > out.log 2>&1`) and page through it with read_file offset/limit, or filter it with grep, head or tail ...]"; "read_file", "grep";

    // edit_file
    TOOL_EDIT_FILE_ERROR_EMPTY = "tool.edit_file.error.empty", "old_string is empty"; "old_string";
    TOOL_EDIT_FILE_HINT_EMPTY = "tool.edit_file.hint.empty", "to create a file or replace all of it use write_file; otherwise give the exact text to replace"; "write_file";
    TOOL_EDIT_FILE_ERROR_IDENTICAL = "tool.edit_file.error.identical", "old_string and new_string are identical, so there is nothing to change"; "old_string", "new_string";
    TOOL_EDIT_FILE_HINT_IDENTICAL = "tool.edit_file.hint.identical", "give the new text in new_string"; "new_string";
    TOOL_EDIT_FILE_ERROR_NOT_FOUND = "tool.edit_file.error.not-found", "old_string was not found in `{{ path }}`"; "old_string";
    TOOL_EDIT_FILE_HINT_NOT_FOUND = "tool.edit_file.hint.not-found", "read the file again and copy the exact text, including whitespace and indentation; leave out the line numbers read_file adds"; "read_file";
    TOOL_EDIT_FILE_ERROR_MANY = "tool.edit_file.error.many", "old_string occurs {{ count }} times in `{{ path }}` (at {{ lines }})"; "old_string";
    TOOL_EDIT_FILE_ERROR_OVERLAP = "tool.edit_file.error.overlap", "old_string occurs more than once in `{{ path }}`: its occurrences overlap (starting at lines {{ first }} and {{ second }})"; "old_string";
    TOOL_EDIT_FILE_HINT_MANY = "tool.edit_file.hint.many", "include more surrounding context so it matches exactly once, or set replace_all to true to replace every occurrence"; "replace_all";
    TOOL_EDIT_FILE_ERROR_TOO_BIG = "tool.edit_file.error.too-big", "the edit would make `{{ path }}` {{ bytes }} bytes, more than the {{ max }} bytes the file tools write; the file is unchanged";
    TOOL_EDIT_FILE_HINT_TOO_BIG = "tool.edit_file.hint.too-big", "make a smaller change, or split the file into several smaller files";
    TOOL_EDIT_FILE_RESULT_ONE = "tool.edit_file.result.one", "Edited `{{ path }}`: replaced 1 occurrence at line {{ line }}.";
    TOOL_EDIT_FILE_RESULT_MANY = "tool.edit_file.result.many", "Edited `{{ path }}`: replaced {{ count }} occurrences (first at line {{ line }}).";
    TOOL_EDIT_FILE_RESULT_LINE = "tool.edit_file.result.line", "line {{ lines }}";
    TOOL_EDIT_FILE_RESULT_LINES = "tool.edit_file.result.lines", "lines {{ lines }}";
    TOOL_EDIT_FILE_RESULT_MORE = "tool.edit_file.result.more", "{{ lines }} and {{ count }} more";

    // glob
    TOOL_GLOB_ERROR_NOT_A_DIRECTORY = "tool.glob.error.not-a-directory", "`{{ path }}` is not a directory";
    TOOL_GLOB_HINT_NOT_A_DIRECTORY = "tool.glob.hint.not-a-directory", "give the directory to search in as `path`, and the file name pattern as `pattern`";
    TOOL_GLOB_ERROR_INVALID = "tool.glob.error.invalid", "invalid glob `{{ pattern }}`: {{ error }}";
    TOOL_GLOB_HINT_INVALID = "tool.glob.hint.invalid", "use `*`, `**`, `?`, `[abc]` and `{a,b}`, e.g. `**/*.rs`";
    TOOL_GLOB_ERROR_ABSOLUTE = "tool.glob.error.absolute", "the glob `{{ pattern }}` starts with `/` or contains `..`, but patterns are relative to the workspace root (or to `path` when given), so it cannot match anything";
    TOOL_GLOB_HINT_ABSOLUTE = "tool.glob.hint.absolute", "write the pattern relative to the search directory, e.g. `src/**/*.rs`, and set `path` to search elsewhere in the workspace";
    TOOL_GLOB_RESULT_NONE = "tool.glob.result.none", "No files match `{{ pattern }}` in `{{ path }}`.";
    TOOL_GLOB_RESULT_ONE = "tool.glob.result.one", "1 file matches `{{ pattern }}` in `{{ path }}`:";
    TOOL_GLOB_RESULT_MANY = "tool.glob.result.many", "{{ count }} files match `{{ pattern }}` in `{{ path }}`:";
    TOOL_GLOB_RESULT_MORE = "tool.glob.result.more", "[... {{ count }} more paths not shown; use a narrower pattern or path]";
    TOOL_GLOB_RESULT_SEE_MORE = "tool.glob.result.see-more", "use a narrower pattern or path";

    // grep
    TOOL_GREP_ERROR_REGEX_LONG = "tool.grep.error.regex-long", "invalid regular expression: {{ error }} (in the pattern `{{ pattern }}`)";
    TOOL_GREP_HINT_REGEX = "tool.grep.hint.regex", "escape characters that have a meaning in regexes (`( ) [ ] { } . * + ? | ^ $ \\`) with a backslash, e.g. `foo\\(`";
    TOOL_GREP_ERROR_GLOB = "tool.grep.error.glob", "invalid glob `{{ glob }}`: {{ error }}";
    TOOL_GREP_HINT_GLOB = "tool.grep.hint.glob", "use e.g. `*.rs`, `*.{ts,tsx}` or `src/**/*.py`";
    TOOL_GREP_RESULT_NONE = "tool.grep.result.none", "No matches for `{{ pattern }}` in `{{ path }}`.";
    TOOL_GREP_RESULT_MORE_LINES = "tool.grep.result.more-lines", "[... showing {{ shown }} of {{ total }} matching lines; narrow the pattern, path or glob, or raise max_results (at most {{ max }})]"; "max_results";
    TOOL_GREP_RESULT_MORE_FILES = "tool.grep.result.more-files", "[... showing {{ shown }} of {{ total }} matching files; narrow the pattern, path or glob, or raise max_results (at most {{ max }})]"; "max_results";
    TOOL_GREP_RESULT_SKIPPED_ONE = "tool.grep.result.skipped-one", "(1 binary or oversized file skipped)";
    TOOL_GREP_RESULT_SKIPPED_MANY = "tool.grep.result.skipped-many", "({{ count }} binary or oversized files skipped)";
    TOOL_GREP_RESULT_SEE_MORE = "tool.grep.result.see-more", "narrow the pattern, path or glob, or use output_mode files_with_matches"; "output_mode", "files_with_matches";

    // list_dir
    TOOL_LIST_DIR_ERROR_FILE = "tool.list_dir.error.file", "`{{ path }}` is a file, not a directory";
    TOOL_LIST_DIR_HINT_FILE = "tool.list_dir.hint.file", "use read_file to read it"; "read_file";
    TOOL_LIST_DIR_RESULT_EMPTY = "tool.list_dir.result.empty", "`{{ path }}` is empty.";
    TOOL_LIST_DIR_RESULT_ONE = "tool.list_dir.result.one", "`{{ path }}` (1 entry):";
    TOOL_LIST_DIR_RESULT_MANY = "tool.list_dir.result.many", "`{{ path }}` ({{ count }} entries):";
    TOOL_LIST_DIR_RESULT_SIZE = "tool.list_dir.result.size", "{{ name }}  ({{ bytes }} bytes)";
    TOOL_LIST_DIR_RESULT_OUTSIDE = "tool.list_dir.result.outside", "(outside the workspace)";
    TOOL_LIST_DIR_RESULT_MORE = "tool.list_dir.result.more", "[... {{ count }} more entries not shown; use glob with a pattern to find what you need]"; "glob";
    TOOL_LIST_DIR_RESULT_SEE_MORE = "tool.list_dir.result.see-more", "use glob with a pattern to find what you need"; "glob";

    // read_file
    TOOL_READ_FILE_ERROR_OFFSET = "tool.read_file.error.offset", "offset {{ offset }} is past the end of `{{ path }}`, which has {{ total }} lines";
    TOOL_READ_FILE_HINT_OFFSET = "tool.read_file.hint.offset", "use an offset between 1 and {{ total }}";
    TOOL_READ_FILE_RESULT_EMPTY = "tool.read_file.result.empty", "(`{{ path }}` is empty)";
    TOOL_READ_FILE_RESULT_MORE = "tool.read_file.result.more", "[... showing lines {{ first }}-{{ last }} of {{ total }}; call read_file with offset={{ next }} to read on]"; "read_file", "offset=";
    TOOL_READ_FILE_RESULT_MORE_CUT = "tool.read_file.result.more-cut", "[... output truncated at the size limit: showing lines {{ first }}-{{ last }} of {{ total }}; call read_file with offset={{ next }} to read on]"; "read_file", "offset=";

    // todo_write
    TOOL_TODO_WRITE_ERROR_TOO_MANY = "tool.todo_write.error.too-many", "the list has {{ count }} tasks; at most {{ max }} are kept";
    TOOL_TODO_WRITE_HINT_TOO_MANY = "tool.todo_write.hint.too-many", "merge small tasks or drop completed ones";
    TOOL_TODO_WRITE_ERROR_EMPTY = "tool.todo_write.error.empty", "task {{ number }} has empty content";
    TOOL_TODO_WRITE_HINT_EMPTY = "tool.todo_write.hint.empty", "describe every task in a short sentence";
    TOOL_TODO_WRITE_ERROR_CONTROL = "tool.todo_write.error.control", "task {{ number }} contains a line break or another control character ({{ character }})";
    TOOL_TODO_WRITE_HINT_CONTROL = "tool.todo_write.hint.control", "write each task on one line of plain text; split a long task into several tasks";
    TOOL_TODO_WRITE_ERROR_LONG = "tool.todo_write.error.long", "task {{ number }} is longer than {{ max }} characters";
    TOOL_TODO_WRITE_HINT_LONG = "tool.todo_write.hint.long", "keep each task to one short sentence";
    TOOL_TODO_WRITE_RESULT_CLEARED = "tool.todo_write.result.cleared", "Task list cleared (no tasks).";
    TOOL_TODO_WRITE_RESULT_ONE = "tool.todo_write.result.one", "Task list updated (1 task: {{ completed }} completed, {{ in_progress }} in progress, {{ pending }} pending):";
    TOOL_TODO_WRITE_RESULT_MANY = "tool.todo_write.result.many", "Task list updated ({{ count }} tasks: {{ completed }} completed, {{ in_progress }} in progress, {{ pending }} pending):";

    // write_file
    TOOL_WRITE_FILE_ERROR_TOO_BIG = "tool.write_file.error.too-big", "the content is {{ bytes }} bytes, more than the {{ max }} bytes write_file accepts"; "write_file";
    TOOL_WRITE_FILE_HINT_TOO_BIG = "tool.write_file.hint.too-big", "split the data into several smaller files";
    TOOL_WRITE_FILE_RESULT_CREATED_ONE = "tool.write_file.result.created-one", "Created `{{ path }}`: {{ bytes }} bytes, 1 line.";
    TOOL_WRITE_FILE_RESULT_CREATED = "tool.write_file.result.created", "Created `{{ path }}`: {{ bytes }} bytes, {{ lines }} lines.";
    TOOL_WRITE_FILE_RESULT_OVERWROTE_ONE = "tool.write_file.result.overwrote-one", "Overwrote `{{ path }}`: {{ bytes }} bytes, 1 line.";
    TOOL_WRITE_FILE_RESULT_OVERWROTE = "tool.write_file.result.overwrote", "Overwrote `{{ path }}`: {{ bytes }} bytes, {{ lines }} lines.";

    // Shared by the file tools: paths.
    TOOLS_PATH_EMPTY = "tools.path.empty", "the path is empty";
    TOOLS_PATH_EMPTY_HINT = "tools.path.empty.hint", "give a path relative to the workspace root, e.g. `src/main.rs`, or `.` for the root";
    TOOLS_PATH_NUL = "tools.path.nul", "the path contains a NUL character";
    TOOLS_PATH_NUL_HINT = "tools.path.nul.hint", "give a plain path relative to the workspace root, e.g. `src/main.rs`";
    TOOLS_PATH_DIR_SYNTAX = "tools.path.dir-syntax", "`{{ path }}` ends with `/`, so it names a directory, but `{{ shown }}` is not a directory";
    TOOLS_PATH_DIR_SYNTAX_HINT = "tools.path.dir-syntax.hint", "leave out the trailing `/` to use the file `{{ shown }}`";
    TOOLS_PATH_INSIDE_HINT = "tools.path.inside.hint", "use a path to a real file or directory inside the workspace";
    TOOLS_PATH_LINK_OUTSIDE = "tools.path.link-outside", "`{{ path }}` leads outside the workspace through the symbolic link `{{ link }}`";
    TOOLS_PATH_LINK_OUTSIDE_MISSING = "tools.path.link-outside-missing", "`{{ path }}` goes through the symbolic link `{{ link }}`, whose target does not exist and would lie outside the workspace";
    TOOLS_PATH_LINK_OUTSIDE_HINT = "tools.path.link-outside.hint", "only files inside the workspace can be used; pick a path that stays inside it";
    TOOLS_PATH_LINK_LOOP = "tools.path.link-loop", "`{{ path }}` goes through the symbolic link `{{ link }}`, which is part of a loop of symbolic links (it points to `{{ target }}`)";
    TOOLS_PATH_LINK_BROKEN = "tools.path.link-broken", "`{{ path }}` goes through the symbolic link `{{ link }}`, whose target does not exist (it points to `{{ target }}`)";
    TOOLS_PATH_MISSING_DIR = "tools.path.missing-dir", "`{{ path }}` does not exist: there is no directory `{{ dir }}`";
    TOOLS_PATH_DID_YOU_MEAN = "tools.path.did-you-mean", "did you mean `{{ suggestion }}`?";
    TOOLS_PATH_CHECK_HINT = "tools.path.check.hint", "check the path with list_dir or glob"; "list_dir", "glob";
    TOOLS_PATH_THROUGH_FILE = "tools.path.through-file", "`{{ path }}` goes through `{{ at }}`, which is a file, not a directory";
    TOOLS_PATH_LIST_DIR_HINT = "tools.path.list-dir.hint", "check the path with list_dir"; "list_dir";
    TOOLS_PATH_UNSTABLE = "tools.path.unstable", "`{{ at }}` kept changing while `{{ path }}` was being resolved";
    TOOLS_PATH_UNSTABLE_HINT = "tools.path.unstable.hint", "try again once whatever is changing it has finished";
    TOOLS_PATH_IO = "tools.path.io", "cannot access `{{ at }}`: {{ reason }}";
    TOOLS_PATH_OUTSIDE = "tools.path.outside", "`{{ path }}` is outside the workspace `{{ root }}`";
    TOOLS_PATH_OUTSIDE_HINT = "tools.path.outside.hint", "paths are resolved against the workspace root and may not leave it; use a relative path such as `src/main.rs` or an absolute path under `{{ root }}`";

    // Shared by the file tools: files.
    TOOLS_FILE_NOT_FOUND = "tools.file.not-found", "file `{{ path }}` does not exist";
    TOOLS_FILE_NOT_FOUND_DIRECTORY = "tools.file.not-found.directory", "directory `{{ path }}` does not exist";
    TOOLS_FILE_NOT_FOUND_PATH = "tools.file.not-found.path", "path `{{ path }}` does not exist";
    TOOLS_FILE_IS_A_DIRECTORY = "tools.file.is-a-directory", "`{{ path }}` is a directory, not a file";
    TOOLS_FILE_IS_A_DIRECTORY_HINT = "tools.file.is-a-directory.hint", "use list_dir to see what it contains"; "list_dir";
    TOOLS_FILE_WRITE_INTO_HINT = "tools.file.write-into.hint", "write to a file path inside it instead";
    TOOLS_FILE_CHANGED = "tools.file.changed", "`{{ path }}` was replaced by a symbolic link while it was being opened; nothing was read or written";
    TOOLS_FILE_TOO_BIG = "tools.file.too-big", "`{{ path }}` is {{ bytes }} bytes, more than the {{ max }} bytes the file tools load";
    TOOLS_FILE_TOO_BIG_HINT = "tools.file.too-big.hint", "find the relevant part with grep, or look at it with bash (`head`, `tail`, `sed -n '100,200p'`)"; "grep", "bash";
    TOOLS_FILE_NOT_REGULAR = "tools.file.not-regular", "`{{ path }}` is {{ kind }}, not a regular file; the file tools only read and write regular files";
    TOOLS_FILE_NOT_REGULAR_HINT = "tools.file.not-regular.hint", "leave it alone, or use bash if you really need to interact with it"; "bash";
    TOOLS_FILE_KIND_FIFO = "tools.file.kind.fifo", "a FIFO (named pipe)";
    TOOLS_FILE_KIND_SOCKET = "tools.file.kind.socket", "a socket";
    TOOLS_FILE_KIND_BLOCK_DEVICE = "tools.file.kind.block-device", "a block device";
    TOOLS_FILE_KIND_CHARACTER_DEVICE = "tools.file.kind.character-device", "a character device";
    TOOLS_FILE_KIND_DIRECTORY = "tools.file.kind.directory", "a directory";
    TOOLS_FILE_KIND_SYMLINK = "tools.file.kind.symlink", "a symbolic link";
    TOOLS_FILE_KIND_REGULAR = "tools.file.kind.regular", "a regular file";
    TOOLS_FILE_KIND_OTHER = "tools.file.kind.other", "a special file";
    TOOLS_FILE_BINARY = "tools.file.binary", "`{{ path }}` looks like a binary file (it has a NUL byte at offset {{ offset }})";
    TOOLS_FILE_NOT_UTF8 = "tools.file.not-utf8", "`{{ path }}` is not UTF-8 text (invalid byte sequence at offset {{ offset }})";
    TOOLS_FILE_BINARY_HINT = "tools.file.binary.hint", "this tool handles text files only; inspect binary files with bash (e.g. `file`, `xxd | head`)"; "bash";
    TOOLS_FILE_CANNOT_READ = "tools.file.cannot.read", "cannot read `{{ path }}`: {{ reason }}";
    TOOLS_FILE_CANNOT_WRITE = "tools.file.cannot.write", "cannot write `{{ path }}`: {{ reason }}";
    TOOLS_FILE_CANNOT_LIST = "tools.file.cannot.list", "cannot list `{{ path }}`: {{ reason }}";
    TOOLS_FILE_CANNOT_OPEN = "tools.file.cannot.open", "cannot open `{{ path }}`: {{ reason }}";
    TOOLS_FILE_CANNOT_HINT = "tools.file.cannot.hint", "check the path and its permissions with list_dir"; "list_dir";
    TOOLS_FILE_WRITE_DIR_SYNTAX = "tools.file.write-dir-syntax", "`{{ path }}/` ends with `/`, so it names a directory, not a file";
    TOOLS_FILE_WRITE_DIR_SYNTAX_HINT = "tools.file.write-dir-syntax.hint", "leave out the trailing `/` and give a file path such as `notes/todo.md`";
    TOOLS_FILE_WRITE_ABANDONED = "tools.file.write-abandoned", "the write to `{{ path }}` was abandoned; the file is unchanged";
    TOOLS_TRY_AGAIN_HINT = "tools.try-again.hint", "try again";
    TOOLS_IO_NOT_FOUND = "tools.io.not-found", "no such file or directory";
    TOOLS_IO_PERMISSION_DENIED = "tools.io.permission-denied", "permission denied";
    TOOLS_IO_IS_A_DIRECTORY = "tools.io.is-a-directory", "it is a directory";
    TOOLS_IO_NOT_A_DIRECTORY = "tools.io.not-a-directory", "a part of the path is not a directory";
    TOOLS_IO_ALREADY_EXISTS = "tools.io.already-exists", "it already exists";
    TOOLS_IO_DIRECTORY_NOT_EMPTY = "tools.io.directory-not-empty", "the directory is not empty";
    TOOLS_IO_READ_ONLY = "tools.io.read-only", "the file system is read-only";
    TOOLS_IO_STORAGE_FULL = "tools.io.storage-full", "no space is left on the device (or the quota is used up)";
    TOOLS_IO_FILE_TOO_LARGE = "tools.io.file-too-large", "the file is too large";
    TOOLS_IO_INVALID_NAME = "tools.io.invalid-name", "the name is too long or not valid";
    TOOLS_IO_BUSY = "tools.io.busy", "it is busy (in use by another process)";
    TOOLS_IO_INTERRUPTED = "tools.io.interrupted", "the operation was interrupted";
    TOOLS_IO_TIMED_OUT = "tools.io.timed-out", "the operation timed out";
    TOOLS_IO_INVALID_DATA = "tools.io.invalid-data", "the data is not valid";
    TOOLS_IO_OUT_OF_MEMORY = "tools.io.out-of-memory", "the system is out of memory";
    TOOLS_IO_LINK_LOOP = "tools.io.link-loop", "the path has too many levels of symbolic links (a link may point to itself)";
    TOOLS_IO_CROSSES_DEVICES = "tools.io.crosses-devices", "it would move the file to another file system";
    TOOLS_IO_TOO_MANY_LINKS = "tools.io.too-many-links", "it has too many links";
    TOOLS_IO_DEVICE = "tools.io.device", "the device reported an input/output error";
    TOOLS_IO_NO_DEVICE = "tools.io.no-device", "the device is not there";
    TOOLS_IO_UNSUPPORTED = "tools.io.unsupported", "the operation is not supported here";
    TOOLS_IO_INVALID_ARGUMENT = "tools.io.invalid-argument", "the system refused an argument of the operation";
    TOOLS_IO_TRY_LATER = "tools.io.try-later", "the resource is not available right now";
    TOOLS_IO_BROKEN_PIPE = "tools.io.broken-pipe", "the other end of the pipe was closed";
    TOOLS_IO_NOT_SEEKABLE = "tools.io.not-seekable", "it cannot be read or written at an offset";
    TOOLS_IO_TOO_MANY_OPEN = "tools.io.too-many-open", "too many files are open";
    TOOLS_IO_STALE = "tools.io.stale", "the network file system no longer knows the file";
    TOOLS_IO_ENDED_EARLY = "tools.io.ended-early", "the data ended before all of it was read";
    TOOLS_IO_WRITE_ZERO = "tools.io.write-zero", "the system accepted no more bytes";
    TOOLS_IO_ARGUMENTS_TOO_LONG = "tools.io.arguments-too-long", "the argument list is too long";
    TOOLS_IO_DEADLOCK = "tools.io.deadlock", "the operation would deadlock";

    // Shared: the blocking pool, walks, output caps.
    TOOLS_WORK_STOPPED = "tools.work.stopped", "the {{ work }} stopped unexpectedly";
    TOOLS_WORK_STOPPED_HINT = "tools.work.stopped.hint", "try again; if it keeps failing, use another tool (e.g. bash)"; "bash";
    TOOLS_WORK_EDIT = "tools.work.edit", "edit";
    TOOLS_WORK_LISTING = "tools.work.listing", "listing";
    TOOLS_WORK_READ = "tools.work.read", "read";
    TOOLS_WORK_WRITE = "tools.work.write", "write";
    TOOLS_WORK_SEARCH = "tools.work.search", "search";
    TOOLS_OUTPUT_SEARCH_STOPPED = "tools.output.search-stopped", "[... the search stopped after {{ seconds }} s, so the results are incomplete; narrow the path or pattern]";
    TOOLS_OUTPUT_TOO_DEEP_ONE = "tools.output.too-deep-one", "[... 1 directory more than {{ max }} levels deep not searched; search from a deeper `path`]";
    TOOLS_OUTPUT_TOO_DEEP_MANY = "tools.output.too-deep-many", "[... {{ count }} directories more than {{ max }} levels deep not searched; search from a deeper `path`]";
    TOOLS_OUTPUT_TRUNCATED = "tools.output.truncated", "[... output truncated: {{ lines }} more lines ({{ bytes }} bytes) not shown; {{ how }}]";
    TOOLS_OUTPUT_LINE_CUT = "tools.output.line-cut", "… [line cut: {{ count }} more characters]";
    TOOLS_OUTPUT_LINE_CUT_BEFORE = "tools.output.line-cut-before", "[line cut: {{ count }} characters before] …";

    // The registry.
    TOOLS_BAD_DEFINITION = "tools.bad-definition", "the parameter schema of tool `{{ tool }}` does not compile: {{ error }}";
    TOOLS_BAD_DEFINITION_HINT = "tools.bad-definition.hint", "this is a bug in the tool's definition, not in the call";
    TOOLS_INVALID_ARGUMENTS_MORE = "tools.invalid-arguments.more", "… and {{ count }} more";

    // What is wrong with an argument (the registry's schema check), one text per kind of
    // problem: the validator's own messages are English only.
    TOOLS_ARGUMENT_AT = "tools.argument.at", "at `{{ path }}`: {{ problem }}";
    TOOLS_CUT = "tools.cut", "{{ start }}… ({{ count }} characters in all)";
    TOOLS_ARGUMENT_TYPE = "tools.argument.type", "{{ value }} is not of type {{ expected }}";
    TOOLS_ARGUMENT_TYPE_OR = "tools.argument.type.or", " or ";
    TOOLS_ARGUMENT_REQUIRED = "tools.argument.required", "the required property {{ property }} is missing";
    TOOLS_ARGUMENT_UNEXPECTED = "tools.argument.unexpected", "{{ names }}: not a parameter here, and the schema allows no others";
    TOOLS_ARGUMENT_ENUM = "tools.argument.enum", "{{ value }} is not one of {{ options }}";
    TOOLS_ARGUMENT_CONST = "tools.argument.const", "{{ value }} is not the one allowed value, {{ expected }}";
    TOOLS_ARGUMENT_MINIMUM = "tools.argument.minimum", "{{ value }} is less than the minimum of {{ limit }}";
    TOOLS_ARGUMENT_MAXIMUM = "tools.argument.maximum", "{{ value }} is greater than the maximum of {{ limit }}";
    TOOLS_ARGUMENT_EXCLUSIVE_MINIMUM = "tools.argument.exclusive-minimum", "{{ value }} must be greater than {{ limit }}";
    TOOLS_ARGUMENT_EXCLUSIVE_MAXIMUM = "tools.argument.exclusive-maximum", "{{ value }} must be less than {{ limit }}";
    TOOLS_ARGUMENT_MIN_LENGTH = "tools.argument.min-length", "{{ value }} is shorter than the minimum of {{ limit }} characters";
    TOOLS_ARGUMENT_MAX_LENGTH = "tools.argument.max-length", "{{ value }} is longer than the maximum of {{ limit }} characters";
    TOOLS_ARGUMENT_MIN_ITEMS = "tools.argument.min-items", "{{ value }} has fewer items than the minimum of {{ limit }}";
    TOOLS_ARGUMENT_MAX_ITEMS = "tools.argument.max-items", "{{ value }} has more items than the maximum of {{ limit }}";
    TOOLS_ARGUMENT_MIN_PROPERTIES = "tools.argument.min-properties", "{{ value }} has fewer properties than the minimum of {{ limit }}";
    TOOLS_ARGUMENT_MAX_PROPERTIES = "tools.argument.max-properties", "{{ value }} has more properties than the maximum of {{ limit }}";
    TOOLS_ARGUMENT_PATTERN = "tools.argument.pattern", "{{ value }} does not match the pattern `{{ pattern }}`";
    TOOLS_ARGUMENT_UNIQUE = "tools.argument.unique", "{{ value }} has an item more than once, and each must be unique";
    TOOLS_ARGUMENT_MULTIPLE_OF = "tools.argument.multiple-of", "{{ value }} is not a multiple of {{ multiple }}";
    TOOLS_ARGUMENT_FORMAT = "tools.argument.format", "{{ value }} is not in the `{{ format }}` format";
    TOOLS_ARGUMENT_NO_FORM = "tools.argument.no-form", "{{ value }} matches none of the forms the schema allows";
    TOOLS_ARGUMENT_MANY_FORMS = "tools.argument.many-forms", "{{ value }} matches more than one of the forms the schema allows, and must match exactly one";
    TOOLS_ARGUMENT_NOT = "tools.argument.not", "{{ value }} has a form the schema forbids";
    TOOLS_ARGUMENT_NOTHING = "tools.argument.nothing", "no value is allowed here, and {{ value }} was given";
    // What is wrong with a glob or a regular expression (`grep`, `glob`).
    TOOLS_GLOB_REASON_UNCLOSED_CLASS = "tools.glob-reason.unclosed-class", "a character class `[` is not closed with `]`";
    TOOLS_GLOB_REASON_RANGE = "tools.glob-reason.range", "the range `{{ from }}-{{ to }}` in a character class is backwards: its start comes after its end";
    TOOLS_GLOB_REASON_UNOPENED_ALTERNATES = "tools.glob-reason.unopened-alternates", "a `}` has no `{` before it";
    TOOLS_GLOB_REASON_UNCLOSED_ALTERNATES = "tools.glob-reason.unclosed-alternates", "an alternation `{` is not closed with `}`";
    TOOLS_GLOB_REASON_NESTED_ALTERNATES = "tools.glob-reason.nested-alternates", "alternations `{…}` are nested too deeply";
    TOOLS_GLOB_REASON_DANGLING_ESCAPE = "tools.glob-reason.dangling-escape", "the glob ends with an escaping `\\`";
    TOOLS_GLOB_REASON_OTHER = "tools.glob-reason.other", "it cannot be read as a glob";
    TOOLS_REGEX_REASON_AT = "tools.regex-reason.at", "{{ reason }} (at character {{ column }})";
    TOOLS_REGEX_REASON_GROUP_UNCLOSED = "tools.regex-reason.group-unclosed", "a group `(` is not closed with `)`";
    TOOLS_REGEX_REASON_GROUP_UNOPENED = "tools.regex-reason.group-unopened", "a `)` has no `(` before it";
    TOOLS_REGEX_REASON_CLASS_UNCLOSED = "tools.regex-reason.class-unclosed", "a character class `[` is not closed with `]`";
    TOOLS_REGEX_REASON_CLASS_RANGE = "tools.regex-reason.class-range", "a range in a character class is not valid: its start comes after its end, or an end is not a single character";
    TOOLS_REGEX_REASON_REPETITION_MISSING = "tools.regex-reason.repetition-missing", "a repetition (`*`, `+`, `?`, `{n}`) has nothing before it to repeat";
    TOOLS_REGEX_REASON_REPETITION_COUNT = "tools.regex-reason.repetition-count", "a counted repetition `{n,m}` is not closed, not a number, or has its minimum above its maximum";
    TOOLS_REGEX_REASON_ESCAPE = "tools.regex-reason.escape", "an escape `\\` is followed by something it does not know";
    TOOLS_REGEX_REASON_DANGLING_ESCAPE = "tools.regex-reason.dangling-escape", "the pattern ends with an escaping `\\`";
    TOOLS_REGEX_REASON_BACKREFERENCE = "tools.regex-reason.backreference", "back-references (`\\1`) are not supported";
    TOOLS_REGEX_REASON_LOOK_AROUND = "tools.regex-reason.look-around", "look-around (`(?=`, `(?!`, `(?<=`, `(?<!`) is not supported";
    TOOLS_REGEX_REASON_GROUP_NAME = "tools.regex-reason.group-name", "a group name `(?P<name>…)` is empty, repeated, not closed or not valid";
    TOOLS_REGEX_REASON_FLAG = "tools.regex-reason.flag", "an inline flag `(?…)` is not valid";
    TOOLS_REGEX_REASON_UNICODE_CLASS = "tools.regex-reason.unicode-class", "the Unicode class is not one the regex engine knows";
    TOOLS_REGEX_REASON_TOO_BIG = "tools.regex-reason.too-big", "the pattern is too large or nested too deeply; make it simpler";
    TOOLS_REGEX_REASON_OTHER = "tools.regex-reason.other", "the pattern cannot be read as a regular expression";
    TOOLS_ARGUMENT_OTHER = "tools.argument.other", "{{ value }} does not fit the parameter schema (its `{{ keyword }}` rule)";
}
