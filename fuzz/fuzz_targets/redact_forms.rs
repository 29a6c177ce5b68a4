//! The redactor's hex and JSON `\u` forms: `Redactor::redact` on a whole text and
//! `StreamRedactor` on the same text in pieces, with those forms of the key planted.
//!
//! Input: a byte `K` (key length `K % 40 + 8` bytes, so every transformation applies),
//! the key bytes (lossy UTF-8, `*` replaced by `#`), then pieces separated by NUL bytes.
//! A piece's first byte `op` says what follows its text: bit 3 set plants a form of the
//! key chosen by bits 0-2 (hex in lower, upper or mixed digit case; every character
//! `\uXXXX`; some characters escaped and the rest plain; the same on the key in upper
//! case; `/` as `\/` and `\` as `\\`), the escapes' hex digits and the characters escaped
//! chosen by the piece's second byte, pushed to the stream in two parts split at a point
//! chosen by bits 4-6; the rest of the piece is its text (lossy UTF-8).
//!
//! Checks: the batch output has as many characters as the input, each the input's or
//! the mask; every planted form is masked whole; the streamed output equals the batch
//! output, and after every push the stream holds back less than `longest_pattern()`.

#![no_main]

use std::ops::Range;

use agent_presets::redact::{MASK, Redactor};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let key_len = usize::from(k % 40) + 8;
    if rest.len() < key_len {
        return;
    }
    let (key, rest) = rest.split_at(key_len);
    let key = String::from_utf8_lossy(key).replace(MASK, "#");

    let mut text = String::new();
    let mut pushes: Vec<(usize, usize)> = Vec::new();
    let mut must_mask: Vec<Range<usize>> = Vec::new();
    let mut chars = 0usize;
    for piece in rest.split(|&b| b == 0) {
        let Some((&op, piece)) = piece.split_first() else {
            continue;
        };
        let bits = piece.first().copied().unwrap_or(0);
        let piece = String::from_utf8_lossy(piece);
        push_text(&mut text, &mut pushes, &mut chars, &piece);
        if op & 8 == 0 {
            continue;
        }
        let form = form(&key, op, bits);
        let start = chars;
        plant(&mut text, &mut pushes, &mut chars, &form, op);
        must_mask.push(start..chars);
    }

    let redactor = Redactor::new([key.as_str()]);
    let batch = redactor.redact(&text).into_owned();
    let input: Vec<char> = text.chars().collect();
    let output: Vec<char> = batch.chars().collect();
    assert_eq!(output.len(), input.len(), "the character count changed");
    for (i, (a, b)) in input.iter().zip(&output).enumerate() {
        assert!(a == b || *b == MASK, "character {i} {a:?} became {b:?}");
    }
    for range in &must_mask {
        assert!(
            output[range.clone()].iter().all(|&c| c == MASK),
            "a planted form is not masked at characters {range:?}: {}",
            input[range.clone()].iter().collect::<String>()
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
    assert_eq!(streamed, batch, "the streamed output differs from the batch output");
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

/// Bit `i` (cycled) of `bits`.
fn bit(bits: u8, i: usize) -> bool {
    bits & (1 << (i % 8)) != 0
}

/// The form of `key` that `op` picks; `bits` picks digit cases and escaped characters.
fn form(key: &str, op: u8, bits: u8) -> String {
    let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
    match op & 7 {
        0 => hex,
        1 => hex.to_ascii_uppercase(),
        2 => hex
            .chars()
            .enumerate()
            .map(|(i, d)| if bit(bits, i) { d.to_ascii_uppercase() } else { d })
            .collect(),
        3 => escaped(key, |_| true, bits),
        4 => escaped(key, |i| bit(bits, i), bits),
        5 => escaped(&key.to_ascii_uppercase(), |i| bit(bits, i + 3), bits),
        6 => key
            .chars()
            .map(|c| match c {
                '/' => "\\/".to_owned(),
                '\\' => "\\\\".to_owned(),
                c => c.to_string(),
            })
            .collect(),
        _ => escaped(key, |i| !bit(bits, i), !bits),
    }
}

/// `key` with the characters `which` picks written `\uXXXX` (surrogate pairs outside
/// the Basic Multilingual Plane), hex digit `n` of all escapes in upper case where bit
/// `n` of `bits` is set.
fn escaped(key: &str, which: impl Fn(usize) -> bool, bits: u8) -> String {
    let mut out = String::new();
    let mut digit = 0;
    for (i, c) in key.chars().enumerate() {
        if !which(i) {
            out.push(c);
            continue;
        }
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            out.push_str("\\u");
            for d in format!("{u:04x}").chars() {
                out.push(if bit(bits, digit) { d.to_ascii_uppercase() } else { d });
                digit += 1;
            }
        }
    }
    out
}
