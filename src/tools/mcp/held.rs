//! [`HeldStderr`]: servers' stderr lines held while they cannot be shown (during `run`,
//! while a streamed answer or reasoning line is open), bounded per server so that a
//! server writing stderr in a loop costs constant memory.

use std::sync::{Arc, Mutex};

use super::session::{STDERR_LINE_BYTES, StderrSink};

/// The most lines held for one server; later ones are dropped (and counted).
pub const HELD_LINES_PER_SERVER: usize = 200;
/// The most bytes held for one server (a line is at most [`STDERR_LINE_BYTES`] plus its
/// prefix); later lines are dropped (and counted).
pub const HELD_BYTES_PER_SERVER: usize = 64 * 1024;

/// Lines held until [`release`](Self::release), in the order they came, at most
/// [`HELD_LINES_PER_SERVER`] lines and [`HELD_BYTES_PER_SERVER`] bytes per server; what
/// did not fit is counted and said when they are released. Cheap to clone (a handle).
#[derive(Clone, Default)]
pub struct HeldStderr(Arc<Mutex<Held>>);

#[derive(Default)]
struct Held {
    lines: Vec<String>,
    /// Per server, in the order first seen: name, lines and bytes held, lines dropped.
    servers: Vec<ServerCount>,
}

struct ServerCount {
    name: String,
    lines: usize,
    bytes: usize,
    dropped: u64,
}

impl HeldStderr {
    /// A sink that holds each line (for `McpSession::connect_with_stderr` and friends).
    pub fn sink(&self) -> StderrSink {
        let held = self.clone();
        Arc::new(move |server: &str, line: &str| held.hold(server, line))
    }

    /// Hold `line` of `server`, or count it dropped when the server's share is full. A
    /// line longer than the stderr reader passes on is cut.
    pub fn hold(&self, server: &str, line: &str) {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let at = match held.servers.iter().position(|s| s.name == server) {
            Some(at) => at,
            None => {
                held.servers.push(ServerCount {
                    name: server.to_owned(),
                    lines: 0,
                    bytes: 0,
                    dropped: 0,
                });
                held.servers.len() - 1
            }
        };
        let line = cut(line, STDERR_LINE_BYTES + 256);
        let count = &mut held.servers[at];
        if count.lines >= HELD_LINES_PER_SERVER || count.bytes + line.len() > HELD_BYTES_PER_SERVER
        {
            count.dropped += 1;
            return;
        }
        count.lines += 1;
        count.bytes += line.len();
        held.lines.push(line.to_owned());
    }

    /// Every held line in order, then for each server that had lines dropped, a line
    /// saying how many (`… 12,345 lines of stderr from `time` dropped`); nothing is held
    /// afterwards.
    pub fn release(&self) -> Vec<String> {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Held { lines, servers } = std::mem::take(&mut *held);
        let mut out = lines;
        for s in servers.iter().filter(|s| s.dropped > 0) {
            let n = s.dropped;
            out.push(format!(
                "… {} line{} of stderr from `{}` dropped",
                thousands(n),
                if n == 1 { "" } else { "s" },
                s.name
            ));
        }
        out
    }

    /// Bytes of lines held now (for tests and hosts that watch memory).
    pub fn held_bytes(&self) -> usize {
        let held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        held.lines.iter().map(String::len).sum()
    }
}

/// `text`'s first `max` bytes at most, on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `12345` → `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_held_bounded_per_server_and_counted() {
        let held = HeldStderr::default();
        let sink = held.sink();
        sink("quiet", "[mcp quiet] one line");
        for i in 0..12_345 + HELD_LINES_PER_SERVER {
            sink("time", &format!("[mcp time] line {i}"));
        }
        sink("quiet", "[mcp quiet] another");
        assert!(held.held_bytes() <= 2 * HELD_BYTES_PER_SERVER);
        let out = held.release();
        assert_eq!(out.len(), 2 + HELD_LINES_PER_SERVER + 1, "{:?}", &out[..3]);
        assert_eq!(out[0], "[mcp quiet] one line");
        assert_eq!(out[1], "[mcp time] line 0");
        assert_eq!(out[out.len() - 2], "[mcp quiet] another");
        assert_eq!(
            out[out.len() - 1],
            "… 12,345 lines of stderr from `time` dropped"
        );
        assert!(held.release().is_empty(), "nothing is held after a release");
        // Counted afresh after a release.
        sink("time", "[mcp time] again");
        assert_eq!(held.release(), ["[mcp time] again"]);
    }

    #[test]
    fn bytes_are_bounded_and_a_long_line_is_cut() {
        let held = HeldStderr::default();
        let long = format!("[mcp big] {}", "é".repeat(1_000_000));
        for _ in 0..100 {
            held.hold("big", &long);
        }
        assert!(held.held_bytes() <= HELD_BYTES_PER_SERVER);
        let out = held.release();
        assert!(out[0].len() <= STDERR_LINE_BYTES + 256, "{}", out[0].len());
        assert!(out[0].starts_with("[mcp big] éé"));
        let kept = out.len() - 1;
        assert!(kept * (STDERR_LINE_BYTES) <= HELD_BYTES_PER_SERVER + STDERR_LINE_BYTES);
        assert_eq!(
            out[kept],
            format!("… {} lines of stderr from `big` dropped", 100 - kept)
        );
        assert_eq!(thousands(1), "1");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
