//! Prompt sections and runtime contexts, with validated names and orders.

use std::cmp::Ordering;
use std::fmt;

use super::origin::TextOrigin;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};

/// A section or context name: `^[a-z][a-z0-9_.:-]*$` (ASCII, so byte order equals UTF-16
/// order and sorting is the same in every language).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct SectionName(String);

impl SectionName {
    /// Check and wrap a name.
    pub fn new(name: &str) -> Result<Self, Diagnostic> {
        if Self::is_valid(name) {
            Ok(SectionName(name.to_owned()))
        } else {
            Err(Diagnostic::new(
                DiagnosticKind::InvalidName,
                format!("invalid section name `{name}`"),
            )
            .help("names start with a-z and continue with a-z, 0-9, `_`, `.`, `:` or `-`"))
        }
    }

    /// Does `name` match `^[a-z][a-z0-9_.:-]*$`?
    pub fn is_valid(name: &str) -> bool {
        let mut bytes = name.bytes();
        matches!(bytes.next(), Some(b'a'..=b'z'))
            && bytes.all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'_' | b'.' | b':' | b'-')
            })
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The guidance section name of a tool, `tool:<name>` (tool names may hold
    /// upper-case letters, which ordinary section names may not).
    pub(crate) fn tool_guidance(tool: &str) -> Self {
        SectionName(format!("tool:{tool}"))
    }

    /// For `tool:<name>` sections, the tool name.
    pub fn tool_guidance_target(&self) -> Option<&str> {
        self.0.strip_prefix("tool:")
    }
}

impl fmt::Display for SectionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A finite sort key. `-0` equals `0`; orders compare as numbers.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct Order(f64);

impl Order {
    /// Check and wrap an order: NaN and ±∞ are refused.
    pub fn new(order: f64) -> Result<Self, Diagnostic> {
        if order.is_finite() {
            // Normalise -0.0 so it sorts, prints and hashes as 0.
            Ok(Order(if order == 0.0 { 0.0 } else { order }))
        } else {
            Err(Diagnostic::new(
                DiagnosticKind::NonFiniteOrder,
                format!(
                    "order must be a finite number, not {}",
                    non_finite_words(order)
                ),
            )
            .help(NON_FINITE_HELP))
        }
    }

    /// [`Order::new`] for the order of a named section or context: the error names it.
    fn of(kind: &str, name: &str, order: f64) -> Result<Self, Diagnostic> {
        Order::new(order).map_err(|d| Diagnostic {
            message: format!(
                "{kind} `{name}` has order {}: orders must be finite numbers",
                non_finite_words(order)
            ),
            ..d
        })
    }

    /// The number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl Eq for Order {}

impl PartialOrd for Order {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Order {
    fn cmp(&self, other: &Self) -> Ordering {
        // Both finite, -0 normalised: total_cmp agrees with numeric order here.
        self.0.total_cmp(&other.0)
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

const NON_FINITE_HELP: &str = "use a number such as 0, 150 or 9000; a decimal beyond ±1.8e308 (e.g. `1e400`) overflows to infinity";

fn non_finite_words(order: f64) -> &'static str {
    if order.is_nan() {
        "NaN"
    } else if order > 0.0 {
        "+infinity"
    } else {
        "-infinity"
    }
}

/// Where a section's pieces were written, for diagnostics. Host-registered sections have
/// none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SectionOrigin {
    /// The name's position.
    pub name: Option<Span>,
    /// The text's position (maps offsets inside the text back to the file).
    pub text: Option<TextOrigin>,
    /// The `when` expression's position.
    pub when: Option<TextOrigin>,
}

/// A named piece of the system prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptSection {
    /// The name; a later layer's section with this name replaces this one.
    pub name: SectionName,
    /// Sort key; ties break by name, bytewise.
    pub order: Order,
    /// A minijinja template (or verbatim text when `template` is false).
    pub text: String,
    /// "This section alone is the whole system prompt."
    pub complete: bool,
    /// A minijinja expression; the section is effective only when it is true.
    pub when: Option<String>,
    /// `false`: send `text` verbatim.
    pub template: bool,
    /// Replacing an inherited section of this name is intended (`override: true`).
    pub overrides: bool,
    /// Where it was written.
    pub origin: SectionOrigin,
}

impl PromptSection {
    /// A templated section.
    pub fn new(name: &str, order: f64, text: impl Into<String>) -> Result<Self, Diagnostic> {
        Ok(PromptSection {
            name: SectionName::new(name)?,
            order: Order::of("section", name, order)?,
            text: text.into(),
            complete: false,
            when: None,
            template: true,
            overrides: false,
            origin: SectionOrigin::default(),
        })
    }

    /// Mark as the complete system prompt.
    pub fn complete(mut self, complete: bool) -> Self {
        self.complete = complete;
        self
    }

    /// Only effective when `expr` is true.
    pub fn when(mut self, expr: impl Into<String>) -> Self {
        self.when = Some(expr.into());
        self
    }

    /// Send the text verbatim (`false`) or as a template (`true`, the default).
    pub fn template(mut self, template: bool) -> Self {
        self.template = template;
        self
    }

    /// Mark it as replacing an inherited piece of the same name on purpose
    /// (`override: true`); without the mark a replacement is an `implicit-override`
    /// warning, and with it a piece that replaces nothing is an `override-nothing` one.
    pub fn overrides(mut self, overrides: bool) -> Self {
        self.overrides = overrides;
        self
    }

    /// Attach source positions.
    pub fn with_origin(mut self, origin: SectionOrigin) -> Self {
        self.origin = origin;
        self
    }
}

/// A named piece of runtime context (sent after the history, never in the system prompt).
#[derive(Clone, Debug, PartialEq)]
pub struct PromptContext {
    /// The name; a later layer's context with this name replaces this one.
    pub name: SectionName,
    /// Sort key; ties break by name.
    pub order: Order,
    /// A minijinja template (or verbatim text when `template` is false).
    pub text: String,
    /// `false`: send `text` verbatim.
    pub template: bool,
    /// Replacing an inherited context of this name is intended (`override: true`).
    pub overrides: bool,
    /// Where it was written.
    pub origin: SectionOrigin,
}

impl PromptContext {
    /// A templated context.
    pub fn new(name: &str, order: f64, text: impl Into<String>) -> Result<Self, Diagnostic> {
        Ok(PromptContext {
            name: SectionName::new(name)?,
            order: Order::of("context", name, order)?,
            text: text.into(),
            template: true,
            overrides: false,
            origin: SectionOrigin::default(),
        })
    }

    /// Send the text verbatim (`false`) or as a template (`true`, the default).
    pub fn template(mut self, template: bool) -> Self {
        self.template = template;
        self
    }

    /// Mark it as replacing an inherited piece of the same name on purpose
    /// (`override: true`); without the mark a replacement is an `implicit-override`
    /// warning, and with it a piece that replaces nothing is an `override-nothing` one.
    pub fn overrides(mut self, overrides: bool) -> Self {
        self.overrides = overrides;
        self
    }

    /// Attach source positions.
    pub fn with_origin(mut self, origin: SectionOrigin) -> Self {
        self.origin = origin;
        self
    }
}

/// What a section or context replaced: the inherited piece of the same name.
#[derive(Clone, Debug, PartialEq)]
pub enum Replaced {
    /// A piece an outer layer (a preset the child extends, or the host) declared.
    Piece {
        /// The layer's label (the preset's name).
        layer: String,
        /// Where its name was written.
        declared_at: Option<Span>,
    },
    /// The guidance a tool brings (`tool:<name>`).
    ToolGuidance {
        /// The tool.
        tool: String,
    },
}

impl fmt::Display for Replaced {
    /// `` the one in `standard` (presets/standard.yaml:40) `` or
    /// `` the guidance of the tool `bash` ``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Replaced::Piece {
                layer,
                declared_at: Some(span),
            } => write!(f, "the one in `{layer}` ({}:{})", span.file, span.line),
            Replaced::Piece {
                layer,
                declared_at: None,
            } => write!(f, "the one in `{layer}`"),
            Replaced::ToolGuidance { tool } => write!(f, "the guidance of the tool `{tool}`"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["persona", "tool:grep", "a", "policy.safety-1", "x_y:z"] {
            assert!(SectionName::is_valid(ok), "{ok}");
        }
        for bad in ["", "Persona", "1abc", "-a", "a b", "é", "a/b", "_a"] {
            assert!(!SectionName::is_valid(bad), "{bad}");
        }
    }

    #[test]
    fn orders() {
        assert!(Order::new(f64::NAN).is_err());
        assert!(Order::new(f64::INFINITY).is_err());
        assert!(Order::new(f64::NEG_INFINITY).is_err());
        assert_eq!(Order::new(-0.0).ok(), Order::new(0.0).ok());
        assert_eq!(
            Order::new(-0.0).map(|o| o.get().to_bits()).ok(),
            Some(0.0f64.to_bits())
        );
        let mut v: Vec<Order> = [10.0, -1.5, 0.0, 2.0, -0.0]
            .iter()
            .filter_map(|&x| Order::new(x).ok())
            .collect();
        v.sort();
        let got: Vec<f64> = v.iter().map(|o| o.get()).collect();
        assert_eq!(got, vec![-1.5, 0.0, 0.0, 2.0, 10.0]);
    }
}
