//! Plain YAML scalars read as YAML 1.2's core schema (and serde-saphyr) reads them: the
//! booleans, integers and floats a plain scalar may spell. One definition for the shape
//! check of preset files and for the typed values of template variables (`--var`,
//! defaults), so a value means the same thing wherever it is written.

/// Surrounding blanks and line ends removed.
pub(crate) fn yaml_trim(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\r', '\n'])
}

/// `true` / `false` in the spellings YAML 1.2 allows.
pub(crate) fn yaml12_bool(s: &str) -> Option<bool> {
    match yaml_trim(s) {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// A YAML 1.1 boolean spelling (`yes`, `off`, ...) that YAML 1.2 reads as text.
pub(crate) fn is_yaml11_bool(s: &str) -> bool {
    let t = yaml_trim(s);
    ["y", "yes", "n", "no", "on", "off"]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

/// An integer as serde-saphyr reads one: optional sign, `0x`/`0o`/`0b` or decimal without
/// a leading zero, `_` only between digits.
pub(crate) fn parse_int(s: &str) -> Option<i128> {
    let t = yaml_trim(s);
    let (negative, rest) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (radix, digits) = if let Some(d) = rest.strip_prefix("0x").or(rest.strip_prefix("0X")) {
        (16, d)
    } else if let Some(d) = rest.strip_prefix("0o").or(rest.strip_prefix("0O")) {
        (8, d)
    } else if let Some(d) = rest.strip_prefix("0b").or(rest.strip_prefix("0B")) {
        (2, d)
    } else {
        if rest.starts_with('0') && rest != "0" {
            return None;
        }
        (10, rest)
    };
    let bytes = digits.as_bytes();
    let mut value: i128 = 0;
    let mut saw = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let ok = i > 0 && bytes[i - 1] != b'_' && i + 1 < bytes.len() && bytes[i + 1] != b'_';
            if !ok {
                return None;
            }
            continue;
        }
        let d = char::from(b).to_digit(radix)?;
        value = value
            .checked_mul(i128::from(radix))?
            .checked_add(i128::from(d))?;
        saw = true;
    }
    if !saw {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// A float as YAML 1.2 writes one: `.inf`/`.nan` spellings, or a decimal (one too large
/// for an `f64` reads as ±∞).
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    let t = yaml_trim(s);
    let (negative, unsigned) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    match unsigned {
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        ".inf" | ".Inf" | ".INF" => {
            return Some(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
        _ => {}
    }
    // A decimal too large for f64 (`1e400`) is a number all the same: it reads as ±∞,
    // which the validator reports as a `non-finite-order`, not as a wrong type. (Rust's
    // own spellings `inf`, `NaN`, `infinity` are not YAML numbers.)
    if t.chars()
        .any(|c| c.is_ascii_alphabetic() && !matches!(c, 'e' | 'E'))
    {
        return None;
    }
    t.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_as_serde_saphyr_reads_them() {
        for (text, value) in [
            ("0", Some(0)),
            ("42", Some(42)),
            ("+5", Some(5)),
            ("-5", Some(-5)),
            ("1_000", Some(1000)),
            ("0x1F", Some(31)),
            ("0o17", Some(15)),
            ("0b11", Some(3)),
            ("007", None),
            ("1.0", None),
            ("1__0", None),
            ("_1", None),
            ("", None),
            ("lots", None),
        ] {
            assert_eq!(parse_int(text), value, "{text:?}");
        }
    }

    #[test]
    fn floats_as_yaml_writes_them() {
        assert_eq!(parse_float("1"), Some(1.0));
        assert_eq!(parse_float("1e999"), Some(f64::INFINITY));
        assert_eq!(parse_float("-1e400"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("1e3"), Some(1000.0));
        assert_eq!(parse_float("-.inf"), Some(f64::NEG_INFINITY));
        assert!(parse_float(".NaN").is_some_and(f64::is_nan));
        for bad in [
            "inf",
            "nan",
            "-infinity",
            "NaN",
            "1_000",
            "0x10",
            "high",
            "",
        ] {
            assert_eq!(parse_float(bad), None, "{bad:?}");
        }
    }
}
