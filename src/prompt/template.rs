//! The template engine: minijinja with strict undefined, auto-escape off, no loader,
//! fuel and recursion limits. Templates are compiled once and rendered per step.
//!
//! One [`AssemblyBudget`] bounds every render of one assembly together — the `when`
//! conditions, sections and contexts share [`TEMPLATE_FUEL`] and
//! [`TEMPLATE_OUTPUT_BYTES`] — so fifty sections that each build a huge string cannot add
//! up to more than one section may. Every compiled template starts with a hidden
//! statement that charges the fuel earlier renders of the same assembly used (minijinja
//! gives each render a fresh fuel tracker), and output goes through a writer that stops
//! at the byte limit.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use minijinja::value::Object;
use minijinja::{AutoEscape, Environment, ErrorKind, State, UndefinedBehavior, Value};

use super::substitution::Substitution;

/// Instructions (and data: minijinja charges one fuel per 64 bytes it creates or writes)
/// all the renders of one assembly may use together: a runaway loop stops here, not at
/// the OOM killer.
pub const TEMPLATE_FUEL: u64 = 1_000_000;
/// Bytes all the renders of one assembly (system prompt and runtime context) may write
/// together.
pub const TEMPLATE_OUTPUT_BYTES: u64 = 4 * 1024 * 1024;
/// Nesting depth one render may reach.
pub const TEMPLATE_RECURSION_LIMIT: usize = 64;

/// The hidden function that charges a render for what earlier renders of its assembly
/// used, and the context key under which it finds the [`AssemblyBudget`]. Neither can be
/// written by a preset: the function is not one a template may call (the static check
/// refuses it) and the key is not an identifier.
const BUDGET_FUNCTION: &str = "__agent_presets_budget";
pub(crate) const BUDGET_KEY: &str = "\u{0}budget";
/// Prepended to every template; `trim_blocks` eats its line break.
const BUDGET_PREFIX: &str = "{% do __agent_presets_budget() %}\n";

/// A compile or render failure, with the byte range in the template source when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    /// What went wrong, in words.
    pub message: String,
    /// Byte offset in the template (or expression) source.
    pub offset: Option<usize>,
    /// A resource limit (fuel, output size, nesting, recursion) was hit, rather than a
    /// mistake in the template.
    pub limit: bool,
    /// A variable the render needed was undefined.
    pub undefined: bool,
}

impl TemplateError {
    fn from_minijinja(e: &minijinja::Error, shift: usize) -> Self {
        let message = match e.detail() {
            Some(detail) => format!("{}: {detail}", kind_words(e.kind())),
            None => kind_words(e.kind()).to_owned(),
        };
        let detail = e.detail().unwrap_or_default();
        let limit = e.kind() == ErrorKind::OutOfFuel
            || detail.contains("recursion limit")
            || detail.contains("maximum recursion");
        TemplateError {
            message,
            offset: e.range().map(|r| r.start.saturating_sub(shift)),
            limit,
            undefined: e.kind() == ErrorKind::UndefinedError,
        }
    }

    pub(crate) fn output_limit() -> Self {
        TemplateError {
            message: format!(
                "the rendered text of one assembly exceeds {} bytes ({} MiB)",
                TEMPLATE_OUTPUT_BYTES,
                TEMPLATE_OUTPUT_BYTES / (1024 * 1024)
            ),
            offset: None,
            limit: true,
            undefined: false,
        }
    }
}

fn kind_words(kind: ErrorKind) -> &'static str {
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
        K::OutOfFuel => {
            "the templates of one assembly ran out of fuel (they do too much work or build too much text; simplify loops)"
        }
        K::CannotUnpack => "cannot unpack",
        K::BadSerialization => "bad serialization",
        K::NonKey => "not a valid key",
        K::NonPrimitive => "not a primitive value",
        _ => "template error",
    }
}

/// What the renders of one assembly have used so far. Shared through the render
/// context, so it lives as long as the assembly's context value.
#[derive(Debug, Default)]
pub(crate) struct AssemblyBudget {
    /// Fuel used by earlier renders (as minijinja reports it).
    fuel: AtomicU64,
    /// Bytes written by earlier renders.
    bytes: AtomicU64,
}

impl Object for AssemblyBudget {}

impl AssemblyBudget {
    /// What has been used: `(fuel, bytes)`.
    pub(crate) fn used(&self) -> (u64, u64) {
        (
            self.fuel.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }

    /// Start from at least what a cached part used (so a reused part costs what it
    /// cost; a part rendered in this assembly is already counted).
    pub(crate) fn charge(&self, fuel: u64, bytes: u64) {
        self.fuel.fetch_max(fuel, Ordering::Relaxed);
        self.bytes.fetch_max(bytes, Ordering::Relaxed);
    }

    /// Count a render that is not run again: `fuel` and `bytes` more used.
    pub(crate) fn add(&self, fuel: u64, bytes: u64) {
        self.fuel.fetch_add(fuel, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Bytes the renders of this assembly may still write.
    pub(crate) fn room(&self) -> u64 {
        TEMPLATE_OUTPUT_BYTES.saturating_sub(self.bytes.load(Ordering::Relaxed))
    }

    /// Count `n` more bytes written (by a render that did not go through the engine).
    pub(crate) fn add_bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    /// The budget of the assembly `ctx` belongs to.
    pub(crate) fn of(ctx: &Value) -> Option<Arc<AssemblyBudget>> {
        ctx.get_attr(BUDGET_KEY)
            .ok()
            .and_then(|v| v.downcast_object::<AssemblyBudget>())
    }
}

/// The hidden statement: charge this render with the fuel earlier renders used.
fn charge_budget(state: &State) -> Result<(), minijinja::Error> {
    let used = state
        .lookup(BUDGET_KEY)
        .and_then(|v| v.downcast_object::<AssemblyBudget>())
        .map_or(0, |b| b.used().0);
    if used > 0 {
        state.consume_fuel(used)?;
    }
    Ok(())
}

/// Collects a render's output, refusing to grow past what the assembly has left.
struct BoundedOutput {
    buf: Vec<u8>,
    room: u64,
    overflowed: bool,
}

impl io::Write for BoundedOutput {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let len = data.len() as u64;
        if len > self.room {
            self.overflowed = true;
            return Err(io::Error::other("assembly output limit"));
        }
        self.room -= len;
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Candidates for "did you mean" (minijinja cannot list its filters and tests; each is
/// checked against the engine before it is offered).
const KNOWN_FILTERS: &[&str] = &[
    "abs",
    "attr",
    "batch",
    "bool",
    "capitalize",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "first",
    "float",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "lines",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "pprint",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "split",
    "string",
    "sum",
    "title",
    "trim",
    "unique",
    "upper",
    "wordcount",
];
const KNOWN_TESTS: &[&str] = &[
    "boolean",
    "defined",
    "divisibleby",
    "endingwith",
    "eq",
    "even",
    "false",
    "filter",
    "float",
    "ge",
    "gt",
    "in",
    "integer",
    "iterable",
    "le",
    "lower",
    "lt",
    "mapping",
    "ne",
    "none",
    "number",
    "odd",
    "safe",
    "sameas",
    "sequence",
    "startingwith",
    "string",
    "test",
    "true",
    "undefined",
    "upper",
];

/// The environment every template set starts from.
fn base_environment() -> Environment<'static> {
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
    // `debug()` prints every variable in scope into the prompt, outside the variable
    // tracking the step cache relies on: presets may not call it.
    env.remove_global("debug");
    env.add_function(BUDGET_FUNCTION, charge_budget);
    env
}

/// A handle to one compiled template or condition in a [`TemplateSet`], while the set is
/// being filled; [`TemplateId::frozen`] makes it a [`FrozenTemplate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TemplateId(String, usize);

impl TemplateId {
    /// The template in `env`, the frozen set this id was made in.
    pub(crate) fn frozen(self, env: &Arc<Environment<'static>>) -> FrozenTemplate {
        FrozenTemplate {
            env: Arc::clone(env),
            name: self.0,
            shift: self.1,
        }
    }
}

/// One compiled template or condition, with the environment that holds it: shared by
/// every assembler built from the layer that compiled it.
#[derive(Clone)]
pub(crate) struct FrozenTemplate {
    env: Arc<Environment<'static>>,
    name: String,
    shift: usize,
}

impl std::fmt::Debug for FrozenTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FrozenTemplate")
            .field(&self.name)
            .field(&self.shift)
            .finish()
    }
}

impl FrozenTemplate {
    /// Render within the budget of the assembly `ctx` belongs to (a context without one
    /// — see [`BUDGET_KEY`] — gets the whole budget for this render).
    pub(crate) fn render(&self, ctx: &Value) -> Result<String, TemplateError> {
        self.render_with(ctx, AssemblyBudget::of(ctx).as_deref())
    }

    /// [`render`](Self::render) with the assembly's budget at hand (it must be the one
    /// `ctx` holds under [`BUDGET_KEY`]).
    pub(crate) fn render_with(
        &self,
        ctx: &Value,
        budget: Option<&AssemblyBudget>,
    ) -> Result<String, TemplateError> {
        let template = self
            .env
            .get_template(&self.name)
            .map_err(|e| TemplateError::from_minijinja(&e, self.shift))?;
        render_template(&template, self.shift, ctx, budget)
    }

    /// Evaluate a condition.
    pub(crate) fn eval_condition(&self, ctx: &Value) -> Result<bool, TemplateError> {
        Ok(self.render(ctx)? == "1")
    }

    /// [`eval_condition`](Self::eval_condition) with the assembly's budget at hand.
    pub(crate) fn eval_condition_with(
        &self,
        ctx: &Value,
        budget: Option<&AssemblyBudget>,
    ) -> Result<bool, TemplateError> {
        Ok(self.render_with(ctx, budget)? == "1")
    }
}

/// Texts compiled before, with the variables each references: what a text references
/// depends on the text alone (every set has the same globals), so a process keeps the
/// answer, bounded by count and by the bytes of the texts kept (hosts that generate
/// texts cannot grow it without end).
struct VariablesCache {
    entries: Mutex<(usize, BTreeMap<String, BTreeSet<String>>)>,
    most_entries: usize,
    most_bytes: usize,
}

impl VariablesCache {
    const fn new(most_entries: usize, most_bytes: usize) -> Self {
        VariablesCache {
            entries: Mutex::new((0, BTreeMap::new())),
            most_entries,
            most_bytes,
        }
    }

    /// The variables of `text`, if it is in the cache.
    fn get(&self, text: &str) -> Option<BTreeSet<String>> {
        self.entries.lock().ok()?.1.get(text).cloned()
    }

    /// Keep what compiling `text` found (while the cache has room).
    fn remember(&self, text: &str, vars: &BTreeSet<String>) {
        if let Ok(mut cache) = self.entries.lock() {
            let (bytes, map) = &mut *cache;
            if map.len() < self.most_entries && *bytes + text.len() <= self.most_bytes {
                *bytes += text.len();
                map.insert(text.to_owned(), vars.clone());
            }
        }
    }
}

/// `when` conditions compiled alone (most presets share a few).
static CONDITIONS: VariablesCache = VariablesCache::new(512, 1 << 20);

/// Template texts (generated and real presets repeat texts across files).
static TEMPLATES: VariablesCache = VariablesCache::new(4096, 4 << 20);

/// Every template of one assembler, compiled into one environment.
#[derive(Debug)]
pub(crate) struct TemplateSet {
    env: Environment<'static>,
    next: usize,
}

impl TemplateSet {
    pub(crate) fn new() -> Self {
        // Configured once: a clone shares the filter, test and global tables (they are
        // reference-counted in minijinja) and starts with no templates.
        static BASE: OnceLock<Environment<'static>> = OnceLock::new();
        let env = BASE.get_or_init(base_environment).clone();
        TemplateSet { env, next: 0 }
    }

    /// The environment, done with: what its templates need to render, shareable.
    pub(crate) fn freeze(self) -> Arc<Environment<'static>> {
        Arc::new(self.env)
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
        let shift = BUDGET_PREFIX.len();
        self.env
            .add_template_owned(name.clone(), format!("{BUDGET_PREFIX}{source}"))
            .map_err(|e| TemplateError::from_minijinja(&e, shift))?;
        let template = self
            .env
            .get_template(&name)
            .map_err(|e| TemplateError::from_minijinja(&e, shift))?;
        // Each text is walked for its variables once per process (see `VariablesCache`).
        let vars = match TEMPLATES.get(source) {
            Some(vars) => vars,
            None => {
                let vars = self.without_globals(template.undeclared_variables(false));
                TEMPLATES.remember(source, &vars);
                vars
            }
        };
        Ok((TemplateId(name, shift), vars))
    }

    /// Names the environment itself defines (`range`, `dict`, `namespace`, …) are not
    /// variables a preset must declare.
    fn without_globals(&self, names: HashSet<String>) -> BTreeSet<String> {
        names
            .into_iter()
            .filter(|n| !self.env.globals().any(|(g, _)| g == n))
            .collect()
    }

    /// The variables a template references (empty when it does not compile).
    pub(crate) fn variables_of(&self, source: &str) -> BTreeSet<String> {
        if let Some(s) = Substitution::parse(source, |n| self.is_global(n)) {
            return s.variables().map(str::to_owned).collect();
        }
        match self.env.template_from_str(source) {
            Ok(t) => self.without_globals(t.undeclared_variables(false)),
            Err(_) => BTreeSet::new(),
        }
    }

    /// Compile a `when` condition; returns its handle and the variables it references.
    pub(crate) fn add_condition(
        &mut self,
        label: &str,
        expr: &str,
    ) -> Result<(TemplateId, BTreeSet<String>), TemplateError> {
        // Compiling the expression alone first rejects anything that is not a pure
        // expression (e.g. `x %}{% include ...`), and gives offsets into `expr` itself.
        // What it finds depends on the text alone (every set has the same globals), and a
        // few conditions recur in many presets: each is compiled alone once per process.
        let vars = match CONDITIONS.get(expr) {
            Some(vars) => vars,
            None => {
                let compiled = self
                    .env
                    .compile_expression(expr)
                    .map_err(|e| TemplateError::from_minijinja(&e, 0))?;
                let vars = self.without_globals(compiled.undeclared_variables(false));
                CONDITIONS.remember(expr, &vars);
                vars
            }
        };
        let prefix = format!("{BUDGET_PREFIX}{{% if (");
        let name = self.fresh_name(label);
        self.env
            .add_template_owned(name.clone(), format!("{prefix}{expr}\n) %}}1{{% endif %}}"))
            .map_err(|e| TemplateError::from_minijinja(&e, prefix.len()))?;
        Ok((TemplateId(name, prefix.len()), vars))
    }

    /// Compile `source` as [`add_template`](Self::add_template) would and render it once,
    /// without keeping it: for the rare render of a template that is otherwise printed
    /// without the engine, so its errors are the engine's own.
    pub(crate) fn render_source(
        &self,
        source: &str,
        ctx: &Value,
        budget: Option<&AssemblyBudget>,
    ) -> Result<String, TemplateError> {
        let shift = BUDGET_PREFIX.len();
        let name = "\u{0}once";
        let mut env = self.env.clone();
        env.add_template_owned(name, format!("{BUDGET_PREFIX}{source}"))
            .map_err(|e| TemplateError::from_minijinja(&e, shift))?;
        let template = env
            .get_template(name)
            .map_err(|e| TemplateError::from_minijinja(&e, shift))?;
        render_template(&template, shift, ctx, budget)
    }

    /// Is `name` defined by the environment itself (a function such as `range`)?
    pub(crate) fn is_global(&self, name: &str) -> bool {
        self.env.globals().any(|(g, _)| g == name)
    }

    /// Is `name` a filter templates may use?
    pub(crate) fn has_filter(&self, name: &str) -> bool {
        // minijinja has no lookup for filters: applying one to nothing tells an unknown
        // one (UnknownFilter) from a known one (a complaint about its arguments).
        let mut state = self.env.empty_state();
        !matches!(state.apply_filter(name, &[]), Err(e) if e.kind() == ErrorKind::UnknownFilter)
    }

    /// Is `name` a test templates may use?
    pub(crate) fn has_test(&self, name: &str) -> bool {
        let mut state = self.env.empty_state();
        !matches!(state.perform_test(name, &[]), Err(e) if e.kind() == ErrorKind::UnknownTest)
    }

    /// Every filter name, for "did you mean".
    pub(crate) fn filter_names(&self) -> Vec<String> {
        KNOWN_FILTERS
            .iter()
            .filter(|f| self.has_filter(f))
            .map(|f| (*f).to_owned())
            .collect()
    }

    /// Every test name, for "did you mean".
    pub(crate) fn test_names(&self) -> Vec<String> {
        KNOWN_TESTS
            .iter()
            .filter(|t| self.has_test(t))
            .map(|t| (*t).to_owned())
            .collect()
    }

    /// The functions templates may call (`range`, `dict`, `namespace`, …).
    pub(crate) fn functions(&self) -> Vec<String> {
        self.env
            .globals()
            .filter(|(name, value)| {
                *name != BUDGET_FUNCTION && value.kind() == minijinja::value::ValueKind::Plain
            })
            .map(|(name, _)| name.to_owned())
            .collect()
    }
}

#[cfg(test)]
impl TemplateSet {
    /// Render from the set being filled (tests; assemblers render [`FrozenTemplate`]s).
    pub(crate) fn render(&self, id: &TemplateId, ctx: &Value) -> Result<String, TemplateError> {
        let template = self
            .env
            .get_template(&id.0)
            .map_err(|e| TemplateError::from_minijinja(&e, id.1))?;
        render_template(&template, id.1, ctx, AssemblyBudget::of(ctx).as_deref())
    }

    /// Evaluate a condition from the set being filled (tests).
    pub(crate) fn eval_condition(
        &self,
        id: &TemplateId,
        ctx: &Value,
    ) -> Result<bool, TemplateError> {
        Ok(self.render(id, ctx)? == "1")
    }
}

/// Render a compiled template (whose source starts `shift` bytes into the compiled text)
/// within `budget`.
fn render_template(
    template: &minijinja::Template<'_, '_>,
    shift: usize,
    ctx: &Value,
    budget: Option<&AssemblyBudget>,
) -> Result<String, TemplateError> {
    let bytes_used = budget.map_or(0, |b| b.used().1);
    let mut out = BoundedOutput {
        buf: Vec::new(),
        room: TEMPLATE_OUTPUT_BYTES.saturating_sub(bytes_used),
        overflowed: false,
    };
    let captured = template.render_captured_to(ctx.clone(), &mut out);
    if out.overflowed {
        return Err(TemplateError::output_limit());
    }
    let captured = captured.map_err(|e| TemplateError::from_minijinja(&e, shift))?;
    if let (Some(b), Some((fuel, _))) = (budget, captured.state().fuel_levels()) {
        b.fuel.store(fuel, Ordering::Relaxed);
        b.bytes.fetch_add(out.buf.len() as u64, Ordering::Relaxed);
    }
    drop(captured);
    String::from_utf8(out.buf).map_err(|_| TemplateError {
        message: "a template wrote text that is not UTF-8".to_owned(),
        offset: None,
        limit: false,
        undefined: false,
    })
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
