//! [`OutputLimits`]: how much text one tool result may carry, and the helpers that cut
//! text down to it with a visible marker saying what was cut and how to see more.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::texts::{
    TOOL_BASH_RESULT_OMITTED, TOOLS_OUTPUT_LINE_CUT, TOOLS_OUTPUT_LINE_CUT_BEFORE,
    TOOLS_OUTPUT_TRUNCATED, Texts,
};
use tokio::task::JoinHandle;

/// Caps on the text a built-in tool hands back to the model. A result that would exceed
/// them is cut, and the cut is announced in the result itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimits {
    /// Most bytes of text in one result (`bash` splits this between stdout and stderr).
    pub max_bytes: usize,
    /// Most lines in one result; also `read_file`'s default and largest `limit`.
    pub max_lines: usize,
    /// Longest line shown in full; longer lines are cut with a marker.
    pub max_line_chars: usize,
}

impl OutputLimits {
    /// The defaults: 50 000 bytes, 2 000 lines, 2 000 characters per line.
    pub const DEFAULT: OutputLimits = OutputLimits {
        max_bytes: 50_000,
        max_lines: 2_000,
        max_line_chars: 2_000,
    };
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits::DEFAULT
    }
}

/// `line`, or its first `max_chars` characters plus a marker naming how many were cut.
pub(crate) fn cut_line(line: &str, max_chars: usize, texts: &Texts) -> String {
    match line.char_indices().nth(max_chars) {
        None => line.to_owned(),
        Some((end, _)) => {
            let rest = line[end..].chars().count();
            format!(
                "{}{}",
                &line[..end],
                texts.render(&TOOLS_OUTPUT_LINE_CUT, &[("count", &rest.to_string())])
            )
        }
    }
}

/// Longest piece of model-given input (a path, a pattern) repeated in a message.
pub(crate) const MAX_ECHO_CHARS: usize = 200;

/// `input` as it may appear in a message: its first [`MAX_ECHO_CHARS`] characters and an
/// ellipsis naming the length when it is longer, so a huge argument cannot make a huge
/// error.
/// Put into a tool's text, the note of the length is a text too (`tools.cut`); shown
/// with `Display` (a message outside the texts), it is English.
pub(crate) fn echo(input: &str) -> Echoed<'_> {
    match input.char_indices().nth(MAX_ECHO_CHARS) {
        None => Echoed::Whole(input),
        Some((end, _)) => Echoed::Cut {
            start: &input[..end],
            count: input.chars().count(),
        },
    }
}

/// What [`echo`] gives.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Echoed<'a> {
    /// Short enough: all of it.
    Whole(&'a str),
    /// Its first characters and how many it has in all.
    Cut { start: &'a str, count: usize },
}

impl Echoed<'_> {
    /// Told in `texts`.
    pub(crate) fn told(self, texts: &crate::texts::Texts) -> String {
        match self {
            Echoed::Whole(s) => s.to_owned(),
            Echoed::Cut { start, count } => texts.render(
                &crate::texts::TOOLS_CUT,
                &[("start", start), ("count", &count.to_string())],
            ),
        }
    }
}

impl From<&Echoed<'_>> for crate::tools::TextValue {
    fn from(e: &Echoed<'_>) -> Self {
        (*e).into()
    }
}

impl std::fmt::Display for Echoed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Echoed::Whole(s) => f.write_str(s),
            Echoed::Cut { start, count } => write!(f, "{start}… ({count} characters in all)"),
        }
    }
}

impl From<Echoed<'_>> for crate::tools::TextValue {
    fn from(e: Echoed<'_>) -> Self {
        match e {
            Echoed::Whole(s) => crate::tools::TextValue::Plain(s.to_owned()),
            Echoed::Cut { start, count } => crate::tools::TextValue::Cut {
                start: start.to_owned(),
                count,
            },
        }
    }
}

/// `line` cut to about `max_chars` characters around `focus` (a byte range, e.g. a
/// regex match), with a marker on each side that was cut naming how many characters it
/// hides. The focus starts inside the window even when it is longer than the window.
pub(crate) fn cut_line_around(
    line: &str,
    focus: Range<usize>,
    max_chars: usize,
    texts: &Texts,
) -> String {
    let total = line.chars().count();
    if total <= max_chars {
        return line.to_owned();
    }
    let focus_start = line[..focus.start.min(line.len())].chars().count();
    let focus_len = line
        .get(focus.start..focus.end.min(line.len()))
        .map_or(0, |f| f.chars().count());
    // Centre the focus; a focus longer than the window starts it.
    let lead = max_chars.saturating_sub(focus_len) / 2;
    let start = focus_start.saturating_sub(lead).min(total - max_chars);
    let end = start + max_chars;
    let byte = |chars: usize| {
        line.char_indices()
            .nth(chars)
            .map_or(line.len(), |(i, _)| i)
    };
    let mut out = String::with_capacity(max_chars * 4 + 80);
    if start > 0 {
        out.push_str(&texts.render(
            &TOOLS_OUTPUT_LINE_CUT_BEFORE,
            &[("count", &start.to_string())],
        ));
    }
    out.push_str(&line[byte(start)..byte(end)]);
    if end < total {
        out.push_str(&texts.render(
            &TOOLS_OUTPUT_LINE_CUT,
            &[("count", &(total - end).to_string())],
        ));
    }
    out
}

/// Keep whole lines of `text` from the start while they fit `max_lines` and `max_bytes`;
/// when something is cut, append a marker naming what was cut and `how_to_see_more`.
pub(crate) fn cap_text(
    text: &str,
    limits: &OutputLimits,
    texts: &Texts,
    how_to_see_more: &str,
) -> String {
    let mut kept = 0usize;
    for (lines, line) in text.split_inclusive('\n').enumerate() {
        if lines == limits.max_lines || kept + line.len() > limits.max_bytes {
            break;
        }
        kept += line.len();
    }
    if kept == text.len() {
        return text.to_owned();
    }
    let rest = &text[kept..];
    let mut out = String::with_capacity(kept + 200);
    out.push_str(&text[..kept]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&texts.render(
        &TOOLS_OUTPUT_TRUNCATED,
        &[
            ("lines", &line_count(rest.as_bytes()).to_string()),
            ("bytes", &rest.len().to_string()),
            ("how", how_to_see_more),
        ],
    ));
    out
}

/// Number of lines in `bytes`, counting an unterminated last line.
pub(crate) fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    match bytes.last() {
        Some(b'\n') | None => newlines,
        Some(_) => newlines + 1,
    }
}

/// A byte stream kept within a budget: the first `head_cap` bytes and the last `tail_cap`
/// bytes, with the total counted, so errors at the end of long output are not lost.
#[derive(Debug)]
pub(crate) struct StreamCapture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total_bytes: u64,
    total_newlines: u64,
    ends_with_newline: bool,
}

impl StreamCapture {
    /// A capture keeping about `budget` bytes: half from the start, half from the end.
    pub(crate) fn new(budget: usize) -> Self {
        let head_cap = budget / 2;
        StreamCapture {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap: budget - head_cap,
            total_bytes: 0,
            total_newlines: 0,
            ends_with_newline: true,
        }
    }

    /// Record a chunk of the stream.
    pub(crate) fn push(&mut self, mut chunk: &[u8]) {
        let Some(&last) = chunk.last() else { return };
        self.total_bytes += chunk.len() as u64;
        self.total_newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        self.ends_with_newline = last == b'\n';
        let room = self.head_cap.saturating_sub(self.head.len());
        let into_head = room.min(chunk.len());
        self.head.extend_from_slice(&chunk[..into_head]);
        chunk = &chunk[into_head..];
        if chunk.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&chunk[chunk.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + chunk.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(chunk);
        }
    }

    /// Lines in the whole stream (an unterminated last line counts).
    fn total_lines(&self) -> u64 {
        if self.total_bytes == 0 {
            0
        } else {
            self.total_newlines + u64::from(!self.ends_with_newline)
        }
    }

    /// The kept text, at most `max_lines` lines, with a marker in the middle naming what
    /// was left out of stream `name` and how to see all of it.
    /// The bytes kept (beginning and end), for looking for a sign in them.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut out = self.head.clone();
        out.extend(self.tail.iter().copied());
        out
    }

    pub(crate) fn render(&self, max_lines: usize, name: &str, texts: &Texts) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let gap = self.total_bytes - (self.head.len() + tail.len()) as u64;
        let head_lines = max_lines / 2;
        let tail_lines = max_lines - head_lines;
        let (shown_head, shown_tail): (Vec<u8>, Vec<u8>) = if gap == 0 {
            let all = [self.head.as_slice(), tail.as_slice()].concat();
            if line_count(&all) <= max_lines {
                return String::from_utf8_lossy(&all).into_owned();
            }
            (
                first_lines(&all, head_lines).to_vec(),
                last_lines(&all, tail_lines).to_vec(),
            )
        } else {
            // Cut at line boundaries so no half line (or half character) is shown.
            let head = match self.head.iter().rposition(|&b| b == b'\n') {
                Some(i) => &self.head[..=i],
                None => &self.head[..],
            };
            let tail = match tail.iter().position(|&b| b == b'\n') {
                Some(i) if i + 1 < tail.len() => &tail[i + 1..],
                _ => &tail[..],
            };
            (
                first_lines(head, head_lines).to_vec(),
                last_lines(tail, tail_lines).to_vec(),
            )
        };
        let omitted_bytes = self
            .total_bytes
            .saturating_sub((shown_head.len() + shown_tail.len()) as u64);
        let omitted_lines = self
            .total_lines()
            .saturating_sub((line_count(&shown_head) + line_count(&shown_tail)) as u64);
        let mut out = String::from_utf8_lossy(&shown_head).into_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&texts.render(
            &TOOL_BASH_RESULT_OMITTED,
            &[
                ("bytes", &omitted_bytes.to_string()),
                ("lines", &omitted_lines.to_string()),
                ("stream", name),
            ],
        ));
        out.push('\n');
        out.push_str(&String::from_utf8_lossy(&shown_tail));
        out
    }
}

/// The first `n` lines of `bytes` (with their terminators).
fn first_lines(bytes: &[u8], n: usize) -> &[u8] {
    let mut seen = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            seen += 1;
            if seen == n {
                return &bytes[..=i];
            }
        }
    }
    if n == 0 { &bytes[..0] } else { bytes }
}

/// The last `n` lines of `bytes`.
fn last_lines(bytes: &[u8], n: usize) -> &[u8] {
    if n == 0 {
        return &bytes[bytes.len()..];
    }
    // A trailing newline ends the last line; it does not start a new one.
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let mut seen = 0;
    for (i, &b) in body.iter().enumerate().rev() {
        if b == b'\n' {
            seen += 1;
            if seen == n {
                return &bytes[i + 1..];
            }
        }
    }
    bytes
}

// The pipes of a command (`bash`, command tools) read into captures.

/// What is left of a capture, leaving an empty one behind.
pub(crate) fn take(capture: &Arc<Mutex<StreamCapture>>) -> StreamCapture {
    let mut guard = capture.lock().unwrap_or_else(|p| p.into_inner());
    std::mem::replace(&mut *guard, StreamCapture::new(0))
}

/// Copy a pipe into a capture until EOF.
pub(crate) async fn pump(mut pipe: impl AsyncRead + Unpin, capture: Arc<Mutex<StreamCapture>>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => capture
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(&buf[..n]),
        }
    }
}

/// The pipe readers; aborted when dropped, so none outlives the call.
pub(crate) struct Readers(pub(crate) Vec<JoinHandle<()>>);

impl Readers {
    /// Let the readers drain what is left, for at most `grace`.
    pub(crate) async fn finish(&mut self, grace: Duration) {
        let _ = tokio::time::timeout(grace, async {
            for handle in &mut self.0 {
                let _ = handle.await;
            }
        })
        .await;
    }
}

impl Drop for Readers {
    fn drop(&mut self) {
        for handle in &self.0 {
            handle.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_line_marks_what_was_cut() {
        let en = Texts::english();
        assert_eq!(cut_line("abc", 3, &en), "abc");
        assert_eq!(
            cut_line("abcdef", 3, &en),
            "abc… [line cut: 3 more characters]"
        );
        assert_eq!(cut_line("ééé", 1, &en), "é… [line cut: 2 more characters]");
    }

    #[test]
    fn echo_cuts_long_input_with_an_ellipsis() {
        assert_eq!(echo("short").to_string(), "short");
        let long = "x".repeat(100_000);
        let shown = echo(&long).to_string();
        assert!(shown.len() < 300, "{shown}");
        assert!(shown.ends_with("… (100000 characters in all)"), "{shown}");
        let mut german = crate::texts::Texts::new(Some("de".into()));
        german.set(
            crate::texts::TOOLS_CUT.id,
            "{{ start }}… ({{ count }} Zeichen insgesamt)",
            crate::texts::TextSource::Builtin,
        );
        assert!(
            echo(&long)
                .told(&german)
                .ends_with("… (100000 Zeichen insgesamt)")
        );
    }

    #[test]
    fn cut_line_around_keeps_the_focus_and_marks_both_sides() {
        let line = format!("{}NEEDLE{}", "a".repeat(1000), "b".repeat(1000));
        let out = cut_line_around(&line, 1000..1006, 100, &Texts::english());
        assert!(out.contains("NEEDLE"), "{out}");
        assert!(
            out.starts_with("[line cut: 953 characters before] …"),
            "{out}"
        );
        assert!(out.ends_with("… [line cut: 953 more characters]"), "{out}");
        // Near the start only the end is cut; short lines are untouched.
        let out = cut_line_around(&line, 0..1, 10, &Texts::english());
        assert_eq!(out, "aaaaaaaaaa… [line cut: 1996 more characters]");
        assert_eq!(cut_line_around("abc", 1..2, 10, &Texts::english()), "abc");
        // Near the end only the start is cut.
        let out = cut_line_around(&line, 2005..2006, 10, &Texts::english());
        assert_eq!(out, "[line cut: 1996 characters before] …bbbbbbbbbb");
    }

    #[test]
    fn cap_text_keeps_whole_lines_and_says_how_much_was_cut() {
        let limits = OutputLimits {
            max_bytes: 1000,
            max_lines: 2,
            max_line_chars: 100,
        };
        let out = cap_text("a\nb\nc\nd", &limits, &Texts::english(), "see more");
        assert_eq!(
            out,
            "a\nb\n[... output truncated: 2 more lines (3 bytes) not shown; see more]"
        );
        assert_eq!(
            cap_text("a\nb\n", &limits, &Texts::english(), "x"),
            "a\nb\n"
        );
    }

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = StreamCapture::new(20);
        for i in 0..100 {
            c.push(format!("line {i}\n").as_bytes());
        }
        let out = c.render(100, "stdout", &Texts::english());
        assert!(out.starts_with("line 0\n"), "{out}");
        assert!(out.ends_with("line 99\n"), "{out}");
        assert!(out.contains("omitted here"), "{out}");
    }

    #[test]
    fn capture_applies_the_line_cap() {
        let mut c = StreamCapture::new(100_000);
        for i in 0..10 {
            c.push(format!("{i}\n").as_bytes());
        }
        let out = c.render(4, "stdout", &Texts::english());
        assert!(out.starts_with("0\n1\n[... "), "{out}");
        assert!(out.ends_with("8\n9\n"), "{out}");
        assert!(out.contains("about 6 lines"), "{out}");
        assert_eq!(
            c.render(10, "stdout", &Texts::english()),
            "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n"
        );
    }
}
