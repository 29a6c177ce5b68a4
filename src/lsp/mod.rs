//! The language server (`agent-presets lsp`, feature `lsp`): the validator under an
//! editor's cursor. It serves the project the CLI sees (the project directory, preset
//! directories, the lock, locale packs) with the editor's open buffers read instead of
//! the files on disk, and answers:
//!
//! - diagnostics on open, change (debounced) and save: what `validate --format json`
//!   reports for that file (same codes, severities, positions), with a link to each
//!   code's page and the `extends` chain as related information; an edit to a parent
//!   re-checks its open children; lock drift (`validate --locked`) on save;
//! - hover, completion, go to definition, document symbols and quick fixes
//!   (`features.rs`).
//!
//! Positions are counted in UTF-8 when the client offers it, else UTF-16 (`text.rs`).
//! The transport is read here, not by `lsp-server`'s stdio threads: a malformed message
//! is answered with a parse error and the server goes on. One thread validates; a second
//! one only reads the input. The library never prints: the host hands in the streams.

mod check;
mod features;
mod text;

pub use check::Checker;
pub use text::Encoding;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};

use crate::project::ProjectOptions;

/// How long after the last change a buffer is checked.
const DEBOUNCE: Duration = Duration::from_millis(150);
/// The largest message read (a 10 MB buffer fits, with room).
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// What the input thread hands the server.
enum Incoming {
    Message(Message),
    /// A message that could not be read as JSON-RPC: answered with a parse error.
    Malformed(String),
}

/// Serve the language server protocol on `input` / `output` until `exit` (or the end
/// of the input). `options` are the CLI's global options; without a project directory,
/// the client's workspace root is the project.
pub fn serve<R, W>(input: R, output: W, options: ProjectOptions) -> io::Result<()>
where
    R: BufRead + Send + 'static,
    W: Write,
{
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("lsp-reader".into())
        .spawn(move || read_messages(input, &tx))?;
    let mut server = Server::new(output, options);
    server.run(&rx)
}

/// Read framed messages until the input ends.
fn read_messages<R: BufRead>(mut input: R, tx: &mpsc::Sender<Incoming>) {
    loop {
        match read_frame(&mut input) {
            Ok(None) => return,
            Ok(Some(body)) => {
                let event = match serde_json::from_slice::<Message>(&body) {
                    Ok(message) => Incoming::Message(message),
                    Err(e) => Incoming::Malformed(e.to_string()),
                };
                if tx.send(event).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                if tx.send(Incoming::Malformed(e.to_string())).is_err() {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}

/// One `Content-Length`-framed body; `None` at the end of the input. A frame without a
/// length, or too long, is `InvalidData` (its headers are consumed, the reader goes on).
fn read_frame<R: BufRead>(input: &mut R) -> io::Result<Option<Vec<u8>>> {
    let mut length: Option<usize> = None;
    let mut line = String::new();
    let mut any = false;
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return if any {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the input ended inside a header",
                ))
            } else {
                Ok(None)
            };
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if any {
                break;
            }
            continue;
        }
        any = true;
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
    }
    let Some(length) = length else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a message without a valid Content-Length header",
        ));
    };
    if length > MAX_MESSAGE_BYTES {
        // Skip it, so the next frame is read from its start.
        io::copy(
            &mut io::Read::take(&mut *input, length as u64),
            &mut io::sink(),
        )?;
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message of {length} bytes, more than the {MAX_MESSAGE_BYTES} read"),
        ));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

/// One open buffer.
struct Document {
    path: PathBuf,
    text: String,
    version: i32,
}

struct Server<W: Write> {
    out: W,
    options: ProjectOptions,
    encoding: Encoding,
    checker: Option<check::Checker>,
    docs: HashMap<String, Document>,
    /// Buffers to check, by when.
    pending: BTreeMap<String, Instant>,
    /// Lock drift found on the last save, by buffer.
    drift: HashMap<String, Vec<crate::Diagnostic>>,
    /// What was published for each buffer (for quick fixes).
    published: HashMap<String, Vec<check::Published>>,
    cancelled: HashSet<RequestId>,
    queue: VecDeque<Incoming>,
    shutdown: bool,
}

impl<W: Write> Server<W> {
    fn new(out: W, options: ProjectOptions) -> Self {
        Server {
            out,
            options,
            encoding: Encoding::Utf16,
            checker: None,
            docs: HashMap::new(),
            pending: BTreeMap::new(),
            drift: HashMap::new(),
            published: HashMap::new(),
            cancelled: HashSet::new(),
            queue: VecDeque::new(),
            shutdown: false,
        }
    }

    fn run(&mut self, rx: &mpsc::Receiver<Incoming>) -> io::Result<()> {
        loop {
            // Everything already sent is queued first, so a cancellation is seen before
            // the request it cancels is answered.
            while let Ok(event) = rx.try_recv() {
                self.note(&event);
                self.queue.push_back(event);
            }
            let event = match self.queue.pop_front() {
                Some(event) => event,
                None => {
                    let wait = self
                        .pending
                        .values()
                        .min()
                        .map(|due| due.saturating_duration_since(Instant::now()));
                    let received = match wait {
                        Some(wait) => rx.recv_timeout(wait),
                        None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
                    };
                    match received {
                        Ok(event) => {
                            self.note(&event);
                            event
                        }
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            self.check_due()?;
                            continue;
                        }
                        Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
                    }
                }
            };
            match event {
                Incoming::Malformed(reason) => self.send_raw(&json!({
                    "jsonrpc": "2.0",
                    "id": null,
                    "error": {"code": ErrorCode::ParseError as i32, "message": reason},
                }))?,
                Incoming::Message(Message::Request(request)) => self.request(request)?,
                Incoming::Message(Message::Notification(n)) => {
                    if n.method == "exit" {
                        return Ok(());
                    }
                    self.notification(n)?;
                }
                Incoming::Message(Message::Response(_)) => {}
            }
        }
    }

    /// Remember cancellations as they arrive.
    fn note(&mut self, event: &Incoming) {
        if let Incoming::Message(Message::Notification(n)) = event
            && n.method == "$/cancelRequest"
        {
            let id = match n.params.get("id") {
                Some(Value::Number(n)) => n.as_i64().map(|n| RequestId::from(n as i32)),
                Some(Value::String(s)) => Some(RequestId::from(s.clone())),
                _ => None,
            };
            if let Some(id) = id {
                self.cancelled.insert(id);
            }
        }
    }

    fn request(&mut self, request: Request) -> io::Result<()> {
        let id = request.id.clone();
        if self.cancelled.remove(&id) {
            return self.error(id, ErrorCode::RequestCanceled, "cancelled");
        }
        if request.method == "initialize" {
            return match self.initialize(&request.params) {
                Ok(result) => self.respond(id, result),
                Err(message) => self.error(id, ErrorCode::InternalError, &message),
            };
        }
        if self.checker.is_none() {
            return self.error(id, ErrorCode::ServerNotInitialized, "initialize first");
        }
        if self.shutdown {
            return self.error(id, ErrorCode::InvalidRequest, "the server is shutting down");
        }
        let result = match request.method.as_str() {
            "shutdown" => {
                self.shutdown = true;
                Ok(Value::Null)
            }
            "textDocument/hover" => self.with_doc(&request.params, features::hover),
            "textDocument/completion" => self.with_doc(&request.params, features::completion),
            "textDocument/definition" => self.with_doc(&request.params, features::definition),
            "textDocument/documentSymbol" => self.with_doc(&request.params, features::symbols),
            "textDocument/codeAction" => {
                let uri = uri_of(&request.params);
                let published = self.published.get(&uri).map_or(&[][..], Vec::as_slice);
                match self.docs.get(&uri) {
                    Some(doc) => Ok(features::code_actions(
                        &uri,
                        doc,
                        published,
                        &request.params,
                        self.encoding,
                    )),
                    None => Ok(Value::Null),
                }
            }
            other => Err((
                ErrorCode::MethodNotFound,
                format!("`{other}` is not a method this server has"),
            )),
        };
        match result {
            Ok(value) => self.respond(id, value),
            Err((code, message)) => self.error(id, code, &message),
        }
    }

    /// A request about a position in an open buffer.
    fn with_doc(
        &mut self,
        params: &Value,
        f: fn(&features::Context<'_>, &Value) -> Value,
    ) -> Result<Value, (ErrorCode, String)> {
        let uri = uri_of(params);
        let (Some(doc), Some(checker)) = (self.docs.get(&uri), self.checker.as_mut()) else {
            return Ok(Value::Null);
        };
        if !checker.is_preset(&doc.path, &doc.text) {
            return Ok(Value::Null);
        }
        let context = features::Context {
            path: &doc.path,
            text: &doc.text,
            encoding: self.encoding,
            checker,
        };
        Ok(f(&context, params))
    }

    fn initialize(&mut self, params: &Value) -> Result<Value, String> {
        let offered: Vec<&str> = params
            .pointer("/capabilities/general/positionEncodings")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        self.encoding = if offered.contains(&"utf-8") {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        let root = params
            .pointer("/workspaceFolders/0/uri")
            .or_else(|| params.get("rootUri"))
            .and_then(Value::as_str)
            .and_then(path_of_uri)
            .or_else(|| {
                params
                    .get("rootPath")
                    .and_then(Value::as_str)
                    .map(PathBuf::from)
            });
        let mut options = self.options.clone();
        if options.project_dir.is_none() {
            options.project_dir = root;
        }
        self.checker = Some(check::Checker::new(options)?);
        let encoding = match self.encoding {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
        };
        Ok(json!({
            "capabilities": {
                "positionEncoding": encoding,
                "textDocumentSync": {"openClose": true, "change": 1, "save": {"includeText": false}},
                "hoverProvider": true,
                "completionProvider": {"triggerCharacters": [":", " ", "{", "-", "_"]},
                "definitionProvider": true,
                "documentSymbolProvider": true,
                "codeActionProvider": {"codeActionKinds": ["quickfix"]},
            },
            "serverInfo": {"name": "agent-presets", "version": env!("CARGO_PKG_VERSION")},
        }))
    }

    fn notification(&mut self, n: Notification) -> io::Result<()> {
        if self.checker.is_none() {
            return Ok(());
        }
        let uri = uri_of(&n.params);
        match n.method.as_str() {
            "textDocument/didOpen" => {
                let doc = &n.params["textDocument"];
                let (Some(text), Some(path)) = (doc["text"].as_str(), path_of_uri(&uri)) else {
                    return Ok(());
                };
                let version = doc["version"].as_i64().unwrap_or(0) as i32;
                self.open(uri, path, text.to_owned(), version)?;
            }
            "textDocument/didChange" => {
                let version = n.params["textDocument"]["version"].as_i64().unwrap_or(0) as i32;
                // Full sync: the last change holds the whole text.
                let text = n.params["contentChanges"]
                    .as_array()
                    .and_then(|c| c.last())
                    .and_then(|c| c["text"].as_str());
                if let (Some(text), Some(doc)) = (text, self.docs.get_mut(&uri)) {
                    doc.text = text.to_owned();
                    doc.version = version;
                    self.pending.insert(uri, Instant::now() + DEBOUNCE);
                }
            }
            "textDocument/didSave" if self.docs.contains_key(&uri) => {
                self.pending.remove(&uri);
                self.save(&uri);
                self.check_now(&uri)?;
            }
            "textDocument/didClose" => {
                self.pending.remove(&uri);
                self.published.remove(&uri);
                self.drift.remove(&uri);
                if let Some(doc) = self.docs.remove(&uri) {
                    if let Some(checker) = self.checker.as_mut() {
                        checker.close(&doc.path);
                    }
                    self.publish(&uri, None, Vec::new())?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn open(&mut self, uri: String, path: PathBuf, text: String, version: i32) -> io::Result<()> {
        self.docs.insert(
            uri.clone(),
            Document {
                path,
                text,
                version,
            },
        );
        self.check_now(&uri)
    }

    fn save(&mut self, uri: &str) {
        let (Some(doc), Some(checker)) = (self.docs.get(uri), self.checker.as_mut()) else {
            return;
        };
        checker.rediscover_if_new(&doc.path);
        let drift = checker.drift(&doc.path, &doc.text);
        self.drift.insert(uri.to_owned(), drift);
    }

    /// Check every buffer whose time has come.
    fn check_due(&mut self) -> io::Result<()> {
        let now = Instant::now();
        let due: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(u, _)| u.clone())
            .collect();
        for uri in due {
            self.pending.remove(&uri);
            self.check_now(&uri)?;
        }
        Ok(())
    }

    /// Check `uri` now, then its open children (whose diagnostics an edit to it can change).
    fn check_now(&mut self, uri: &str) -> io::Result<()> {
        let Some(checker) = self.checker.as_mut() else {
            return Ok(());
        };
        // Every open buffer is read from its text.
        for doc in self.docs.values() {
            checker.overlay(&doc.path, &doc.text);
        }
        let Some(doc) = self.docs.get(uri) else {
            return Ok(());
        };
        let children = checker.open_children(&doc.path, self.docs.values().map(|d| &*d.path));
        let mut order = vec![uri.to_owned()];
        for child in children {
            if let Some((u, _)) = self.docs.iter().find(|(_, d)| d.path == child)
                && !order.contains(u)
            {
                order.push(u.clone());
            }
        }
        for uri in order {
            let Some(doc) = self.docs.get(&uri) else {
                continue;
            };
            let Some(checker) = self.checker.as_mut() else {
                return Ok(());
            };
            let mut found = checker.diagnostics(&doc.path, &doc.text);
            if let (Some(found), Some(drift)) = (found.as_mut(), self.drift.get(&uri)) {
                found.extend(drift.iter().cloned());
            }
            let version = doc.version;
            let published = match found {
                Some(list) => checker.published(&doc.text, list, self.encoding),
                None => Vec::new(),
            };
            let lsp: Vec<Value> = published.iter().map(|p| p.lsp.clone()).collect();
            self.published.insert(uri.clone(), published);
            self.publish(&uri, Some(version), lsp)?;
        }
        Ok(())
    }

    fn publish(&mut self, uri: &str, version: Option<i32>, list: Vec<Value>) -> io::Result<()> {
        let mut params = json!({"uri": uri, "diagnostics": list});
        if let Some(version) = version {
            params["version"] = json!(version);
        }
        self.send(Message::Notification(Notification::new(
            "textDocument/publishDiagnostics".into(),
            params,
        )))
    }

    fn respond(&mut self, id: RequestId, result: Value) -> io::Result<()> {
        self.send(Message::Response(Response::new_ok(id, result)))
    }

    fn error(&mut self, id: RequestId, code: ErrorCode, message: &str) -> io::Result<()> {
        self.send(Message::Response(Response::new_err(
            id,
            code as i32,
            message.to_owned(),
        )))
    }

    fn send(&mut self, message: Message) -> io::Result<()> {
        let value = serde_json::to_value(&message).map_err(io::Error::other)?;
        self.send_raw(&value)
    }

    fn send_raw(&mut self, value: &Value) -> io::Result<()> {
        let body = serde_json::to_vec(value).map_err(io::Error::other)?;
        write!(self.out, "Content-Length: {}\r\n\r\n", body.len())?;
        self.out.write_all(&body)?;
        self.out.flush()
    }
}

/// `params.textDocument.uri`.
fn uri_of(params: &Value) -> String {
    params["textDocument"]["uri"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The path of a `file:` URI (percent-decoded).
pub(crate) fn path_of_uri(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = rest.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    let text = String::from_utf8(out).ok()?;
    Some(PathBuf::from(text))
}

/// The `file:` URI of an absolute path (percent-encoded as editors write them).
pub(crate) fn uri_of_path(path: &Path) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_and_paths_round_trip() {
        let path = Path::new("/tmp/a b/ü.yaml");
        let uri = uri_of_path(path);
        assert_eq!(uri, "file:///tmp/a%20b/%C3%BC.yaml");
        assert_eq!(path_of_uri(&uri).as_deref(), Some(path));
        assert_eq!(path_of_uri("untitled:1"), None);
    }

    #[test]
    fn frames_are_read_and_bad_ones_skipped() {
        let input = b"Content-Length: 2\r\n\r\n{}X-Other: 1\r\n\r\nContent-Length: 4\r\n\r\nnull";
        let mut reader = &input[..];
        assert_eq!(read_frame(&mut reader).unwrap().unwrap(), b"{}");
        assert_eq!(
            read_frame(&mut reader).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        assert_eq!(read_frame(&mut reader).unwrap().unwrap(), b"null");
        assert!(read_frame(&mut reader).unwrap().is_none());
    }
}
