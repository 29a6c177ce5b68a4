//! Template variables: the built-in runtime ones, preset-declared ones, and the values an
//! assembly renders with.

use std::collections::BTreeMap;
use std::fmt;

use minijinja::Value;

use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};

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

/// A variable a preset (or host) declares.
#[derive(Clone, Debug, PartialEq)]
pub struct VariableDecl {
    /// Its name.
    pub name: VariableName,
    /// What it holds.
    pub description: String,
    /// The value used when none is given.
    pub default: Option<String>,
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
            default: None,
            required: false,
            volatile: false,
            span: None,
        })
    }

    /// Set a default.
    pub fn with_default(mut self, default: impl Into<String>) -> Self {
        self.default = Some(default.into());
        self
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

/// The values one assembly renders with. Unset variables have no value (an error when a
/// template needs them, never an empty string).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Values {
    map: BTreeMap<String, Value>,
}

impl Values {
    /// No values.
    pub fn new() -> Self {
        Values::default()
    }

    /// Set a value (a string, a number, a list …).
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<Value>) -> &mut Self {
        self.map.insert(name.into(), value.into());
        self
    }

    /// Builder-style [`set`](Self::set).
    pub fn with(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.set(name, value);
        self
    }

    /// Remove a value.
    pub fn unset(&mut self, name: &str) -> Option<Value> {
        self.map.remove(name)
    }

    /// A value.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    /// Every value, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v))
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
