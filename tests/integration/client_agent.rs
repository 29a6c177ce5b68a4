//! The model client and the agent loop against a scripted provider on 127.0.0.1, for
//! each dialect: plain and streamed answers, tool calls (whole and split across many
//! chunks), retries (429 with Retry-After, 500s), streams that break off, malformed
//! tool-call JSON, hidden tools, a missing key, and a multi-step run whose cacheable
//! prefix must stay byte-identical. Every body sent is checked against the dialect's
//! shape.
#![cfg(feature = "client")]

use crate::support;
use crate::support::host_tool;

use std::path::Path;
use std::time::{Duration, Instant};

use agent_presets::agent::{
    Agent, AgentError, AgentEvent, ApproveAll, Outcome, RefuseChanges, SystemPromptReason,
};
use agent_presets::client::{ApiKey, ClientError, ClientOptions, ModelClient};
use agent_presets::preset::spec::Provider;
use agent_presets::prompt::{ContextSnapshot, Values};
use agent_presets::provider::lint::LintedTools;
use agent_presets::provider::{ModelSettings, StreamEvent};
use agent_presets::request::{Message, Role};
use agent_presets::tools::ToolContext;
use agent_presets::{PresetCatalog, ToolCatalog, ValidPreset, validate_in_catalog};
use serde_json::{Value, json};
use support::mock_provider::{self as mock, MockProvider, Reply};
use support::request_shape;

const KEY: &str = "sk-test-key-0123456789abcdef";
/// base64 of `user:` + [`KEY`].
const BASIC_USER_KEY: &str = "dXNlcjpzay10ZXN0LWtleS0wMTIzNDU2Nzg5YWJjZGVm";

/// One wire dialect, with the replies a provider speaking it sends.
#[derive(Clone, Copy)]
struct Dialect {
    name: &'static str,
    provider: Provider,
    /// The API root's path on the mock (`baseUrl`).
    root: &'static str,
    /// The endpoint the client must call.
    endpoint: &'static str,
}

const OPENAI: Dialect = Dialect {
    name: "openai",
    provider: Provider::Deepseek,
    root: "",
    endpoint: "/chat/completions",
};

const ANTHROPIC: Dialect = Dialect {
    name: "anthropic",
    provider: Provider::Anthropic,
    root: "",
    endpoint: "/v1/messages",
};

const DIALECTS: [Dialect; 2] = [OPENAI, ANTHROPIC];

impl Dialect {
    fn text(self, text: &str) -> Reply {
        match self.name {
            "anthropic" => Reply::json(mock::anthropic_text(text)),
            _ => Reply::json(mock::openai_text(text)),
        }
    }

    fn call(self, id: &str, name: &str, args: Value) -> Reply {
        match self.name {
            "anthropic" => Reply::json(mock::anthropic_call(id, name, args)),
            _ => Reply::json(mock::openai_call(id, name, &args.to_string())),
        }
    }

    fn text_stream(self, pieces: &[&str]) -> Vec<String> {
        match self.name {
            "anthropic" => mock::anthropic_text_stream(pieces),
            _ => mock::openai_text_stream(pieces),
        }
    }

    fn call_stream(self, id: &str, name: &str, pieces: &[&str]) -> Vec<String> {
        match self.name {
            "anthropic" => mock::anthropic_call_stream(id, name, pieces),
            _ => mock::openai_call_stream(id, name, pieces),
        }
    }
}

/// `standard` narrowed to a few tools (bash hidden), talking to the mock.
fn preset() -> ValidPreset {
    preset_from(
        "version: 1\nname: tester\nextends: standard\ntools:\n  allow: [read_file, write_file, list_dir]\n",
    )
}

fn preset_from(yaml: &str) -> ValidPreset {
    let mut presets = PresetCatalog::builtin();
    presets.add_text("tester", "tester.yaml", yaml).unwrap();
    let v = validate_in_catalog(&presets, "tester", &ToolCatalog::builtin());
    v.preset.unwrap_or_else(|| panic!("{:?}", v.diagnostics))
}

/// Every runtime fact in contexts, none in the system prompt.
const CONTEXT_ONLY: &str = "version: 1
name: tester
persona:
  sections:
    - name: persona
      order: 0
      text: You are a coding agent powered by the {{ model }} model.
contexts:
  - name: workspace
    order: 0
    text: \"Working directory: {{ cwd }}\"
  - name: date
    order: 10
    text: \"Today's date: {{ date }}\"
tools:
  allow: [read_file, write_file, list_dir]
";

fn options() -> ClientOptions {
    ClientOptions {
        min_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        idle_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(20),
        ..ClientOptions::default()
    }
}

fn client(d: Dialect, server: &MockProvider, options: ClientOptions) -> ModelClient {
    let settings = ModelSettings::new(d.provider, "test-model").with_base_url(server.url(d.root));
    ModelClient::new(settings, Some(ApiKey::new(KEY)), options).unwrap()
}

fn values(d: Dialect, cwd: &Path, date: &str) -> Values {
    Values::new()
        .with("model", "test-model")
        .with("provider", d.provider.as_str())
        .with("cwd", cwd.to_string_lossy().into_owned())
        .with("os", "linux")
        .with("shell", "bash")
        .with("date", date)
}

/// What a run produced.
struct Ran {
    result: Result<Outcome, AgentError>,
    history: Vec<Message>,
    streamed: Vec<String>,
    headers: usize,
    retries: Vec<Duration>,
    /// Tool calls the agent ran (`AgentEvent::ToolCall`).
    calls_run: usize,
}

/// Run `prompt` against `replies`; the workspace is `dir`.
fn run_with(
    d: Dialect,
    replies: Vec<Reply>,
    dir: &Path,
    options: ClientOptions,
    step_values: impl FnMut(usize) -> Values,
) -> (Ran, MockProvider) {
    run_preset(preset(), d, replies, dir, options, step_values)
}

fn run_preset(
    preset: ValidPreset,
    d: Dialect,
    replies: Vec<Reply>,
    dir: &Path,
    options: ClientOptions,
    mut step_values: impl FnMut(usize) -> Values,
) -> (Ran, MockProvider) {
    let server = MockProvider::start(replies);
    let client = client(d, &server, options);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut history = Vec::new();
    let mut streamed = Vec::new();
    let mut headers = 0;
    let mut retries = Vec::new();
    let mut calls_run = 0;
    let result = runtime.block_on(async {
        let mut agent = Agent::new(
            preset.assembler(),
            &client,
            ToolContext::new(dir).unwrap().with_hidden_env(["TEST_KEY"]),
        )
        .with_max_steps(8);
        agent
            .run(
                "Fix the failing test.",
                &mut history,
                &mut ContextSnapshot::new(),
                &mut step_values,
                &mut ApproveAll,
                &mut |e| match e {
                    AgentEvent::Stream {
                        event: StreamEvent::Text(t),
                        ..
                    } => streamed.push(t.clone()),
                    AgentEvent::RequestHeader { .. } => headers += 1,
                    AgentEvent::Retry { delay, .. } => retries.push(delay),
                    AgentEvent::ToolCall { .. } => calls_run += 1,
                    _ => {}
                },
            )
            .await
    });
    (
        Ran {
            result,
            history,
            streamed,
            headers,
            retries,
            calls_run,
        },
        server,
    )
}

fn run(d: Dialect, replies: Vec<Reply>, dir: &Path) -> (Ran, MockProvider) {
    run_with(d, replies, dir, options(), |_| values(d, dir, "2030-01-01"))
}

fn answered(ran: &Ran) -> &str {
    match &ran.result {
        Ok(Outcome::Answered { text, .. }) => text,
        other => panic!("expected an answer, got {other:?}"),
    }
}

/// Every request hit the dialect's endpoint with its auth headers and a well-shaped body.
fn check_requests(d: Dialect, server: &MockProvider) -> Vec<Value> {
    let requests = server.requests();
    assert!(!requests.is_empty());
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, d.endpoint, "request {i}");
        match d.name {
            "anthropic" => {
                assert_eq!(r.header("x-api-key"), Some(KEY));
                assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(r.header("authorization"), None);
            }
            _ => assert_eq!(r.header("authorization"), Some(&*format!("Bearer {KEY}"))),
        }
        // Development aid: dump the bodies to check them with the providers' own
        // published schemas (`shared/bin/check-request`).
        if let Some(dir) = std::env::var_os("AGENT_PRESETS_DUMP_BODIES") {
            let n = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            let path = Path::new(&dir).join(format!("{}-{n}-{i}.json", d.name));
            std::fs::write(path, r.body.to_string()).unwrap();
        }
        let problems = request_shape::problems(d.name, &r.body);
        assert!(
            problems.is_empty(),
            "{} request {i} is malformed: {problems:#?}\n{:#}",
            d.name,
            r.body
        );
    }
    requests.into_iter().map(|r| r.body).collect()
}

/// The tool results sent in a body: (call id, content, is_error).
fn tool_results(d: Dialect, body: &Value) -> Vec<(String, String, bool)> {
    let messages = body["messages"].as_array().unwrap();
    match d.name {
        "anthropic" => messages
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap().iter())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| {
                (
                    b["tool_use_id"].as_str().unwrap().to_owned(),
                    b["content"].as_str().unwrap().to_owned(),
                    b["is_error"] == true,
                )
            })
            .collect(),
        _ => messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                let content = m["content"].as_str().unwrap().to_owned();
                let error = content.starts_with("Error:");
                (
                    m["tool_call_id"].as_str().unwrap().to_owned(),
                    content,
                    error,
                )
            })
            .collect(),
    }
}

#[test]
fn a_plain_answer() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let (ran, server) = run_with(
            d,
            vec![d.text("Hello there.")],
            dir.path(),
            ClientOptions {
                stream: false,
                ..options()
            },
            |_| values(d, dir.path(), "2030-01-01"),
        );
        assert_eq!(answered(&ran), "Hello there.", "{}", d.name);
        let bodies = check_requests(d, &server);
        assert_eq!(bodies.len(), 1);
        assert!(bodies[0].get("stream").is_none(), "{}", d.name);
        assert_eq!(bodies[0]["model"], "test-model");
        let last = ran.history.last().unwrap();
        assert_eq!(
            (last.role, last.content.as_str()),
            (Role::Assistant, "Hello there.")
        );
    }
}

#[test]
fn a_streamed_answer() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let (ran, server) = run(
            d,
            vec![Reply::sse(d.text_stream(&["Hel", "lo ", "wor", "ld."]))],
            dir.path(),
        );
        assert_eq!(answered(&ran), "Hello world.", "{}", d.name);
        assert_eq!(ran.streamed, ["Hel", "lo ", "wor", "ld."], "{}", d.name);
        let bodies = check_requests(d, &server);
        assert_eq!(bodies[0]["stream"], true);
        if d.name == "openai" {
            assert_eq!(bodies[0]["stream_options"], json!({"include_usage": true}));
        }
    }
}

#[test]
fn a_tool_call_runs_and_its_result_goes_back_with_the_call_id() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "the answer is 42\n").unwrap();
        let (ran, server) = run(
            d,
            vec![
                d.call("call_7", "read_file", json!({"path": "notes.txt"})),
                d.text("It says 42."),
            ],
            dir.path(),
        );
        assert_eq!(answered(&ran), "It says 42.", "{}", d.name);
        let bodies = check_requests(d, &server);
        assert_eq!(bodies.len(), 2);
        let results = tool_results(d, &bodies[1]);
        assert_eq!(results.len(), 1, "{}", d.name);
        assert_eq!(results[0].0, "call_7");
        assert!(results[0].1.contains("the answer is 42"), "{results:?}");
        assert!(!results[0].2);
        // The call itself is echoed back exactly before its result.
        let messages = bodies[1]["messages"].as_array().unwrap();
        match d.name {
            "anthropic" => {
                let turn = &messages[messages.len() - 2];
                assert_eq!(turn["role"], "assistant");
                let call = turn["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|b| b["type"] == "tool_use")
                    .unwrap();
                assert_eq!(call["input"], json!({"path": "notes.txt"}));
            }
            _ => {
                let turn = &messages[messages.len() - 2];
                assert_eq!(turn["tool_calls"][0]["id"], "call_7");
                assert_eq!(
                    turn["tool_calls"][0]["function"]["arguments"],
                    r#"{"path":"notes.txt"}"#
                );
            }
        }
    }
}

#[test]
fn a_streamed_tool_call_split_across_many_chunks() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let args = r#"{"path": "out.txt", "content": "written in pieces\n"}"#;
        let pieces: Vec<String> = args.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let (ran, server) = run(
            d,
            vec![
                Reply::sse(d.call_stream("call_w", "write_file", &pieces)),
                Reply::sse(d.text_stream(&["Done."])),
            ],
            dir.path(),
        );
        assert_eq!(answered(&ran), "Done.", "{}", d.name);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
            "written in pieces\n"
        );
        let bodies = check_requests(d, &server);
        let results = tool_results(d, &bodies[1]);
        assert_eq!(results[0].0, "call_w");
        assert!(!results[0].2, "{results:?}");
        if d.name == "openai" {
            // DeepSeek's thinking mode needs the reasoning back after a tool call.
            let messages = bodies[1]["messages"].as_array().unwrap();
            let assistant = messages.iter().find(|m| m["role"] == "assistant").unwrap();
            assert_eq!(assistant["reasoning_content"], "Thinking about it.");
            assert_eq!(assistant["content"], Value::Null);
        }
    }
}

#[test]
fn a_429_with_retry_after_is_retried_after_the_asked_delay() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let (ran, server) = run(
            d,
            vec![
                Reply::status_with(
                    429,
                    &[("Retry-After", "1")],
                    json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
                ),
                d.text("ok"),
            ],
            dir.path(),
        );
        assert_eq!(answered(&ran), "ok", "{}", d.name);
        assert_eq!(ran.retries, [Duration::from_secs(1)], "{}", d.name);
        assert!(started.elapsed() >= Duration::from_secs(1));
        assert_eq!(check_requests(d, &server).len(), 2);
    }
}

#[test]
fn two_500s_then_success() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let oops = json!({"error": {"message": "internal", "type": "server_error"}});
        let (ran, server) = run(
            d,
            vec![
                Reply::status(500, oops.clone()),
                Reply::status(500, oops),
                Reply::sse(d.text_stream(&["fine"])),
            ],
            dir.path(),
        );
        assert_eq!(answered(&ran), "fine", "{}", d.name);
        assert_eq!(ran.retries.len(), 2);
        let bodies = check_requests(d, &server);
        assert_eq!(bodies.len(), 3);
        assert_eq!(bodies[0], bodies[2], "a retry sends the same bytes");
    }
}

#[test]
fn retries_give_up_with_the_status_and_the_providers_message() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let busy = || {
            Reply::status(
                503,
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            )
        };
        let (ran, server) = run_with(
            d,
            vec![busy(), busy(), busy()],
            dir.path(),
            ClientOptions {
                max_retries: 2,
                ..options()
            },
            |_| values(d, dir.path(), "2030-01-01"),
        );
        let Err(AgentError::Client(e)) = &ran.result else {
            panic!("{:?}", ran.result);
        };
        let text = e.to_string();
        assert!(text.contains("503"), "{text}");
        assert!(text.contains("Overloaded"), "{text}");
        assert!(text.contains("after 3 attempts"), "{text}");
        assert!(!text.contains(KEY));
        assert_eq!(server.requests().len(), 3);
    }
}

#[test]
fn a_client_error_is_not_retried_and_never_shows_the_key() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let (ran, server) = run(
            d,
            vec![Reply::status(
                401,
                json!({"error": {"message": format!(
                    "Incorrect API key provided: {KEY} ({}, as sent: Basic {})",
                    KEY.to_ascii_uppercase(),
                    BASIC_USER_KEY
                ), "type": "invalid_request_error"}}),
            )],
            dir.path(),
        );
        let Err(AgentError::Client(e)) = &ran.result else {
            panic!("{:?}", ran.result);
        };
        let text = format!("{e} {e:?}");
        assert!(text.contains("401"), "{text}");
        assert!(text.contains("Incorrect API key provided: ***"), "{text}");
        assert!(!text.contains(KEY), "{text}");
        // Its upper-case form and base64 of `user:KEY` are masked too (all but the
        // encoding's first and last characters, which depend on what surrounds the key).
        assert!(!text.contains(&KEY.to_ascii_uppercase()[4..]), "{text}");
        assert!(!text.contains(&BASIC_USER_KEY[4..12]), "{text}");
        assert!(
            !text.contains(&BASIC_USER_KEY[12..BASIC_USER_KEY.len() - 4]),
            "{text}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[test]
fn a_stream_cut_mid_way_fails_clearly_and_runs_no_partial_call() {
    for d in DIALECTS {
        for cut_at_transport in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let mut pieces = d.call_stream(
                "call_x",
                "write_file",
                &[r#"{"path": "x.txt", "#, r#""content": "partial"}"#],
            );
            // Keep the call's start and its arguments, drop the end of the message.
            pieces.truncate(pieces.len() - 3);
            let reply = Reply::Sse {
                pieces,
                delay: Duration::ZERO,
                complete: !cut_at_transport,
            };
            let (ran, server) = run(d, vec![reply, d.text("unused")], dir.path());
            let Err(AgentError::Client(e)) = &ran.result else {
                panic!("{} {cut_at_transport}: {:?}", d.name, ran.result);
            };
            let text = e.to_string();
            assert!(
                matches!(
                    e,
                    ClientError::Interrupted { .. } | ClientError::Response { .. }
                ),
                "{text}"
            );
            assert!(
                text.contains("broke off") || text.contains("before the response was complete"),
                "{text}"
            );
            assert!(!dir.path().join("x.txt").exists(), "a partial call ran");
            assert_eq!(server.requests().len(), 1, "no retry once output started");
        }
    }
}

#[test]
fn malformed_tool_call_json_is_reported_to_the_model_and_the_loop_goes_on() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let (ran, server) = run(
            d,
            vec![
                Reply::sse(d.call_stream("call_m", "read_file", &[r#"{"path": "a.t"#])),
                Reply::sse(d.text_stream(&["Sorry."])),
            ],
            dir.path(),
        );
        assert_eq!(answered(&ran), "Sorry.", "{}", d.name);
        let bodies = check_requests(d, &server);
        let results = tool_results(d, &bodies[1]);
        assert_eq!(results[0].0, "call_m");
        assert!(results[0].2, "{results:?}");
        assert!(results[0].1.contains("not valid JSON"), "{results:?}");
    }
}

#[test]
fn a_hidden_tool_is_refused_like_an_unknown_one_and_the_loop_goes_on() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let (ran, server) = run(
            d,
            vec![
                d.call("call_b", "bash", json!({"command": "touch pwned"})),
                d.call("call_u", "no_such_tool", json!({})),
                d.text("OK."),
            ],
            dir.path(),
        );
        assert_eq!(answered(&ran), "OK.", "{}", d.name);
        assert!(!dir.path().join("pwned").exists());
        let bodies = check_requests(d, &server);
        let hidden = &tool_results(d, &bodies[1])[0];
        let unknown = &tool_results(d, &bodies[2])[1];
        assert!(hidden.2 && unknown.2);
        assert!(
            hidden.1.starts_with("Error: unknown tool `bash`."),
            "{hidden:?}"
        );
        assert_eq!(
            hidden.1.replace("bash", "X"),
            unknown.1.replace("no_such_tool", "X"),
            "hidden and unknown are refused alike"
        );
        // The tools sent never include the hidden one.
        let names: Vec<String> = bodies[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["name"]
                    .as_str()
                    .or(t["function"]["name"].as_str())
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(names, ["list_dir", "read_file", "write_file"]);
    }
}

/// A preset in German (`locale: de`) with one text of its own: the tool descriptions on
/// the wire, the runtime-context message, the registry's and the loop's refusals all reach
/// the model in its texts.
#[test]
fn a_localized_preset_speaks_to_the_model_in_its_texts() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let server = MockProvider::start(vec![
            d.call("call_u", "no_such_tool", json!({})),
            Reply::sse(d.call_stream("call_m", "read_file", &[r#"{"path": "a.t"#])),
            d.call(
                "call_w",
                "write_file",
                json!({"path": "x.txt", "content": "x"}),
            ),
            d.text("fertig"),
        ]);
        let preset = preset_from(
            "version: 1\nname: tester\nextends: standard\nlocale: de\ntools:\n  allow: [read_file, write_file, list_dir]\ntexts:\n  agent.refused.no-tty: \"Abgelehnt: `{{ tool }}` braucht ein Terminal oder `--yes`.\"\n",
        );
        let client = client(d, &server, options());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut history = Vec::new();
        let outcome = runtime.block_on(async {
            Agent::new(
                preset.assembler(),
                &client,
                ToolContext::new(dir.path()).unwrap(),
            )
            .run(
                "los",
                &mut history,
                &mut ContextSnapshot::new(),
                &mut |_| values(d, dir.path(), "2030-01-01"),
                &mut RefuseChanges::no_terminal(preset.texts()),
                &mut |_| {},
            )
            .await
        });
        assert!(
            matches!(outcome, Ok(Outcome::Answered { .. })),
            "{outcome:?}"
        );
        let bodies = check_requests(d, &server);
        let first = bodies[0].to_string();
        assert!(first.contains("Liest eine UTF-8-Textdatei"), "{}", d.name);
        assert!(!first.contains("Read a UTF-8 text file"), "{}", d.name);
        assert!(
            first.contains("<runtime-context>\\nArbeitsverzeichnis: "),
            "{}: {first}",
            d.name
        );
        let results = tool_results(d, &bodies[3]);
        assert_eq!(results.len(), 3, "{results:?}");
        assert!(
            results[0]
                .1
                .starts_with("Fehler: unbekanntes Werkzeug `no_such_tool`."),
            "{results:?}"
        );
        assert!(
            results[1].1.starts_with(
                "Fehler: Die Argumente dieses `read_file`-Aufrufs sind kein gültiges JSON"
            ),
            "{results:?}"
        );
        assert_eq!(
            results[2].1,
            "Abgelehnt: `write_file` braucht ein Terminal oder `--yes`."
        );
        assert!(!dir.path().join("x.txt").exists());
    }
}

#[test]
fn tools_that_change_things_are_refused_without_approval() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let server = MockProvider::start(vec![
            d.call(
                "call_w",
                "write_file",
                json!({"path": "x.txt", "content": "x"}),
            ),
            d.text("fine"),
        ]);
        let preset = preset();
        let client = client(d, &server, options());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut history = Vec::new();
        let outcome = runtime.block_on(async {
            Agent::new(
                preset.assembler(),
                &client,
                ToolContext::new(dir.path()).unwrap(),
            )
            .run(
                "go",
                &mut history,
                &mut ContextSnapshot::new(),
                &mut |_| values(d, dir.path(), "2030-01-01"),
                &mut RefuseChanges::new(
                    "nobody could be asked",
                    &agent_presets::texts::Texts::english(),
                ),
                &mut |_| {},
            )
            .await
        });
        assert!(matches!(outcome, Ok(Outcome::Answered { .. })));
        assert!(!dir.path().join("x.txt").exists());
        let results = tool_results(d, &check_requests(d, &server)[1]);
        assert!(results[0].2);
        assert!(
            results[0]
                .1
                .contains("`write_file` was not run: nobody could be asked"),
            "{results:?}"
        );
    }
}

#[test]
fn a_missing_key_fails_before_any_request_and_names_the_variable() {
    let settings = ModelSettings::new(Provider::Deepseek, "m");
    // SAFETY-free: the variable is unique to this test and only ever removed.
    let var = "AGENT_PRESETS_TEST_SURELY_UNSET_KEY";
    let settings = ModelSettings {
        api_key_env: Some(var.into()),
        ..settings
    };
    let e = ModelClient::from_env(settings, options()).unwrap_err();
    assert!(matches!(e, ClientError::MissingApiKey { .. }));
    assert_eq!(
        e.to_string(),
        format!("no API key for deepseek: the environment variable `{var}` is not set")
    );
    assert!(e.help().unwrap().contains(var));
}

#[test]
fn the_prefix_stays_byte_identical_while_runtime_facts_change() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let other = tempfile::tempdir().unwrap();
        let replies = vec![
            d.call("c1", "list_dir", json!({"path": "."})),
            d.call("c2", "read_file", json!({"path": "a.txt"})),
            d.call("c3", "list_dir", json!({"path": "."})),
            d.call("c4", "read_file", json!({"path": "a.txt"})),
            d.text("done"),
        ];
        // Step 2: the date changes. Step 3: nothing. Step 4: the working directory.
        let preset = preset_from(CONTEXT_ONLY);
        let (ran, server) = run_preset(preset, d, replies, dir.path(), options(), |step| {
            let date = if step >= 2 {
                "2030-01-02"
            } else {
                "2030-01-01"
            };
            let cwd = if step >= 4 { other.path() } else { dir.path() };
            values(d, cwd, date)
        });
        assert_eq!(answered(&ran), "done");
        assert_eq!(ran.headers, 1, "{}: one request header for the run", d.name);
        let bodies = check_requests(d, &server);
        assert_eq!(bodies.len(), 5);
        let prefix = |b: &Value| (b["system"].to_string(), b["tools"].to_string());
        let first = match d.name {
            "anthropic" => prefix(&bodies[0]),
            _ => (
                bodies[0]["messages"][0].to_string(),
                bodies[0]["tools"].to_string(),
            ),
        };
        for (i, b) in bodies.iter().enumerate() {
            let this = match d.name {
                "anthropic" => prefix(b),
                _ => (b["messages"][0].to_string(), b["tools"].to_string()),
            };
            assert_eq!(this, first, "{}: the prefix of request {i} changed", d.name);
        }
        // Snapshots: sent at steps 1, 2 and 4, each right after the history it follows.
        let snapshots: Vec<usize> = ran
            .history
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == Role::User && m.content.starts_with("<runtime-context>"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(snapshots.len(), 3, "{}: {:#?}", d.name, ran.history);
        let roles: Vec<Role> = ran.history.iter().map(|m| m.role).collect();
        use Role::*;
        assert_eq!(
            roles,
            [
                User, User, // prompt, snapshot (step 1)
                Assistant, Tool, User, // step 1's call and result, snapshot (step 2)
                Assistant, Tool, // step 2
                Assistant, Tool, User, // step 3, snapshot (step 4)
                Assistant, Tool,      // step 4
                Assistant  // the answer
            ]
        );
        assert!(ran.history[4].content.contains("2030-01-02"));
        assert!(
            ran.history[9]
                .content
                .contains(&*other.path().to_string_lossy())
        );
        // Each request's messages are the previous request's plus what happened since.
        for w in bodies.windows(2) {
            let a = w[0]["messages"].as_array().unwrap();
            let b = w[1]["messages"].as_array().unwrap();
            let common = a.len() - 1; // the last one may carry Anthropic's moving breakpoint
            assert_eq!(
                a[..common],
                b[..common],
                "{}: history was rewritten",
                d.name
            );
        }
    }
}

#[test]
fn a_changed_model_value_means_a_new_request_header() {
    let d = OPENAI;
    let dir = tempfile::tempdir().unwrap();
    let (ran, _server) = run_with(
        d,
        vec![
            d.call("c1", "list_dir", json!({"path": "."})),
            d.call("c2", "list_dir", json!({"path": "."})),
            d.text("done"),
        ],
        dir.path(),
        options(),
        |step| {
            let v = values(d, dir.path(), "2030-01-01");
            if step >= 3 {
                v.with("model", "other-model")
            } else {
                v
            }
        },
    );
    answered(&ran);
    assert_eq!(ran.headers, 2);
}

/// The system prompt is reported once at the first step, and again only when it
/// changes, with the reason: here a variable of a section changes at step 3.
#[test]
fn the_system_prompt_is_reported_at_the_first_step_and_when_a_variable_changes_it() {
    let d = OPENAI;
    let dir = tempfile::tempdir().unwrap();
    let preset = preset_from(
        "version: 1\nname: tester\npersona:\n  sections:\n    - name: persona\n      order: 0\n      text: Review with a focus on {{ focus }}.\nvariables:\n  focus:\n    description: f\n    default: bugs\ntools:\n  allow: [list_dir]\n",
    );
    let server = MockProvider::start(vec![
        d.call("c1", "list_dir", json!({"path": "."})),
        d.call("c2", "list_dir", json!({"path": "."})),
        d.text("done"),
    ]);
    let client = client(d, &server, options());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut reported: Vec<(usize, SystemPromptReason, String)> = Vec::new();
    let mut headers = 0;
    let result = runtime.block_on(async {
        Agent::new(
            preset.assembler(),
            &client,
            ToolContext::new(dir.path()).unwrap(),
        )
        .run(
            "Review it.",
            &mut Vec::new(),
            &mut ContextSnapshot::new(),
            &mut |step| {
                let focus = if step >= 3 { "security" } else { "bugs" };
                values(d, dir.path(), "2030-01-01").with("focus", focus)
            },
            &mut ApproveAll,
            &mut |e| match e {
                AgentEvent::SystemPrompt { step, reason, text } => {
                    let first = text.lines().next().unwrap_or_default().to_owned();
                    reported.push((step, reason.clone(), first));
                }
                AgentEvent::RequestHeader { .. } => headers += 1,
                _ => {}
            },
        )
        .await
    });
    assert!(matches!(result, Ok(Outcome::Answered { .. })), "{result:?}");
    assert_eq!(
        reported,
        [
            (
                1,
                SystemPromptReason::FirstStep,
                "Review with a focus on bugs.".to_owned()
            ),
            (
                3,
                SystemPromptReason::VariablesChanged(vec!["focus".to_owned()]),
                "Review with a focus on security.".to_owned()
            ),
        ]
    );
    // The prefix changed with it: a new header (which no longer carries the text).
    assert_eq!(headers, 2);
}

/// The approval policy is a runtime fact: `standard` shows it in the runtime context,
/// a change is re-sent in the next snapshot, and the cacheable prefix does not move.
#[test]
fn a_changed_approval_policy_is_resent_in_the_snapshot_and_the_prefix_stays() {
    let d = OPENAI;
    let dir = tempfile::tempdir().unwrap();
    let preset = preset();
    let server = MockProvider::start(vec![d.text("first"), d.text("second")]);
    let client = client(d, &server, options());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut history = Vec::new();
    let mut snapshot = ContextSnapshot::new();
    let mut system_events = 0;
    runtime.block_on(async {
        let mut agent = Agent::new(
            preset.assembler(),
            &client,
            ToolContext::new(dir.path()).unwrap(),
        );
        let mut on_event = |e: AgentEvent<'_>| {
            if matches!(e, AgentEvent::SystemPrompt { .. }) {
                system_events += 1;
            }
        };
        let mut refuse =
            RefuseChanges::new("no one to ask", &agent_presets::texts::Texts::english());
        agent
            .run(
                "One.",
                &mut history,
                &mut snapshot,
                &mut |_| values(d, dir.path(), "2030-01-01"),
                &mut refuse,
                &mut on_event,
            )
            .await
            .unwrap();
        agent
            .run(
                "Two.",
                &mut history,
                &mut snapshot,
                &mut |_| values(d, dir.path(), "2030-01-01"),
                &mut ApproveAll,
                &mut on_event,
            )
            .await
            .unwrap();
    });
    let snapshots: Vec<&str> = history
        .iter()
        .filter(|m| m.role == Role::User && m.content.starts_with("<runtime-context>"))
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(snapshots.len(), 2, "{history:#?}");
    assert!(
        snapshots[0].contains("Tool approval: refuse"),
        "{}",
        snapshots[0]
    );
    assert!(
        snapshots[1].contains("Tool approval: yes"),
        "{}",
        snapshots[1]
    );
    let bodies = check_requests(d, &server);
    assert_eq!(bodies[0]["messages"][0], bodies[1]["messages"][0]);
    assert_eq!(bodies[0]["tools"], bodies[1]["tools"]);
    // One system prompt for both runs: it never changed.
    assert_eq!(system_events, 1);
}

// ------------------------------------------------------------- issue 22: hostile servers

/// A whole answer that calls `write_file` once per `(id, path, content)`.
fn many_calls(d: Dialect, calls: &[(String, String, String)]) -> Reply {
    match d.name {
        "anthropic" => {
            let content: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    let input: Value = serde_json::from_str(args).unwrap_or(json!({}));
                    json!({"type": "tool_use", "id": id, "name": name, "input": input})
                })
                .collect();
            Reply::json(json!({
                "id": "msg_n", "type": "message", "role": "assistant", "model": "m",
                "content": content, "stop_reason": "tool_use", "stop_sequence": null,
                "usage": {"input_tokens": 1, "output_tokens": 1}
            }))
        }
        _ => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
                })
                .collect();
            Reply::json(json!({
                "id": "c", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                    "tool_calls": tool_calls}, "finish_reason": "tool_calls"}]
            }))
        }
    }
}

/// The tool calls of the last assistant message in a request body: (id, name, arguments
/// as sent: the OpenAI string, or Anthropic's `input` object as text).
fn sent_calls(d: Dialect, body: &Value) -> Vec<(String, String, String)> {
    let messages = body["messages"].as_array().unwrap();
    let assistant = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    match d.name {
        "anthropic" => assistant["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| {
                assert!(b["input"].is_object(), "{b}");
                (
                    b["id"].as_str().unwrap().to_owned(),
                    b["name"].as_str().unwrap().to_owned(),
                    b["input"].to_string(),
                )
            })
            .collect(),
        _ => assistant["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_owned(),
                    c["function"]["name"].as_str().unwrap().to_owned(),
                    c["function"]["arguments"].as_str().unwrap().to_owned(),
                )
            })
            .collect(),
    }
}

#[test]
fn redirects_are_not_followed_and_the_target_receives_nothing() {
    for d in DIALECTS {
        for status in [301, 302, 303, 307, 308] {
            let target = MockProvider::start(vec![d.text("stolen"), d.text("stolen")]);
            let location = target.url(d.endpoint);
            let dir = tempfile::tempdir().unwrap();
            let (ran, server) = run(
                d,
                vec![Reply::status_with(
                    status,
                    &[("Location", location.as_str())],
                    json!({}),
                )],
                dir.path(),
            );
            let label = format!("{} {status}", d.name);
            match &ran.result {
                Err(AgentError::Client(e @ ClientError::Redirect { .. })) => {
                    let text = e.to_string();
                    assert!(text.contains(&status.to_string()), "{label}: {text}");
                    assert!(text.contains(&location), "{label}: {text}");
                    // It names the URL that was requested, too.
                    assert!(
                        text.contains(&format!("at `{}`", server.url(d.endpoint))),
                        "{label}: {text}"
                    );
                    assert!(!text.contains(KEY), "{label}: {text}");
                    assert!(e.help().unwrap().contains("baseUrl"), "{label}");
                    assert!(!e.is_retryable(), "{label}");
                }
                other => panic!("{label}: expected a redirect error, got {other:?}"),
            }
            assert_eq!(server.requests().len(), 1, "{label}: not retried");
            // Give a client that follows time to get there.
            std::thread::sleep(Duration::from_millis(50));
            assert!(
                target.requests().is_empty(),
                "{label}: the redirect target received {:?}",
                target.requests()
            );
        }
    }
}

#[test]
fn a_redirect_location_is_masked_escaped_and_shortened() {
    let d = ANTHROPIC;
    let dir = tempfile::tempdir().unwrap();
    let location = format!("http://evil.example/\u{202e}{KEY}/{}", "x".repeat(5000));
    let (ran, _server) = run(
        d,
        vec![Reply::status_with(
            302,
            &[("Location", location.as_str())],
            json!({}),
        )],
        dir.path(),
    );
    let Err(AgentError::Client(e)) = &ran.result else {
        panic!("{:?}", ran.result);
    };
    let text = e.to_string();
    assert!(text.contains("http://evil.example/"), "{text}");
    assert!(!text.contains(KEY), "{text}");
    assert!(!text.contains('\u{202e}'), "{text}");
    assert!(text.len() < 1000, "{}", text.len());
}

#[test]
fn a_finish_reason_without_the_final_event_runs_no_tool() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let mut pieces = d.call_stream(
            "call_w",
            "write_file",
            &[r#"{"path": "out.txt", "content": "x"}"#],
        );
        // Drop `[DONE]` / `message_stop`; the finish reason is still there.
        let last = pieces.pop().unwrap();
        assert!(last.contains("[DONE]") || last.contains("message_stop"));
        let (ran, _server) = run(
            d,
            vec![Reply::sse(pieces), Reply::sse(d.text_stream(&["Done."]))],
            dir.path(),
        );
        match &ran.result {
            Err(AgentError::Client(ClientError::Response { error, .. })) => {
                assert!(
                    error
                        .to_string()
                        .contains("before the response was complete"),
                    "{}: {error}",
                    d.name
                );
            }
            other => panic!("{}: expected an incomplete stream, got {other:?}", d.name),
        }
        assert!(!dir.path().join("out.txt").exists(), "{}", d.name);
        assert_eq!(ran.calls_run, 0);
    }
}

#[test]
fn content_after_the_finish_reason_is_a_protocol_error() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let mut pieces = d.call_stream(
            "call_w",
            "write_file",
            &[r#"{"path": "out.txt", "content": "x"}"#],
        );
        let late = match d.name {
            "anthropic" => {
                json!({"type": "content_block_start", "index": 5, "content_block": {"type": "text", "text": "late"}})
            }
            _ => json!({"choices": [{"index": 0, "delta": {"content": "late"}}]}),
        };
        let at = pieces.len() - 1;
        pieces.insert(at, format!("data: {late}\n\n"));
        let (ran, _server) = run(d, vec![Reply::sse(pieces)], dir.path());
        match &ran.result {
            Err(AgentError::Client(ClientError::Response { error, .. })) => {
                assert!(
                    error.to_string().contains("after the"),
                    "{}: {error}",
                    d.name
                );
            }
            other => panic!("{}: expected a protocol error, got {other:?}", d.name),
        }
        assert!(!dir.path().join("out.txt").exists(), "{}", d.name);
    }
}

#[test]
fn an_sse_line_over_8_mib_is_refused() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let text = "x".repeat(9 << 20);
        let mut pieces = d.text_stream(&["Hi"]);
        let at = pieces.iter().position(|p| p.contains("\"Hi\"")).unwrap();
        let big = pieces[at].replace("Hi", &text);
        pieces.insert(at, big);
        let (ran, _server) = run(d, vec![Reply::sse(pieces)], dir.path());
        match &ran.result {
            Err(AgentError::Client(e @ ClientError::Response { .. })) => {
                assert!(e.to_string().contains("8388608 bytes"), "{}: {e}", d.name);
            }
            other => panic!("{}: expected the line cap, got {:.300?}", d.name, other),
        }
    }
}

#[test]
fn at_most_64_of_250_tool_calls_run_and_every_call_gets_a_result() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let calls: Vec<(String, String, String)> = (0..250)
            .map(|i| {
                (
                    format!("call_{i}"),
                    "write_file".to_owned(),
                    json!({"path": format!("f{i}.txt"), "content": "x"}).to_string(),
                )
            })
            .collect();
        let (ran, server) = run(d, vec![many_calls(d, &calls), d.text("Done.")], dir.path());
        assert_eq!(answered(&ran), "Done.", "{}", d.name);
        let written = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(written, 64, "{}", d.name);
        assert_eq!(ran.calls_run, 64, "{}", d.name);
        assert!(dir.path().join("f63.txt").exists());
        assert!(!dir.path().join("f64.txt").exists());
        let bodies = check_requests(d, &server);
        let results = tool_results(d, &bodies[1]);
        assert_eq!(results.len(), 250, "{}", d.name);
        for (i, (id, content, error)) in results.iter().enumerate() {
            assert_eq!(id, &format!("call_{i}"));
            if i >= 64 {
                assert!(*error, "{}: {content}", d.name);
                assert!(content.contains("at most 64"), "{content}");
                assert!(content.contains("--max-tool-calls"), "{content}");
            }
        }
    }
}

#[test]
fn a_long_tool_name_is_refused_and_never_echoed_whole() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let name = format!("write_file{}", "w".repeat(20_000));
        let calls = vec![(
            "call_n".to_owned(),
            name.clone(),
            json!({"path": "n.txt", "content": "x"}).to_string(),
        )];
        let (ran, server) = run(d, vec![many_calls(d, &calls), d.text("Done.")], dir.path());
        assert_eq!(answered(&ran), "Done.", "{}", d.name);
        assert_eq!(ran.calls_run, 0);
        let bodies = check_requests(d, &server);
        let results = tool_results(d, &bodies[1]);
        assert!(results[0].2);
        assert!(results[0].1.contains("longer than 64"), "{}", results[0].1);
        assert!(results[0].1.len() < 1000, "{}", results[0].1.len());
        let sent = sent_calls(d, &bodies[1]);
        assert!(sent[0].1.chars().count() <= 65, "{}", sent[0].1.len());
        let history_name = &ran.history[2].tool_calls[0].name;
        assert!(history_name.chars().count() <= 65);
    }
}

#[test]
fn huge_tool_arguments_are_refused_and_not_kept() {
    for d in DIALECTS {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"path": "big.txt", "content": "x".repeat(2 << 20)}).to_string();
        let calls = vec![("call_b".to_owned(), "write_file".to_owned(), args)];
        let (ran, server) = run(d, vec![many_calls(d, &calls), d.text("Done.")], dir.path());
        assert_eq!(answered(&ran), "Done.", "{}", d.name);
        assert!(!dir.path().join("big.txt").exists(), "{}", d.name);
        let bodies = check_requests(d, &server);
        let results = tool_results(d, &bodies[1]);
        assert!(results[0].2);
        assert!(results[0].1.contains("1048576"), "{}", results[0].1);
        // The history keeps `{}`: an object for Anthropic, a string for OpenAI.
        assert_eq!(sent_calls(d, &bodies[1])[0].2, "{}", "{}", d.name);
        assert!(bodies[1].to_string().len() < 100_000);
    }
}

/// A caller that rendered step 1 already (to fail before anything is sent, as `run`
/// does) hands it over: the agent sends it without rendering step 1 again, and tools
/// linted for the client's endpoint are used as they are.
#[test]
fn a_first_step_rendered_by_the_caller_is_not_rendered_again() {
    let d = OPENAI;
    let dir = tempfile::tempdir().unwrap();
    let server = MockProvider::start(vec![d.text("Done.")]);
    let client = client(d, &server, options());
    let preset = preset();
    let first = preset
        .assembler()
        .assemble(&values(d, dir.path(), "2030-01-01"))
        .unwrap();
    let linted = LintedTools::new(client.settings(), preset.assembler().registry());
    assert!(!linted.refused(), "{:?}", linted.diagnostics());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut rendered = Vec::new();
    let result = runtime.block_on(async {
        Agent::new(
            preset.assembler(),
            &client,
            ToolContext::new(dir.path()).unwrap(),
        )
        .with_linted_tools(&linted)
        .with_first_step(first.clone())
        .run(
            "Fix the failing test.",
            &mut Vec::new(),
            &mut ContextSnapshot::new(),
            &mut |step| {
                rendered.push(step);
                values(d, dir.path(), "2030-01-01")
            },
            &mut ApproveAll,
            &mut |_| {},
        )
        .await
    });
    assert!(matches!(result, Ok(Outcome::Answered { .. })), "{result:?}");
    assert_eq!(rendered, Vec::<usize>::new(), "step 1 was rendered again");
    let sent = check_requests(d, &server);
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0]["messages"][0]["content"].as_str(),
        Some(first.system.as_str())
    );
}

/// Tools linted for another endpoint than the client's do not stand in for the client's
/// own lint: what the client's provider refuses still stops the run before a request.
#[test]
fn tools_linted_for_another_endpoint_are_linted_again() {
    let long = format!("lookup_{}", "x".repeat(70));
    let mut tools = ToolCatalog::builtin();
    host_tool::register(
        &mut tools,
        &long,
        json!({"type": "object", "properties": {}}),
    );
    let mut presets = PresetCatalog::builtin();
    let yaml = format!(
        "version: 1\nname: p\nmodel: {{provider: anthropic, name: m}}\ntools:\n  allow: [{long}, read_file]\n"
    );
    presets.add_text("p", "p.yaml", &yaml).unwrap();
    let v = validate_in_catalog(&presets, "p", &tools);
    let preset = v.preset.unwrap_or_else(|| panic!("{:?}", v.diagnostics));
    let server = MockProvider::start(vec![OPENAI.text("never")]);
    let client = client(OPENAI, &server, options());
    let anthropic = ModelSettings::new(Provider::Anthropic, "m");
    let linted = LintedTools::new(&anthropic, preset.assembler().registry());
    assert!(!linted.refused(), "{:?}", linted.diagnostics());
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(async {
        Agent::new(
            preset.assembler(),
            &client,
            ToolContext::new(dir.path()).unwrap(),
        )
        .with_linted_tools(&linted)
        .run(
            "hi",
            &mut Vec::new(),
            &mut ContextSnapshot::new(),
            &mut |_| values(OPENAI, dir.path(), "2030-01-01"),
            &mut ApproveAll,
            &mut |_| {},
        )
        .await
    });
    assert!(
        matches!(&result, Err(AgentError::ToolsRefused(ds)) if ds.iter().any(|d| d.message.contains(&long))),
        "{result:?}"
    );
    assert!(server.requests().is_empty());
}

/// Issue 20: a base URL without `/v1` against a server that answers 404 at
/// `/chat/completions`: the error names the URL that was requested, and the help names
/// the root it probably should be.
#[test]
fn http_errors_name_the_requested_url_and_a_404_hints_at_the_api_root() {
    let server = MockProvider::start(vec![Reply::status(
        404,
        json!({"error": {"message": "Not Found"}}),
    )]);
    let client = client(OPENAI, &server, options());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let error = runtime
        .block_on(client.send(&json!({"model": "test-model"}), &mut |_| {}))
        .unwrap_err();
    let url = server.url("/chat/completions");
    assert_eq!(server.requests()[0].path, "/chat/completions");
    assert_eq!(
        error.to_string(),
        format!("deepseek answered 404 Not Found at `{url}`: Not Found")
    );
    let help = error.help().unwrap();
    assert!(
        help.starts_with(&format!(
            "check that `baseUrl` ends where the API root is, e.g. `{}/v1`",
            server.url("")
        )),
        "{help}"
    );
    // Any status names it; a root that has its version segment gets the plain help.
    let server = MockProvider::start(vec![Reply::status(
        404,
        json!({"error": {"message": "model not found"}}),
    )]);
    let settings = ModelSettings::new(Provider::Deepseek, "m").with_base_url(server.url("/v1"));
    let client = ModelClient::new(settings, Some(ApiKey::new(KEY)), options()).unwrap();
    let error = runtime
        .block_on(client.send(&json!({"model": "m"}), &mut |_| {}))
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains(&format!("at `{}`", server.url("/v1/chat/completions"))),
        "{error}"
    );
    assert!(!error.help().unwrap().contains("ends where"), "{error:?}");
    // An Anthropic root ending in `/v1` asks for `/v1/v1/messages`.
    let server = MockProvider::start(vec![Reply::status(404, json!({}))]);
    let settings = ModelSettings::new(Provider::Anthropic, "m").with_base_url(server.url("/v1"));
    let client = ModelClient::new(settings, Some(ApiKey::new(KEY)), options()).unwrap();
    let error = runtime
        .block_on(client.send(&json!({"model": "m"}), &mut |_| {}))
        .unwrap_err();
    assert!(
        error
            .help()
            .unwrap()
            .contains(&format!("e.g. `{}`", server.url(""))),
        "{:?}",
        error.help()
    );
}

/// A web page where the API should be (a 200 with `text/html`) names the URL and the
/// content type instead of a JSON parse error.
#[test]
fn a_page_that_is_not_the_api_names_the_url_and_its_content_type() {
    for stream in [true, false] {
        let server = MockProvider::start(vec![Reply::raw(
            200,
            &[("Content-Type", "text/html; charset=utf-8")],
            "<!doctype html><title>My app</title>",
        )]);
        let client = client(
            OPENAI,
            &server,
            ClientOptions {
                stream,
                ..options()
            },
        );
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let error = runtime
            .block_on(client.send(&json!({"model": "test-model"}), &mut |_| {}))
            .unwrap_err();
        assert!(
            matches!(error, ClientError::ContentType { .. }),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "deepseek answered at `{}` with `text/html; charset=utf-8`, not the API's JSON or event stream",
                server.url("/chat/completions")
            )
        );
        assert!(error.help().unwrap().contains("ends where the API root is"));
    }
}

/// The system prompt tells the model where commands run (the `sandbox` value); an agent
/// whose tool context runs them elsewhere refuses the step before anything is sent, and
/// `ValidPreset::tool_context` gives the tools the sandbox the prompt names.
#[test]
fn the_prompt_and_the_tools_agree_on_the_sandbox() {
    let d = OPENAI;
    let dir = tempfile::tempdir().unwrap();
    let preset = preset();
    let told = preset
        .default_values()
        .with("cwd", dir.path().to_string_lossy().into_owned())
        .with("os", "linux")
        .with("shell", "bash")
        .with("date", "2030-01-01");
    assert_eq!(
        told.get("sandbox").and_then(|v| v.as_str()),
        Some("workspace-write")
    );
    let ask = |tools: ToolContext| {
        let server = MockProvider::start(vec![d.text("Done.")]);
        let client = client(d, &server, options());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let result = runtime.block_on(async {
            Agent::new(preset.assembler(), &client, tools)
                .run(
                    "Fix the failing test.",
                    &mut Vec::new(),
                    &mut ContextSnapshot::new(),
                    &mut |_| told.clone(),
                    &mut ApproveAll,
                    &mut |_| {},
                )
                .await
        });
        (result, server.requests().len())
    };

    // A bare context runs commands unconfined: the prompt would be false.
    let (result, sent) = ask(ToolContext::new(dir.path()).unwrap());
    match &result {
        Err(e @ AgentError::SandboxMismatch { told, enforced }) => {
            assert_eq!(
                (told.as_str(), *enforced),
                ("workspace-write", "full-access")
            );
            assert!(
                e.to_string().contains("preset.tool_context(workspace)"),
                "{e}"
            );
        }
        other => panic!("expected a sandbox mismatch, got {other:?}"),
    }
    assert_eq!(sent, 0, "a request was sent");

    // The preset's own context: the sandbox it declares, and the run goes on.
    let tools = preset.tool_context(dir.path()).unwrap();
    assert_eq!(tools.sandbox().mode().as_str(), "workspace-write");
    let (result, sent) = ask(tools);
    assert!(matches!(result, Ok(Outcome::Answered { .. })), "{result:?}");
    assert_eq!(sent, 1);
}
