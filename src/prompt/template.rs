//! The template engine: minijinja with strict undefined, auto-escape off, no loader,
//! fuel and recursion limits. Templates are compiled once and rendered per step.

use std::collections::BTreeSet;

use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};

/// Instructions one render may execute (a runaway loop stops here, not at the OOM killer).
pub const TEMPLATE_FUEL: u64 = 1_000_000;
/// Nesting depth one render may reach.
pub const TEMPLATE_RECURSION_LIMIT: usize = 64;

/// A compile or render failure, with the byte range in the template source when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    /// What went wrong, in words.
    pub message: String,
    /// Byte offset in the template (or expression) source.
    pub offset: Option<usize>,
    /// A resource limit (fuel, nesting, recursion) was hit, rather than a mistake in
    /// the template.
    pub limit: bool,
}

impl TemplateError {
    fn from_minijinja(e: &minijinja::Error, shift: usize) -> Self {
        let message = match e.detail() {
            Some(detail) => format!("{}: {detail}", kind_words(e.kind())),
            None => kind_words(e.kind()).to_owned(),
        };
        let detail = e.detail().unwrap_or_default();
        let limit = e.kind() == minijinja::ErrorKind::OutOfFuel
            || detail.contains("recursion limit")
            || detail.contains("maximum recursion");
        TemplateError {
            message,
            offset: e.range().map(|r| r.start.saturating_sub(shift)),
            limit,
        }
    }
}

fn kind_words(kind: minijinja::ErrorKind) -> &'static str {
    use minijinja::ErrorKind as K;
    match kind {
        K::SyntaxError => "syntax error",
        K::UndefinedError => "undefined value",
        K::UnknownFilter => "unknown filter",
        K::UnknownTest => "unknown test",
        K::UnknownFunction => "unknown function",
        K::UnknownMethod => "unknown method",
        K::InvalidOperation => "invalid operation",
        K::TemplateNotFound => "templates cannot include other templates",
        K::BadInclude => "templates cannot include other templates",
        K::TooManyArguments => "too many arguments",
        K::MissingArgument => "missing argument",
        K::BadEscape => "bad escape sequence",
        K::OutOfFuel => "template ran out of fuel (it does too much work; simplify loops)",
        K::CannotUnpack => "cannot unpack",
        K::BadSerialization => "bad serialization",
        K::NonKey => "not a valid key",
        K::NonPrimitive => "not a primitive value",
        _ => "template error",
    }
}

/// A handle to one compiled template or condition in a [`TemplateSet`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TemplateId(String);

/// Every template of one assembler, compiled into one environment.
#[derive(Debug)]
pub(crate) struct TemplateSet {
    env: Environment<'static>,
    next: usize,
}

impl TemplateSet {
    pub(crate) fn new() -> Self {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
        {
            env.set_syntax(syntax);
        }
        env.set_fuel(Some(TEMPLATE_FUEL));
        env.set_recursion_limit(TEMPLATE_RECURSION_LIMIT);
        TemplateSet { env, next: 0 }
    }

    fn fresh_name(&mut self, label: &str) -> String {
        self.next += 1;
        // Names a template cannot type, so `{% include %}` cannot reach a sibling.
        format!("\u{0}{}#{label}", self.next)
    }

    /// Compile a template; returns its handle and the variables it references.
    pub(crate) fn add_template(
        &mut self,
        label: &str,
        source: &str,
    ) -> Result<(TemplateId, BTreeSet<String>), TemplateError> {
        let name = self.fresh_name(label);
        self.env
            .add_template_owned(name.clone(), source.to_owned())
            .map_err(|e| TemplateError::from_minijinja(&e, 0))?;
        let template = self
            .env
            .get_template(&name)
            .map_err(|e| TemplateError::from_minijinja(&e, 0))?;
        let vars = self.without_globals(template.undeclared_variables(false));
        Ok((TemplateId(name), vars))
    }

    /// Names the environment itself defines (`range`, `dict`, `namespace`, …) are not
    /// variables a preset must declare.
    fn without_globals(&self, names: std::collections::HashSet<String>) -> BTreeSet<String> {
        names
            .into_iter()
            .filter(|n| !self.env.globals().any(|(g, _)| g == n))
            .collect()
    }

    /// Compile a `when` condition; returns its handle and the variables it references.
    pub(crate) fn add_condition(
        &mut self,
        label: &str,
        expr: &str,
    ) -> Result<(TemplateId, BTreeSet<String>), TemplateError> {
        // Compiling the expression alone first rejects anything that is not a pure
        // expression (e.g. `x %}{% include ...`), and gives offsets into `expr` itself.
        let vars = {
            let compiled = self
                .env
                .compile_expression(expr)
                .map_err(|e| TemplateError::from_minijinja(&e, 0))?;
            compiled.undeclared_variables(false)
        };
        let vars = self.without_globals(vars);
        let prefix = "{% if (";
        let name = self.fresh_name(label);
        self.env
            .add_template_owned(name.clone(), format!("{prefix}{expr}\n) %}}1{{% endif %}}"))
            .map_err(|e| TemplateError::from_minijinja(&e, prefix.len()))?;
        Ok((TemplateId(name), vars))
    }

    /// Render a template.
    pub(crate) fn render(&self, id: &TemplateId, ctx: &Value) -> Result<String, TemplateError> {
        let template = self
            .env
            .get_template(&id.0)
            .map_err(|e| TemplateError::from_minijinja(&e, 0))?;
        template
            .render(ctx.clone())
            .map_err(|e| TemplateError::from_minijinja(&e, 0))
    }

    /// Evaluate a condition.
    pub(crate) fn eval_condition(
        &self,
        id: &TemplateId,
        ctx: &Value,
    ) -> Result<bool, TemplateError> {
        Ok(self.render(id, ctx)? == "1")
    }
}

/// Byte offset of the first reference to `name` inside `{{ … }}` or `{% … %}` in a
/// template (not inside string literals, not as an attribute after `.`), for pointing a
/// diagnostic at it.
pub(crate) fn find_reference(source: &str, name: &str, expression: bool) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut i = 0;
    let mut in_code = expression;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        if !in_code {
            if b == b'{' && matches!(bytes.get(i + 1), Some(b'{') | Some(b'%')) {
                in_code = true;
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        if let Some(q) = quote {
            if b == b'\\' {
                i += 2;
                continue;
            }
            if b == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' | b'\'' => {
                quote = Some(b);
                i += 1;
            }
            b'}' | b'%' if !expression && bytes.get(i + 1) == Some(&b'}') => {
                in_code = false;
                i += 2;
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let after_dot = source[..start].trim_end().ends_with('.');
                if &source[start..i] == name && !after_dot {
                    return Some(start);
                }
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_references_in_code_only() {
        let src =
            "model {{ model }} and {% if 'model' in tools %}{{ x.model }}{{ model }}{% endif %}";
        assert_eq!(find_reference(src, "model", false), Some(9));
        assert_eq!(
            find_reference(src, "tools", false),
            Some(src.find("tools").unwrap_or(0))
        );
        assert_eq!(find_reference("{{ a.model }}", "model", false), None);
        assert_eq!(find_reference("'grep' in tools", "tools", true), Some(10));
    }

    #[test]
    fn strict_and_single_pass() {
        let mut set = TemplateSet::new();
        let (id, vars) = set.add_template("t", "Hi {{ name }}!").unwrap();
        assert_eq!(vars.into_iter().collect::<Vec<_>>(), vec!["name"]);
        let ctx = Value::from(std::collections::BTreeMap::from([(
            "name",
            Value::from("{{ secret }}"),
        )]));
        assert_eq!(set.render(&id, &ctx).unwrap(), "Hi {{ secret }}!");
        let err = set
            .render(
                &id,
                &Value::from(std::collections::BTreeMap::from([("x", Value::from(1))])),
            )
            .unwrap_err();
        assert!(err.message.contains("undefined"), "{err:?}");
        let (id, _) = set.add_template("t", "{{ '<b>&' }}").unwrap();
        assert_eq!(set.render(&id, &ctx).unwrap(), "<b>&");
    }

    #[test]
    fn conditions_and_errors() {
        let mut set = TemplateSet::new();
        let (id, vars) = set.add_condition("w", "'grep' in tools").unwrap();
        assert!(vars.contains("tools"));
        let ctx = Value::from(std::collections::BTreeMap::from([(
            "tools",
            Value::from(vec!["grep"]),
        )]));
        assert!(set.eval_condition(&id, &ctx).unwrap());
        let ctx = Value::from(std::collections::BTreeMap::from([(
            "tools",
            Value::from(Vec::<String>::new()),
        )]));
        assert!(!set.eval_condition(&id, &ctx).unwrap());
        assert!(
            set.add_condition("w", "x %}{% include 'y' %}{% if 1")
                .is_err()
        );
        let err = set.add_template("t", "a {{ b ").unwrap_err();
        assert!(err.offset.is_some());
        let (id, _) = set.add_template("t", "{% include 'x' %}").unwrap();
        assert!(set.render(&id, &ctx).is_err());
    }

    #[test]
    fn fuel_stops_runaway_loops() {
        let mut set = TemplateSet::new();
        let (id, _) = set
            .add_template(
                "t",
                "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
            )
            .unwrap();
        let err = set.render(&id, &Value::from(())).unwrap_err();
        assert!(err.message.contains("fuel"), "{err:?}");
    }
}
