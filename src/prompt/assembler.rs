//! [`PromptAssembler`]: layers in, byte-stable [`Assembly`] out.
//!
//! Building checks everything that can be checked without values (names, duplicates,
//! removals, template syntax, variable references, tool restrictions, statically
//! conflicting `complete` sections). Assembling renders with one step's values.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use minijinja::Value;

use super::layer::{Layer, TokenBudget, TokenLimit};
use super::section::{Order, PromptContext, PromptSection, SectionName};
use super::step_cache::RenderCost;
use super::step_cache::{StepCache, StepKey, same_key};
use super::template::{
    AssemblyBudget, BUDGET_KEY, TEMPLATE_FUEL, TEMPLATE_OUTPUT_BYTES, TemplateError, TemplateId,
    TemplateSet, find_reference,
};
use super::template_scan::{TemplateScan, condition_guards, scan};
use super::variables::{
    BUILTIN_VARIABLES, MODEL_VARIABLE, PROVIDER_VARIABLE, RUNTIME_CONTEXT_VARIABLE, TOOLS_VARIABLE,
    Values, VariableDecl, builtin_variable, is_derived_variable,
};
use super::warnings;
use crate::diagnostic::{Diagnostic, DiagnosticKind, DiagnosticSink, Diagnostics, Span};
use crate::request::Fingerprint;
use crate::suggest::help_did_you_mean;
use crate::tools::{ToolCatalog, ToolRegistry, WireTool};

/// What one step sends: the system prompt, the tools, and the runtime context text.
#[derive(Clone, Debug, PartialEq)]
pub struct Assembly {
    /// The system prompt.
    pub system: String,
    /// The visible tools, in wire order (shared; identical across steps).
    pub tools: Arc<[WireTool]>,
    /// The rendered runtime context, or `None` when there is none (or it is suppressed).
    pub context: Option<String>,
    /// sha256 of the cacheable prefix (provider, model, tools, system); equals
    /// `Fingerprint::of(provider, model, &system, &tools)` for the step's `provider` and
    /// `model` values.
    pub fingerprint: Fingerprint,
}

/// One section (or runtime context) as a step renders it, with where it was declared.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedPiece {
    /// The name (`persona`, `tool:grep`).
    pub name: String,
    /// The order it is sorted by.
    pub order: f64,
    /// The rendered text, trailing whitespace trimmed.
    pub text: String,
    /// Where its name was written; `None` for tool guidance (it comes from the tool).
    pub declared_at: Option<Span>,
}

#[derive(Debug)]
enum Body {
    Verbatim(String),
    Template {
        id: TemplateId,
        vars: BTreeSet<String>,
        /// Per variable, the offsets of references not guarded by a definedness test or
        /// `default` (see `template_scan`).
        unguarded: BTreeMap<String, Vec<usize>>,
    },
}

#[derive(Debug)]
struct Condition {
    id: TemplateId,
    vars: BTreeSet<String>,
    unguarded: BTreeMap<String, Vec<usize>>,
}

#[derive(Debug)]
struct CompiledPiece {
    name: SectionName,
    order: Order,
    complete: bool,
    body: Body,
    when: Option<Condition>,
    span: Option<Span>,
    /// Template and `when` sources with their positions, to point errors at a reference.
    text: String,
    when_source: String,
    origin: super::section::SectionOrigin,
    /// Index of the layer that defined it (tool guidance: 0, layers from 1), so errors
    /// about a conflict point at the nearest preset, the one that introduced it.
    layer: usize,
}

impl CompiledPiece {
    /// The position of `var` at byte `offset` of the `when` expression or the text.
    fn span_at(&self, offset: usize, var: &str, in_when: bool) -> Option<Span> {
        let (source, origin) = if in_when {
            (&self.when_source, &self.origin.when)
        } else {
            (&self.text, &self.origin.text)
        };
        match origin {
            Some(o) => Some(
                o.span_at(source, offset)
                    .with_len(var.chars().count() as u32),
            ),
            None => self.span.clone(),
        }
    }

    /// Where `var` is referenced (in the `when` expression or the text).
    fn reference_span(&self, var: &str, in_when: bool) -> Option<Span> {
        let (source, origin, expression) = if in_when {
            (&self.when_source, &self.origin.when, true)
        } else {
            (&self.text, &self.origin.text, false)
        };
        match (origin, find_reference(source, var, expression)) {
            (Some(o), Some(off)) => {
                Some(o.span_at(source, off).with_len(var.chars().count() as u32))
            }
            (Some(o), None) => Some(o.span()),
            (None, _) => self.span.clone(),
        }
    }
}

#[derive(Clone, Debug)]
struct KnownVariable {
    default: Option<Value>,
    required: bool,
    /// Declared with neither a default nor `required`: templates may use it only under
    /// a definedness test or through `default(…)`.
    optional: bool,
}

/// Builds a [`PromptAssembler`] from layers (outermost first: host, then each preset of
/// an `extends` chain, the child last).
#[derive(Debug)]
pub struct AssemblerBuilder<'c> {
    catalog: &'c ToolCatalog,
    layers: Vec<Layer>,
    suppress: bool,
}

impl<'c> AssemblerBuilder<'c> {
    /// Start with the tools the host knows.
    pub fn new(catalog: &'c ToolCatalog) -> Self {
        AssemblerBuilder {
            catalog,
            layers: Vec::new(),
            suppress: false,
        }
    }

    /// Add the next (nearer) layer.
    pub fn layer(mut self, layer: Layer) -> Self {
        self.layers.push(layer);
        self
    }

    /// The host suppresses every runtime context (same as `includeRuntimeContext: false`).
    pub fn suppress_runtime_context(mut self) -> Self {
        self.suppress = true;
        self
    }

    /// Check everything and compile. Every problem is reported, not only the first.
    pub fn build(self) -> Result<PromptAssembler, Diagnostics> {
        let mut sink = DiagnosticSink::default();
        let catalog = self.catalog;

        // Tools: check each restriction against the known tools, then intersect.
        for layer in &self.layers {
            if let Some(r) = &layer.tools {
                sink.extend(r.check(catalog));
            }
        }
        let registry =
            ToolRegistry::restricted(catalog, self.layers.iter().filter_map(|l| l.tools.as_ref()));
        let labelled: Vec<(&str, &crate::tools::ToolRestriction)> = self
            .layers
            .iter()
            .filter_map(|l| l.tools.as_ref().map(|r| (l.label.as_str(), r)))
            .collect();
        if !sink.has_errors() {
            sink.extend(warnings::no_tools(
                catalog,
                &labelled,
                registry.names().next().is_some(),
            ));
        }
        let mut templates = TemplateSet::new();

        // Sections: tool guidance first (outermost), then every layer in turn.
        let mut sections: BTreeMap<SectionName, PromptSection> = BTreeMap::new();
        for def in registry.definitions() {
            if let Some(g) = def.guidance() {
                let name = SectionName::tool_guidance(def.name().as_str());
                if let Ok(order) = Order::new(g.order) {
                    sections.insert(
                        name.clone(),
                        PromptSection {
                            name,
                            order,
                            text: g.text.clone(),
                            complete: false,
                            when: None,
                            template: g.template,
                            origin: Default::default(),
                        },
                    );
                }
            }
        }
        let mut contexts: BTreeMap<SectionName, PromptContext> = BTreeMap::new();
        // Which layer defined each section (tool guidance: none).
        let mut section_layer: BTreeMap<SectionName, &str> = BTreeMap::new();
        for layer in &self.layers {
            apply_removals(layer, &mut sections, catalog, &mut sink);
            let mut seen = BTreeSet::new();
            for s in &layer.sections {
                if !seen.insert(&s.name) {
                    sink.push(duplicate(
                        "section",
                        &s.name,
                        &layer.label,
                        s.origin.name.clone(),
                    ));
                    continue;
                }
                if let (Some(old), Some(old_label)) =
                    (sections.get(&s.name), section_layer.get(&s.name))
                {
                    sink.extend(warnings::override_drops(
                        &templates,
                        s.name.as_str(),
                        (&old.text, old.template, old_label),
                        (&s.text, s.template),
                        s.origin.name.clone(),
                    ));
                }
                section_layer.insert(s.name.clone(), layer.label.as_str());
                sections.insert(s.name.clone(), s.clone());
            }
            let mut seen = BTreeSet::new();
            for c in &layer.contexts {
                if !seen.insert(&c.name) {
                    sink.push(duplicate(
                        "context",
                        &c.name,
                        &layer.label,
                        c.origin.name.clone(),
                    ));
                    continue;
                }
                contexts.insert(c.name.clone(), c.clone());
            }
        }
        // A `tool:<known tool>` section lives only while that tool is visible.
        sections.retain(|name, _| match name.tool_guidance_target() {
            Some(tool) if catalog.contains(tool) => registry.is_visible(tool),
            _ => true,
        });

        // Variables: built-ins, then declarations (nearer shadows outer).
        let mut variables: BTreeMap<String, KnownVariable> = BUILTIN_VARIABLES
            .iter()
            .map(|b| {
                (
                    b.name.to_owned(),
                    KnownVariable {
                        default: None,
                        required: false,
                        optional: false,
                    },
                )
            })
            .collect();
        let mut volatile: BTreeSet<String> = BUILTIN_VARIABLES
            .iter()
            .filter(|b| b.volatile)
            .map(|b| b.name.to_owned())
            .collect();
        let mut declared: BTreeMap<String, VariableDecl> = BTreeMap::new();
        for layer in &self.layers {
            let mut seen = BTreeSet::new();
            for decl in &layer.variables {
                let name = decl.name.as_str();
                if builtin_variable(name).is_some() {
                    sink.push(
                        Diagnostic::new(
                            DiagnosticKind::InvalidName,
                            format!("`{name}` is a built-in variable and cannot be declared"),
                        )
                        .at(decl.span.clone())
                        .help(format!(
                            "the runtime sets `{name}`; pin it with `--var {name}=…` instead, or pick another name"
                        )),
                    );
                    continue;
                }
                if !seen.insert(name) {
                    sink.push(
                        Diagnostic::new(
                            DiagnosticKind::DuplicateKey,
                            format!("variable `{name}` is declared twice in `{}`", layer.label),
                        )
                        .at(decl.span.clone()),
                    );
                    continue;
                }
                if decl.volatile {
                    volatile.insert(name.to_owned());
                } else {
                    volatile.remove(name);
                }
                if let Some(Err(d)) = decl.default.as_ref().map(|v| decl.check_value(v)) {
                    sink.push(d.at(decl.span.clone()));
                }
                variables.insert(
                    name.to_owned(),
                    KnownVariable {
                        default: decl.default.clone(),
                        required: decl.required,
                        optional: decl.default.is_none() && !decl.required,
                    },
                );
                declared.insert(name.to_owned(), decl.clone());
            }
        }

        let suppress = self.suppress
            || self
                .layers
                .iter()
                .any(|l| l.include_runtime_context == Some(false));

        // Compile, in final order.
        let known: Vec<&str> = variables.keys().map(String::as_str).collect();
        let mut compiled_sections = Vec::with_capacity(sections.len());
        let mut sorted: Vec<PromptSection> = sections.into_values().collect();
        sorted.sort_by(|a, b| (a.order, &a.name).cmp(&(b.order, &b.name)));
        for s in &sorted {
            let piece = compile_piece(
                &mut templates,
                PieceInput {
                    kind: "section",
                    name: &s.name,
                    order: s.order,
                    text: &s.text,
                    template: s.template,
                    complete: s.complete,
                    when: s.when.as_deref(),
                    origin: &s.origin,
                },
                &known,
                Some(&volatile),
                &mut sink,
            );
            compiled_sections.extend(piece);
        }
        let mut defined_in: BTreeMap<&SectionName, usize> = BTreeMap::new();
        for (i, layer) in self.layers.iter().enumerate() {
            for sec in &layer.sections {
                defined_in.insert(&sec.name, i + 1);
            }
        }
        for piece in &mut compiled_sections {
            piece.layer = defined_in.get(&piece.name).copied().unwrap_or(0);
        }
        let unconditional_complete: Vec<&str> = compiled_sections
            .iter()
            .filter(|p| p.complete && p.when.is_none())
            .map(|p| p.name.as_str())
            .collect();
        let tools_value = Value::from(
            registry
                .names()
                .map(|n| n.as_str().to_owned())
                .collect::<Vec<_>>(),
        );
        let can_send_context = !suppress && !contexts.is_empty();
        if unconditional_complete.len() > 1 {
            let span = compiled_sections
                .iter()
                .filter(|p| p.complete && p.when.is_none())
                .max_by_key(|p| p.layer)
                .and_then(|p| p.span.clone());
            sink.push(multiple_complete(&unconditional_complete, span));
        } else if !sink.has_errors() {
            let candidates: Vec<warnings::CompleteCandidate<'_>> = compiled_sections
                .iter()
                .filter(|p| p.complete)
                .map(|p| warnings::CompleteCandidate {
                    name: p.name.as_str(),
                    when: p
                        .when
                        .as_ref()
                        .map(|c| (&c.id, &c.vars, p.when_source.as_str())),
                    layer: p.layer,
                    span: p.span.clone(),
                })
                .collect();
            let samples = variables
                .iter()
                .map(|(name, v)| {
                    let usual = v.default.clone().or_else(|| {
                        builtin_variable(name)
                            .filter(|b| !is_derived_variable(b.name))
                            .map(|b| Value::from(b.example))
                    });
                    (
                        name.clone(),
                        warnings::VariableSample {
                            usual,
                            may_be_absent: v.optional,
                        },
                    )
                })
                .collect();
            let derived = BTreeMap::from([
                (TOOLS_VARIABLE.to_owned(), tools_value.clone()),
                (
                    RUNTIME_CONTEXT_VARIABLE.to_owned(),
                    Value::from(can_send_context),
                ),
            ]);
            sink.extend(warnings::complete_conflicts(
                &templates,
                &candidates,
                &samples,
                &derived,
            ));
        }
        let mut sorted_ctx: Vec<PromptContext> = contexts.into_values().collect();
        sorted_ctx.sort_by(|a, b| (a.order, &a.name).cmp(&(b.order, &b.name)));
        let mut compiled_contexts = Vec::with_capacity(sorted_ctx.len());
        for c in &sorted_ctx {
            // Suppressed contexts are still compiled and checked, just never rendered.
            let piece = compile_piece(
                &mut templates,
                PieceInput {
                    kind: "context",
                    name: &c.name,
                    order: c.order,
                    text: &c.text,
                    template: c.template,
                    complete: false,
                    when: None,
                    origin: &c.origin,
                },
                &known,
                None,
                &mut sink,
            );
            compiled_contexts.extend(piece);
        }

        // Token budgets: per key, the nearest layer that sets one wins.
        let mut budget = TokenBudget::default();
        for layer in &self.layers {
            if let Some(l) = &layer.budget.max_system_tokens {
                budget.max_system_tokens = Some(l.clone());
            }
            if let Some(l) = &layer.budget.max_tool_tokens {
                budget.max_tool_tokens = Some(l.clone());
            }
        }
        let wire_tools: Arc<[WireTool]> = registry.schemas().into();
        if let Some(limit) = &budget.max_tool_tokens {
            // The tools never change: check them once, here.
            match crate::tokens::count_tools(&wire_tools) {
                Ok(n) if n > limit.tokens as usize => sink.push(budget_exceeded(
                    "the tool definitions take",
                    n,
                    "maxToolTokens",
                    limit,
                )),
                Ok(_) => {}
                Err(e) => sink.push(tokenizer_failed(&e, limit)),
            }
        }
        let warnings = sink.finish()?;
        let contexts = if suppress {
            Vec::new()
        } else {
            compiled_contexts
        };
        Ok(PromptAssembler {
            system_vars: prefix_dependencies(&compiled_sections),
            context_vars: dependencies(&contexts),
            cache: Mutex::new(StepCache::default()),
            tools_json: Fingerprint::tools_json(&wire_tools),
            known_tools: catalog.names().map(str::to_owned).collect(),
            budget,
            templates,
            sections: compiled_sections,
            contexts,
            suppressed: suppress,
            variables,
            declared,
            registry: Arc::new(registry),
            wire_tools,
            tools_value,
            warnings,
        })
    }
}

fn duplicate(kind: &str, name: &SectionName, layer: &str, span: Option<Span>) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::DuplicateSection,
        format!("{kind} `{name}` is defined twice in `{layer}`"),
    )
    .at(span)
    .help(format!(
        "rename one of them or merge their text; a {kind} name may appear once per preset"
    ))
}

fn multiple_complete(names: &[&str], span: Option<Span>) -> Diagnostic {
    let list = warnings::sorted_names(names.iter().copied());
    Diagnostic::new(
        DiagnosticKind::MultipleComplete,
        format!("more than one effective `complete` section: {list}"),
    )
    .at(span)
    .help("at most one section may be the complete system prompt: drop `complete` from the others, `remove` them, or give them exclusive `when` conditions")
}

fn apply_removals(
    layer: &Layer,
    sections: &mut BTreeMap<SectionName, PromptSection>,
    catalog: &ToolCatalog,
    sink: &mut DiagnosticSink,
) {
    let mut listed = BTreeSet::new();
    for entry in &layer.remove {
        let name = entry.name.as_str();
        if !listed.insert(name) {
            sink.push(
                Diagnostic::new(
                    DiagnosticKind::DuplicateSection,
                    format!("`{name}` is listed twice in `remove`"),
                )
                .at(entry.span.clone())
                .help("list each section once"),
            );
            continue;
        }
        let inherited = sections.keys().any(|k| k.as_str() == name);
        let tool_target = name
            .strip_prefix("tool:")
            .is_some_and(|t| catalog.contains(t));
        if inherited || tool_target {
            sections.retain(|k, _| k.as_str() != name);
            continue;
        }
        let candidates: Vec<String> = sections
            .keys()
            .map(|k| k.as_str().to_owned())
            .chain(catalog.names().map(|t| format!("tool:{t}")))
            .collect();
        let help =
            help_did_you_mean(name, candidates.iter().map(String::as_str)).unwrap_or_else(|| {
                "`remove` takes the name of an inherited section or `tool:<known tool>`".to_owned()
            });
        sink.push(
            Diagnostic::new(
                DiagnosticKind::RemoveUnknown,
                format!("cannot remove `{name}`: no inherited section or known tool has that name"),
            )
            .at(entry.span.clone())
            .help(help),
        );
    }
}

struct PieceInput<'a> {
    kind: &'static str,
    name: &'a SectionName,
    order: Order,
    text: &'a str,
    template: bool,
    complete: bool,
    when: Option<&'a str>,
    origin: &'a super::section::SectionOrigin,
}

fn compile_piece(
    templates: &mut TemplateSet,
    input: PieceInput<'_>,
    known: &[&str],
    volatile: Option<&BTreeSet<String>>,
    sink: &mut DiagnosticSink,
) -> Option<CompiledPiece> {
    let PieceInput {
        kind,
        name,
        order,
        text,
        template,
        complete,
        when,
        origin,
    } = input;
    let input_when = when;
    let mut ok = true;
    let text_span = |offset: Option<usize>| -> Option<Span> {
        match (&origin.text, offset) {
            (Some(o), Some(off)) => Some(o.span_at(text, off)),
            (Some(o), None) => Some(o.span()),
            (None, _) => origin.name.clone(),
        }
    };
    // What the `when` condition being true proves defined guards the whole text.
    let when_guards = when.map(condition_guards).unwrap_or_default();
    let body = if template {
        match templates.add_template(name.as_str(), text) {
            Ok((id, vars)) => {
                let scan = scan(text, false, &when_guards);
                let (names_ok, vars) =
                    check_names(templates, kind, name, &scan, vars, &text_span, sink);
                ok &= names_ok;
                ok &= check_references(
                    kind, name, text, false, &vars, known, volatile, &text_span, sink,
                );
                Body::Template {
                    id,
                    vars,
                    unguarded: scan.unguarded,
                }
            }
            Err(e) => {
                sink.push(template_syntax(kind, name, &e, text_span(e.offset)));
                ok = false;
                Body::Verbatim(String::new())
            }
        }
    } else {
        Body::Verbatim(text.trim_end().to_owned())
    };
    let when = match when {
        None => None,
        Some(expr) => {
            let when_span = |offset: Option<usize>| -> Option<Span> {
                match (&origin.when, offset) {
                    (Some(o), Some(off)) => Some(o.span_at(expr, off)),
                    (Some(o), None) => Some(o.span()),
                    (None, _) => origin.name.clone(),
                }
            };
            match templates.add_condition(name.as_str(), expr) {
                Ok((id, vars)) => {
                    let scan = scan(expr, true, &BTreeSet::new());
                    let (names_ok, vars) =
                        check_names(templates, kind, name, &scan, vars, &when_span, sink);
                    ok &= names_ok;
                    ok &= check_references(
                        kind, name, expr, true, &vars, known, volatile, &when_span, sink,
                    );
                    Some(Condition {
                        id,
                        vars,
                        unguarded: scan.unguarded,
                    })
                }
                Err(e) => {
                    sink.push(
                        template_syntax(kind, name, &e, when_span(e.offset))
                            .help("`when` takes a minijinja expression, e.g. `'grep' in tools`"),
                    );
                    ok = false;
                    None
                }
            }
        }
    };
    ok.then(|| CompiledPiece {
        name: name.clone(),
        order,
        complete,
        body,
        when,
        span: origin.name.clone(),
        text: text.to_owned(),
        when_source: input_when.unwrap_or_default().to_owned(),
        origin: origin.clone(),
        layer: 0,
    })
}

/// The static checks minijinja leaves to render time, in every branch: unknown filters,
/// tests and functions (at the name), `debug()`, and statements that reach for other
/// templates. Returns whether all passed, and the template's variables without the names
/// it only calls (an unknown function is reported as one, not as a variable).
fn check_names(
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
    let functions = templates.functions();
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

fn unknown_name_help(name: &str, known: &[String], what: &str) -> String {
    help_did_you_mean(name, known.iter().map(String::as_str))
        .unwrap_or_else(|| format!("see the minijinja documentation for the built-in {what}"))
}

fn template_syntax(
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
fn check_references(
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
        let offset = find_reference(source, var, expression);
        let span = span_of(offset).map(|s| {
            if offset.is_some() {
                s.with_len(var.chars().count() as u32)
            } else {
                s
            }
        });
        if !known.contains(&var.as_str()) {
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
                .help(help),
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

/// Turns one step's values into an [`Assembly`]. Only a successful
/// [`AssemblerBuilder::build`] (or a validated preset) makes one.
#[derive(Debug)]
pub struct PromptAssembler {
    templates: TemplateSet,
    sections: Vec<CompiledPiece>,
    contexts: Vec<CompiledPiece>,
    suppressed: bool,
    variables: BTreeMap<String, KnownVariable>,
    /// The nearest declaration of every declared variable (types and choices).
    declared: BTreeMap<String, VariableDecl>,
    registry: Arc<ToolRegistry>,
    wire_tools: Arc<[WireTool]>,
    tools_value: Value,
    warnings: Vec<Diagnostic>,
    /// Variables the system prompt depends on (`tools` excluded: it never changes).
    system_vars: Vec<String>,
    /// Variables the runtime context depends on.
    context_vars: Vec<String>,
    cache: Mutex<StepCache>,
    /// The tools as the fingerprint hashes them (they never change).
    tools_json: String,
    /// Every tool the catalog knows, visible or not.
    known_tools: Vec<String>,
    /// Token budgets (the tools were checked when building).
    budget: TokenBudget,
}

/// The variables the cacheable prefix depends on: those of its sections, and always
/// `provider` and `model`, which the fingerprint covers (a provider caches per model).
fn prefix_dependencies(pieces: &[CompiledPiece]) -> Vec<String> {
    let mut vars = dependencies(pieces);
    for name in [PROVIDER_VARIABLE, MODEL_VARIABLE] {
        if let Err(at) = vars.binary_search_by(|v| v.as_str().cmp(name)) {
            vars.insert(at, name.to_owned());
        }
    }
    vars
}

fn dependencies(pieces: &[CompiledPiece]) -> Vec<String> {
    let mut vars = BTreeSet::new();
    for p in pieces {
        if let Body::Template { vars: v, .. } = &p.body {
            vars.extend(v.iter().cloned());
        }
        if let Some(c) = &p.when {
            vars.extend(c.vars.iter().cloned());
        }
    }
    vars.retain(|v| !is_derived_variable(v));
    vars.into_iter().collect()
}

impl PromptAssembler {
    /// The visible tools (for running calls).
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Warnings found while building (e.g. `volatile-in-prefix`).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// Is runtime context suppressed?
    pub fn runtime_context_suppressed(&self) -> bool {
        self.suppressed
    }

    /// Every variable a template may use (built-in and declared), by name.
    pub fn known_variables(&self) -> impl Iterator<Item = &str> {
        self.variables.keys().map(String::as_str)
    }

    /// The declaration of `name` that applies (the nearest one), for a declared variable;
    /// `None` for built-ins and unknown names. Use [`VariableDecl::parse_value`] to turn
    /// text (a command-line value) into the value of its type.
    pub fn declaration(&self, name: &str) -> Option<&VariableDecl> {
        self.declared.get(name)
    }

    /// Variables every assembly must be given a value for: declared `required`, with no
    /// default (after the nearest declaration replaced outer ones).
    pub fn required_variables(&self) -> impl Iterator<Item = &str> {
        self.variables
            .iter()
            .filter(|(_, v)| v.required && v.default.is_none())
            .map(|(n, _)| n.as_str())
    }

    /// Variables declared with neither a default nor `required`: templates use them only
    /// under a definedness test or through `default(…)`.
    pub fn optional_variables(&self) -> impl Iterator<Item = &str> {
        self.variables
            .iter()
            .filter(|(_, v)| v.optional)
            .map(|(n, _)| n.as_str())
    }

    /// Section names in final order (before `when` is evaluated).
    pub fn section_names(&self) -> impl Iterator<Item = &str> {
        self.sections.iter().map(|p| p.name.as_str())
    }

    /// The sections of the system prompt for `values`, in order, each rendered as
    /// [`assemble`](Self::assemble) renders it (sections that render empty are left
    /// out): joined with blank lines they are exactly that step's `system`. For
    /// provenance and prompt-drift locks.
    pub fn rendered_sections(&self, values: &Values) -> Result<Vec<RenderedPiece>, Diagnostics> {
        self.check_required(values)?;
        let (ctx, have) = self.context_value(values);
        let pieces = self.system_pieces(&ctx, &have)?;
        self.render_each("section", &pieces, &ctx, &have)
    }

    /// The runtime contexts for `values`, in order, rendered as
    /// [`assemble`](Self::assemble) renders them (joined with blank lines they are that
    /// step's `context`); none when runtime context is suppressed.
    pub fn rendered_contexts(&self, values: &Values) -> Result<Vec<RenderedPiece>, Diagnostics> {
        if self.suppressed {
            return Ok(Vec::new());
        }
        self.check_required(values)?;
        let (ctx, have) = self.context_value(values);
        let pieces: Vec<&CompiledPiece> = self.contexts.iter().collect();
        self.render_each("context", &pieces, &ctx, &have)
    }

    fn render_each(
        &self,
        kind: &str,
        pieces: &[&CompiledPiece],
        ctx: &Value,
        have: &BTreeSet<String>,
    ) -> Result<Vec<RenderedPiece>, Diagnostics> {
        let mut out = Vec::with_capacity(pieces.len());
        for piece in pieces {
            let text = self.render_pieces(kind, &[piece], ctx, have)?;
            if text.is_empty() {
                continue;
            }
            out.push(RenderedPiece {
                name: piece.name.as_str().to_owned(),
                order: piece.order.get(),
                text,
                declared_at: piece.span.clone(),
            });
        }
        Ok(out)
    }

    /// Render one step.
    ///
    /// The system prompt depends only on the variables its sections (and their `when`)
    /// reference, and the context only on the variables its contexts reference; each part
    /// is re-rendered only when one of its own variables changed since the last call, so
    /// a step where only runtime facts change re-renders only the context. "Changed"
    /// is exact: a value of another type or with other text (`1` vs `1.0` vs `true`,
    /// `0.0` vs `-0.0`) counts as a change, so a long-lived assembler returns the same
    /// bytes a fresh one would.
    pub fn assemble(&self, values: &Values) -> Result<Assembly, Diagnostics> {
        self.check_required(values)?;
        self.check_types(values)?;
        let system_key = self.key(&self.system_vars, values);
        let context_key = self.key(&self.context_vars, values);
        let mut cache = self.cache.lock().ok();
        let mut cached_system = cache
            .as_ref()
            .and_then(|c| c.system.as_ref())
            .filter(|(k, ..)| same_key(k, &system_key))
            .map(|(_, s, f, cost)| (s.clone(), *f, *cost));
        let mut cached_context = cache
            .as_ref()
            .and_then(|c| c.context.as_ref())
            .filter(|(k, ..)| same_key(k, &context_key))
            .map(|(_, c, cost)| (c.clone(), *cost));
        // Parts cached from different steps may not fit one budget together: then render
        // both, as a fresh assembler would.
        if let (Some((.., s)), Some((_, c))) = (&cached_system, &cached_context)
            && !fits_together(*s, *c)
        {
            cached_system = None;
            cached_context = None;
        }
        let mut ctx: Option<(Value, BTreeSet<String>)> = None;
        let (system, fingerprint, system_cost) = match cached_system {
            Some(hit) => hit,
            None => {
                let (ctx, have) = ctx.get_or_insert_with(|| self.context_value(values));
                let s = self.render_system(ctx, have)?;
                self.check_system_tokens(&s)?;
                let cost = budget_used(ctx);
                let f = Fingerprint::of_serialized(
                    self.text_value(PROVIDER_VARIABLE, values).as_deref(),
                    self.text_value(MODEL_VARIABLE, values).as_deref(),
                    &s,
                    &self.tools_json,
                );
                if let Some(c) = cache.as_mut() {
                    c.system = Some((system_key, s.clone(), f, cost));
                }
                (s, f, cost)
            }
        };
        let cached_context = cached_context.filter(|(_, c)| fits_together(system_cost, *c));
        let context = match cached_context {
            Some((c, _)) => c,
            None => {
                let (c, cost) = if self.suppressed {
                    (None, (0, 0))
                } else {
                    let (ctx, have) = ctx.get_or_insert_with(|| self.context_value(values));
                    // A cached system prompt costs what it cost when it was rendered.
                    if let Some(budget) = AssemblyBudget::of(ctx) {
                        budget.charge(system_cost.0, system_cost.1);
                    }
                    let pieces: Vec<&CompiledPiece> = self.contexts.iter().collect();
                    let text = self.render_pieces("context", &pieces, ctx, have)?;
                    let (fuel, bytes) = budget_used(ctx);
                    (
                        Some(text).filter(|t| !t.is_empty()),
                        (
                            fuel.saturating_sub(system_cost.0),
                            bytes.saturating_sub(system_cost.1),
                        ),
                    )
                };
                if let Some(cache) = cache.as_mut() {
                    cache.context = Some((context_key, c.clone(), cost));
                }
                c
            }
        };
        Ok(Assembly {
            system,
            tools: Arc::clone(&self.wire_tools),
            context,
            fingerprint,
        })
    }

    fn render_system(&self, ctx: &Value, have: &BTreeSet<String>) -> Result<String, Diagnostics> {
        let system_pieces = self.system_pieces(ctx, have)?;
        self.render_pieces("section", &system_pieces, ctx, have)
    }

    /// The sections that make up the system prompt for these values, in order.
    fn system_pieces(
        &self,
        ctx: &Value,
        have: &BTreeSet<String>,
    ) -> Result<Vec<&CompiledPiece>, Diagnostics> {
        let mut effective: Vec<&CompiledPiece> = Vec::with_capacity(self.sections.len());
        for piece in &self.sections {
            if let Some(cond) = &piece.when {
                self.require(have, &cond.vars, &cond.unguarded, "section", piece, true)?;
                let on = self
                    .templates
                    .eval_condition(&cond.id, ctx)
                    .map_err(|e| render_error("section", piece, &e))?;
                if !on {
                    continue;
                }
            }
            effective.push(piece);
        }
        let complete: Vec<&CompiledPiece> =
            effective.iter().copied().filter(|p| p.complete).collect();
        if complete.len() > 1 {
            let names: Vec<&str> = complete.iter().map(|p| p.name.as_str()).collect();
            let nearest = complete.iter().max_by_key(|p| p.layer);
            return Err(multiple_complete(&names, nearest.and_then(|p| p.span.clone())).into());
        }
        Ok(if complete.len() == 1 {
            complete
        } else {
            effective
        })
    }

    /// `mentions-hidden-tool`: sections of the system prompt (for `values`) whose rendered
    /// text names a known tool that is not visible. Each tool name counts as a whole word.
    /// Empty when the values do not render (that failure is reported on its own).
    pub fn hidden_tool_mentions(&self, values: &Values) -> Vec<Diagnostic> {
        let hidden: Vec<&str> = self
            .known_tools
            .iter()
            .map(String::as_str)
            .filter(|t| !self.registry.is_visible(t))
            .collect();
        if hidden.is_empty() {
            return Vec::new();
        }
        let (ctx, have) = self.context_value(values);
        let Ok(pieces) = self.system_pieces(&ctx, &have) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for piece in pieces {
            let Ok(text) = self.render_pieces("section", &[piece], &ctx, &have) else {
                return out;
            };
            let named: Vec<String> = hidden
                .iter()
                .filter(|t| mentions_word(&text, t))
                .map(|t| format!("`{t}`"))
                .collect();
            if named.is_empty() {
                continue;
            }
            let first = hidden
                .iter()
                .find(|t| mentions_word(&text, t))
                .copied()
                .unwrap_or_default();
            let span = match (&piece.origin.text, text_offset_of(&piece.text, first)) {
                (Some(o), Some(offset)) => Some(
                    o.span_at(&piece.text, offset)
                        .with_len(first.chars().count() as u32),
                ),
                _ => piece.span.clone(),
            };
            out.push(
                Diagnostic::new(
                    DiagnosticKind::MentionsHiddenTool,
                    format!(
                        "section `{}` mentions {}, which the model cannot use: the tool is not visible in this preset",
                        piece.name,
                        named.join(", ")
                    ),
                )
                .at(span)
                .help(format!(
                    "reword it, or keep the sentence only while the tool is visible: `{{% if '{first}' in tools %}}…{{% endif %}}`"
                )),
            );
        }
        out
    }

    /// The resolved value of `name` as text (as a template would print it).
    fn text_value(&self, name: &str, values: &Values) -> Option<String> {
        let value = values
            .get(name)
            .or_else(|| self.variables.get(name).and_then(|v| v.default.as_ref()))?;
        Some(match value.as_str() {
            Some(text) => text.to_owned(),
            None => value.to_string(),
        })
    }

    /// The resolved value (explicit, else default) of each variable in `names`.
    fn key(&self, names: &[String], values: &Values) -> StepKey {
        names
            .iter()
            .map(|n| {
                values
                    .get(n)
                    .cloned()
                    .or_else(|| self.variables.get(n).and_then(|v| v.default.clone()))
            })
            .collect()
    }

    fn check_required(&self, values: &Values) -> Result<(), Diagnostics> {
        let missing: Vec<Diagnostic> = self
            .required_variables()
            .filter(|name| values.get(name).is_none())
            .map(|name| {
                Diagnostic::new(
                    DiagnosticKind::MissingValue,
                    format!("required variable `{name}` has no value"),
                )
                .help(format!(
                    "set it with `--var {name}=…` or give it a `default`"
                ))
            })
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(Diagnostics::from_vec(missing))
        }
    }

    /// Every given value of a typed (or `enum`) variable has its type and is a choice.
    fn check_types(&self, values: &Values) -> Result<(), Diagnostics> {
        let wrong: Vec<Diagnostic> = self
            .declared
            .values()
            .filter(|d| d.is_constrained())
            .filter_map(|d| d.check_value(values.get(d.name.as_str())?).err())
            .collect();
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(Diagnostics::from_vec(wrong))
        }
    }

    fn context_value(&self, values: &Values) -> (Value, BTreeSet<String>) {
        let mut map: BTreeMap<String, Value> = BTreeMap::new();
        map.insert(
            BUDGET_KEY.to_owned(),
            Value::from_object(AssemblyBudget::default()),
        );
        for (name, var) in &self.variables {
            let value = if name == TOOLS_VARIABLE {
                Some(self.tools_value.clone())
            } else if name == RUNTIME_CONTEXT_VARIABLE {
                Some(Value::from(!self.suppressed && !self.contexts.is_empty()))
            } else {
                values.get(name).cloned().or_else(|| var.default.clone())
            };
            if let Some(v) = value {
                map.insert(name.clone(), v);
            }
        }
        let have = map.keys().filter(|k| *k != BUDGET_KEY).cloned().collect();
        (Value::from(map), have)
    }

    fn render_pieces(
        &self,
        kind: &str,
        pieces: &[&CompiledPiece],
        ctx: &Value,
        have: &BTreeSet<String>,
    ) -> Result<String, Diagnostics> {
        let mut out = String::new();
        for piece in pieces {
            let rendered = match &piece.body {
                Body::Verbatim(text) => text.clone(),
                Body::Template {
                    id,
                    vars,
                    unguarded,
                } => {
                    self.require(have, vars, unguarded, kind, piece, false)?;
                    let mut text = self
                        .templates
                        .render(id, ctx)
                        .map_err(|e| render_error(kind, piece, &e))?;
                    text.truncate(text.trim_end().len());
                    text
                }
            };
            if rendered.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&rendered);
        }
        Ok(out)
    }
    /// Every variable `vars` names has a value, or is optional and only used guarded
    /// (then the template itself decides what to print without it).
    fn require(
        &self,
        have: &BTreeSet<String>,
        vars: &BTreeSet<String>,
        unguarded: &BTreeMap<String, Vec<usize>>,
        kind: &str,
        piece: &CompiledPiece,
        in_when: bool,
    ) -> Result<(), Diagnostics> {
        let missing: Vec<Diagnostic> = vars
            .iter()
            .filter(|v| !have.contains(*v))
            .filter(|v| !self.is_optional(v) || unguarded.contains_key(*v))
            .map(|v| {
                let span = match unguarded.get(v).and_then(|offsets| offsets.first()) {
                    Some(offset) => piece.span_at(*offset, v, in_when),
                    None => piece.reference_span(v, in_when),
                };
                Diagnostic::new(
                    DiagnosticKind::MissingValue,
                    format!(
                        "variable `{v}` has no value ({kind} `{}` needs it)",
                        piece.name
                    ),
                )
                .at(span)
                .help(format!(
                    "set it with `--var {v}=…`, or give it a `default` under `variables`"
                ))
            })
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(Diagnostics::from_vec(missing))
        }
    }

    /// The system prompt within `maxSystemTokens`? (A cached one was checked when it was
    /// rendered.)
    fn check_system_tokens(&self, system: &str) -> Result<(), Diagnostics> {
        let Some(limit) = &self.budget.max_system_tokens else {
            return Ok(());
        };
        match crate::tokens::count(system) {
            Ok(n) if n > limit.tokens as usize => {
                Err(budget_exceeded("the system prompt takes", n, "maxSystemTokens", limit).into())
            }
            Ok(_) => Ok(()),
            Err(e) => Err(tokenizer_failed(&e, limit).into()),
        }
    }

    /// The token budgets in force (per key, the nearest layer's).
    pub fn token_budget(&self) -> &TokenBudget {
        &self.budget
    }

    fn is_optional(&self, name: &str) -> bool {
        self.variables.get(name).is_some_and(|v| v.optional)
    }

    /// Uses of optional variables (declared with neither a default nor `required`) that
    /// no definedness test or `default(…)` guards: each fails whenever the caller does
    /// not pass the variable. `validate` reports them as `missing-value`.
    pub fn unguarded_optional_uses(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let pieces = self
            .sections
            .iter()
            .map(|p| ("section", p))
            .chain(self.contexts.iter().map(|p| ("context", p)));
        for (kind, piece) in pieces {
            let parts = [
                piece.when.as_ref().map(|c| (&c.unguarded, true)),
                match &piece.body {
                    Body::Template { unguarded, .. } => Some((unguarded, false)),
                    Body::Verbatim(_) => None,
                },
            ];
            for (unguarded, in_when) in parts.into_iter().flatten() {
                for (var, offsets) in unguarded {
                    let Some(offset) = offsets.first().filter(|_| self.is_optional(var)) else {
                        continue;
                    };
                    out.push(
                        Diagnostic::new(
                            DiagnosticKind::MissingValue,
                            format!(
                                "{kind} `{}` uses optional variable `{var}` without a guard: it fails whenever no value is passed",
                                piece.name
                            ),
                        )
                        .at(piece.span_at(*offset, var, in_when))
                        .help(format!(
                            "use it as `{var} | default('…')` or under `{{% if {var} is defined %}}`, give it a `default`, or mark it `required: true`"
                        )),
                    );
                }
            }
        }
        out
    }
}

/// Does `text` name `word` as a whole word (not inside a longer identifier)?
fn mentions_word(text: &str, word: &str) -> bool {
    text_offset_of(text, word).is_some()
}

/// The byte offset of the first whole-word occurrence of `word` in `text`.
fn text_offset_of(text: &str, word: &str) -> Option<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

fn budget_exceeded(what: &str, measured: usize, key: &str, limit: &TokenLimit) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::BudgetExceeded,
        format!(
            "{what} {measured} tokens ({}), over `{key}: {}` by {}",
            crate::tokens::ENCODING,
            limit.tokens,
            measured - limit.tokens as usize
        ),
    )
    .at(limit.span.clone())
    .help(format!(
        "shorten or `remove` sections, hide tools you do not need, or raise `{key}` to at least {measured}"
    ))
}

fn tokenizer_failed(e: &crate::tokens::TokenizerError, limit: &TokenLimit) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::BudgetExceeded, e.to_string())
        .at(limit.span.clone())
        .help("this build's tokenizer data is broken; reinstall agent-presets")
}

/// What the renders of this assembly used so far.
fn budget_used(ctx: &Value) -> RenderCost {
    AssemblyBudget::of(ctx).map_or((0, 0), |b| b.used())
}

/// Would a fresh assembly that renders both parts stay within the template budget? A
/// margin of two fuel covers minijinja's rounding of fuel to whole units; near the edge
/// the parts are rendered again, which gives exactly the fresh outcome.
fn fits_together(a: RenderCost, b: RenderCost) -> bool {
    a.0.saturating_add(b.0).saturating_add(2) < TEMPLATE_FUEL
        && a.1.saturating_add(b.1) <= TEMPLATE_OUTPUT_BYTES
}

fn limit_exceeded(
    kind: &str,
    name: &SectionName,
    e: &TemplateError,
    span: Option<Span>,
) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::LimitExceeded,
        format!("{kind} `{name}` exceeds a template limit: {}", e.message),
    )
    .at(span)
    .help(format!(
        "the templates of one assembly share {TEMPLATE_FUEL} fuel (instructions, and one per 64 bytes they build) and {} MiB of output, and nest at most {} levels; simplify the loops or build less text",
        TEMPLATE_OUTPUT_BYTES / (1024 * 1024),
        super::template::TEMPLATE_RECURSION_LIMIT,
    ))
}

fn render_error(kind: &str, piece: &CompiledPiece, e: &TemplateError) -> Diagnostics {
    if e.limit {
        return limit_exceeded(kind, &piece.name, e, piece.span.clone()).into();
    }
    if e.undefined {
        // A value the template needed is missing where the static look thought it
        // guarded: still a missing value, not a broken template.
        return Diagnostic::new(
            DiagnosticKind::MissingValue,
            format!(
                "{kind} `{}` needs a value it does not have: {}",
                piece.name, e.message
            ),
        )
        .at(piece.span.clone())
        .help("pass the variable, or guard its use with `is defined` or `default(…)`")
        .into();
    }
    Diagnostic::new(
        DiagnosticKind::TemplateRender,
        format!("{kind} `{}` failed to render: {}", piece.name, e.message),
    )
    .at(piece.span.clone())
    .into()
}
