//! Secret detection: one place that knows what an API key or token looks like.
//!
//! [`find_secrets`] finds strings that are almost certainly credentials (known key
//! formats); the validator reports each as `literal-secret`. [`mask_secrets`] hides those
//! and, more eagerly, any long opaque token, in text about to be printed — over-masking a
//! hash in a snippet is harmless, printing a key is not. [`is_credential_name`] and
//! [`is_credential_value`] tell which environment variables never reach a command.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// One credential-looking string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretMatch {
    /// Byte range in the searched text.
    pub range: Range<usize>,
    /// What it looks like ("an OpenAI/DeepSeek-style API key").
    pub what: &'static str,
}

// ASCII word boundaries (`(?-u:\b)`): keys are ASCII, and Unicode-aware boundaries
// made compiling these patterns a third of `validate`'s start-up.
static PATTERNS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        (
            "an OpenAI/DeepSeek/Anthropic-style API key",
            r"(?-u:\b)sk-[A-Za-z0-9_\-]{20,}",
        ),
        (
            "an AWS access key",
            r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)",
        ),
        (
            "a GitHub token",
            r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        ),
        ("a GitLab token", r"(?-u:\b)glpat-[A-Za-z0-9_\-]{20,}"),
        ("a Slack token", r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}"),
        ("a Google API key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{30,}"),
        ("a Hugging Face token", r"(?-u:\b)hf_[A-Za-z0-9]{30,}"),
        (
            "a Stripe secret key",
            r"(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}",
        ),
        (
            "a JSON Web Token",
            r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        ),
        (
            "a bearer token",
            r"(?-u:\b)[Bb]earer[ \t]+[A-Za-z0-9._~+/\-]{20,}=*",
        ),
        ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    ]
    .into_iter()
    .filter_map(|(what, re)| Regex::new(re).ok().map(|r| (what, r)))
    .collect()
});

/// A literal every pattern above needs (its fixed start, or for bearer tokens the
/// `earer` of `Bearer`): text with none of them holds no secret. One pass of a literal
/// search instead of every pattern on every line.
static ANCHORS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        "sk-|AKIA|ASIA|gh[pousr]_|github_pat_|glpat-|xox|AIza|hf_|sk_|rk_|eyJ|earer|-----BEGIN ",
    )
    .ok()
});

/// Could `text` hold a secret [`find_secrets`] finds? `false` means certainly not.
pub fn may_hold_secrets(text: &str) -> bool {
    ANCHORS.as_ref().is_none_or(|re| re.is_match(text))
}

/// Every credential-looking string in `text`, in order, without overlaps.
pub fn find_secrets(text: &str) -> Vec<SecretMatch> {
    if !may_hold_secrets(text) {
        return Vec::new();
    }
    let mut found: Vec<SecretMatch> = Vec::new();
    for (what, re) in PATTERNS.iter() {
        for m in re.find_iter(text) {
            found.push(SecretMatch {
                range: m.range(),
                what,
            });
        }
    }
    found.sort_by_key(|m| (m.range.start, std::cmp::Reverse(m.range.end)));
    let mut out: Vec<SecretMatch> = Vec::with_capacity(found.len());
    for m in found {
        if out
            .last()
            .is_none_or(|last| m.range.start >= last.range.end)
        {
            out.push(m);
        }
    }
    out
}

/// The bytes a token is made of (ASCII letters, digits and `_-.+/=`), as a table: the
/// scan below runs over every diagnostic a report prints.
static TOKEN_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] =
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'+' | b'/' | b'=');
        b += 1;
    }
    table
};

/// A long run mixing letters and digits: a key in a format we do not know.
fn looks_opaque(token: &str) -> bool {
    token.len() >= 32
        && token.bytes().any(|b| b.is_ascii_digit())
        && token.bytes().any(|b| b.is_ascii_alphabetic())
        && !token.contains('/')
}

/// `text` with every secret (and every long opaque token) replaced by `*`, one per
/// character, so columns and carets stay aligned.
pub fn mask_secrets(text: &str) -> Cow<'_, str> {
    let mut ranges: Vec<Range<usize>> = find_secrets(text).into_iter().map(|m| m.range).collect();
    // Token characters are ASCII, so bytes find the same tokens as characters would (a
    // byte of a multi-byte character is never one), at a fraction of the cost.
    // Only runs of 32 or more are looked at ([`looks_opaque`]).
    let mut run = 0;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if TOKEN_BYTE[usize::from(b)] {
            run += 1;
            continue;
        }
        if run >= 32 && looks_opaque(&text[i - run..i]) {
            ranges.push(i - run..i);
        }
        run = 0;
    }
    let end = text.len();
    if run >= 32 && looks_opaque(&text[end - run..]) {
        ranges.push(end - run..end);
    }
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    ranges.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for r in ranges {
        let from = r.start.max(copied);
        if from >= r.end {
            continue;
        }
        out.push_str(&text[copied..from]);
        out.extend(std::iter::repeat_n('*', text[from..r.end].chars().count()));
        copied = r.end;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Does an environment variable's name say it holds a credential? `GITHUB_TOKEN`,
/// `OPENAI_KEY_2`, `ANTHROPIC_KEY_PROD`, `STRIPE_SK`, `DB_PASS`, `PGPASS`, `MYSQL_PWD`,
/// `SENTRY_DSN`, `AWS_SECRET_ACCESS_KEY`, `NPM_AUTH`, `HTTP_AUTHORIZATION`, … — but not
/// `PATH`, `PWD`, `GIT_AUTHOR_NAME`, `XAUTHORITY`, `SSH_AUTH_SOCK`, `GIT_ASKPASS`,
/// `TOKENIZERS_PARALLELISM`, `KEYBOARD` or `MONKEY`. Case does not matter.
pub fn is_credential_name(name: &str) -> bool {
    const CONTAINS: [&str; 13] = [
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "API_KEY",
        "APIKEY",
        "PRIVATE_KEY",
        "PRIVATEKEY",
        "ACCESS_KEY",
        "ACCESSKEY",
        "SESSION_KEY",
        "COOKIE",
    ];
    // Whole `_`-separated words: `OPENAI_KEY_2`, but not `KEYBOARD` or `TOKENIZERS_…`.
    const WORDS: [&str; 13] = [
        "KEY", "KEYS", "TOKEN", "TOKENS", "PAT", "PASS", "PWD", "PIN", "SK", "DSN", "JWT",
        "BEARER", "OTP",
    ];
    let upper = name.to_ascii_uppercase();
    if matches!(upper.as_str(), "PWD" | "OLDPWD" | "SSH_AUTH_SOCK") {
        return false;
    }
    let words = || upper.split('_').filter(|w| !w.is_empty());
    CONTAINS.iter().any(|m| upper.contains(m))
        || words().any(|w| WORDS.contains(&w))
        // `GHTOKEN`, `PGPASS`, but not `GIT_ASKPASS` (a program).
        || words().any(|w| w.ends_with("TOKEN") || (w.ends_with("PASS") && !w.ends_with("ASKPASS")))
        || has_auth(&upper)
}

/// `AUTH` as in `NPM_AUTH`, `OAUTH_…`, `AUTHORIZATION`, but not `AUTHOR` (`GIT_AUTHOR_NAME`)
/// or `AUTHORITY` (`XAUTHORITY`, a file path).
fn has_auth(upper: &str) -> bool {
    upper.match_indices("AUTH").any(|(i, _)| {
        let rest = &upper[i + 4..];
        !rest.starts_with("OR") || rest.starts_with("ORIZ")
    })
}

/// Does an environment variable's value look like a credential: a known key or token
/// format ([`find_secrets`]), a URL with a password (`postgres://app:hunter2@db/app`), or
/// a URL whose user is a long opaque key (a Sentry DSN, `https://<key>@o1.ingest.sentry.io/2`)?
pub fn is_credential_value(value: &str) -> bool {
    static URL_USER: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r"[A-Za-z][A-Za-z0-9+.\-]*://([^/?#@\s:]*)(:[^/?#@\s]+)?@").ok()
    });
    if !find_secrets(value).is_empty() {
        return true;
    }
    URL_USER.as_ref().is_some_and(|re| {
        re.captures_iter(value).any(|c| {
            let user = c.get(1).map_or("", |m| m.as_str());
            c.get(2).is_some() || (user.len() >= 16 && looks_opaque_key(user))
        })
    })
}

/// A run of letters and digits, with both: a key, not a user name like `git`.
fn looks_opaque_key(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_known_formats() {
        for key in [
            "sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUv",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "AKIAABCDEFGHIJKLMNOP",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "glpat-AbCdEf1234567890GhIj",
            "AIzaSyAbCdEf1234567890GhIjKlMnOpQrStU",
            "Bearer abcdefghijklmnopqrstuvwxyz012345",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEF",
        ] {
            let text = format!("description: \"my {key} here\"");
            let found = find_secrets(&text);
            assert_eq!(found.len(), 1, "{key}: {found:?}");
            assert_eq!(&text[found[0].range.clone()], key);
            assert!(!mask_secrets(&text).contains(key));
        }
    }

    /// Every pattern needs one of the literals the quick pass looks for: an example of
    /// each is still found in a longer text.
    #[test]
    fn the_quick_pass_lets_every_format_through() {
        let examples = [
            "sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUv",
            "AKIAABCDEFGHIJKLMNOP",
            "ASIAABCDEFGHIJKLMNOP",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "gho_abcdefghijklmnopqrstuvwxyz0123456789",
            "ghu_abcdefghijklmnopqrstuvwxyz0123456789",
            "ghs_abcdefghijklmnopqrstuvwxyz0123456789",
            "ghr_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_abcdefghijklmnopqrstuvwxyz",
            "glpat-AbCdEf1234567890GhIj",
            "xoxb-1234567890-abcdef",
            "AIzaSyAbCdEf1234567890GhIjKlMnOpQrStU",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEF",
            "sk_live_abcdefghij1234",
            "rk_test_abcdefghij1234",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "Bearer abcdefghijklmnopqrstuvwxyz012345",
            "bearer abcdefghijklmnopqrstuvwxyz012345",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
        ];
        assert_eq!(PATTERNS.len(), 11);
        for key in examples {
            let text = format!("version: 1\nname: x\n# notes\ndescription: \"my {key} here\"\n");
            assert!(may_hold_secrets(&text), "{key}");
            let found = find_secrets(&text);
            assert_eq!(found.len(), 1, "{key}: {found:?}");
            assert_eq!(&text[found[0].range.clone()], key);
        }
        assert!(!may_hold_secrets(
            "version: 1\nname: plain\ndescription: nothing here\n"
        ));
    }

    /// Several secrets in one text are all found, in order; a match inside another (an
    /// API key in a bearer token) is one secret, the outer one.
    #[test]
    fn several_and_nested_secrets() {
        let key = "sk-abcdefghijklmnopqrstuvwxyz0123";
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        let text = format!("first {key} then {token} end");
        let found: Vec<&str> = find_secrets(&text)
            .iter()
            .map(|m| &text[m.range.clone()])
            .collect();
        assert_eq!(found, [key, token]);
        let bearer = format!("Authorization: Bearer {key}");
        let found = find_secrets(&bearer);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].what, "a bearer token");
        assert_eq!(&bearer[found[0].range.clone()], &bearer[15..]);
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in [
            "apiKeyEnv: DEEPSEEK_API_KEY",
            "name: deepseek-v4-flash",
            "use scikit-learn and sk-short",
            "see https://example.com/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
        ] {
            assert!(find_secrets(text).is_empty(), "{text}");
            assert!(matches!(mask_secrets(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn masks_keep_columns() {
        assert_eq!(
            mask_secrets("apiKeyEnv: sk-test0000000000000000000000000000 # x"),
            "apiKeyEnv: *********************************** # x"
        );
        assert_eq!(
            mask_secrets("é sk-abcdefghijklmnopqrstuvwx"),
            "é ***************************"
        );
        // An unknown format is still masked for printing.
        assert_eq!(
            mask_secrets("token q9W8e7R6t5Y4u3I2o1P0a9S8d7F6g5H4 end"),
            "token ******************************** end"
        );
    }

    #[test]
    fn unknown_tokens_are_masked_from_32_characters_wherever_they_stand() {
        let t32 = "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6";
        let t31 = &t32[..31];
        let stars = "*".repeat(32);
        // At the start, at the end, the whole text, and right after a multi-byte character.
        assert_eq!(mask_secrets(&format!("{t32} x")), format!("{stars} x"));
        assert_eq!(mask_secrets(&format!("x {t32}")), format!("x {stars}"));
        assert_eq!(mask_secrets(t32), stars);
        assert_eq!(mask_secrets(&format!("é{t32}é")), format!("é{stars}é"));
        // One character short, letters only, or a path: left alone.
        for text in [
            format!("{t31} x"),
            format!("x {t31}"),
            "abcdefghijklmnopqrstuvwxyzabcdefgh".to_owned(),
            format!("src/{t32}"),
        ] {
            assert!(matches!(mask_secrets(&text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn credential_names_are_recognised() {
        for name in [
            "DEEPSEEK_API_KEY",
            "OPENAI_APIKEY",
            "OPENAI_KEY_2",
            "ANTHROPIC_KEY_PROD",
            "STRIPE_SK",
            "GITHUB_TOKEN",
            "GHTOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "SSH_KEY",
            "GITHUB_PAT",
            "DB_PASS",
            "PGPASS",
            "MYSQL_PWD",
            "PGPASSWORD",
            "SMTP_PASSWD",
            "GPG_PASSPHRASE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SENTRY_DSN",
            "NPM_AUTH",
            "HTTP_AUTHORIZATION",
            "OAUTH_CLIENT",
            "SIGNING_PRIVATE_KEY",
            "app_secret",
        ] {
            assert!(is_credential_name(name), "{name} should be withheld");
        }
        for name in [
            "PATH",
            "PWD",
            "HOME",
            "GIT_AUTHOR_NAME",
            "XAUTHORITY",
            "SSH_AUTH_SOCK",
            "GIT_ASKPASS",
            "CARGO_HOME",
            "RUST_LOG",
            "KEYBOARD",
            "MONKEY",
            "TOKENIZERS_PARALLELISM",
            "LANG",
            "LC_ALL",
        ] {
            assert!(!is_credential_name(name), "{name} should pass");
        }
    }

    #[test]
    fn credential_values_are_recognised() {
        for value in [
            "sk-abcdefghijklmnopqrstuvwxyz0123",
            "sk_live_51HxYzAbCdEfGhIjKlMnOp",
            "rk_test_abcdefghijklmnop1234",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "postgres://app:hunter2@db.internal:5432/app",
            "https://user:token@example.com/repo.git",
            "redis://:secretpass@cache:6379",
            "https://0123456789abcdef0123456789abcdef@o123.ingest.sentry.io/4567",
        ] {
            assert!(is_credential_value(value), "{value} should be withheld");
        }
        for value in [
            "",
            "/usr/bin:/bin",
            "https://example.com/a:b",
            "ssh://git@github.com/org/repo.git",
            "en_US.UTF-8",
            "http://localhost:8080/",
            "https://alice@example.com/",
        ] {
            assert!(!is_credential_value(value), "{value} should pass");
        }
    }

    /// A URL whose user part is a long opaque key (16 or more letters, digits, `-` or
    /// `_`, with both a letter and a digit) is a credential even without a password.
    #[test]
    fn an_opaque_url_user_is_a_credential() {
        for value in [
            // Exactly 16 characters.
            "https://abcdef0123456789@o1.ingest.sentry.io/2",
            "https://0123456789abcdeF@host/",
            // `-` and `_` belong to a key.
            "https://abc-def_0123456789@host/",
            "https://a-b-c-d-e-f-g-h1@host/",
            "https://a_b_c_d_e_f_g_h1@host/",
            // Only the user part counts, wherever the URL is.
            "see DSN=https://9f8e7d6c5b4a39281706@sentry.example.com/12 here",
        ] {
            assert!(is_credential_value(value), "{value} should be withheld");
        }
    }

    /// A URL user that is a name, not a key, passes: too short, no digit, no letter, or
    /// with characters a key does not have.
    #[test]
    fn a_url_user_that_is_a_name_passes() {
        for value in [
            // 15 characters: one short of a key.
            "https://abcdef012345678@host/",
            // Long, but no digit.
            "https://averyveryverylongusername@example.com/",
            // Long, but no letter.
            "https://12345678901234567890@example.com/",
            // Long, with a letter and a digit, but a `.` or `~`: an address, not a key.
            "https://first.last.1234567890@example.com/",
            "https://first~last~1234567890@example.com/",
            // Short user names.
            "ssh://git1@github.com/org/repo.git",
            "https://a1@example.com/",
        ] {
            assert!(!is_credential_value(value), "{value} should pass");
        }
    }
}
