//! Hooks: programs a preset runs at points of a run (`hooks:` in the preset), following
//! Claude Code's hook conventions so existing hook scripts work unchanged.
//!
//! This module is the data and the decisions: which hooks an event runs ([`Hooks`],
//! [`Hook::matches`]), the JSON the hook reads on stdin ([`event_input`]), and what its
//! exit and output mean ([`decide`] → [`HookDecision`]). It starts nothing: the agent runs
//! each hook through `tools::external::hook` (the one process spawn, the run's sandbox,
//! the command environment), then hands what happened ([`HookRun`]) to [`decide`].
//!
//! The conventions: exit 0 continues, reading stdout as a JSON decision when it is a JSON
//! object (`{"decision": "block", "reason": …}`; `hookSpecificOutput` with
//! `permissionDecision`, `permissionDecisionReason`, `updatedInput`, `additionalContext`);
//! exit 2 blocks with stderr as the reason; anything else — another exit code, a signal,
//! the timeout, a program that cannot start, stdout that looks like JSON and is not — is
//! a failure, which blocks unless the hook says `onError: continue` (fail closed).

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::policy::{Glob, GlobKind};
use crate::texts::Texts;

/// How long a hook may run when its `timeout` is not given.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest `timeout` a hook may have.
pub const MAX_HOOK_TIMEOUT: Duration = Duration::from_secs(600);

/// How many times `stop` hooks may send the agent back to work in one run.
pub const MAX_STOP_CONTINUATIONS: usize = 3;

/// When a hook runs (serialised as its key under `hooks:`, [`HookEvent::key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum HookEvent {
    /// Before a tool call runs.
    PreToolUse,
    /// After a tool call ran.
    PostToolUse,
    /// When the model answered without calling a tool.
    Stop,
    /// When the prompt is submitted, before the first request.
    UserPromptSubmit,
}

impl HookEvent {
    /// Every event, in the order the preset lists them.
    pub const ALL: [HookEvent; 4] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
        HookEvent::UserPromptSubmit,
    ];

    /// The name in `hook_event_name` (Claude Code's): `PreToolUse`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
        }
    }

    /// The key under `hooks:` in a preset: `preToolUse`, ….
    pub fn key(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "preToolUse",
            HookEvent::PostToolUse => "postToolUse",
            HookEvent::Stop => "stop",
            HookEvent::UserPromptSubmit => "userPromptSubmit",
        }
    }

    /// Whether hooks of this event are about one tool call (and may have `match`).
    pub fn is_tool_event(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }
}

/// What a failing hook does (`onError`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnError {
    /// Block (fail closed): the default.
    #[default]
    Block,
    /// Report the failure and go on.
    Continue,
}

/// Which tools a hook is for: `|`-separated alternatives, each a glob (`*` any run of
/// characters) matched against the whole tool name.
#[derive(Clone, Debug)]
pub struct ToolMatcher {
    source: String,
    alternatives: Vec<Glob>,
}

impl ToolMatcher {
    /// Compile `source`; `Err` names the alternative that is not a glob.
    pub fn new(source: &str) -> Result<Self, String> {
        let mut alternatives = Vec::new();
        for alt in source.split('|') {
            let alt = alt.trim();
            if alt.is_empty() {
                return Err("an empty alternative (`a||b`, or `|` at an end)".to_owned());
            }
            let glob =
                Glob::new(alt, GlobKind::Text, false).map_err(|e| format!("`{alt}`: {e}"))?;
            alternatives.push(glob);
        }
        Ok(ToolMatcher {
            source: source.to_owned(),
            alternatives,
        })
    }

    /// As written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The alternatives, trimmed, as written.
    pub fn alternatives(&self) -> impl Iterator<Item = &str> {
        self.alternatives.iter().map(Glob::as_str)
    }

    /// Does it match the tool `name`?
    pub fn matches(&self, name: &str) -> bool {
        self.alternatives.iter().any(|g| g.is_match(name))
    }
}

/// One hook of a preset, compiled.
#[derive(Clone, Debug)]
pub struct Hook {
    /// When it runs.
    pub event: HookEvent,
    /// Which tools (tool events only); `None`: every tool.
    pub matcher: Option<ToolMatcher>,
    /// The program and its arguments.
    pub run: Vec<String>,
    /// How long it may run before it is killed.
    pub timeout: Duration,
    /// What a failure does.
    pub on_error: OnError,
}

impl Hook {
    /// Does this hook run for a call of `tool` (`None`: an event about no tool)?
    pub fn matches(&self, tool: Option<&str>) -> bool {
        match (&self.matcher, tool) {
            (Some(m), Some(tool)) => m.matches(tool),
            _ => true,
        }
    }

    /// The argv as one line, for messages and the transcript.
    pub fn label(&self) -> String {
        self.run.join(" ")
    }
}

/// The hooks of a preset (its chain's lists, root first within each event).
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    hooks: Vec<Hook>,
}

impl Hooks {
    /// Hooks in the order they run within each event.
    pub fn new(hooks: Vec<Hook>) -> Self {
        Hooks { hooks }
    }

    /// No hook at all.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Every hook.
    pub fn all(&self) -> &[Hook] {
        &self.hooks
    }

    /// The hooks `event` runs for `tool`, in order.
    pub fn for_event<'a>(
        &'a self,
        event: HookEvent,
        tool: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Hook> + 'a {
        self.hooks
            .iter()
            .filter(move |h| h.event == event && h.matches(tool))
    }
}

/// The facts of one hook run, whatever the event.
#[derive(Clone, Debug, Default)]
pub struct EventFacts<'a> {
    /// The session (the run), the same for every hook of it.
    pub session_id: &'a str,
    /// The workspace.
    pub cwd: &'a str,
    /// The tool (tool events).
    pub tool_name: Option<&'a str>,
    /// The call's id (tool events).
    pub tool_use_id: Option<&'a str>,
    /// The call's arguments (tool events).
    pub tool_input: Option<&'a Value>,
    /// The call's result (`postToolUse`).
    pub tool_response: Option<&'a Value>,
    /// The prompt (`userPromptSubmit`).
    pub prompt: Option<&'a str>,
    /// Whether a `stop` hook already sent the agent back to work this run (`stop`).
    pub stop_hook_active: bool,
}

/// The `tool_name` a hook is told: Claude Code's name for the built-in tools that have
/// one (`bash` → `Bash`, `write_file` → `Write`, …), so a script that checks
/// `tool_name == "Bash"` works unchanged; any other tool (command tools, MCP tools, which
/// both spell `mcp__<server>__<tool>`) by its own name. `match` uses this crate's names.
pub fn hook_tool_name(name: &str) -> &str {
    match name {
        "bash" => "Bash",
        "read_file" => "Read",
        "write_file" => "Write",
        "edit_file" => "Edit",
        "glob" => "Glob",
        "grep" => "Grep",
        "list_dir" => "LS",
        "todo_write" => "TodoWrite",
        other => other,
    }
}

/// The JSON a hook of `event` reads on stdin: Claude Code's fields (`session_id`,
/// `cwd`, `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`, `tool_response`,
/// `prompt`, `stop_hook_active`), each only where the event has it.
pub fn event_input(event: HookEvent, facts: &EventFacts<'_>) -> Value {
    let mut m = Map::new();
    m.insert("session_id".into(), facts.session_id.into());
    m.insert("cwd".into(), facts.cwd.into());
    m.insert("hook_event_name".into(), event.as_str().into());
    match event {
        HookEvent::PreToolUse | HookEvent::PostToolUse => {
            m.insert(
                "tool_name".into(),
                hook_tool_name(facts.tool_name.unwrap_or_default()).into(),
            );
            m.insert(
                "tool_input".into(),
                facts.tool_input.cloned().unwrap_or_else(|| json!({})),
            );
            if let Some(id) = facts.tool_use_id {
                m.insert("tool_use_id".into(), id.into());
            }
            if event == HookEvent::PostToolUse {
                m.insert(
                    "tool_response".into(),
                    facts.tool_response.cloned().unwrap_or(Value::Null),
                );
            }
        }
        HookEvent::Stop => {
            m.insert("stop_hook_active".into(), facts.stop_hook_active.into());
        }
        HookEvent::UserPromptSubmit => {
            m.insert("prompt".into(), facts.prompt.unwrap_or_default().into());
        }
    }
    Value::Object(m)
}

/// How a hook's (or a success check's) process ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum HookEnding {
    /// It exited with this code.
    Exited(i32),
    /// It was killed by a signal (described).
    Signalled(String),
    /// It did not finish within its timeout and was killed.
    TimedOut,
    /// It could not be started (why).
    NotStarted(String),
}

/// What running a hook produced.
#[derive(Clone, Debug)]
pub struct HookRun {
    /// How it ended.
    pub ending: HookEnding,
    /// Its standard output (bounded).
    pub stdout: String,
    /// Its standard error (bounded).
    pub stderr: String,
}

/// A hook's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookVerdict {
    /// Go on.
    Continue,
    /// Block: the call does not run (pre), its result becomes an error (post), the agent
    /// goes back to work (stop), the prompt is refused (userPromptSubmit).
    Block,
    /// Ask the user about the call even if the rules allowed it (pre:
    /// `permissionDecision: "ask"`).
    Ask,
}

impl HookVerdict {
    /// `continue`, `block` or `ask`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookVerdict::Continue => "continue",
            HookVerdict::Block => "block",
            HookVerdict::Ask => "ask",
        }
    }
}

/// What one hook decided, with why.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookDecision {
    /// The verdict.
    pub verdict: HookVerdict,
    /// The reason given (stderr on exit 2, `reason`, `permissionDecisionReason`), or the
    /// failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The hook failed (this says how); the verdict is its `onError`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// New arguments for the call (pre: `hookSpecificOutput.updatedInput`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// Text for the model (`additionalContext`; a `userPromptSubmit` hook's plain stdout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl HookDecision {
    fn verdict(verdict: HookVerdict) -> Self {
        HookDecision {
            verdict,
            reason: None,
            failure: None,
            updated_input: None,
            context: None,
        }
    }

    /// One line saying what was decided and why.
    pub fn explain(&self) -> String {
        let mut out = self.verdict.as_str().to_owned();
        if let Some(f) = &self.failure {
            out.push_str(&format!(" (the hook failed: {f})"));
        }
        if self.updated_input.is_some() {
            out.push_str(", arguments rewritten");
        }
        if let Some(r) = &self.reason
            && self.failure.is_none()
        {
            out.push_str(&format!(": {r}"));
        }
        out
    }
}

/// Most characters of a reason kept (stderr can be long).
const MAX_REASON_CHARS: usize = 4000;

fn trimmed(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.chars().take(MAX_REASON_CHARS).collect())
}

/// Why a hook's run gives no decision of its own: it failed (then `onError` decides).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Failure {
    NotStarted(String),
    TimedOut,
    Signalled(String),
    Exited(i32),
    NotJson,
    BadDecision(String),
    BadPermission(String),
    BadUpdatedInput,
}

impl Failure {
    /// In the words of `texts`.
    fn told(&self, texts: &Texts) -> String {
        use crate::texts::{
            HOOKS_FAILED_BAD_DECISION as BAD_DECISION,
            HOOKS_FAILED_BAD_PERMISSION as BAD_PERMISSION,
            HOOKS_FAILED_BAD_UPDATED_INPUT as BAD_INPUT, HOOKS_FAILED_EXIT as EXIT,
            HOOKS_FAILED_NOT_JSON as NOT_JSON, HOOKS_FAILED_NOT_STARTED as NOT_STARTED,
            HOOKS_FAILED_SIGNAL as SIGNAL, HOOKS_FAILED_TIMED_OUT as TIMED_OUT,
        };
        match self {
            Failure::NotStarted(why) => texts.render(&NOT_STARTED, &[("reason", why)]),
            Failure::TimedOut => texts.get(&TIMED_OUT).to_owned(),
            Failure::Signalled(how) => texts.render(&SIGNAL, &[("signal", how)]),
            Failure::Exited(code) => texts.render(&EXIT, &[("code", &code.to_string())]),
            Failure::NotJson => texts.get(&NOT_JSON).to_owned(),
            Failure::BadDecision(v) => texts.render(&BAD_DECISION, &[("value", v)]),
            Failure::BadPermission(v) => texts.render(&BAD_PERMISSION, &[("value", v)]),
            Failure::BadUpdatedInput => texts.get(&BAD_INPUT).to_owned(),
        }
    }
}

/// What `hook`'s run means for `event`, its reasons in English.
pub fn decide(event: HookEvent, on_error: OnError, run: &HookRun) -> HookDecision {
    decide_in(event, on_error, run, &Texts::english())
}

/// [`decide`], the reasons the model reads in the words of `texts` (the preset's
/// language); what the transcript shows of a failure stays English.
pub fn decide_in(
    event: HookEvent,
    on_error: OnError,
    run: &HookRun,
    texts: &Texts,
) -> HookDecision {
    let failed = |failure: Failure| {
        let verdict = match on_error {
            OnError::Block => HookVerdict::Block,
            OnError::Continue => HookVerdict::Continue,
        };
        let told = failure.told(texts);
        let reason = match trimmed(&run.stderr) {
            Some(err) => texts.render(
                &crate::texts::HOOKS_FAILED_STDERR,
                &[("failure", &told), ("stderr", &err)],
            ),
            None => told,
        };
        HookDecision {
            verdict,
            reason: Some(reason),
            failure: Some(failure.told(&Texts::english())),
            updated_input: None,
            context: None,
        }
    };
    match &run.ending {
        HookEnding::NotStarted(why) => failed(Failure::NotStarted(why.clone())),
        HookEnding::TimedOut => failed(Failure::TimedOut),
        HookEnding::Signalled(how) => failed(Failure::Signalled(how.clone())),
        HookEnding::Exited(2) => HookDecision {
            reason: Some(
                trimmed(&run.stderr)
                    .unwrap_or_else(|| texts.get(&crate::texts::HOOKS_EXIT_2).to_owned()),
            ),
            ..HookDecision::verdict(HookVerdict::Block)
        },
        HookEnding::Exited(0) => {
            let out = run.stdout.trim();
            if out.starts_with('{') {
                match serde_json::from_str::<Value>(out) {
                    Ok(Value::Object(o)) => from_json(event, &o, texts).unwrap_or_else(failed),
                    _ => failed(Failure::NotJson),
                }
            } else {
                HookDecision {
                    context: (event == HookEvent::UserPromptSubmit)
                        .then(|| trimmed(out))
                        .flatten(),
                    ..HookDecision::verdict(HookVerdict::Continue)
                }
            }
        }
        HookEnding::Exited(code) => failed(Failure::Exited(*code)),
    }
}

/// A decision from stdout JSON; `Err` says what about it cannot be used.
fn from_json(
    event: HookEvent,
    o: &Map<String, Value>,
    texts: &Texts,
) -> Result<HookDecision, Failure> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).and_then(trimmed);
    let mut d = HookDecision::verdict(HookVerdict::Continue);
    let specific = o.get("hookSpecificOutput").and_then(Value::as_object);
    match o.get("decision").and_then(Value::as_str) {
        Some("block") => {
            d.verdict = HookVerdict::Block;
            d.reason = text(o.get("reason"));
        }
        Some("approve" | "allow") | None => {}
        Some(other) => return Err(Failure::BadDecision(other.to_owned())),
    }
    // `"continue": false` ends the run in Claude Code; here it blocks what the event is
    // about, except for `stop`, where stopping is what would happen anyway.
    if o.get("continue").and_then(Value::as_bool) == Some(false) && event != HookEvent::Stop {
        d.verdict = HookVerdict::Block;
        d.reason = d.reason.or_else(|| text(o.get("stopReason")));
    }
    if let Some(s) = specific {
        if event == HookEvent::PreToolUse {
            match s.get("permissionDecision").and_then(Value::as_str) {
                Some("deny") => {
                    d.verdict = HookVerdict::Block;
                    d.reason = text(s.get("permissionDecisionReason")).or(d.reason);
                }
                Some("ask") if d.verdict != HookVerdict::Block => d.verdict = HookVerdict::Ask,
                Some("allow" | "ask") | None => {}
                Some(other) => return Err(Failure::BadPermission(other.to_owned())),
            }
            match s.get("updatedInput") {
                Some(v @ Value::Object(_)) => d.updated_input = Some(v.clone()),
                Some(Value::Null) | None => {}
                Some(_) => return Err(Failure::BadUpdatedInput),
            }
        }
        d.context = text(s.get("additionalContext"));
    }
    if d.verdict == HookVerdict::Block && d.reason.is_none() {
        d.reason = Some(texts.get(&crate::texts::HOOKS_NO_REASON).to_owned());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ending: HookEnding, stdout: &str, stderr: &str) -> HookRun {
        HookRun {
            ending,
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    /// The reasons the model reads come from the preset's texts; the failure the
    /// transcript shows stays English.
    #[test]
    fn a_failing_hooks_reasons_are_told_in_the_presets_language() {
        use crate::texts::{TextSource, Texts};
        let mut de = Texts::new(Some("de".into()));
        for (id, text) in [
            (
                "hooks.failed.timed-out",
                "er wurde nicht rechtzeitig fertig",
            ),
            ("hooks.failed.exit", "er endete mit {{ code }}"),
            (
                "hooks.failed.stderr",
                "{{ failure }}; Fehlerausgabe:\n{{ stderr }}",
            ),
            (
                "hooks.failed.bad-decision",
                "sein `decision` ist `{{ value }}`",
            ),
            ("hooks.exit-2", "der Hook endete mit 2"),
            ("hooks.no-reason", "ohne Begründung blockiert"),
        ] {
            de.set(id, text, TextSource::Builtin);
        }
        let pre = HookEvent::PreToolUse;
        let d = decide_in(pre, OnError::Block, &run(HookEnding::TimedOut, "", ""), &de);
        assert_eq!(
            d.reason.as_deref(),
            Some("er wurde nicht rechtzeitig fertig")
        );
        assert_eq!(
            d.failure.as_deref(),
            Some("it did not finish within its timeout and was killed")
        );
        let d = decide_in(
            pre,
            OnError::Block,
            &run(HookEnding::Exited(3), "", "boom"),
            &de,
        );
        assert_eq!(
            d.reason.as_deref(),
            Some("er endete mit 3; Fehlerausgabe:\nboom")
        );
        let d = decide_in(
            pre,
            OnError::Block,
            &run(HookEnding::Exited(2), "", ""),
            &de,
        );
        assert_eq!(d.reason.as_deref(), Some("der Hook endete mit 2"));
        let d = decide_in(
            pre,
            OnError::Block,
            &run(HookEnding::Exited(0), r#"{"decision": "maybe"}"#, ""),
            &de,
        );
        assert_eq!(d.reason.as_deref(), Some("sein `decision` ist `maybe`"));
        let d = decide_in(
            pre,
            OnError::Block,
            &run(HookEnding::Exited(0), r#"{"decision": "block"}"#, ""),
            &de,
        );
        assert_eq!(d.reason.as_deref(), Some("ohne Begründung blockiert"));
        // English through `decide`, word for word as before.
        let d = decide(pre, OnError::Block, &run(HookEnding::Exited(3), "", "boom"));
        assert_eq!(
            d.reason.as_deref(),
            Some("it exited with 3; its stderr:\nboom")
        );
    }

    #[test]
    fn exit_codes_follow_claude_code() {
        let pre = HookEvent::PreToolUse;
        let ok = decide(
            pre,
            OnError::Block,
            &run(HookEnding::Exited(0), "", "noise"),
        );
        assert_eq!(ok.verdict, HookVerdict::Continue);
        let blocked = decide(
            pre,
            OnError::Continue,
            &run(HookEnding::Exited(2), "", " no rm\n"),
        );
        assert_eq!(blocked.verdict, HookVerdict::Block);
        assert_eq!(blocked.reason.as_deref(), Some("no rm"));
        assert!(blocked.failure.is_none());
        for ending in [
            HookEnding::Exited(1),
            HookEnding::TimedOut,
            HookEnding::Signalled("signal 9".into()),
            HookEnding::NotStarted("not found".into()),
        ] {
            let closed = decide(pre, OnError::Block, &run(ending.clone(), "", "boom"));
            assert_eq!(closed.verdict, HookVerdict::Block, "{ending:?}");
            assert!(closed.failure.is_some());
            assert!(closed.reason.as_deref().unwrap().contains("boom"));
            let open = decide(pre, OnError::Continue, &run(ending, "", ""));
            assert_eq!(open.verdict, HookVerdict::Continue);
        }
    }

    #[test]
    fn json_decisions_are_read() {
        let pre = HookEvent::PreToolUse;
        let d = decide(
            pre,
            OnError::Block,
            &run(
                HookEnding::Exited(0),
                r#"{"decision": "block", "reason": "nope"}"#,
                "",
            ),
        );
        assert_eq!(
            (d.verdict, d.reason.as_deref()),
            (HookVerdict::Block, Some("nope"))
        );
        let d = decide(
            pre,
            OnError::Block,
            &run(
                HookEnding::Exited(0),
                r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "ls -a"}}}"#,
                "",
            ),
        );
        assert_eq!(d.verdict, HookVerdict::Continue);
        assert_eq!(d.updated_input, Some(json!({"command": "ls -a"})));
        let d = decide(
            pre,
            OnError::Block,
            &run(
                HookEnding::Exited(0),
                r#"{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "rm"}}"#,
                "",
            ),
        );
        assert_eq!(
            (d.verdict, d.reason.as_deref()),
            (HookVerdict::Block, Some("rm"))
        );
        let d = decide(
            pre,
            OnError::Block,
            &run(
                HookEnding::Exited(0),
                r#"{"hookSpecificOutput": {"permissionDecision": "ask"}}"#,
                "",
            ),
        );
        assert_eq!(d.verdict, HookVerdict::Ask);
        // Broken JSON is a failure, so it fails closed.
        let d = decide(
            pre,
            OnError::Block,
            &run(HookEnding::Exited(0), "{oops", ""),
        );
        assert_eq!(d.verdict, HookVerdict::Block);
        assert!(d.failure.is_some());
        // A post hook cannot rewrite the call that ran.
        let d = decide(
            HookEvent::PostToolUse,
            OnError::Block,
            &run(
                HookEnding::Exited(0),
                r#"{"hookSpecificOutput": {"updatedInput": {"a": 1}}}"#,
                "",
            ),
        );
        assert_eq!(d.updated_input, None);
    }

    #[test]
    fn a_prompt_hook_s_stdout_is_context() {
        let d = decide(
            HookEvent::UserPromptSubmit,
            OnError::Block,
            &run(HookEnding::Exited(0), "branch: main\n", ""),
        );
        assert_eq!(d.context.as_deref(), Some("branch: main"));
        let d = decide(
            HookEvent::PreToolUse,
            OnError::Block,
            &run(HookEnding::Exited(0), "branch: main\n", ""),
        );
        assert_eq!(d.context, None);
    }

    #[test]
    fn matchers_take_globs_and_alternatives() {
        let m = ToolMatcher::new("write_file|edit_file").unwrap();
        assert!(m.matches("write_file") && m.matches("edit_file") && !m.matches("bash"));
        let m = ToolMatcher::new("mcp__github__*").unwrap();
        assert!(m.matches("mcp__github__get_issue") && !m.matches("mcp__gitlab__x"));
        assert!(ToolMatcher::new("a||b").is_err());
        assert!(!ToolMatcher::new("bash").unwrap().matches("bash2"));
    }

    #[test]
    fn the_input_has_claude_code_s_fields() {
        let args = json!({"command": "ls"});
        let v = event_input(
            HookEvent::PreToolUse,
            &EventFacts {
                session_id: "s",
                cwd: "/w",
                tool_name: Some("bash"),
                tool_use_id: Some("c1"),
                tool_input: Some(&args),
                ..EventFacts::default()
            },
        );
        assert_eq!(
            v,
            json!({"session_id": "s", "cwd": "/w", "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "c1"})
        );
        let v = event_input(HookEvent::Stop, &EventFacts::default());
        assert_eq!(v["stop_hook_active"], false);
        assert!(v.get("tool_name").is_none());
    }
}
