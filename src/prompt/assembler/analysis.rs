//! Static template analysis: what compiling a section or context finds on its own
//! ([`analyze_piece`], once per layer) and what its chain adds ([`finish_piece`]):
//! syntax, unknown filters, tests and functions, variable references.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use super::budget::limit_exceeded;
use super::{Body, CompiledPiece, Condition, Engine};
use crate::diagnostic::{Diagnostic, DiagnosticKind, DiagnosticSink, Span};
use crate::prompt::layer::Layer;
use crate::prompt::section::{Order, PromptContext, PromptSection, SectionName};
use crate::prompt::substitution::Substitution;
use crate::prompt::template::{TemplateError, TemplateId, TemplateSet, find_reference};
use crate::prompt::template_scan::{
    LiteralComparison, TemplateScan, condition_guards, literal_comparisons, scan,
};
use crate::prompt::variables::BUILTIN_VARIABLES;
use crate::suggest::help_did_you_mean;

/// One section or context as written, for [`analyze_piece`].
pub(super) struct PieceSource<'a> {
    pub(super) kind: &'static str,
    pub(super) name: &'a SectionName,
    pub(super) text: &'a str,
    pub(super) template: bool,
    pub(super) when: Option<&'a str>,
    pub(super) origin: &'a crate::prompt::section::SectionOrigin,
}

impl<'a> PieceSource<'a> {
    pub(super) fn section(s: &'a PromptSection) -> Self {
        PieceSource {
            kind: "section",
            name: &s.name,
            text: &s.text,
            template: s.template,
            when: s.when.as_deref(),
            origin: &s.origin,
        }
    }

    pub(super) fn context(c: &'a PromptContext) -> Self {
        PieceSource {
            kind: "context",
            name: &c.name,
            text: &c.text,
            template: c.template,
            when: None,
            origin: &c.origin,
        }
    }

    /// Where byte `offset` of the text is (the text's start without one).
    pub(super) fn text_span(&self, offset: Option<usize>) -> Option<Span> {
        match (&self.origin.text, offset) {
            (Some(o), Some(off)) => Some(o.span_at(self.text, off)),
            (Some(o), None) => Some(o.span()),
            (None, _) => self.origin.name.clone(),
        }
    }

    /// Where byte `offset` of the `when` expression `expr` is.
    pub(super) fn when_span(&self, expr: &str, offset: Option<usize>) -> Option<Span> {
        match (&self.origin.when, offset) {
            (Some(o), Some(off)) => Some(o.span_at(expr, off)),
            (Some(o), None) => Some(o.span()),
            (None, _) => self.origin.name.clone(),
        }
    }
}

/// How a template body will be printed, in the set of the layer that compiled it.
#[derive(Debug)]
pub(super) enum PreparedEngine {
    Compiled(TemplateId),
    Substitution(Arc<Substitution>),
}

/// What compiling one section or context finds on its own, before the chain it is in is
/// known: the compiled text and `when`, the variables they use, and the problems of the
/// text itself (syntax; unknown filters, tests and functions). What depends on the chain
/// — which variables are declared, which are volatile — is checked per chain by
/// [`finish_piece`].
#[derive(Debug)]
pub(super) struct PieceAnalysis {
    /// The text as written, shared by every chain's compiled piece.
    pub(super) text: Arc<str>,
    pub(super) body: BodyAnalysis,
    pub(super) when: Option<WhenAnalysis>,
}

#[derive(Debug)]
pub(super) enum BodyAnalysis {
    /// `template: false`: the text as written, trailing whitespace trimmed.
    Verbatim(Arc<str>),
    Template {
        engine: PreparedEngine,
        /// The variables it uses, without the names it only calls.
        vars: Arc<BTreeSet<String>>,
        /// Every name the engine sees as a variable, called ones included (what
        /// `override-drops-placeholder` compares).
        referenced: BTreeSet<String>,
        unguarded: Arc<BTreeMap<String, Vec<usize>>>,
        /// Unknown filters, tests, functions, statements, found in every branch.
        names: Vec<Diagnostic>,
        names_ok: bool,
    },
    /// It does not compile.
    Broken(Diagnostic),
}

#[derive(Debug)]
pub(super) enum WhenAnalysis {
    Compiled {
        id: TemplateId,
        vars: Arc<BTreeSet<String>>,
        unguarded: Arc<BTreeMap<String, Vec<usize>>>,
        names: Vec<Diagnostic>,
        names_ok: bool,
        /// Comparisons with literals, checked against each chain's variables and tools.
        comparisons: Vec<LiteralComparison>,
    },
    Broken(Diagnostic),
}

/// The sections and contexts of one layer, compiled once into one template set: a
/// preset file that many presets extend is compiled once however many chains it is in
/// (see [`AssemblerBuilder::compiled_layer`](super::AssemblerBuilder::compiled_layer)).
#[derive(Debug)]
pub(crate) struct LayerTemplates {
    pub(super) env: Arc<minijinja::Environment<'static>>,
    pub(super) sections: Vec<PieceAnalysis>,
    pub(super) contexts: Vec<PieceAnalysis>,
}

impl LayerTemplates {
    /// Compile every section and context of `layer`.
    pub(crate) fn of(layer: &Layer) -> LayerTemplates {
        Self::compile(&layer.sections, &layer.contexts)
    }

    pub(super) fn compile(
        sections: &[PromptSection],
        contexts: &[PromptContext],
    ) -> LayerTemplates {
        let mut set = TemplateSet::new();
        let sections = sections
            .iter()
            .map(|s| analyze_piece(&mut set, &PieceSource::section(s)))
            .collect();
        let contexts = contexts
            .iter()
            .map(|c| analyze_piece(&mut set, &PieceSource::context(c)))
            .collect();
        LayerTemplates {
            env: set.freeze(),
            sections,
            contexts,
        }
    }
}

/// A tool's guidance section compiled, once per process: it depends on the tool alone
/// (its name, text and whether it is a template), not on the chain, and every preset that
/// shows the tool includes it.
pub(super) fn guidance_templates(section: &PromptSection) -> Arc<LayerTemplates> {
    type Cache = HashMap<String, Vec<(String, bool, Arc<LayerTemplates>)>>;
    /// Hosts with many tools of their own still get a bounded cache.
    const MOST: usize = 256;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let name = section.name.as_str();
    let hit = cache.lock().ok().and_then(|c| {
        c.get(name)?
            .iter()
            .find(|(text, template, _)| *text == section.text && *template == section.template)
            .map(|(.., compiled)| Arc::clone(compiled))
    });
    if let Some(hit) = hit {
        return hit;
    }
    let compiled = Arc::new(LayerTemplates::compile(std::slice::from_ref(section), &[]));
    if let Ok(mut c) = cache.lock()
        && c.values().map(Vec::len).sum::<usize>() < MOST
    {
        c.entry(name.to_owned()).or_default().push((
            section.text.clone(),
            section.template,
            Arc::clone(&compiled),
        ));
    }
    compiled
}

/// Compile one piece into `templates` and run the checks that need nothing but its text.
pub(super) fn analyze_piece(templates: &mut TemplateSet, input: &PieceSource<'_>) -> PieceAnalysis {
    let PieceSource {
        kind,
        name,
        text,
        template,
        when,
        ..
    } = *input;
    // What the `when` condition being true proves defined guards the whole text.
    let when_guards = when.map(condition_guards).unwrap_or_default();
    let body = if template {
        // Text and `{{ name }}` only: no need for the engine (it would find the same
        // variables and no syntax error).
        let compiled = match Substitution::parse(text, |n| templates.is_global(n)) {
            Some(s) => {
                let vars = s.variables().map(str::to_owned).collect();
                Ok((PreparedEngine::Substitution(Arc::new(s)), vars))
            }
            None => templates
                .add_template(name.as_str(), text)
                .map(|(id, vars)| (PreparedEngine::Compiled(id), vars)),
        };
        match compiled {
            Ok((engine, referenced)) => {
                // Text and `{{ name }}` only names its variables and nothing else: the
                // substitution knows where they are, no need to lex the text again.
                let scan = match &engine {
                    PreparedEngine::Substitution(s) => s.scan(&when_guards),
                    PreparedEngine::Compiled(_) => scan(text, false, &when_guards),
                };
                let mut names = DiagnosticSink::default();
                let (names_ok, vars) = check_names(
                    templates,
                    kind,
                    name,
                    &scan,
                    referenced.clone(),
                    &|offset| input.text_span(offset),
                    &mut names,
                );
                BodyAnalysis::Template {
                    engine,
                    vars: Arc::new(vars),
                    referenced,
                    unguarded: Arc::new(scan.unguarded),
                    names: names.into_vec(),
                    names_ok,
                }
            }
            Err(e) => {
                BodyAnalysis::Broken(template_syntax(kind, name, &e, input.text_span(e.offset)))
            }
        }
    } else {
        BodyAnalysis::Verbatim(text.trim_end().into())
    };
    let when = when.map(|expr| {
        let when_span = |offset: Option<usize>| input.when_span(expr, offset);
        match templates.add_condition(name.as_str(), expr) {
            Ok((id, vars)) => {
                let scan = scan(expr, true, &BTreeSet::new());
                let mut names = DiagnosticSink::default();
                let (names_ok, vars) =
                    check_names(templates, kind, name, &scan, vars, &when_span, &mut names);
                WhenAnalysis::Compiled {
                    id,
                    vars: Arc::new(vars),
                    unguarded: Arc::new(scan.unguarded),
                    names: names.into_vec(),
                    names_ok,
                    comparisons: literal_comparisons(expr),
                }
            }
            Err(e) => WhenAnalysis::Broken(
                template_syntax(kind, name, &e, when_span(e.offset))
                    .help("`when` takes a minijinja expression, e.g. `'grep' in tools`"),
            ),
        }
    });
    PieceAnalysis {
        text: text.into(),
        body,
        when,
    }
}

/// The variables a template section uses as the engine sees them, for
/// `override-drops-placeholder`; `None` when it is not a template.
pub(super) fn referenced_variables<'a>(
    templates: &TemplateSet,
    section: &'a PromptSection,
    analysis: &'a PieceAnalysis,
) -> Option<std::borrow::Cow<'a, BTreeSet<String>>> {
    if !section.template {
        return None;
    }
    Some(match &analysis.body {
        BodyAnalysis::Template { referenced, .. } => std::borrow::Cow::Borrowed(referenced),
        _ => std::borrow::Cow::Owned(templates.variables_of(&section.text)),
    })
}

/// The per-chain half of compiling a piece: report what [`analyze_piece`] found, check
/// its variables against the chain's (`known`; `volatile` for system prompt sections),
/// and make the [`CompiledPiece`] (none when something is wrong).
#[allow(clippy::too_many_arguments)]
pub(super) fn finish_piece(
    analysis: &PieceAnalysis,
    env: &Arc<minijinja::Environment<'static>>,
    input: &PieceSource<'_>,
    order: Order,
    complete: bool,
    known: &[&str],
    volatile: Option<&BTreeSet<String>>,
    sink: &mut DiagnosticSink,
) -> Option<CompiledPiece> {
    let PieceSource {
        kind, name, text, ..
    } = *input;
    let mut ok = true;
    let text_span = |offset: Option<usize>| input.text_span(offset);
    let body = match &analysis.body {
        BodyAnalysis::Verbatim(text) => Body::Verbatim(Arc::clone(text)),
        BodyAnalysis::Template {
            engine,
            vars,
            unguarded,
            names,
            names_ok,
            ..
        } => {
            sink.extend(names.iter().cloned());
            ok &= names_ok;
            ok &= check_references(
                kind, name, text, false, vars, known, volatile, &text_span, sink,
            );
            let engine = match engine {
                PreparedEngine::Compiled(id) => Engine::Compiled(id.clone().frozen(env)),
                PreparedEngine::Substitution(s) => Engine::Substitution(Arc::clone(s)),
            };
            Body::Template {
                engine,
                vars: Arc::clone(vars),
                unguarded: Arc::clone(unguarded),
            }
        }
        BodyAnalysis::Broken(d) => {
            sink.push(d.clone());
            ok = false;
            Body::Verbatim("".into())
        }
    };
    let when_source = input.when.unwrap_or_default();
    let when = match &analysis.when {
        None => None,
        Some(WhenAnalysis::Compiled {
            id,
            vars,
            unguarded,
            names,
            names_ok,
            ..
        }) => {
            sink.extend(names.iter().cloned());
            ok &= names_ok;
            let when_span = |offset: Option<usize>| input.when_span(when_source, offset);
            ok &= check_references(
                kind,
                name,
                when_source,
                true,
                vars,
                known,
                volatile,
                &when_span,
                sink,
            );
            Some(Condition {
                id: id.clone().frozen(env),
                vars: Arc::clone(vars),
                unguarded: Arc::clone(unguarded),
            })
        }
        Some(WhenAnalysis::Broken(d)) => {
            sink.push(d.clone());
            ok = false;
            None
        }
    };
    ok.then(|| CompiledPiece {
        name: name.clone(),
        order,
        complete,
        body,
        when,
        span: input.origin.name.clone(),
        text: Arc::clone(&analysis.text),
        when_source: when_source.to_owned(),
        origin: input.origin.clone(),
        layer: 0,
    })
}

/// The static checks minijinja leaves to render time, in every branch: unknown filters,
/// tests and functions (at the name), `debug()`, and statements that reach for other
/// templates. Returns whether all passed, and the template's variables without the names
/// it only calls (an unknown function is reported as one, not as a variable).
pub(super) fn check_names(
    templates: &TemplateSet,
    kind: &str,
    name: &SectionName,
    scan: &TemplateScan,
    mut vars: BTreeSet<String>,
    span_of: &dyn Fn(Option<usize>) -> Option<Span>,
    sink: &mut DiagnosticSink,
) -> (bool, BTreeSet<String>) {
    let mut ok = true;
    let at = |offset: usize, len: &str| {
        span_of(Some(offset)).map(|s| s.with_len(len.chars().count() as u32))
    };
    let mut seen = BTreeSet::new();
    for (filter, offset) in &scan.filters {
        if seen.insert(("f", filter.as_str())) && !templates.has_filter(filter) {
            ok = false;
            sink.push(
                Diagnostic::new(
                    DiagnosticKind::UnknownFilter,
                    format!("{kind} `{name}` uses unknown filter `{filter}`"),
                )
                .at(at(*offset, filter))
                .help(unknown_name_help(
                    filter,
                    &templates.filter_names(),
                    "filters",
                )),
            );
        }
    }
    for (test, offset) in &scan.tests {
        if seen.insert(("t", test.as_str())) && !templates.has_test(test) {
            ok = false;
            sink.push(
                Diagnostic::new(
                    DiagnosticKind::UnknownTest,
                    format!("{kind} `{name}` uses unknown test `{test}`"),
                )
                .at(at(*offset, test))
                .help(unknown_name_help(test, &templates.test_names(), "tests")),
            );
        }
    }
    // Most pieces call nothing: the function names are listed only for those that do.
    let functions = if scan.calls.is_empty() {
        Vec::new()
    } else {
        templates.functions()
    };
    for call in &scan.calls {
        let callee = call.name.as_str();
        let known = functions.iter().any(|f| f == callee)
            || scan.locals.contains(callee)
            || (callee == "caller" && call.in_macro)
            || (callee == "loop" && call.in_loop);
        // A name used only as a call target is a function, not a variable.
        let also_value = scan.unguarded.contains_key(callee) || scan.guarded.contains_key(callee);
        if !also_value {
            vars.remove(callee);
        }
        if known || !seen.insert(("c", callee)) {
            continue;
        }
        ok = false;
        let d = if callee == "debug" {
            Diagnostic::new(
                DiagnosticKind::UnknownFunction,
                format!("{kind} `{name}` calls `debug()`, which presets may not use"),
            )
            .help("`debug()` would print every value in scope into the prompt; print the variables you need, e.g. `{{ cwd }}`")
        } else {
            let mut candidates: Vec<&str> = functions.iter().map(String::as_str).collect();
            candidates.extend(scan.locals.iter().map(String::as_str));
            Diagnostic::new(
                DiagnosticKind::UnknownFunction,
                format!("{kind} `{name}` calls unknown function `{callee}`"),
            )
            .help(
                help_did_you_mean(callee, candidates.iter().copied()).unwrap_or_else(|| {
                    format!(
                        "templates may call {} and the macros they define",
                        functions
                            .iter()
                            .map(|f| format!("`{f}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }),
            )
        };
        sink.push(d.at(at(call.offset, callee)));
    }
    for (statement, offset) in &scan.includes {
        ok = false;
        sink.push(
            Diagnostic::new(
                DiagnosticKind::TemplateSyntax,
                format!("{kind} `{name}` uses `{{% {statement} %}}`: templates cannot include other templates"),
            )
            .at(at(*offset, statement))
            .help("write the text into this section, or split it into sections of its own"),
        );
    }
    (ok, vars)
}

pub(super) fn unknown_name_help(name: &str, known: &[String], what: &str) -> String {
    help_did_you_mean(name, known.iter().map(String::as_str))
        .unwrap_or_else(|| format!("see the minijinja documentation for the built-in {what}"))
}

pub(super) fn template_syntax(
    kind: &str,
    name: &SectionName,
    e: &TemplateError,
    span: Option<Span>,
) -> Diagnostic {
    if e.limit {
        return limit_exceeded(kind, name, e, span);
    }
    Diagnostic::new(
        DiagnosticKind::TemplateSyntax,
        format!("{kind} `{name}` does not compile: {}", e.message),
    )
    .at(span)
    .help("fix the template syntax; set `template: false` to send text with `{{` verbatim")
}

#[allow(clippy::too_many_arguments)]
pub(super) fn check_references(
    kind: &str,
    name: &SectionName,
    source: &str,
    expression: bool,
    vars: &BTreeSet<String>,
    known: &[&str],
    volatile: Option<&BTreeSet<String>>,
    span_of: &dyn Fn(Option<usize>) -> Option<Span>,
    sink: &mut DiagnosticSink,
) -> bool {
    let mut ok = true;
    for var in vars {
        let unknown = !known.contains(&var.as_str());
        if !unknown && !volatile.is_some_and(|v| v.contains(var)) {
            continue;
        }
        // Only a reference that is reported needs its position.
        let offset = find_reference(source, var, expression);
        let span = span_of(offset).map(|s| {
            if offset.is_some() {
                s.with_len(var.chars().count() as u32)
            } else {
                s
            }
        });
        if unknown {
            ok = false;
            let help = help_did_you_mean(var, known.iter().copied()).unwrap_or_else(|| {
                format!(
                    "declare it under `variables`, or use a built-in: {}",
                    BUILTIN_VARIABLES
                        .iter()
                        .map(|b| b.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
            sink.push(
                Diagnostic::new(
                    DiagnosticKind::UnknownVariable,
                    format!("{kind} `{name}` references unknown variable `{var}`"),
                )
                .at(span)
                .help(help)
                .maybe_fix(
                    var,
                    crate::suggest::did_you_mean(var, known.iter().copied()),
                ),
            );
        } else if volatile.is_some_and(|v| v.contains(var)) {
            sink.push(
                Diagnostic::new(
                    DiagnosticKind::VolatileInPrefix,
                    format!(
                        "section `{name}` uses volatile variable `{var}`: the system prompt changes whenever it does, which defeats prompt caching"
                    ),
                )
                .at(span)
                .help("move it to a runtime context under `contexts`"),
            );
        }
    }
    ok
}
