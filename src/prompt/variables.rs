//! Template variables: the built-in runtime ones, preset-declared ones, and the values an
//! assembly renders with.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use minijinja::Value;
use minijinja::value::ValueKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::yaml_scalar::{is_yaml11_bool, parse_float, parse_int, yaml_trim, yaml12_bool};

/// A built-in runtime variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinVariable {
    /// Its name.
    pub name: &'static str,
    /// What it holds.
    pub description: &'static str,
    /// Changes while an agent runs: belongs in runtime context, not the system prompt.
    pub volatile: bool,
    /// The value `validate` renders with.
    pub example: &'static str,
}

/// The built-in runtime variables. `tools` (the visible tool names in wire order) and
/// `runtime_context` are always set by the assembler; the others come from the host or
/// `--var`.
pub const BUILTIN_VARIABLES: &[BuiltinVariable] = &[
    BuiltinVariable {
        name: "model",
        description: "The model name, e.g. deepseek-v4-flash",
        volatile: false,
        example: "example-model",
    },
    BuiltinVariable {
        name: "provider",
        description: "The provider: deepseek, openai, anthropic or openai-compatible",
        volatile: false,
        example: "example-provider",
    },
    BuiltinVariable {
        name: "cwd",
        description: "The agent's working directory",
        volatile: false,
        example: "/workspace/example",
    },
    BuiltinVariable {
        name: "os",
        description: "The operating system, e.g. linux",
        volatile: false,
        example: "linux",
    },
    BuiltinVariable {
        name: "shell",
        description: "The shell commands run in, e.g. bash",
        volatile: false,
        example: "bash",
    },
    BuiltinVariable {
        name: "date",
        description: "Today's date, YYYY-MM-DD",
        volatile: true,
        example: "2030-01-01",
    },
    BuiltinVariable {
        name: "tools",
        description: "The visible tool names, in wire order",
        volatile: false,
        example: "",
    },
    BuiltinVariable {
        name: "runtime_context",
        description: "true when a runtime-context message can be sent (the preset chain has contexts and none is suppressed)",
        volatile: false,
        example: "",
    },
];

/// The name of the variable the assembler derives from the visible tools.
pub const TOOLS_VARIABLE: &str = "tools";
/// The name of the variable the assembler derives from the contexts: `true` when a
/// runtime-context message can be sent, so a prompt can mention it only then.
pub const RUNTIME_CONTEXT_VARIABLE: &str = "runtime_context";

/// Is `name` derived by the assembler (`tools`, `runtime_context`), so no caller sets it?
pub fn is_derived_variable(name: &str) -> bool {
    name == TOOLS_VARIABLE || name == RUNTIME_CONTEXT_VARIABLE
}
/// The built-in variable holding the model name (covered by the prefix fingerprint).
pub const MODEL_VARIABLE: &str = "model";
/// The built-in variable holding the provider (covered by the prefix fingerprint).
pub const PROVIDER_VARIABLE: &str = "provider";

/// Look up a built-in variable.
pub fn builtin_variable(name: &str) -> Option<&'static BuiltinVariable> {
    BUILTIN_VARIABLES.iter().find(|v| v.name == name)
}

/// A variable name: `^[a-z][a-z0-9_]*$`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VariableName(String);

impl VariableName {
    /// Check and wrap a name.
    pub fn new(name: &str) -> Result<Self, Diagnostic> {
        if Self::is_valid(name) {
            Ok(VariableName(name.to_owned()))
        } else {
            Err(Diagnostic::new(
                DiagnosticKind::InvalidName,
                format!("invalid variable name `{name}`"),
            )
            .help("variable names start with a-z and continue with a-z, 0-9 or `_`"))
        }
    }

    /// Does `name` match `^[a-z][a-z0-9_]*$`?
    pub fn is_valid(name: &str) -> bool {
        let mut bytes = name.bytes();
        matches!(bytes.next(), Some(b'a'..=b'z'))
            && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for VariableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The type of a declared variable's values. Templates receive values of that type: a
/// `boolean` is tested with `{% if flag %}`, an `integer` can be counted with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VariableType {
    /// Text (the default).
    #[default]
    String,
    /// A whole number (64-bit): `42`, `-7`, `0x1F`, `1_000`.
    Integer,
    /// A number, whole or with a fraction: `0.5`, `3`, `1e3` (finite).
    Number,
    /// `true` or `false`.
    Boolean,
}

impl VariableType {
    /// Every type, in declaration order.
    pub const ALL: &'static [VariableType] = &[
        VariableType::String,
        VariableType::Integer,
        VariableType::Number,
        VariableType::Boolean,
    ];

    /// `string`, `integer`, `number` or `boolean`, as preset files spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            VariableType::String => "string",
            VariableType::Integer => "integer",
            VariableType::Number => "number",
            VariableType::Boolean => "boolean",
        }
    }

    /// What a value of this type is, for messages ("a whole number").
    pub fn describe(self) -> &'static str {
        match self {
            VariableType::String => "text",
            VariableType::Integer => "a whole number",
            VariableType::Number => "a number",
            VariableType::Boolean => "`true` or `false`",
        }
    }

    /// Read a value of this type from its text, as it is written on the command line
    /// (`--var port=8080`) or as a plain YAML scalar (`default: 8080`); `None` when the
    /// text is not a value of this type. Text is taken as is; the other types follow
    /// YAML 1.2's core schema (surrounding blanks ignored): integers in decimal, `0x`,
    /// `0o` or `0b` with optional `_` between digits and within 64 bits; numbers are
    /// integers or finite decimals (`1e3`; an integer stays an integer); booleans are
    /// `true`/`false` (also `True`, `TRUE`, ...).
    pub fn parse(self, text: &str) -> Option<Value> {
        match self {
            VariableType::String => Some(Value::from(text)),
            VariableType::Integer => parse_int(text)
                .and_then(|n| i64::try_from(n).ok())
                .map(Value::from),
            VariableType::Number => match parse_int(text) {
                Some(n) => i64::try_from(n).ok().map(Value::from),
                None => parse_float(text).filter(|x| x.is_finite()).map(Value::from),
            },
            VariableType::Boolean => yaml12_bool(text).map(Value::from),
        }
    }

    /// Is `value` a value of this type? (A whole number is a `number` too.)
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            VariableType::String => value.kind() == ValueKind::String,
            VariableType::Integer => value.is_integer(),
            VariableType::Number => value.is_number(),
            VariableType::Boolean => value.kind() == ValueKind::Bool,
        }
    }

    /// "write a whole number, e.g. `42`", ... for help texts.
    pub fn example_help(self) -> &'static str {
        match self {
            VariableType::String => "write any text",
            VariableType::Integer => "write a whole number, e.g. `42`",
            VariableType::Number => "write a number, e.g. `0.5` or `3`",
            VariableType::Boolean => "write `true` or `false`",
        }
    }

    /// Why `text` is not a value of this type, when something can be said ("`yes` is
    /// not a boolean here: write `true` or `false`").
    pub fn hint(self, text: &str) -> Option<String> {
        let t = yaml_trim(text);
        match self {
            VariableType::Boolean if is_yaml11_bool(t) => Some(format!(
                "`{t}` is not a boolean here: write `true` or `false`"
            )),
            VariableType::Integer if parse_int(t).is_some() => {
                Some("integers are at most 64 bits (±9223372036854775807)".to_owned())
            }
            VariableType::Integer if parse_float(t).is_some_and(f64::is_finite) => {
                Some("an integer has no fraction: use `type: number` for decimals".to_owned())
            }
            VariableType::Number if parse_float(t).is_some() => {
                Some("numbers must be finite (no `.inf` or `.nan`)".to_owned())
            }
            _ => None,
        }
    }
}

impl fmt::Display for VariableType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A variable a preset (or host) declares.
#[derive(Clone, Debug, PartialEq)]
pub struct VariableDecl {
    /// Its name.
    pub name: VariableName,
    /// What it holds.
    pub description: String,
    /// The type of its values when declared (`type:`); `None`: untyped text, and values
    /// a host passes are not checked.
    pub value_type: Option<VariableType>,
    /// The values it may take (`enum:`), typed; empty: any value of its type.
    pub choices: Vec<Value>,
    /// The value used when none is given (typed).
    pub default: Option<Value>,
    /// A value must be given (or defaulted) for every assembly, used or not.
    pub required: bool,
    /// Changes while an agent runs (warns when used in the system prompt).
    pub volatile: bool,
    /// Where the name was written.
    pub span: Option<Span>,
}

impl VariableDecl {
    /// A declaration with a description and no default.
    pub fn new(name: &str, description: impl Into<String>) -> Result<Self, Diagnostic> {
        Ok(VariableDecl {
            name: VariableName::new(name)?,
            description: description.into(),
            value_type: None,
            choices: Vec::new(),
            default: None,
            required: false,
            volatile: false,
            span: None,
        })
    }

    /// Set a default.
    pub fn with_default(mut self, default: impl Into<Value>) -> Self {
        self.default = Some(default.into());
        self
    }

    /// Declare the type of its values.
    pub fn with_type(mut self, value_type: VariableType) -> Self {
        self.value_type = Some(value_type);
        self
    }

    /// Restrict it to these values (`enum:`).
    pub fn with_choices(mut self, choices: impl IntoIterator<Item = impl Into<Value>>) -> Self {
        self.choices = choices.into_iter().map(Into::into).collect();
        self
    }

    /// The type its values have: the declared one, else `string`.
    pub fn effective_type(&self) -> VariableType {
        self.value_type.unwrap_or_default()
    }

    /// A value of its type for trying a render (`validate`): the default, else the first
    /// `enum` value, else `<name>` as text, `0` or `false`.
    pub fn representative_value(&self) -> Value {
        if let Some(default) = &self.default {
            return default.clone();
        }
        if let Some(first) = self.choices.first() {
            return first.clone();
        }
        match self.effective_type() {
            VariableType::String => Value::from(format!("<{}>", self.name)),
            VariableType::Integer | VariableType::Number => Value::from(0),
            VariableType::Boolean => Value::from(false),
        }
    }

    /// Does the declaration constrain values at all (a `type` or an `enum`)?
    pub fn is_constrained(&self) -> bool {
        self.value_type.is_some() || !self.choices.is_empty()
    }

    /// Read a value for this variable from text (`--var name=TEXT`): typed as declared
    /// and, with an `enum`, one of its values. The error says which variable, what was
    /// expected, and the choices.
    pub fn parse_value(&self, text: &str) -> Result<Value, Diagnostic> {
        let value_type = self.effective_type();
        let Some(value) = value_type.parse(text) else {
            let help = value_type
                .hint(text)
                .or_else(|| self.choices_help())
                .unwrap_or_else(|| value_type.example_help().to_owned());
            return Err(Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!(
                    "variable `{}` is {} ({}), not `{text}`",
                    self.name,
                    article(value_type),
                    value_type.describe(),
                ),
            )
            .help(help));
        };
        self.check_choice(&value, text)?;
        Ok(value)
    }

    /// Check a value a host passes: of the declared type and, with an `enum`, one of its
    /// values. An untyped variable without `enum` takes any value.
    pub fn check_value(&self, value: &Value) -> Result<(), Diagnostic> {
        if let Some(value_type) = self.value_type
            && !value_type.accepts(value)
        {
            return Err(Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!(
                    "variable `{}` is {} ({}), but was given {}",
                    self.name,
                    article(value_type),
                    value_type.describe(),
                    describe_value(value),
                ),
            )
            .maybe_help(self.choices_help()));
        }
        self.check_choice(value, &value.to_string())
    }

    fn check_choice(&self, value: &Value, shown: &str) -> Result<(), Diagnostic> {
        if self.choices.is_empty() || self.choices.iter().any(|c| same_value(c, value)) {
            return Ok(());
        }
        let shown = match value.as_str() {
            Some(text) => text.to_owned(),
            None => shown.to_owned(),
        };
        let texts: Vec<String> = self.choices.iter().map(choice_text).collect();
        // "Did you mean" helps with words, not numbers.
        let near = match value.as_str() {
            Some(text) => crate::suggest::help_did_you_mean(text, texts.iter().map(String::as_str)),
            None => None,
        };
        let help = near
            .map(|m| format!("{m} (choices: {})", list(&texts)))
            .unwrap_or_else(|| format!("choose one of {}", list(&texts)));
        Err(Diagnostic::new(
            DiagnosticKind::InvalidValue,
            format!("`{shown}` is not a choice of variable `{}`", self.name),
        )
        .help(help))
    }

    /// Is `value` one of the `enum` choices? (`true` when there is no `enum`.)
    pub(crate) fn is_choice(&self, value: &Value) -> bool {
        self.choices.is_empty() || self.choices.iter().any(|c| same_value(c, value))
    }

    /// The `enum` choices as written in a preset (`external`, `3`).
    pub(crate) fn choice_texts(&self) -> Vec<String> {
        self.choices.iter().map(choice_text).collect()
    }

    /// "choose one of `a`, `b`" when the variable has an `enum`.
    fn choices_help(&self) -> Option<String> {
        if self.choices.is_empty() {
            return None;
        }
        let texts: Vec<String> = self.choices.iter().map(choice_text).collect();
        Some(format!("choose one of {}", list(&texts)))
    }

    /// Require a value.
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Mark as volatile.
    pub fn volatile(mut self, volatile: bool) -> Self {
        self.volatile = volatile;
        self
    }
}

/// "an integer", "a string", ...
fn article(value_type: VariableType) -> String {
    match value_type {
        VariableType::Integer => "an integer".to_owned(),
        other => format!("a {}", other.as_str()),
    }
}

/// Equal and of the same kind (`1` is not `true`, `"1"` is not `1`); a whole number
/// equals the same decimal (`1` and `1.0`).
fn same_value(a: &Value, b: &Value) -> bool {
    a.kind() == b.kind() && a == b
}

/// A choice as it is written in a preset.
fn choice_text(value: &Value) -> String {
    match value.as_str() {
        Some(text) => text.to_owned(),
        None => value.to_string(),
    }
}

fn list(texts: &[String]) -> String {
    texts
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "the text `abc`", "the number 5", ... for messages.
fn describe_value(value: &Value) -> String {
    match value.kind() {
        ValueKind::String => format!("the text `{}`", value.as_str().unwrap_or_default()),
        ValueKind::Number => format!("the number {value}"),
        ValueKind::Bool => format!("`{value}`"),
        ValueKind::None | ValueKind::Undefined => "nothing".to_owned(),
        ValueKind::Seq | ValueKind::Iterable => "a list".to_owned(),
        ValueKind::Map => "a mapping".to_owned(),
        _ => format!("`{value}`"),
    }
}

/// The values one assembly renders with. Unset variables have no value (an error when a
/// template needs them, never an empty string).
///
/// Every change (`set`, `unset`) gives the set a new stamp, and a clone keeps it: two
/// value sets with the same stamp hold the same values, so an assembler that rendered
/// one can answer the other without looking at a single value (see
/// [`PromptAssembler::assemble`](super::PromptAssembler::assemble)).
#[derive(Clone)]
pub struct Values {
    map: BTreeMap<String, Value>,
    /// Identifies exactly these values (see [`Values::stamp`]).
    stamp: u64,
    /// How many values may change behind the set's back (host objects, lists, maps):
    /// while there is one, the set has no stamp.
    opaque: usize,
}

/// Stamps are never reused within a process.
static NEXT_STAMP: AtomicU64 = AtomicU64::new(1);

fn fresh_stamp() -> u64 {
    NEXT_STAMP.fetch_add(1, Ordering::Relaxed)
}

/// Can this value never change once made? Strings, numbers, booleans, bytes and none
/// cannot; lists, maps and host objects may be objects with state of their own.
fn is_opaque(value: &Value) -> bool {
    !matches!(
        value.kind(),
        ValueKind::Undefined
            | ValueKind::None
            | ValueKind::Bool
            | ValueKind::Number
            | ValueKind::String
            | ValueKind::Bytes
    )
}

impl Default for Values {
    fn default() -> Self {
        Values {
            map: BTreeMap::new(),
            stamp: fresh_stamp(),
            opaque: 0,
        }
    }
}

impl PartialEq for Values {
    fn eq(&self, other: &Self) -> bool {
        self.map == other.map
    }
}

impl fmt::Debug for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Values").field("map", &self.map).finish()
    }
}

impl Values {
    /// No values.
    pub fn new() -> Self {
        Values::default()
    }

    /// Set a value (a string, a number, a list …).
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<Value>) -> &mut Self {
        let value = value.into();
        self.opaque += usize::from(is_opaque(&value));
        if let Some(old) = self.map.insert(name.into(), value) {
            self.opaque -= usize::from(is_opaque(&old));
        }
        self.stamp = fresh_stamp();
        self
    }

    /// Builder-style [`set`](Self::set).
    pub fn with(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.set(name, value);
        self
    }

    /// Remove a value.
    pub fn unset(&mut self, name: &str) -> Option<Value> {
        let old = self.map.remove(name)?;
        self.opaque -= usize::from(is_opaque(&old));
        self.stamp = fresh_stamp();
        Some(old)
    }

    /// A value.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    /// The names whose values differ between `self` and `other` (set in one only, or
    /// set to unequal values), in name order: one walk of both sorted maps.
    pub(crate) fn differing<'a>(&'a self, other: &'a Values) -> Vec<&'a str> {
        let mut out = Vec::new();
        let (mut a, mut b) = (self.map.iter().peekable(), other.map.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => return out,
                (Some((k, _)), None) => {
                    out.push(k.as_str());
                    a.next();
                }
                (None, Some((k, _))) => {
                    out.push(k.as_str());
                    b.next();
                }
                (Some((ka, va)), Some((kb, vb))) => match ka.cmp(kb) {
                    std::cmp::Ordering::Less => {
                        out.push(ka.as_str());
                        a.next();
                    }
                    std::cmp::Ordering::Greater => {
                        out.push(kb.as_str());
                        b.next();
                    }
                    std::cmp::Ordering::Equal => {
                        if va != vb {
                            out.push(ka.as_str());
                        }
                        a.next();
                        b.next();
                    }
                },
            }
        }
    }

    /// Every value, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// What identifies exactly these values: equal stamps mean equal values (this set
    /// or an unchanged clone of it). `None` while a value could change without the set
    /// knowing (a list, a map, a host object): such sets are compared value by value.
    pub(crate) fn stamp(&self) -> Option<u64> {
        (self.opaque == 0).then_some(self.stamp)
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Values {
    fn from_iter<T: IntoIterator<Item = (K, V)>>(iter: T) -> Self {
        let mut values = Values::new();
        for (k, v) in iter {
            values.set(k, v);
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `differing` names exactly the names whose lookups disagree, in name order.
        #[test]
        fn differing_is_every_name_whose_lookups_disagree(
            a in proptest::collection::btree_map("[a-e]", 0..3u8, 0..5),
            b in proptest::collection::btree_map("[a-e]", 0..3u8, 0..5),
        ) {
            let (mut va, mut vb) = (Values::new(), Values::new());
            for (k, v) in &a {
                va.set(k.clone(), *v);
            }
            for (k, v) in &b {
                vb.set(k.clone(), *v);
            }
            let expected: Vec<&str> = ["a", "b", "c", "d", "e"]
                .into_iter()
                .filter(|n| va.get(n) != vb.get(n))
                .collect();
            prop_assert_eq!(va.differing(&vb), expected.clone());
            prop_assert_eq!(vb.differing(&va), expected);
        }
    }
}
