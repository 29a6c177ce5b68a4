//! `agent-presets lsp` over its real transport (the binary, stdin and stdout): every
//! method, the things a client can get wrong (a malformed message, a cancellation, a
//! huge buffer, UTF-16 positions), the diagnostics against `validate --format json` on
//! every case folder, and a real client (Neovim headless).
#![cfg(feature = "cli")]

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// Long enough for a debug build on a loaded machine; only a hung server waits it out.
const PATIENCE: Duration = Duration::from_secs(120);

struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: mpsc::Receiver<Value>,
    /// Notifications read while waiting for something else.
    held: Vec<Value>,
    next_id: i64,
}

impl Client {
    fn start(root: &Path) -> Client {
        let config = root.join(".test-config");
        let mut child = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
            .args(["--no-user", "lsp"])
            .current_dir(root)
            .env("AGENT_PRESETS_CONFIG_DIR", &config)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        length = v.parse().unwrap();
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            rx,
            held: Vec::new(),
            next_id: 1,
        }
    }

    fn write_raw(&mut self, body: &[u8]) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) {
        self.write_raw(&serde_json::to_vec(message).unwrap());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn request_id(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The response to `id` (the whole message).
    fn response(&mut self, id: i64) -> Value {
        loop {
            let message = self.rx.recv_timeout(PATIENCE).expect("the server answers");
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.held.push(message);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.request_id(method, params);
        let response = self.response(id);
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        if let Some(i) = self.held.iter().position(|m| is_diagnostics_for(m, uri)) {
            let m = self.held.remove(i);
            return m["params"]["diagnostics"].as_array().unwrap().clone();
        }
        loop {
            let message = self.rx.recv_timeout(PATIENCE).expect("diagnostics come");
            if is_diagnostics_for(&message, uri) {
                return message["params"]["diagnostics"].as_array().unwrap().clone();
            }
            self.held.push(message);
        }
    }

    fn initialize(&mut self, root: &Path, encodings: &[&str]) -> Value {
        let result = self.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": uri(root),
                "capabilities": {"general": {"positionEncodings": encodings}},
            }),
        );
        self.notify("initialized", json!({}));
        result
    }

    fn open(&mut self, path: &Path, text: &str) -> String {
        let uri = uri(path);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
        );
        uri
    }

    fn stop(mut self) {
        let id = self.request_id("shutdown", Value::Null);
        let response = self.response(id);
        assert_eq!(response["result"], Value::Null, "{response}");
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

fn is_diagnostics_for(message: &Value, uri: &str) -> bool {
    message["method"] == "textDocument/publishDiagnostics" && message["params"]["uri"] == uri
}

fn uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

/// `text` with one edit applied (positions in `utf16` or UTF-8 units).
fn apply(text: &str, edit: &Value, utf16: bool) -> String {
    let offset = |pos: &Value| -> usize {
        let line = pos["line"].as_u64().unwrap() as usize;
        let character = pos["character"].as_u64().unwrap() as usize;
        let start: usize = text.split('\n').take(line).map(|l| l.len() + 1).sum();
        let line_text = text[start..].split('\n').next().unwrap();
        let mut units = 0;
        for (i, c) in line_text.char_indices() {
            if units >= character {
                return start + i;
            }
            units += if utf16 { c.len_utf16() } else { c.len_utf8() };
        }
        start + line_text.len()
    };
    let from = offset(&edit["range"]["start"]);
    let to = offset(&edit["range"]["end"]);
    format!(
        "{}{}{}",
        &text[..from],
        edit["newText"].as_str().unwrap(),
        &text[to..]
    )
}

const BASE: &str = "version: 1\nname: base\nextends: standard\nvariables:\n  project:\n    description: The project\n    default: demo\n    enum: [demo, other]\npersona:\n  sections:\n    - name: house-rules\n      order: 150\n      text: Be brief about {{ project }}.\n";

/// Every method answers, on a preset with an error; nothing a client sends crashes it.
#[test]
fn every_method_answers_and_nothing_crashes_the_server() {
    let child = "version: 1\nname: child\nextends: base\ntools:\n  allow:\n    - edit_fiel\npersona:\n  sections:\n    - name: house-rules\n      order: 150\n      text: Short, for {{ project }}.\n";
    // On `minimal`, whose one `complete` section leaves no room for the child's: the
    // hover below says nothing is sent, and `section-never-sent` says so too.
    let base = BASE.replace("extends: standard", "extends: minimal");
    let dir = project(&[
        (".agent-presets/base.yaml", base.as_str()),
        (".agent-presets/child.yaml", child),
    ]);
    let root = dir.path();
    let mut client = Client::start(root);
    // Before `initialize`: refused, not a crash.
    let early = client.request_id("textDocument/hover", json!({}));
    assert_eq!(client.response(early)["error"]["code"], -32002);
    let init = client.initialize(root, &[]);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    let path = root.join(".agent-presets/child.yaml");
    let uri = client.open(&path, child);
    let list = client.diagnostics(&uri);
    let codes: BTreeSet<&str> = list.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(
        codes,
        BTreeSet::from(["P0036", "P0038", "P0103"]),
        "{list:?}"
    );
    let unknown = list.iter().find(|d| d["code"] == "P0103").unwrap();
    assert_eq!(
        unknown["range"]["start"],
        json!({"line": 5, "character": 6})
    );
    assert_eq!(unknown["range"]["end"], json!({"line": 5, "character": 15}));
    assert_eq!(unknown["severity"], 1);
    assert!(
        unknown["codeDescription"]["href"]
            .as_str()
            .unwrap()
            .contains("/codes/P0103/")
    );
    // The chain: child extends base (a file), base extends minimal (built in, no file).
    let related = unknown["relatedInformation"].as_array().unwrap();
    assert_eq!(related.len(), 1, "{related:?}");
    assert_eq!(related[0]["location"]["uri"], uri.replace("child", "base"));
    let doc = json!({"uri": uri});
    let at = |line: u32, character: u32| json!({"textDocument": doc, "position": {"line": line, "character": character}});

    // Hover: a tool of the allow list is not one (a typo); a variable in a template is.
    let hover = client.request("textDocument/hover", at(10, 28));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(
        text.contains("variable `project`") && text.contains("`demo`, `other`"),
        "{text}"
    );
    let hover = client.request("textDocument/hover", at(8, 15));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("replaces the one in `base`"), "{text}");
    // Completion: tools under `allow`, presets after `extends:`, variables in `{{ }}`.
    let labels = |result: &Value| -> Vec<String> {
        result["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_owned())
            .collect()
    };
    let tools = labels(&client.request("textDocument/completion", at(5, 8)));
    assert!(tools.contains(&"read_file".to_owned()), "{tools:?}");
    let presets = labels(&client.request("textDocument/completion", at(2, 9)));
    assert!(
        presets.contains(&"base".to_owned()) && !presets.contains(&"child".to_owned()),
        "{presets:?}"
    );
    let vars = labels(&client.request("textDocument/completion", at(10, 26)));
    assert!(
        vars.contains(&"project".to_owned()) && vars.contains(&"date".to_owned()),
        "{vars:?}"
    );
    let keys = labels(&client.request("textDocument/completion", at(3, 0)));
    assert!(keys.contains(&"variables".to_owned()), "{keys:?}");
    // Definition: `extends` to the parent file, the overriding section to the one it replaces.
    let def = client.request("textDocument/definition", at(2, 10));
    assert_eq!(def["uri"], uri.replace("child", "base"));
    let def = client.request("textDocument/definition", at(8, 15));
    assert_eq!(def["range"]["start"]["line"], 10);
    // Symbols.
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": doc}));
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["edit_fiel", "house-rules"]);
    // Quick fixes: the did-you-mean, and `override: true`.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": doc, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}, "context": {"diagnostics": []}}),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.contains(&"Replace `edit_fiel` with `edit_file`"),
        "{titles:?}"
    );
    assert!(titles.contains(&"Add `override: true`"), "{titles:?}");
    let mut fixed = child.to_owned();
    // Apply the later edit first, so the earlier one's position still holds.
    for action in actions.as_array().unwrap().iter().rev() {
        let edit = &action["edit"]["changes"][&uri][0];
        fixed = apply(&fixed, edit, true);
    }
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    let left: Vec<Value> = client.diagnostics(&uri);
    let codes: Vec<&str> = left.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["P0036"], "{fixed}");
    // Hover on a section of the now valid preset: what it renders to with the defaults
    // (nothing: `minimal`'s `complete` section leaves no room for it).
    let hover = client.request("textDocument/hover", at(8, 15));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(
        text.contains("rendered with the default values") && text.contains("nothing is sent"),
        "{text}"
    );

    // A malformed message: a parse error, and the server goes on.
    client.write_raw(b"{not json");
    let error = loop {
        let m = client.rx.recv_timeout(PATIENCE).unwrap();
        if m.get("error").is_some() && m["id"].is_null() {
            break m;
        }
    };
    assert_eq!(error["error"]["code"], -32700);
    // An unknown method.
    let id = client.request_id("textDocument/nonsense", json!({}));
    assert_eq!(client.response(id)["error"]["code"], -32601);
    // Cancellation: a request cancelled before it is read is answered as cancelled.
    client.notify("$/cancelRequest", json!({"id": 9999}));
    client.send(
        &json!({"jsonrpc": "2.0", "id": 9999, "method": "textDocument/hover", "params": at(0, 0)}),
    );
    assert_eq!(client.response(9999)["error"]["code"], -32800);
    // A request and its cancellation together: either answer, never a crash.
    let id = client.request_id("textDocument/documentSymbol", json!({"textDocument": doc}));
    client.notify("$/cancelRequest", json!({"id": id}));
    let answer = client.response(id);
    assert!(
        answer.get("result").is_some() || answer["error"]["code"] == -32800,
        "{answer}"
    );
    // A 10 MB buffer: the size limit, as on disk, and the server still answers.
    let big = format!(
        "version: 1\nname: child\n# {}\n",
        "x".repeat(10 * 1024 * 1024)
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": big}]}),
    );
    let list = client.diagnostics(&uri);
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["code"], "P0008");
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": doc}));
    assert_eq!(symbols, json!([]));
    // A YAML file outside the preset directories, without the modeline: nothing said.
    let other = root.join("config.yaml");
    let other_uri = client.open(&other, "a: [\n");
    assert_eq!(client.diagnostics(&other_uri), Vec::<Value>::new());
    assert_eq!(
        client.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": other_uri}, "position": {"line": 0, "character": 0}})
        ),
        Value::Null
    );
    client.stop();
}

/// An edit to a parent re-checks its open children.
#[test]
fn an_edit_to_a_parent_rechecks_its_open_children() {
    let child = "version: 1\nname: child\nextends: base\npersona:\n  sections:\n    - name: extra\n      order: 160\n      text: For {{ project }}.\n";
    let dir = project(&[
        (".agent-presets/base.yaml", BASE),
        (".agent-presets/child.yaml", child),
    ]);
    let root = dir.path();
    let mut client = Client::start(root);
    client.initialize(root, &["utf-16"]);
    let child_uri = client.open(&root.join(".agent-presets/child.yaml"), child);
    assert_eq!(client.diagnostics(&child_uri), Vec::<Value>::new());
    let base_uri = client.open(&root.join(".agent-presets/base.yaml"), BASE);
    assert_eq!(client.diagnostics(&base_uri), Vec::<Value>::new());
    assert_eq!(client.diagnostics(&child_uri), Vec::<Value>::new());
    // The parent no longer declares `project` (unsaved): the child's template breaks.
    let edited = BASE
        .replace("  project:\n", "  projekt:\n")
        .replace("{{ project }}", "{{ projekt }}");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": base_uri, "version": 2}, "contentChanges": [{"text": edited}]}),
    );
    assert_eq!(client.diagnostics(&base_uri), Vec::<Value>::new());
    let list = client.diagnostics(&child_uri);
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["code"], "P0041");
    assert!(
        list[0]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `projekt`?")
    );
    client.stop();
}

/// Columns in UTF-8 when the client offers it, else UTF-16, on a CRLF file with a tab,
/// an emoji and CJK text before the error on its line.
#[test]
fn positions_in_the_negotiated_encoding() {
    let text = "version: 1\r\nname: wide\r\nextends: base\r\npersona:\r\n  sections:\r\n    - name: wide\r\n      order: 160\r\n      text: 中文😀\té {{ projct }}\r\n";
    let line = text.split("\r\n").nth(7).unwrap();
    let byte = line.find("projct").unwrap();
    for (offered, name, expected) in [
        (&["utf-8", "utf-16"][..], "utf-8", byte),
        (
            &["utf-16"][..],
            "utf-16",
            line[..byte].encode_utf16().count(),
        ),
        (&[][..], "utf-16", line[..byte].encode_utf16().count()),
    ] {
        let dir = project(&[
            (".agent-presets/base.yaml", BASE),
            (".agent-presets/wide.yaml", text),
        ]);
        let root = dir.path();
        let mut client = Client::start(root);
        let init = client.initialize(root, offered);
        assert_eq!(init["capabilities"]["positionEncoding"], name);
        let uri = client.open(&root.join(".agent-presets/wide.yaml"), text);
        let list = client.diagnostics(&uri);
        assert_eq!(list.len(), 1, "{list:?}");
        assert_eq!(list[0]["code"], "P0041");
        assert_eq!(
            list[0]["range"]["start"],
            json!({"line": 7, "character": expected}),
            "{name}"
        );
        let width = "projct".len();
        assert_eq!(list[0]["range"]["end"]["character"], expected + width);
        // The quick fix lands on the same place, in the same units.
        let actions = client.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": list[0]["range"], "context": {"diagnostics": list}}),
        );
        let edit = &actions[0]["edit"]["changes"][&uri][0];
        let fixed = apply(text, edit, name == "utf-16");
        assert!(fixed.contains("é {{ project }}\r\n"), "{fixed}");
        client.stop();
    }
}

/// The diagnostics of every preset file of every `validate` case folder are those
/// `validate --format json` reports for it: codes, severities, positions, messages.
#[test]
fn diagnostics_equal_validate_json_on_every_case_folder() {
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/validate");
    let mut compared = 0;
    let mut dirs: Vec<PathBuf> = fs::read_dir(&cases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    let mut problems = Vec::new();
    for case in dirs {
        let expected: Value =
            serde_json::from_str(&fs::read_to_string(case.join("expected.json")).unwrap()).unwrap();
        // Cases that validate something else than the project as found (arguments,
        // standard input, another directory or environment) are not what an editor sees.
        let default_args = expected
            .get("args")
            .is_none_or(|a| a == &json!(["validate", "--format", "json"]));
        if !default_args
            || ["cwd", "stdin", "stdinFile", "env"]
                .iter()
                .any(|k| expected.get(k).is_some())
        {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        copy(&case, dir.path());
        let root = dir.path();
        let output = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
            .args(["--no-user", "validate", "--format", "json"])
            .current_dir(root)
            .env("AGENT_PRESETS_CONFIG_DIR", root.join(".test-config"))
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        let presets = root.join(".agent-presets");
        let Ok(entries) = fs::read_dir(&presets) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
            .collect();
        files.sort();
        let mut client = Client::start(root);
        client.initialize(root, &["utf-8"]);
        for file in files {
            let Ok(text) = fs::read_to_string(&file) else {
                continue;
            };
            let shown = file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let want: Vec<(String, String, u32, u32, String)> = report["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["file"] == shown.as_str())
                .map(|d| {
                    let line = d["line"].as_u64().unwrap() as u32 - 1;
                    let column = d["column"].as_u64().unwrap() as usize - 1;
                    let line_text = line_of(&text, line);
                    let byte = line_text
                        .char_indices()
                        .nth(column)
                        .map_or(line_text.len(), |(i, _)| i);
                    let mut message = d["message"].as_str().unwrap().to_owned();
                    if let Some(help) = d["help"].as_str() {
                        message = format!("{message}\nhelp: {help}");
                    }
                    (
                        d["code"].as_str().unwrap().to_owned(),
                        d["severity"].as_str().unwrap().to_owned(),
                        line,
                        byte as u32,
                        message,
                    )
                })
                .collect();
            let uri = client.open(&file, &text);
            let got: Vec<(String, String, u32, u32, String)> = client
                .diagnostics(&uri)
                .iter()
                .map(|d| {
                    let severity = if d["severity"] == 1 {
                        "error"
                    } else {
                        "warning"
                    };
                    (
                        d["code"].as_str().unwrap().to_owned(),
                        severity.to_owned(),
                        d["range"]["start"]["line"].as_u64().unwrap() as u32,
                        d["range"]["start"]["character"].as_u64().unwrap() as u32,
                        d["message"].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            if got != want {
                problems.push(format!(
                    "{}: {shown}\n  lsp:      {got:?}\n  validate: {want:?}",
                    case.display()
                ));
            }
            compared += 1;
        }
        client.stop();
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(compared > 100, "only {compared} files compared");
}

fn line_of(text: &str, line: u32) -> &str {
    let raw = text.split('\n').nth(line as usize).unwrap_or_default();
    raw.strip_suffix('\r').unwrap_or(raw)
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &target);
        } else if entry.file_name() != "expected.json" {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A real client: Neovim headless (the Debian package, 0.7) opens a preset with an error,
/// gets the diagnostic at its range, applies the quick fix and gets a clean file. In CI
/// Neovim must be there (.ci/run installs it); elsewhere the test says it skipped.
#[test]
fn neovim_opens_fixes_and_cleans_a_preset() {
    let found = Command::new("nvim")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "nvim is required in CI (.ci/run installs the neovim package)"
        );
        eprintln!(
            "SKIPPED neovim_opens_fixes_and_cleans_a_preset: no `nvim` on PATH (apt-get install neovim)"
        );
        return;
    }
    let dir = project(&[(
        ".agent-presets/demo.yaml",
        "version: 1\nname: demo\nextends: minimal\ntools:\n  allow:\n    - edit_fiel\n",
    )]);
    let root = dir.path();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/nvim_client.lua");
    let out = root.join("nvim-out.txt");
    let status = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .arg(".agent-presets/demo.yaml")
        .current_dir(root)
        .env("LSP_TEST_BIN", env!("CARGO_BIN_EXE_agent-presets"))
        .env("LSP_TEST_OUT", &out)
        .env("AGENT_PRESETS_CONFIG_DIR", root.join(".test-config"))
        .env("XDG_STATE_HOME", root.join(".state"))
        .env("XDG_DATA_HOME", root.join(".data"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let log = fs::read_to_string(&out).unwrap_or_default();
    assert!(status.success(), "{status}: {log}");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "diagnostic P0103 5:6-5:15 unknown tool `edit_fiel` | help: did you mean `edit_file`?",
            "action Replace `edit_fiel` with `edit_file`",
            "line     - edit_file",
            "clean",
        ],
        "{log}"
    );
    assert!(lines[4].starts_with("hover **tool `edit_file`**"), "{log}");
    assert_eq!(
        fs::read_to_string(root.join(".agent-presets/demo.yaml")).unwrap(),
        "version: 1\nname: demo\nextends: minimal\ntools:\n  allow:\n    - edit_fiel\n",
        "the fix is in the buffer, not written to disk"
    );
}

/// Lock drift is checked on save, not while typing: a prefix that no longer matches
/// `presets.lock` is `prefix-drift` once the file is saved.
#[test]
fn lock_drift_on_save_only() {
    // Without a section of its own: one beside `minimal`'s `complete` one is never sent
    // (a `section-never-sent` warning this test is not about).
    const BASE: &str = "version: 1\nname: base\nextends: minimal\n";
    let dir = project(&[(".agent-presets/base.yaml", BASE)]);
    let root = dir.path();
    let locked = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
        .args(["--no-user", "lock"])
        .current_dir(root)
        .env("AGENT_PRESETS_CONFIG_DIR", root.join(".test-config"))
        .output()
        .unwrap();
    assert!(locked.status.success(), "{locked:?}");
    let mut client = Client::start(root);
    client.initialize(root, &[]);
    let path = root.join(".agent-presets/base.yaml");
    let uri = client.open(&path, BASE);
    assert_eq!(client.diagnostics(&uri), Vec::<Value>::new());
    // (minimal's prompt is one complete section: the tool list is what changes.)
    let edited = format!("{BASE}tools:\n  deny:\n    - bash\n");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": edited}]}),
    );
    assert_eq!(
        client.diagnostics(&uri),
        Vec::<Value>::new(),
        "no drift while typing"
    );
    fs::write(&path, &edited).unwrap();
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    let list = client.diagnostics(&uri);
    let codes: Vec<&str> = list.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["P0302"], "{list:?}");
    client.stop();
}
