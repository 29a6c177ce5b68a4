//! Keeping secrets and terminal tricks out of what is shown: [`Redactor`] masks known
//! secrets (the API key and any a host adds) together with their common transformations,
//! in whole texts ([`Redactor::redact`], [`Redactor::redact_json`]) and in streams split
//! at arbitrary points ([`StreamRedactor`]); [`escape_for_display`] and [`display_pieces`]
//! make control, bidirectional and invisible formatting characters visible before text
//! from a model reaches a terminal.
//!
//! What a [`Redactor`] masks, for each secret of at least [`MIN_TRANSFORMED_LEN`]
//! characters:
//! - the secret in any ASCII letter case (`SK-ABC…`, `sk-abc…`, mixed);
//! - its percent-encoding (`%XX` in either hex case), where that differs from the secret;
//! - its hex form: two hex digits per byte, in either case (`736b2d…`, `736B2D…`);
//! - its JSON `\u` escapes: any of its characters written `\uXXXX` (hex digits in any
//!   case; a character outside the Basic Multilingual Plane as its surrogate pair), the
//!   others as they are (in any ASCII case), so `\u0073\u006B-live…` and `s\u006b…` are
//!   masked; `/` also as `\/` and `\` as `\\`;
//! - base64 (standard and URL-safe alphabet, padded or not) of the secret and of
//!   `PREFIX + secret` for any prefix, such as `user:secret` in a Basic `Authorization`
//!   header. Base64 of a string whose prefix is unknown is fixed except for the first one
//!   to three characters and the last one, for each of the three values of
//!   `prefix.len() % 3`; those three stable cores are masked. The one to three
//!   characters at either end stay visible: they carry at most six bits of the secret.
//!
//! A shorter secret (1 to 7 characters) is masked only where it appears exactly (same
//! case): its transformations would be too short to tell from ordinary text. An empty
//! secret is ignored.
//!
//! Every masked character becomes one [`MASK`], so a masked text has as many characters
//! as the original (columns and lengths stay). Masked ranges are the union of every
//! occurrence of every pattern, overlaps included.
//!
//! Not covered: any other re-encoding a server may choose (ROT13, hex with separators,
//! `\x` escapes, a secret spelled with separators between its characters, …). A model server that
//! holds the key can always send it back in a form no filter anticipates; the redactor
//! stops accidental echoes and the common encodings, not a determined exfiltration.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use memchr::memmem;
use serde_json::Value;

/// What a masked character becomes.
pub const MASK: char = '*';

/// Secrets shorter than this (in characters) are masked only as they are, without their
/// case variants and encodings.
pub const MIN_TRANSFORMED_LEN: usize = 8;

/// One string to mask.
#[derive(Clone)]
struct Pattern {
    /// Matched ASCII-case-insensitively (searched in the ASCII-lowercased text; the
    /// pattern is lowercase already).
    folded: bool,
    /// Searches for the pattern (built once).
    finder: memmem::Finder<'static>,
}

impl Pattern {
    fn new(bytes: &[u8], folded: bool) -> Self {
        Pattern {
            folded,
            finder: memmem::Finder::new(bytes).into_owned(),
        }
    }

    fn bytes(&self) -> &[u8] {
        self.finder.needle()
    }
}

/// `patterns` sorted and without duplicates.
fn normalize(mut patterns: Vec<Pattern>) -> Vec<Pattern> {
    patterns.sort_by(|a, b| (a.folded, a.bytes()).cmp(&(b.folded, b.bytes())));
    patterns.dedup_by(|a, b| a.folded == b.folded && a.bytes() == b.bytes());
    patterns
}

/// One character of a secret as a JSON string may write it.
#[derive(Clone)]
struct EscapedChar {
    /// The character as it is, ASCII-lowercased, in UTF-8.
    plain: [u8; 4],
    plain_len: u8,
    /// Its UTF-16 units (two for a surrogate pair), as `\uXXXX` writes them.
    units: [u16; 2],
    unit_count: u8,
    /// For an ASCII letter, the unit of the other case (else the same unit).
    other_case: u16,
    /// `/` (also written `\/`) or `\` (also written `\\`).
    short_escape: Option<u8>,
}

impl EscapedChar {
    fn new(c: char) -> Self {
        let lower = c.to_ascii_lowercase();
        let mut plain = [0u8; 4];
        let plain_len = lower.encode_utf8(&mut plain).len() as u8;
        let mut units = [0u16; 2];
        let unit_count = lower.encode_utf16(&mut units).len() as u8;
        let mut upper = [0u16; 2];
        c.to_ascii_uppercase().encode_utf16(&mut upper);
        EscapedChar {
            plain,
            plain_len,
            units,
            unit_count,
            other_case: upper[0],
            short_escape: match c {
                '/' => Some(b'/'),
                '\\' => Some(b'\\'),
                _ => None,
            },
        }
    }

    /// Where this character ends if it is written at `at` in `hay`.
    fn end_at(&self, hay: &[u8], at: usize) -> Option<usize> {
        if hay.get(at) == Some(&b'\\') {
            if let Some(short) = self.short_escape
                && hay.get(at + 1) == Some(&short)
            {
                return Some(at + 2);
            }
            if let Some(end) = self.unit_escapes_end(hay, at) {
                return Some(end);
            }
        }
        let len = usize::from(self.plain_len);
        let got = hay.get(at..at + len)?;
        got.eq_ignore_ascii_case(&self.plain[..len])
            .then_some(at + len)
    }

    /// Where `\uXXXX` (twice for a surrogate pair) for this character ends, if it is
    /// written so at `at`.
    fn unit_escapes_end(&self, hay: &[u8], at: usize) -> Option<usize> {
        let mut p = at;
        for (i, &unit) in self.units[..usize::from(self.unit_count)]
            .iter()
            .enumerate()
        {
            let got = unit_escape(hay, p)?;
            let other = if i == 0 { self.other_case } else { unit };
            if got != unit && got != other {
                return None;
            }
            p += 6;
        }
        Some(p)
    }
}

/// The unit `\uXXXX` at `at` in `hay` writes.
fn unit_escape(hay: &[u8], at: usize) -> Option<u16> {
    let e = hay.get(at..at + 6)?;
    if e[0] != b'\\' || e[1] != b'u' {
        return None;
    }
    let mut unit = 0u16;
    for &d in &e[2..] {
        let v = char::from(d).to_digit(16)?;
        unit = (unit << 4) | v as u16;
    }
    Some(unit)
}

/// A secret as a JSON string may write it: each character plain or escaped (see
/// [`EscapedChar`]). Matched from a start deterministically: a backslash starts an
/// escape, anything else is the character itself.
#[derive(Clone)]
struct EscapedForm {
    /// The secret itself (for [`Redactor::with_secret`], which rebuilds the set).
    secret: Arc<str>,
    chars: Arc<[EscapedChar]>,
    /// The first character (ASCII-lowercase and uppercase first byte): where a match
    /// can start besides a backslash.
    first: [u8; 2],
    /// Does the secret hold `/` or `\` (escaped without `\u`)?
    short_escapes: bool,
    /// Does it hold `\` (whose forms are ambiguous: matched every way at once)?
    backslash: bool,
    /// The longest match, in bytes.
    longest: usize,
}

impl EscapedForm {
    fn new(secret: &str) -> Self {
        let chars: Vec<EscapedChar> = secret.chars().map(EscapedChar::new).collect();
        let longest = chars
            .iter()
            .map(|c| (6 * usize::from(c.unit_count)).max(usize::from(c.plain_len)))
            .sum();
        let first_byte = secret.as_bytes().first().copied().unwrap_or(0);
        EscapedForm {
            secret: secret.into(),
            first: [
                first_byte.to_ascii_lowercase(),
                first_byte.to_ascii_uppercase(),
            ],
            short_escapes: chars.iter().any(|c| c.short_escape.is_some()),
            backslash: secret.contains('\\'),
            chars: chars.into(),
            longest,
        }
    }

    fn secret(&self) -> String {
        self.secret.to_string()
    }

    /// Could `hay` hold a match with an escape in it? (One without is the secret in
    /// some ASCII case, which the folded pattern finds.)
    fn may_match(&self, hay: &[u8]) -> bool {
        if self.short_escapes {
            memchr::memchr(b'\\', hay).is_some()
        } else {
            memmem::find(hay, b"\\u").is_some()
        }
    }

    /// Could a match begun in `window` (the end of a stream so far) have an escape in it
    /// already? A backslash at its very end may start `\u`.
    fn may_start_in(&self, window: &[u8]) -> bool {
        self.may_match(window) || window.last() == Some(&b'\\')
    }

    /// The end of the longest match starting at `start`, for a secret with `\\` in it:
    /// a backslash there may be the character itself, `\\\\` or `\\u005c`, so every
    /// way is followed (a set of positions per character, at most one per byte).
    fn longest_end_from(&self, hay: &[u8], start: usize) -> Option<usize> {
        let mut at: Vec<usize> = vec![start];
        let mut next: Vec<usize> = Vec::new();
        for c in self.chars.iter() {
            next.clear();
            for &p in &at {
                if c.short_escape == Some(b'\\') {
                    if hay.get(p) == Some(&b'\\') {
                        next.push(p + 1);
                        if hay.get(p + 1) == Some(&b'\\') {
                            next.push(p + 2);
                        }
                        if c.unit_escapes_end(hay, p).is_some() {
                            next.push(p + 6);
                        }
                    }
                } else if let Some(end) = c.end_at(hay, p) {
                    next.push(end);
                }
            }
            next.sort_unstable();
            next.dedup();
            if next.is_empty() {
                return None;
            }
            std::mem::swap(&mut at, &mut next);
        }
        at.last().copied()
    }

    /// Every match in `hay` (overlapping ones too), pushed to `ranges`.
    fn find_all(&self, hay: &[u8], ranges: &mut Vec<Range<usize>>) {
        if !self.may_match(hay) {
            return;
        }
        if self.backslash {
            for start in memchr::memchr3_iter(self.first[0], self.first[1], b'\\', hay) {
                if let Some(end) = self.longest_end_from(hay, start) {
                    ranges.push(start..end);
                }
            }
            return;
        }
        for start in memchr::memchr3_iter(self.first[0], self.first[1], b'\\', hay) {
            let mut p = start;
            let mut whole = true;
            for c in self.chars.iter() {
                match c.end_at(hay, p) {
                    Some(end) => p = end,
                    None => {
                        whole = false;
                        break;
                    }
                }
            }
            if whole {
                ranges.push(start..p);
            }
        }
    }
}

/// Masks known secrets and their common transformations in text (see the module
/// documentation for exactly which). Cheap to clone; its `Debug` shows only how many
/// patterns it holds.
#[derive(Clone, Default)]
pub struct Redactor {
    patterns: Arc<[Pattern]>,
    /// The JSON-escaped forms of the secrets long enough for transformations.
    escaped: Arc<[EscapedForm]>,
    /// The longest match of any pattern or escaped form, in bytes.
    longest: usize,
    /// The longest match of a pattern (the escaped forms' matches without an escape
    /// are no longer: they are the secret in some case).
    longest_plain: usize,
    /// Every byte a match can hold: a stream holds back only a run of these at its end.
    alphabet: ByteSet,
}

/// A set of bytes.
#[derive(Clone, Copy, Default)]
struct ByteSet([u64; 4]);

impl ByteSet {
    fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("patterns", &self.patterns.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor for `secrets` (an API key, and whatever else a host wants hidden).
    /// Empty secrets are ignored.
    pub fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut patterns: Vec<Pattern> = Vec::new();
        let mut escaped: Vec<String> = Vec::new();
        for secret in secrets {
            add_secret(&mut patterns, &mut escaped, secret.as_ref());
        }
        Redactor::build(patterns, escaped)
    }

    fn build(patterns: Vec<Pattern>, mut escaped: Vec<String>) -> Self {
        let patterns = normalize(patterns);
        escaped.sort();
        escaped.dedup();
        let escaped: Vec<EscapedForm> = escaped.iter().map(|s| EscapedForm::new(s)).collect();
        let longest_plain = patterns.iter().map(|p| p.bytes().len()).max().unwrap_or(0);
        let longest = escaped
            .iter()
            .map(|e| e.longest)
            .fold(longest_plain, usize::max);
        let mut alphabet = ByteSet::default();
        let bytes = patterns.iter().flat_map(|p| p.bytes().iter().copied());
        let escapes = escaped.iter().flat_map(|e| e.secret.bytes());
        for b in bytes.chain(escapes) {
            alphabet.insert(b.to_ascii_lowercase());
            alphabet.insert(b.to_ascii_uppercase());
        }
        if !escaped.is_empty() {
            for b in b"\\/u0123456789abcdefABCDEF" {
                alphabet.insert(*b);
            }
        }
        Redactor {
            patterns: patterns.into(),
            escaped: escaped.into(),
            longest,
            longest_plain,
            alphabet,
        }
    }

    /// A redactor that masks nothing.
    pub fn none() -> Self {
        Redactor::default()
    }

    /// This redactor and `secret` too.
    #[must_use]
    pub fn with_secret(&self, secret: &str) -> Self {
        self.with_secrets([secret])
    }

    /// This redactor and `secrets` too.
    #[must_use]
    pub fn with_secrets<I, S>(&self, secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut patterns: Vec<Pattern> = self.patterns.to_vec();
        let mut escaped: Vec<String> = self.escaped.iter().map(EscapedForm::secret).collect();
        for secret in secrets {
            add_secret(&mut patterns, &mut escaped, secret.as_ref());
        }
        Redactor::build(patterns, escaped)
    }

    /// What this redactor and `other` mask, together.
    #[must_use]
    pub fn merged(&self, other: &Redactor) -> Self {
        if other.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        let mut patterns: Vec<Pattern> = self.patterns.to_vec();
        patterns.extend(other.patterns.iter().cloned());
        let escaped = self
            .escaped
            .iter()
            .chain(other.escaped.iter())
            .map(EscapedForm::secret)
            .collect();
        Redactor::build(patterns, escaped)
    }

    /// Does it mask nothing?
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The longest match in bytes (of the secrets' JSON-escaped forms, six bytes per
    /// character): a [`StreamRedactor`] holds back at most one byte less than this.
    pub fn longest_pattern(&self) -> usize {
        self.longest
    }

    /// `text` with every secret (and transformation) masked, one [`MASK`] per character.
    /// Borrowed when there was nothing to mask.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let ranges = self.matches(text);
        if ranges.is_empty() {
            return Cow::Borrowed(text);
        }
        Cow::Owned(apply(text, &ranges))
    }

    /// Every string in `value` (object keys included) redacted in place.
    pub fn redact_json(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => {
                let needs_key = map.keys().any(|k| !self.matches(k).is_empty());
                if needs_key {
                    let old = std::mem::take(map);
                    for (k, mut v) in old {
                        self.redact_json(&mut v);
                        map.insert(self.redact(&k).into_owned(), v);
                    }
                } else {
                    map.values_mut().for_each(|v| self.redact_json(v));
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// A streaming redactor over this redactor's patterns.
    pub fn stream(&self) -> StreamRedactor {
        StreamRedactor::new(self.clone())
    }

    /// The byte ranges to mask in `text`, sorted and merged.
    fn matches(&self, text: &str) -> Vec<Range<usize>> {
        if self.patterns.is_empty() || text.len() < self.shortest() {
            return Vec::new();
        }
        let hay = text.as_bytes();
        let mut lowered: Option<Vec<u8>> = None;
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for p in self.patterns.iter() {
            let searched: &[u8] = if p.folded {
                lowered.get_or_insert_with(|| hay.to_ascii_lowercase())
            } else {
                hay
            };
            let len = p.bytes().len();
            let mut from = 0;
            // Overlapping occurrences too: `aaa` in `aaaa` masks all four.
            while let Some(i) = p.finder.find(&searched[from..]) {
                let start = from + i;
                ranges.push(start..start + len);
                from = start + 1;
            }
        }
        for e in self.escaped.iter() {
            e.find_all(hay, &mut ranges);
        }
        merge(ranges)
    }

    fn shortest(&self) -> usize {
        self.patterns
            .iter()
            .map(|p| p.bytes().len())
            .min()
            .unwrap_or(0)
    }
}

fn add_secret(patterns: &mut Vec<Pattern>, escaped: &mut Vec<String>, secret: &str) {
    if secret.is_empty() {
        return;
    }
    if secret.chars().count() < MIN_TRANSFORMED_LEN {
        patterns.push(Pattern::new(secret.as_bytes(), false));
        return;
    }
    let folded = |s: &str| Pattern::new(s.to_ascii_lowercase().as_bytes(), true);
    patterns.push(folded(secret));
    let percent = percent_encode(secret);
    if percent != secret {
        patterns.push(folded(&percent));
    }
    patterns.push(folded(&hex(secret.as_bytes())));
    escaped.push(secret.to_owned());
    for core in base64_cores(secret.as_bytes()) {
        patterns.push(Pattern::new(core.as_bytes(), false));
    }
}

/// Sorted, merged ranges.
fn merge(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// `text` with the (sorted, disjoint, char-aligned) `ranges` masked.
fn apply(text: &str, ranges: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for r in ranges {
        out.push_str(&text[copied..r.start]);
        out.extend(std::iter::repeat_n(MASK, text[r.clone()].chars().count()));
        copied = r.end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Percent-encoding as in URLs: every byte but the unreserved `A-Z a-z 0-9 - . _ ~`.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Lowercase hex, two digits per byte.
fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64 of `bytes`.
fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=group.len() {
            let index = (n >> (18 - 6 * i)) & 63;
            out.push(char::from(alphabet[index as usize]));
        }
    }
    out
}

/// The parts of base64(`prefix + secret + suffix`) fixed by `secret` alone, for each of
/// the three alignments `prefix.len() % 3`, in both alphabets.
fn base64_cores(secret: &[u8]) -> Vec<String> {
    let mut cores = Vec::with_capacity(6);
    for alignment in 0..3 {
        // Stand-in prefix bytes; the characters they touch are cut off below.
        let mut bytes = vec![0u8; alignment];
        bytes.extend_from_slice(secret);
        // Characters that depend on the prefix: none when the secret starts a group; the
        // group's first two when one prefix byte shares it; its first three for two.
        let head = [0, 2, 3][alignment];
        // The last character of a partial final group depends on what follows.
        let tail = usize::from(bytes.len() % 3 != 0);
        for alphabet in [STANDARD, URL_SAFE] {
            let encoded = base64(&bytes, alphabet);
            if encoded.len() > head + tail {
                cores.push(encoded[head..encoded.len() - tail].to_owned());
            }
        }
    }
    cores.sort();
    cores.dedup();
    cores
}

/// Redacts a text that arrives in pieces (one per channel: answer text, reasoning, one
/// tool call's arguments, …): masking works over the joined stream, so a secret split
/// across any number of pieces is masked. [`push`](Self::push) returns what is safe to
/// show now, holding back at most [`Redactor::longest_pattern`] − 1 bytes (never half a
/// UTF-8 character); [`finish`](Self::finish) returns the rest. The concatenated outputs
/// equal [`Redactor::redact`] of the concatenated inputs.
#[derive(Clone, Debug)]
pub struct StreamRedactor {
    redactor: Redactor,
    /// Received, not yet returned.
    pending: String,
    /// Bytes at the start of `pending` inside a match already found (it straddled the
    /// last cut).
    carry: usize,
}

impl StreamRedactor {
    /// A stream redacted by `redactor`.
    pub fn new(redactor: Redactor) -> Self {
        StreamRedactor {
            redactor,
            pending: String::new(),
            carry: 0,
        }
    }

    /// Take `piece`; returns the part of the stream that is now safe to show (possibly
    /// empty).
    pub fn push(&mut self, piece: &str) -> String {
        if self.redactor.is_empty() {
            return piece.to_owned();
        }
        self.pending.push_str(piece);
        let hold = self.hold();
        let len = self.pending.len();
        if len <= hold {
            return String::new();
        }
        // A match that starts before `cut` ends within `pending`, so it is found now.
        // Rounding up to a character boundary only passes continuation bytes, where no
        // match can start.
        let mut cut = len - hold;
        while !self.pending.is_char_boundary(cut) {
            cut += 1;
        }
        self.emit(cut)
    }

    /// How many bytes at the end of `pending` could start a match not yet complete:
    /// at most the longest match less one; only bytes a match can hold (the run of
    /// them at the end: prose breaks it at each space); and a match of an escaped form
    /// that has no backslash so far is the secret's start as it is, no longer than a
    /// plain pattern, so the long hold of escaped forms is needed only when `\u` (or a
    /// backslash, for a secret with `/` or `\`) is among the last bytes.
    fn hold(&self) -> usize {
        let r = &self.redactor;
        let long = r.longest.saturating_sub(1);
        let plain = r.longest_plain.saturating_sub(1);
        let hay = self.pending.as_bytes();
        let window = &hay[hay.len().saturating_sub(long)..];
        let run = window
            .iter()
            .rev()
            .take_while(|&&b| r.alphabet.contains(b))
            .count();
        if long <= plain {
            return run;
        }
        let window = &window[window.len() - run..];
        if r.escaped.iter().any(|e| e.may_start_in(window)) {
            run
        } else {
            run.min(plain)
        }
    }

    /// The rest of the stream (call at its end).
    pub fn finish(&mut self) -> String {
        let len = self.pending.len();
        self.emit(len)
    }

    /// Bytes received and not yet returned.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Return `pending[..cut]` masked and keep the rest.
    fn emit(&mut self, cut: usize) -> String {
        let mut ranges = self.redactor.matches(&self.pending);
        if self.carry > 0 {
            ranges.push(0..self.carry);
            ranges = merge(ranges);
        }
        let mut shown: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
        let mut carry = 0;
        for r in ranges {
            if r.start >= cut {
                break;
            }
            if r.end > cut {
                carry = r.end - cut;
            }
            shown.push(r.start..r.end.min(cut));
        }
        let out = apply(&self.pending[..cut], &shown);
        self.pending.drain(..cut);
        self.carry = carry;
        out
    }
}

/// Where text from a model is shown, which decides what is escaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisplayContext {
    /// Flowing text (an answer, reasoning): newlines and tabs stay, and so do the zero
    /// width joiner and variation selectors that emoji sequences need.
    Text,
    /// One line, or a command shown for approval: every control character (newline and
    /// tab included), every invisible or formatting character and every space other
    /// than U+0020 is escaped.
    Strict,
}

/// A piece of text as shown: plain text, or one character to show escaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisplayPiece<'a> {
    /// Shown as it is.
    Plain(&'a str),
    /// Shown as [`escaped`] (e.g. `\u{202e}`), visibly marked where the host can.
    Escaped(char),
}

/// Is `c` shown escaped in `context`? Control characters (C0, DEL, C1), bidirectional
/// controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069), invisible and formatting
/// characters (soft hyphen, zero-width spaces and joiners, word joiner and invisible
/// operators, byte-order mark, interlinear annotation, Hangul fillers, tag characters,
/// line and paragraph separators), and in [`DisplayContext::Strict`] also `\n`, `\t`,
/// the zero width joiner, variation selectors and every non-ASCII space.
pub fn needs_escape(c: char, context: DisplayContext) -> bool {
    let strict = context == DisplayContext::Strict;
    match c {
        '\n' | '\t' => strict,
        c if c.is_control() => true,
        '\u{00AD}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180E}'
        | '\u{200B}'
        | '\u{200C}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E007F}' => true,
        '\u{200D}' | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}' => strict,
        c if c.is_whitespace() && c != ' ' => strict,
        _ => false,
    }
}

/// How `c` is written when escaped: `\n`, `\t`, `\r`, or `\u{hex}`.
pub fn escaped(c: char) -> String {
    match c {
        '\n' => "\\n".to_owned(),
        '\t' => "\\t".to_owned(),
        '\r' => "\\r".to_owned(),
        c => format!("\\u{{{:x}}}", u32::from(c)),
    }
}

/// `text` split into plain runs and characters to escape (see [`needs_escape`]).
pub fn display_pieces(text: &str, context: DisplayContext) -> Vec<DisplayPiece<'_>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if needs_escape(c, context) {
            if start < i {
                pieces.push(DisplayPiece::Plain(&text[start..i]));
            }
            pieces.push(DisplayPiece::Escaped(c));
            start = i + c.len_utf8();
        }
    }
    if start < text.len() {
        pieces.push(DisplayPiece::Plain(&text[start..]));
    }
    pieces
}

/// `text` with every character [`needs_escape`] finds written as [`escaped`], unstyled.
/// Borrowed when nothing needed escaping.
pub fn escape_for_display(text: &str, context: DisplayContext) -> Cow<'_, str> {
    if !text.chars().any(|c| needs_escape(c, context)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for piece in display_pieces(text, context) {
        match piece {
            DisplayPiece::Plain(s) => out.push_str(s),
            DisplayPiece::Escaped(c) => out.push_str(&escaped(c)),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEY: &str = "sk-live-0123456789abcdefXYZ";

    fn b64(s: &str, alphabet: &[u8; 64]) -> String {
        let mut e = base64(s.as_bytes(), alphabet);
        while !e.len().is_multiple_of(4) {
            e.push('=');
        }
        e
    }

    #[test]
    fn base64_matches_the_rfc_examples() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(b64(plain, STANDARD), encoded);
        }
        assert_eq!(base64(&[0xfb, 0xff], URL_SAFE), "-_8");
        assert_eq!(base64(&[0xfb, 0xff], STANDARD), "+/8");
    }

    #[test]
    fn masks_the_key_its_cases_and_encodings_keeping_the_length() {
        let r = Redactor::new([KEY]);
        let upper = KEY.to_ascii_uppercase();
        let percent = "sk%2Dlive".to_owned(); // not a transformation: `-` is unreserved
        let texts = [
            format!("key {KEY} end"),
            format!("KEY {upper}!"),
            format!("lower {}", KEY.to_ascii_lowercase()),
            format!("basic {}", b64(&format!("user:{KEY}"), STANDARD)),
            format!("basic {}", b64(&format!("ab:{KEY}"), URL_SAFE)),
            format!("basic {}", b64(&format!("a:{KEY}"), STANDARD)),
            format!("bare {}", b64(KEY, STANDARD)),
            b64(&format!("{KEY}:x"), STANDARD),
        ];
        for text in &texts {
            let out = r.redact(text);
            assert_eq!(out.chars().count(), text.chars().count(), "{text}");
            assert!(out.contains("*******"), "{text} -> {out}");
            assert!(!out.contains(KEY) && !out.contains(&upper), "{out}");
            // At most three characters of the encoding either side stay.
            let visible = out.chars().filter(|c| *c != MASK).count();
            assert!(
                visible <= text.chars().count() - KEY.len() + 4,
                "{text} -> {out}"
            );
        }
        assert!(matches!(r.redact(&percent), Cow::Borrowed(_)));
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn base64_of_the_key_alone_is_masked_whole_and_with_text_after_it_too() {
        let r = Redactor::new([KEY]);
        // 27 bytes: whole groups, so every character is fixed by the key.
        let bare = b64(KEY, STANDARD);
        assert_eq!(r.redact(&bare), "*".repeat(bare.len()));
        // The key in the middle of what was encoded, at each alignment: the characters
        // touched by the bytes around it stay visible, the rest is masked.
        for (before, after) in [("me:", ":x"), ("u:", "!"), ("a", "tail")] {
            for alphabet in [STANDARD, URL_SAFE] {
                let text = b64(&format!("{before}{KEY}{after}"), alphabet);
                let out = r.redact(&text);
                let masked = out.chars().filter(|c| *c == MASK).count();
                assert!(masked >= KEY.len() * 4 / 3 - 2, "{text} -> {out}");
            }
        }
    }

    /// `key` as JSON `\u` escapes: the characters at `escaped` (by index modulo the
    /// list, all when empty) escaped, hex digits upper case where `upper`.
    fn json_escaped(key: &str, escaped: &[bool], upper: bool) -> String {
        let mut out = String::new();
        for (i, c) in key.chars().enumerate() {
            if escaped.is_empty() || escaped[i % escaped.len()] {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    if upper {
                        out.push_str(&format!("\\u{:04X}", u));
                    } else {
                        out.push_str(&format!("\\u{:04x}", u));
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn the_hex_form_is_masked_in_either_case() {
        let r = Redactor::new([KEY]);
        let lower = hex(KEY.as_bytes());
        assert!(lower.starts_with("736b2d6c697665"), "{lower}");
        for text in [
            format!("id={lower};"),
            format!("id={};", lower.to_ascii_uppercase()),
        ] {
            let out = r.redact(&text);
            assert_eq!(out, format!("id={};", "*".repeat(lower.len())), "{text}");
        }
    }

    #[test]
    fn json_u_escapes_are_masked_whole_mixed_and_in_any_hex_case() {
        let r = Redactor::new([KEY]);
        let every = json_escaped(KEY, &[], false);
        assert!(every.starts_with("\\u0073\\u006b\\u002d"), "{every}");
        for form in [
            every.clone(),
            json_escaped(KEY, &[], true),
            json_escaped(KEY, &[true, false], false),
            json_escaped(KEY, &[false, false, true], true),
            json_escaped(&KEY.to_ascii_uppercase(), &[false, true], false),
            // Hex digits of mixed case within one escape.
            every.replace("006b", "006B").replace("\\u002d", "\\u002D"),
        ] {
            let text = format!("{{\"k\":\"{form}\"}}");
            let out = r.redact(&text);
            assert_eq!(
                out,
                format!("{{\"k\":\"{}\"}}", "*".repeat(form.len())),
                "{text}"
            );
        }
        // One character off is not the key.
        let off = every.replace("\\u0073", "\\u0074");
        assert!(matches!(r.redact(&off), Cow::Borrowed(_)));
    }

    #[test]
    fn escapes_of_slash_backslash_and_astral_characters() {
        let key = "ab/cd\\ef😀gh";
        let r = Redactor::new([key]);
        let text = "x ab\\/cd\\\\ef\\ud83d\\uDE00gh y";
        let out = r.redact(text);
        assert_eq!(out, format!("x {} y", "*".repeat(text.len() - 4)), "{text}");
        assert_eq!(r.longest_pattern(), 6 * 10 + 12);
    }

    #[test]
    fn backslashes_in_a_secret_match_every_way_they_can_be_written() {
        let key = "ab\\\\cdefgh";
        let r = Redactor::new([key]);
        for form in [
            "ab\\\\cdefgh",
            "ab\\\\\\\\cdefgh",
            "ab\\u005c\\\\cdefgh",
            "\\u0061b\\\\\\u005Ccdefgh",
        ] {
            let text = format!("<{form}>");
            assert_eq!(
                r.redact(&text),
                format!("<{}>", "*".repeat(form.len())),
                "{form}"
            );
        }
    }

    #[test]
    fn a_stream_without_backslashes_holds_back_only_the_plain_patterns() {
        let r = Redactor::new([KEY]);
        assert_eq!(r.longest_pattern(), 6 * KEY.len());
        let mut s = r.stream();
        let _ = s.push(&"x".repeat(1000));
        assert_eq!(
            s.pending_len(),
            2 * KEY.len() - 1,
            "the hex form is the longest"
        );
        // A backslash among the last bytes may start an escaped key: held longer.
        let _ = s.push("\\x");
        let _ = s.push(&"x".repeat(150));
        assert_eq!(s.pending_len(), 2 * KEY.len() - 1, "`\\x` starts no escape");
        let _ = s.push("\\u");
        let _ = s.push(&"x".repeat(150));
        assert_eq!(s.pending_len(), 6 * KEY.len() - 1);
        let _ = s.push(&"x".repeat(200));
        assert_eq!(s.pending_len(), 2 * KEY.len() - 1);
        // An escaped key split across pieces.
        let form = json_escaped(KEY, &[true, false, false], true);
        let mut s = r.stream();
        let mut out = s.push("a");
        for piece in form.as_bytes().chunks(5) {
            out.push_str(&s.push(std::str::from_utf8(piece).unwrap_or_default()));
        }
        out.push_str(&s.push("b"));
        out.push_str(&s.finish());
        assert_eq!(out, format!("a{}b", "*".repeat(form.len())));
    }

    #[test]
    fn percent_encoding_is_masked_where_it_differs() {
        let key = "abc+def/ghi=jkl";
        let r = Redactor::new([key]);
        let text = "q=abc%2Bdef%2fghi%3Djkl&x";
        assert_eq!(r.redact(text), "q=*********************&x");
    }

    #[test]
    fn short_and_empty_secrets() {
        let r = Redactor::new(["", "abc"]);
        assert_eq!(r.redact("xabcx ABC"), "x***x ABC");
        assert!(Redactor::new([""]).is_empty());
        assert_eq!(Redactor::none().redact("abc"), "abc");
    }

    #[test]
    fn overlapping_occurrences_are_all_masked() {
        let r = Redactor::new(["aaaaaaaa"]);
        assert_eq!(r.redact("baaaaaaaaaab"), "b**********b");
    }

    #[test]
    fn a_host_adds_secrets_and_debug_shows_none() {
        let r = Redactor::new([KEY]).with_secret("hunter2-hunter2");
        assert_eq!(r.redact("pw HUNTER2-HUNTER2"), "pw ***************");
        let debug = format!("{r:?}");
        assert!(
            !debug.contains("hunter") && !debug.contains("sk-"),
            "{debug}"
        );
    }

    #[test]
    fn json_strings_and_keys_are_redacted() {
        let r = Redactor::new([KEY]);
        let mut v = serde_json::json!({"a": [format!("x{KEY}")], KEY: 1, "n": 2});
        r.redact_json(&mut v);
        let text = v.to_string();
        assert!(!text.contains(KEY), "{text}");
        assert_eq!(v["n"], 2);
    }

    #[test]
    fn an_object_whose_only_key_is_a_secret_has_the_key_masked() {
        let r = Redactor::new([KEY]);
        let mut v = serde_json::json!({ KEY: KEY });
        r.redact_json(&mut v);
        let m = "*".repeat(KEY.len());
        assert_eq!(v.to_string(), format!("{{\"{m}\":\"{m}\"}}"));
    }

    #[test]
    fn a_secret_given_twice_is_one_set_of_patterns() {
        // `Debug` shows how many patterns there are, never what they are.
        assert_eq!(
            format!("{:?}", Redactor::new(["abc"])),
            "Redactor { patterns: 1 }"
        );
        assert_eq!(
            format!("{:?}", Redactor::new(["abc", "abc"])),
            "Redactor { patterns: 1 }"
        );
        let once = format!("{:?}", Redactor::new([KEY]));
        assert_eq!(format!("{:?}", Redactor::new([KEY, KEY])), once);
        assert_eq!(format!("{:?}", Redactor::new([KEY]).with_secret(KEY)), once);
    }

    #[test]
    fn a_text_that_is_just_the_secret_and_separate_occurrences() {
        let short = Redactor::new(["abc"]);
        assert_eq!(short.redact("abc"), "***", "as long as the only pattern");
        assert_eq!(
            short.redact("abc-x-abc"),
            "***-x-***",
            "not merged across `-x-`"
        );
        // Eight characters is long enough for the case variants and encodings.
        let eight = Redactor::new(["abcdefgh"]);
        assert_eq!(eight.redact("ABCDEFGH abcdefgh"), "******** ********");
    }

    #[test]
    fn the_stream_counts_what_it_holds_back() {
        let mut s = Redactor::new([KEY]).stream();
        assert_eq!(s.push("sk-li"), "");
        assert_eq!(s.pending_len(), 5);
        assert_eq!(s.finish(), "sk-li");
        assert_eq!(s.pending_len(), 0);
    }

    #[test]
    fn a_key_split_across_pieces_never_comes_out() {
        let r = Redactor::new([KEY]);
        let mut s = r.stream();
        let mut out = s.push("before sk-live-01234");
        out.push_str(&s.push("56789abcdef"));
        out.push_str(&s.push("XYZ after é"));
        out.push_str(&s.finish());
        assert_eq!(out, format!("before {} after é", "*".repeat(KEY.len())));
        assert!(s.pending_len() == 0);
    }

    #[test]
    fn the_stream_holds_back_less_than_the_longest_pattern() {
        let r = Redactor::new([KEY]);
        let mut s = r.stream();
        let text = "é".repeat(100);
        let out = s.push(&text);
        assert!(s.pending_len() < r.longest_pattern(), "{}", s.pending_len());
        assert!(out.chars().all(|c| c == 'é'));
    }

    #[test]
    fn escapes_controls_and_bidi() {
        let t = "a\u{202e}b\u{1b}[2Jc\nd\te\u{200d}";
        assert_eq!(
            escape_for_display(t, DisplayContext::Text),
            "a\\u{202e}b\\u{1b}[2Jc\nd\te\u{200d}"
        );
        assert_eq!(
            escape_for_display(t, DisplayContext::Strict),
            "a\\u{202e}b\\u{1b}[2Jc\\nd\\te\\u{200d}"
        );
        for c in [
            '\u{202a}',
            '\u{202d}',
            '\u{2066}',
            '\u{2069}',
            '\u{200e}',
            '\u{200f}',
            '\u{061c}',
            '\u{200b}',
            '\u{feff}',
            '\u{e0041}',
            '\u{2028}',
            '\u{7f}',
            '\u{85}',
        ] {
            assert!(needs_escape(c, DisplayContext::Text), "{c:?}");
        }
        assert!(needs_escape('\u{a0}', DisplayContext::Strict));
        assert!(!needs_escape('\u{a0}', DisplayContext::Text));
        assert!(matches!(
            escape_for_display("plain é 漢字 ✓", DisplayContext::Strict),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn display_pieces_hold_no_empty_runs() {
        use DisplayPiece::{Escaped, Plain};
        let rtl = '\u{202e}';
        assert_eq!(
            display_pieces("\u{202e}\u{202e}", DisplayContext::Strict),
            [Escaped(rtl), Escaped(rtl)]
        );
        assert_eq!(
            display_pieces("ab\u{202e}é\u{202e}", DisplayContext::Text),
            [Plain("ab"), Escaped(rtl), Plain("é"), Escaped(rtl)]
        );
        assert_eq!(display_pieces("", DisplayContext::Text), []);
    }

    /// The forms of `key` a hostile server might echo.
    fn forms(key: &str) -> Vec<String> {
        let h = hex(key.as_bytes());
        vec![
            h.to_ascii_uppercase(),
            h,
            json_escaped(key, &[], false),
            json_escaped(key, &[true, false], true),
            json_escaped(&key.to_ascii_uppercase(), &[false, true, true], false),
            key.to_owned(),
            key.to_ascii_uppercase(),
            key.to_ascii_lowercase(),
            b64(&format!("user:{key}"), STANDARD),
            b64(&format!("u:{key}"), URL_SAFE),
            b64(&format!("me:{key}"), STANDARD),
            base64(key.as_bytes(), URL_SAFE),
            percent_encode(key),
        ]
    }

    /// `key` with the characters `escape` picks (cycled) written `\uXXXX`, the hex digits
    /// of each escape in the case `upper` picks (cycled per digit).
    fn mixed_escapes(key: &str, escape: &[bool], upper: &[bool]) -> String {
        let mut out = String::new();
        let mut digit = 0usize;
        for (i, c) in key.chars().enumerate() {
            if !escape.is_empty() && escape[i % escape.len()] {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str("\\u");
                    for d in format!("{u:04x}").chars() {
                        let up = !upper.is_empty() && upper[digit % upper.len()];
                        digit += 1;
                        out.push(if up { d.to_ascii_uppercase() } else { d });
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Hex (any mix of digit cases) and JSON `\u` escapes (any characters escaped,
        /// any mix of hex-digit cases, the key in any letter case) never survive, whole
        /// or streamed in arbitrary pieces, and the stream equals the whole.
        #[test]
        fn no_hex_or_escaped_form_survives_any_split(
            key in "[A-Za-z0-9_+/=~.:\\\\-]{8,40}",
            upper_key in any::<bool>(),
            escape in proptest::collection::vec(any::<bool>(), 1..8),
            upper in proptest::collection::vec(any::<bool>(), 1..8),
            filler in proptest::collection::vec("[a-zA-Z0-9 é\\\\u\"{}:/\n]{0,12}", 1..5),
            which in proptest::collection::vec(0usize..3, 1..4),
            cuts in proptest::collection::vec(0usize..2000, 0..16),
        ) {
            let shown = if upper_key { key.to_ascii_uppercase() } else { key.clone() };
            let hex_mixed: String = hex(key.as_bytes())
                .chars()
                .enumerate()
                .map(|(i, d)| if upper[i % upper.len()] { d.to_ascii_uppercase() } else { d })
                .collect();
            let forms = [
                hex_mixed,
                mixed_escapes(&shown, &escape, &upper),
                mixed_escapes(&shown, &[true], &upper),
            ];
            let mut text = String::new();
            for (i, f) in filler.iter().enumerate() {
                text.push_str(f);
                if let Some(w) = which.get(i) {
                    text.push_str(&forms[*w]);
                }
            }
            let r = Redactor::new([key.as_str()]);
            let whole = r.redact(&text).into_owned();
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let mut points: Vec<usize> = cuts.iter().map(|c| bounds[c % bounds.len()]).collect();
            points.sort_unstable();
            points.dedup();
            let mut s = r.stream();
            let mut out = String::new();
            let mut last = 0;
            for p in points.into_iter().chain([text.len()]) {
                out.push_str(&s.push(&text[last..p]));
                prop_assert!(s.pending_len() < r.longest_pattern());
                last = p;
            }
            out.push_str(&s.finish());
            prop_assert_eq!(&out, &whole);
            prop_assert_eq!(out.chars().count(), text.chars().count());
            for w in which.iter().take(filler.len()) {
                prop_assert!(!out.contains(&forms[*w]), "{} survives in {}", forms[*w], out);
            }
            prop_assert!(!out.to_ascii_lowercase().contains(&key.to_ascii_lowercase()));
        }

        #[test]
        fn no_secret_survives_any_split(
            key in "[A-Za-z0-9_+/=~.-]{8,40}",
            filler in proptest::collection::vec("[a-zA-Z0-9 é漢\u{202e}\n:=+/]{0,12}", 1..6),
            which in proptest::collection::vec(0usize..13, 1..5),
            cuts in proptest::collection::vec(0usize..400, 0..12),
        ) {
            let forms = forms(&key);
            let mut text = String::new();
            for (i, f) in filler.iter().enumerate() {
                text.push_str(f);
                if let Some(w) = which.get(i) {
                    text.push_str(&forms[*w]);
                }
            }
            let r = Redactor::new([key.as_str()]);
            let whole = r.redact(&text).into_owned();
            // Split at random character boundaries.
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let mut points: Vec<usize> = cuts.iter().map(|c| bounds[c % bounds.len()]).collect();
            points.sort_unstable();
            points.dedup();
            let mut s = r.stream();
            let mut out = String::new();
            let mut last = 0;
            for p in points.into_iter().chain([text.len()]) {
                out.push_str(&s.push(&text[last..p]));
                prop_assert!(s.pending_len() < r.longest_pattern());
                last = p;
            }
            out.push_str(&s.finish());
            prop_assert_eq!(&out, &whole);
            prop_assert_eq!(out.chars().count(), text.chars().count());
            for f in &forms {
                let f = f.trim_end_matches('=');
                // The visible ends of a base64 form: at most 3 characters either side.
                if f.len() < 8 {
                    continue;
                }
                let core = &f[3..f.len() - 1];
                prop_assert!(!out.contains(core), "{} survives in {}", f, out);
            }
        }
    }
}
