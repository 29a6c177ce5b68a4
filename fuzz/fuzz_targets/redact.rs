//! The secret redactor: `Redactor::redact` on a whole text and `StreamRedactor` on the
//! same text in pieces, with the key and its transformations planted in the text.
//!
//! Input: a byte `K` (key length `K % 48 + 1` bytes), the key bytes (lossy UTF-8, `*`
//! replaced by `#`: a key made of mask characters would reappear in its own mask), a
//! byte `U` (user length `U % 16`), the user bytes (lossy UTF-8), then pieces separated
//! by NUL bytes. A piece's first byte says what follows its text: bit 3 set plants a
//! form of the key chosen by bits 0-2 (the key as it is, upper case, lower case, base64
//! of `USER:KEY` standard or URL-safe, padded by bit 7, percent-encoded with upper or
//! lower hex digits, base64 of the key alone), pushed to the stream in two parts split
//! at a point chosen by bits 4-6; the rest of the piece is its text (lossy UTF-8).
//!
//! Checks, for the batch output:
//! - as many characters as the input, each either the input's character or the mask;
//! - no copy of the key (for keys of 8 characters or more: in any ASCII case);
//! - every planted copy of the key masked; for keys of 8 characters or more, every
//!   planted case variant and percent-encoding masked whole, and every character of a
//!   planted base64 that depends on the key's bytes alone masked;
//!
//! and for the stream (the pieces and planted parts pushed one by one, then `finish`):
//! - the joined output equals the batch output;
//! - after every push it holds back less than `longest_pattern()` bytes.

#![no_main]

use std::ops::Range;

use agent_presets::redact::{MASK, MIN_TRANSFORMED_LEN, Redactor};
use libfuzzer_sys::fuzz_target;

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fuzz_target!(|data: &[u8]| {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let key_len = usize::from(k % 48) + 1;
    if rest.len() < key_len {
        return;
    }
    let (key, rest) = rest.split_at(key_len);
    let key = String::from_utf8_lossy(key).replace(MASK, "#");
    let Some((&u, rest)) = rest.split_first() else {
        return;
    };
    let user_len = usize::from(u % 16).min(rest.len());
    let (user, rest) = rest.split_at(user_len);
    let user = String::from_utf8_lossy(user).into_owned();
    let long = key.chars().count() >= MIN_TRANSFORMED_LEN;

    // The text, what is pushed to the stream, and the character ranges that must be
    // masked.
    let mut text = String::new();
    let mut pushes: Vec<(usize, usize)> = Vec::new();
    let mut must_mask: Vec<Range<usize>> = Vec::new();
    let mut chars = 0usize;
    for piece in rest.split(|&b| b == 0) {
        let Some((&op, piece)) = piece.split_first() else {
            continue;
        };
        let piece = String::from_utf8_lossy(piece);
        push_text(&mut text, &mut pushes, &mut chars, &piece);
        if op & 8 == 0 {
            continue;
        }
        let (form, masked) = form(&key, &user, op);
        let Some(masked) = masked.filter(|_| long || op & 7 == 0) else {
            // A transformation of a short key: planted, not required to be masked.
            plant(&mut text, &mut pushes, &mut chars, &form, op);
            continue;
        };
        let start = chars;
        plant(&mut text, &mut pushes, &mut chars, &form, op);
        if !masked.is_empty() {
            must_mask.push(start + masked.start..start + masked.end);
        }
    }

    let redactor = Redactor::new([key.as_str()]);
    let batch = redactor.redact(&text).into_owned();

    let input: Vec<char> = text.chars().collect();
    let output: Vec<char> = batch.chars().collect();
    assert_eq!(output.len(), input.len(), "the character count changed");
    for (i, (a, b)) in input.iter().zip(&output).enumerate() {
        assert!(a == b || *b == MASK, "character {i} {a:?} became {b:?}");
    }
    assert!(!batch.contains(&key), "the key survives");
    if long {
        assert!(
            !batch
                .to_ascii_lowercase()
                .contains(&key.to_ascii_lowercase()),
            "the key survives in another case"
        );
    }
    for range in &must_mask {
        assert!(
            output[range.clone()].iter().all(|&c| c == MASK),
            "a planted form is not masked at characters {range:?}"
        );
    }

    let mut stream = redactor.stream();
    let mut streamed = String::new();
    for &(from, to) in &pushes {
        streamed.push_str(&stream.push(&text[from..to]));
        assert!(
            stream.pending_len() < redactor.longest_pattern().max(1),
            "the stream holds back {} bytes, the longest pattern is {}",
            stream.pending_len(),
            redactor.longest_pattern()
        );
    }
    streamed.push_str(&stream.finish());
    assert_eq!(stream.pending_len(), 0);
    assert_eq!(
        streamed, batch,
        "the streamed output differs from the batch output"
    );
});

fn push_text(text: &mut String, pushes: &mut Vec<(usize, usize)>, chars: &mut usize, s: &str) {
    let from = text.len();
    text.push_str(s);
    pushes.push((from, text.len()));
    *chars += s.chars().count();
}

/// `form` appended, pushed in two parts cut at a character boundary chosen by `op`.
fn plant(
    text: &mut String,
    pushes: &mut Vec<(usize, usize)>,
    chars: &mut usize,
    form: &str,
    op: u8,
) {
    let mut cut = usize::from((op >> 4) & 7) * form.len() / 7;
    while !form.is_char_boundary(cut) {
        cut += 1;
    }
    push_text(text, pushes, chars, &form[..cut]);
    push_text(text, pushes, chars, &form[cut..]);
}

/// The form of the key `op` picks, and the characters of it that must be masked (for a
/// key of at least `MIN_TRANSFORMED_LEN` characters; for the key itself always).
fn form(key: &str, user: &str, op: u8) -> (String, Option<Range<usize>>) {
    let whole = |s: String| {
        let n = s.chars().count();
        (s, Some(0..n))
    };
    let padded = op & 0x80 != 0;
    match op & 7 {
        0 => whole(key.to_owned()),
        1 => whole(key.to_ascii_uppercase()),
        2 => whole(key.to_ascii_lowercase()),
        3 | 4 => {
            let alphabet = if op & 7 == 3 { STANDARD } else { URL_SAFE };
            let prefix = format!("{user}:");
            let mut bytes = prefix.as_bytes().to_vec();
            bytes.extend_from_slice(key.as_bytes());
            let core = key_only(prefix.len(), key.len());
            (base64(&bytes, alphabet, padded), Some(core))
        }
        5 => whole(percent_encode(key, true)),
        6 => whole(percent_encode(key, false)),
        _ => (
            base64(key.as_bytes(), STANDARD, padded),
            Some(key_only(0, key.len())),
        ),
    }
}

/// The base64 characters that depend on bytes `prefix..prefix + len` of the input alone
/// (base64 character `i` holds bits `6i..6i + 6`; the last character of a partial group
/// also holds padding bits, which depend on what follows).
fn key_only(prefix: usize, len: usize) -> Range<usize> {
    let first = (prefix * 8).div_ceil(6);
    let end = (prefix + len) * 8 / 6;
    first..end.max(first)
}

fn base64(bytes: &[u8], alphabet: &[u8; 64], padded: bool) -> String {
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=group.len() {
            out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
        }
        if padded {
            for _ in group.len()..3 {
                out.push('=');
            }
        }
    }
    out
}

fn percent_encode(s: &str, upper: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else if upper {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push_str(&format!("%{b:02x}"));
        }
    }
    out
}
