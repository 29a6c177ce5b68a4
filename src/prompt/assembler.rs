//! [`PromptAssembler`]: layers in, byte-stable [`Assembly`] out.
//!
//! Building checks everything that can be checked without values (names, duplicates,
//! removals, template syntax, variable references, tool restrictions, statically
//! conflicting `complete` sections). Assembling renders with one step's values.

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use minijinja::Value;

use super::fingerprint::{Fingerprint, PrefixHasher};
use super::layer::{Layer, TokenBudget, TokenLimit};
use super::prompt_text::PromptText;
use super::section::{Order, PromptContext, PromptSection, SectionName};
use super::step_cache::{ContextPart, RenderCost, StepCache, StepKey, SystemPart, same_value};
use super::substitution::{Substitution, SubstitutionError};
use super::template::{
    AssemblyBudget, BUDGET_KEY, FrozenTemplate, TEMPLATE_FUEL, TEMPLATE_OUTPUT_BYTES,
    TemplateError, TemplateId, TemplateSet, find_reference,
};
use super::template_scan::{
    LiteralComparison, TemplateScan, condition_guards, literal_comparisons, scan,
};
use super::variables::{
    BUILTIN_VARIABLES, MODEL_VARIABLE, PROVIDER_VARIABLE, RUNTIME_CONTEXT_VARIABLE, TOOLS_VARIABLE,
    Values, VariableDecl, builtin_variable, is_derived_variable,
};
use super::warnings;
use crate::diagnostic::{Diagnostic, DiagnosticKind, DiagnosticSink, Diagnostics, Span};
use crate::suggest::help_did_you_mean;
use crate::tools::{ToolCatalog, ToolRegistry, WireTool};

/// What one step sends: the system prompt, the tools, and the runtime context text.
///
/// The texts are shared, not copied: steps that render the same text hand out the same
/// [`PromptText`] (it reads and compares as a `&str`).
#[derive(Clone, Debug, PartialEq)]
pub struct Assembly {
    /// The system prompt.
    pub system: PromptText,
    /// The visible tools, in wire order (shared; identical across steps).
    pub tools: Arc<[WireTool]>,
    /// The rendered runtime context, or `None` when there is none (or it is suppressed).
    pub context: Option<PromptText>,
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
    /// `template: false`: the text as written (trailing whitespace trimmed). It costs
    /// nothing of the template budget.
    Verbatim(String),
    Template {
        engine: Engine,
        vars: BTreeSet<String>,
        /// Per variable, the offsets of references not guarded by a definedness test or
        /// `default` (see `template_scan`).
        unguarded: BTreeMap<String, Vec<usize>>,
    },
}

/// How a template body is printed.
#[derive(Debug)]
enum Engine {
    /// By minijinja, compiled.
    Compiled(FrozenTemplate),
    /// Text and `{{ name }}` only (most sections): printed without the engine, exactly as
    /// it would print them. Its output counts against the template budget's bytes.
    Substitution(Substitution),
}

#[derive(Debug)]
struct Condition {
    id: FrozenTemplate,
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

/// A section or context where the merge put it: its text, its analysis, the template set
/// that holds its compiled text, and the layer that defined it (`None`: tool guidance).
struct Placed<'a, T> {
    item: &'a T,
    analysis: &'a PieceAnalysis,
    env: &'a Arc<minijinja::Environment<'static>>,
    label: Option<&'a str>,
}

/// Builds a [`PromptAssembler`] from layers (outermost first: host, then each preset of
/// an `extends` chain, the child last).
#[derive(Debug)]
pub struct AssemblerBuilder<'c> {
    catalog: &'c ToolCatalog,
    layers: Vec<Arc<Layer>>,
    /// Per layer, its templates when the caller compiled them once for many builders.
    compiled: Vec<Option<Arc<LayerTemplates>>>,
    suppress: bool,
}

impl<'c> AssemblerBuilder<'c> {
    /// Start with the tools the host knows.
    pub fn new(catalog: &'c ToolCatalog) -> Self {
        AssemblerBuilder {
            catalog,
            layers: Vec::new(),
            compiled: Vec::new(),
            suppress: false,
        }
    }

    /// Add the next (nearer) layer.
    pub fn layer(self, layer: Layer) -> Self {
        self.shared_layer(Arc::new(layer))
    }

    /// Add the next (nearer) layer, shared with other builders (a preset file that many
    /// presets extend contributes the same layer to each).
    pub fn shared_layer(mut self, layer: Arc<Layer>) -> Self {
        self.layers.push(layer);
        self.compiled.push(None);
        self
    }

    /// [`shared_layer`](Self::shared_layer) with its templates compiled once by the
    /// caller (`templates` must be [`LayerTemplates::of`] that very layer).
    pub(crate) fn compiled_layer(
        mut self,
        layer: Arc<Layer>,
        templates: Arc<LayerTemplates>,
    ) -> Self {
        self.layers.push(layer);
        self.compiled.push(Some(templates));
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
            sink.extend(warnings::allow_denied_by_parent(catalog, &labelled));
        }
        let templates = TemplateSet::new();

        // Sections: tool guidance first (outermost), then every layer in turn.
        let guidance: Vec<PromptSection> = registry
            .definitions()
            .iter()
            .filter_map(|def| {
                let g = def.guidance()?;
                let order = Order::new(g.order).ok()?;
                Some(PromptSection {
                    name: SectionName::tool_guidance(def.name().as_str()),
                    order,
                    text: g.text.clone(),
                    complete: false,
                    when: None,
                    template: g.template,
                    origin: Default::default(),
                })
            })
            .collect();
        let guidance_templates: Vec<Arc<LayerTemplates>> =
            guidance.iter().map(guidance_templates).collect();
        // Each layer compiled: once per file when the caller shares it, else here.
        let layer_templates: Vec<Arc<LayerTemplates>> = self
            .layers
            .iter()
            .zip(&self.compiled)
            .map(|(layer, shared)| {
                shared
                    .clone()
                    .unwrap_or_else(|| Arc::new(LayerTemplates::of(layer)))
            })
            .collect();
        let mut sections: BTreeMap<SectionName, Placed<'_, PromptSection>> = BTreeMap::new();
        for (section, compiled) in guidance.iter().zip(&guidance_templates) {
            if let Some(analysis) = compiled.sections.first() {
                sections.insert(
                    section.name.clone(),
                    Placed {
                        item: section,
                        analysis,
                        env: &compiled.env,
                        label: None,
                    },
                );
            }
        }
        let mut contexts: BTreeMap<SectionName, Placed<'_, PromptContext>> = BTreeMap::new();
        for (layer, compiled) in self.layers.iter().zip(&layer_templates) {
            apply_removals(layer, &mut sections, catalog, &mut sink);
            let mut seen = BTreeSet::new();
            for (s, analysis) in layer.sections.iter().zip(&compiled.sections) {
                if !seen.insert(&s.name) {
                    sink.push(duplicate(
                        "section",
                        &s.name,
                        &layer.label,
                        s.origin.name.clone(),
                    ));
                    continue;
                }
                if let Some(old) = sections.get(&s.name)
                    && let Some(old_label) = old.label
                {
                    let before = referenced_variables(&templates, old.item, old.analysis);
                    let after = referenced_variables(&templates, s, analysis);
                    let no_variables = BTreeSet::new();
                    sink.extend(warnings::override_drops(
                        s.name.as_str(),
                        (before.as_deref(), old_label),
                        after.as_deref().unwrap_or(&no_variables),
                        s.origin.name.clone(),
                    ));
                }
                sections.insert(
                    s.name.clone(),
                    Placed {
                        item: s,
                        analysis,
                        env: &compiled.env,
                        label: Some(layer.label.as_str()),
                    },
                );
            }
            let mut seen = BTreeSet::new();
            for (c, analysis) in layer.contexts.iter().zip(&compiled.contexts) {
                if !seen.insert(&c.name) {
                    sink.push(duplicate(
                        "context",
                        &c.name,
                        &layer.label,
                        c.origin.name.clone(),
                    ));
                    continue;
                }
                contexts.insert(
                    c.name.clone(),
                    Placed {
                        item: c,
                        analysis,
                        env: &compiled.env,
                        label: Some(layer.label.as_str()),
                    },
                );
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
        let mut sorted: Vec<Placed<'_, PromptSection>> = sections.into_values().collect();
        sorted.sort_by(|a, b| (a.item.order, &a.item.name).cmp(&(b.item.order, &b.item.name)));
        for s in &sorted {
            let piece = finish_piece(
                s.analysis,
                s.env,
                &PieceSource::section(s.item),
                s.item.order,
                s.item.complete,
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
                &candidates,
                &samples,
                &derived,
            ));
        }
        let mut sorted_ctx: Vec<Placed<'_, PromptContext>> = contexts.into_values().collect();
        sorted_ctx.sort_by(|a, b| (a.item.order, &a.item.name).cmp(&(b.item.order, &b.item.name)));
        let mut compiled_contexts = Vec::with_capacity(sorted_ctx.len());
        for c in &sorted_ctx {
            // Suppressed contexts are still compiled and checked, just never rendered.
            let piece = finish_piece(
                c.analysis,
                c.env,
                &PieceSource::context(c.item),
                c.item.order,
                false,
                &known,
                None,
                &mut sink,
            );
            compiled_contexts.extend(piece);
        }

        // `when` comparisons that can never match this chain's variables and tools.
        let pieces = sorted
            .iter()
            .map(|s| (PieceSource::section(s.item), s.analysis))
            .chain(
                sorted_ctx
                    .iter()
                    .map(|c| (PieceSource::context(c.item), c.analysis)),
            );
        for (input, analysis) in pieces {
            if let (Some(WhenAnalysis::Compiled { comparisons, .. }), Some(expr)) =
                (&analysis.when, input.when)
                && !comparisons.is_empty()
            {
                let span_of = |offset: Option<usize>| input.when_span(expr, offset);
                sink.extend(warnings::impossible_comparisons(
                    (input.kind, input.name.as_str()),
                    expr,
                    comparisons,
                    &declared,
                    catalog,
                    &span_of,
                ));
            }
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
        // The tool definitions as sent: made when a budget counts them, else on the first
        // assembly (validation never needs them).
        let wire_tools: OnceLock<Arc<[WireTool]>> = OnceLock::new();
        if let Some(limit) = &budget.max_tool_tokens {
            let wire_tools = wire_tools.get_or_init(|| registry.schemas().into());
            // The tools never change: check them once, here.
            match crate::tokens::count_tools(wire_tools) {
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
        let required = variables
            .iter()
            .filter(|(_, v)| v.required && v.default.is_none())
            .map(|(n, _)| n.clone())
            .collect();
        let constrained = declared
            .values()
            .filter(|d| d.is_constrained())
            .map(|d| d.name.as_str().to_owned())
            .collect();
        Ok(PromptAssembler {
            system_vars: prefix_dependencies(&compiled_sections),
            context_vars: dependencies(&contexts),
            cache: Mutex::new(StepCache::default()),
            prefix_hasher: OnceLock::new(),
            known_tools: catalog.names().map(str::to_owned).collect(),
            required,
            constrained,
            runtime_context_value: Value::from(!suppress && !contexts.is_empty()),
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

fn apply_removals<V>(
    layer: &Layer,
    sections: &mut BTreeMap<SectionName, V>,
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

/// One section or context as written, for [`analyze_piece`].
struct PieceSource<'a> {
    kind: &'static str,
    name: &'a SectionName,
    text: &'a str,
    template: bool,
    when: Option<&'a str>,
    origin: &'a super::section::SectionOrigin,
}

impl<'a> PieceSource<'a> {
    fn section(s: &'a PromptSection) -> Self {
        PieceSource {
            kind: "section",
            name: &s.name,
            text: &s.text,
            template: s.template,
            when: s.when.as_deref(),
            origin: &s.origin,
        }
    }

    fn context(c: &'a PromptContext) -> Self {
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
    fn text_span(&self, offset: Option<usize>) -> Option<Span> {
        match (&self.origin.text, offset) {
            (Some(o), Some(off)) => Some(o.span_at(self.text, off)),
            (Some(o), None) => Some(o.span()),
            (None, _) => self.origin.name.clone(),
        }
    }

    /// Where byte `offset` of the `when` expression `expr` is.
    fn when_span(&self, expr: &str, offset: Option<usize>) -> Option<Span> {
        match (&self.origin.when, offset) {
            (Some(o), Some(off)) => Some(o.span_at(expr, off)),
            (Some(o), None) => Some(o.span()),
            (None, _) => self.origin.name.clone(),
        }
    }
}

/// How a template body will be printed, in the set of the layer that compiled it.
#[derive(Debug)]
enum PreparedEngine {
    Compiled(TemplateId),
    Substitution(Substitution),
}

/// What compiling one section or context finds on its own, before the chain it is in is
/// known: the compiled text and `when`, the variables they use, and the problems of the
/// text itself (syntax; unknown filters, tests and functions). What depends on the chain
/// — which variables are declared, which are volatile — is checked per chain by
/// [`finish_piece`].
#[derive(Debug)]
struct PieceAnalysis {
    body: BodyAnalysis,
    when: Option<WhenAnalysis>,
}

#[derive(Debug)]
enum BodyAnalysis {
    /// `template: false`: the text as written, trailing whitespace trimmed.
    Verbatim(String),
    Template {
        engine: PreparedEngine,
        /// The variables it uses, without the names it only calls.
        vars: BTreeSet<String>,
        /// Every name the engine sees as a variable, called ones included (what
        /// `override-drops-placeholder` compares).
        referenced: BTreeSet<String>,
        unguarded: BTreeMap<String, Vec<usize>>,
        /// Unknown filters, tests, functions, statements, found in every branch.
        names: Vec<Diagnostic>,
        names_ok: bool,
    },
    /// It does not compile.
    Broken(Diagnostic),
}

#[derive(Debug)]
enum WhenAnalysis {
    Compiled {
        id: TemplateId,
        vars: BTreeSet<String>,
        unguarded: BTreeMap<String, Vec<usize>>,
        names: Vec<Diagnostic>,
        names_ok: bool,
        /// Comparisons with literals, checked against each chain's variables and tools.
        comparisons: Vec<LiteralComparison>,
    },
    Broken(Diagnostic),
}

/// The sections and contexts of one layer, compiled once into one template set: a
/// preset file that many presets extend is compiled once however many chains it is in
/// (see [`AssemblerBuilder::compiled_layer`]).
#[derive(Debug)]
pub(crate) struct LayerTemplates {
    env: Arc<minijinja::Environment<'static>>,
    sections: Vec<PieceAnalysis>,
    contexts: Vec<PieceAnalysis>,
}

impl LayerTemplates {
    /// Compile every section and context of `layer`.
    pub(crate) fn of(layer: &Layer) -> LayerTemplates {
        Self::compile(&layer.sections, &layer.contexts)
    }

    fn compile(sections: &[PromptSection], contexts: &[PromptContext]) -> LayerTemplates {
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
fn guidance_templates(section: &PromptSection) -> Arc<LayerTemplates> {
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
fn analyze_piece(templates: &mut TemplateSet, input: &PieceSource<'_>) -> PieceAnalysis {
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
                Ok((PreparedEngine::Substitution(s), vars))
            }
            None => templates
                .add_template(name.as_str(), text)
                .map(|(id, vars)| (PreparedEngine::Compiled(id), vars)),
        };
        match compiled {
            Ok((engine, referenced)) => {
                // Text without template syntax names nothing: nothing to scan.
                let scan = match &engine {
                    PreparedEngine::Substitution(s) if s.is_text() => TemplateScan::default(),
                    _ => scan(text, false, &when_guards),
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
                    vars,
                    referenced,
                    unguarded: scan.unguarded,
                    names: names.into_vec(),
                    names_ok,
                }
            }
            Err(e) => {
                BodyAnalysis::Broken(template_syntax(kind, name, &e, input.text_span(e.offset)))
            }
        }
    } else {
        BodyAnalysis::Verbatim(text.trim_end().to_owned())
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
                    vars,
                    unguarded: scan.unguarded,
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
    PieceAnalysis { body, when }
}

/// The variables a template section uses as the engine sees them, for
/// `override-drops-placeholder`; `None` when it is not a template.
fn referenced_variables<'a>(
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
fn finish_piece(
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
        BodyAnalysis::Verbatim(text) => Body::Verbatim(text.clone()),
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
                PreparedEngine::Substitution(s) => Engine::Substitution(s.clone()),
            };
            Body::Template {
                engine,
                vars: vars.clone(),
                unguarded: unguarded.clone(),
            }
        }
        BodyAnalysis::Broken(d) => {
            sink.push(d.clone());
            ok = false;
            Body::Verbatim(String::new())
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
                vars: vars.clone(),
                unguarded: unguarded.clone(),
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
        text: text.to_owned(),
        when_source: when_source.to_owned(),
        origin: input.origin.clone(),
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
    /// Required variables without a default, by name.
    required: Vec<String>,
    /// Declared variables with a type or choices to check given values against.
    constrained: Vec<String>,
    registry: Arc<ToolRegistry>,
    /// The visible tools' definitions as sent, made once when first needed.
    wire_tools: OnceLock<Arc<[WireTool]>>,
    tools_value: Value,
    /// The value of `runtime_context`: is a runtime context sent at all?
    runtime_context_value: Value,
    warnings: Vec<Diagnostic>,
    /// Variables the system prompt depends on (`tools` excluded: it never changes).
    system_vars: Vec<String>,
    /// Variables the runtime context depends on.
    context_vars: Vec<String>,
    cache: Mutex<StepCache>,
    /// The fingerprint's hash of the tools (they never change), taken on first use.
    prefix_hasher: OnceLock<PrefixHasher>,
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

/// One step's values as its templates see them: the given value, else the declared
/// default; `tools` and `runtime_context` from the assembler. The engine's context (a
/// map of every variable with a value, and the assembly's budget) is built only when a
/// piece needs the engine, once per step, and shared by every piece that does.
struct StepValues<'a> {
    assembler: &'a PromptAssembler,
    values: &'a Values,
    /// The template budget of this assembly.
    budget: Arc<AssemblyBudget>,
    engine: OnceCell<Value>,
    /// When set, each system prompt section rendered is kept here (validation renders
    /// the same sections twice, see [`PromptAssembler::check_renders_and_mentions`]).
    record: Option<&'a RefCell<Vec<RenderedSection>>>,
}

/// One section as a step rendered it, and what it cost of the budget.
struct RenderedSection {
    /// The piece's address in its assembler.
    piece: *const CompiledPiece,
    text: String,
    cost: RenderCost,
}

impl<'a> StepValues<'a> {
    fn new(assembler: &'a PromptAssembler, values: &'a Values) -> Self {
        StepValues {
            assembler,
            values,
            budget: Arc::new(AssemblyBudget::default()),
            engine: OnceCell::new(),
            record: None,
        }
    }

    /// The value of the known variable `name`, if it has one.
    fn get(&self, name: &str) -> Option<&Value> {
        let var = self.assembler.variables.get(name)?;
        if name == TOOLS_VARIABLE {
            Some(&self.assembler.tools_value)
        } else if name == RUNTIME_CONTEXT_VARIABLE {
            Some(&self.assembler.runtime_context_value)
        } else {
            self.values.get(name).or(var.default.as_ref())
        }
    }

    /// Does the known variable `name` have a value?
    fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The engine's context value.
    fn engine(&self) -> &Value {
        self.engine.get_or_init(|| {
            let mut map: BTreeMap<&str, Value> = BTreeMap::new();
            map.insert(BUDGET_KEY, Value::from_dyn_object(Arc::clone(&self.budget)));
            for name in self.assembler.variables.keys() {
                if let Some(v) = self.get(name) {
                    map.insert(name, v.clone());
                }
            }
            Value::from(map)
        })
    }

    /// What the renders of this assembly used so far.
    fn used(&self) -> RenderCost {
        self.budget.used()
    }
}

/// Does a cached part's key hold exactly the values `names` resolve to now?
fn key_matches(names: &[String], key: &[Option<Value>], step: &StepValues<'_>) -> bool {
    names.len() == key.len()
        && names.iter().zip(key).all(|(name, cached)| {
            match (
                step.values.get(name).or_else(|| default_of(step, name)),
                cached,
            ) {
                (None, None) => true,
                (Some(now), Some(then)) => same_value(now, then, 0),
                _ => false,
            }
        })
}

fn default_of<'v>(step: &StepValues<'v>, name: &str) -> Option<&'v Value> {
    step.assembler
        .variables
        .get(name)
        .and_then(|v| v.default.as_ref())
}

/// What [`PromptAssembler::render_step`] does besides rendering.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StepMode {
    /// A real step: reuse and remember parts, fingerprint the prefix.
    Assemble,
    /// `validate`'s render: every part rendered afresh, no fingerprint, nothing kept.
    Check,
}

impl PromptAssembler {
    /// The visible tools (for running calls).
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The visible tools' definitions as every assembly sends them.
    fn wire_tools(&self) -> &Arc<[WireTool]> {
        self.wire_tools
            .get_or_init(|| self.registry.schemas().into())
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
        self.required.iter().map(String::as_str)
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
        let step = StepValues::new(self, values);
        let pieces = self.system_pieces(&step)?;
        self.render_each("section", &pieces, &step)
    }

    /// The runtime contexts for `values`, in order, rendered as
    /// [`assemble`](Self::assemble) renders them (joined with blank lines they are that
    /// step's `context`); none when runtime context is suppressed.
    pub fn rendered_contexts(&self, values: &Values) -> Result<Vec<RenderedPiece>, Diagnostics> {
        if self.suppressed {
            return Ok(Vec::new());
        }
        self.check_required(values)?;
        let step = StepValues::new(self, values);
        let pieces: Vec<&CompiledPiece> = self.contexts.iter().collect();
        self.render_each("context", &pieces, &step)
    }

    fn render_each(
        &self,
        kind: &str,
        pieces: &[&CompiledPiece],
        step: &StepValues<'_>,
    ) -> Result<Vec<RenderedPiece>, Diagnostics> {
        let mut out = Vec::with_capacity(pieces.len());
        for piece in pieces {
            let text = self.render_pieces(kind, &[piece], step)?;
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
    ///
    /// Given the same [`Values`] as the last successful call (or an unchanged clone of
    /// them), it returns that call's assembly again without looking at the values: the
    /// texts are shared, not copied.
    pub fn assemble(&self, values: &Values) -> Result<Assembly, Diagnostics> {
        self.render_step(values, StepMode::Assemble, None)
    }

    /// Render once as [`assemble`](Self::assemble) does, with every part rendered
    /// afresh and nothing kept: the same errors, without the fingerprint (for
    /// `validate`).
    pub(crate) fn check_renders(&self, values: &Values) -> Result<(), Diagnostics> {
        self.render_step(values, StepMode::Check, None).map(drop)
    }

    /// `record`: keep each system prompt section rendered (see [`StepValues::record`]).
    fn render_step(
        &self,
        values: &Values,
        mode: StepMode,
        record: Option<&RefCell<Vec<RenderedSection>>>,
    ) -> Result<Assembly, Diagnostics> {
        let stamp = values.stamp();
        let mut guard = match mode {
            StepMode::Assemble => self.cache.lock().ok(),
            StepMode::Check => None,
        };
        if let (Some(stamp), Some(cache)) = (stamp, guard.as_deref())
            && let Some((last, assembly)) = &cache.last
            && *last == stamp
        {
            return Ok(assembly.clone());
        }
        self.check_required(values)?;
        self.check_types(values)?;
        let mut step = StepValues::new(self, values);
        step.record = record;
        let cache = guard.as_deref_mut();
        let mut cached_system = cache
            .as_ref()
            .and_then(|c| c.system.as_ref())
            .filter(|part| key_matches(&self.system_vars, &part.key, &step))
            .map(|part| (part.text.clone(), part.fingerprint, part.cost));
        let mut cached_context = cache
            .as_ref()
            .and_then(|c| c.context.as_ref())
            .filter(|part| key_matches(&self.context_vars, &part.key, &step))
            .map(|part| (part.text.clone(), part.cost));
        // Parts cached from different steps may not fit one budget together: then render
        // both, as a fresh assembler would.
        if let (Some((.., s)), Some((_, c))) = (&cached_system, &cached_context)
            && !fits_together(*s, *c)
        {
            cached_system = None;
            cached_context = None;
        }
        let (system, fingerprint, system_cost, system_hit) = match cached_system {
            Some((text, fingerprint, cost)) => (text, fingerprint, cost, true),
            None => {
                let system = PromptText::from(self.render_system(&step)?);
                self.check_system_tokens(&system)?;
                let cost = step.used();
                let fingerprint = match mode {
                    StepMode::Assemble => self
                        .prefix_hasher
                        .get_or_init(|| PrefixHasher::new(self.wire_tools()))
                        .fingerprint(
                            text_value(step.get(PROVIDER_VARIABLE)).as_deref(),
                            text_value(step.get(MODEL_VARIABLE)).as_deref(),
                            &system,
                        ),
                    StepMode::Check => Fingerprint::placeholder(),
                };
                (system, fingerprint, cost, false)
            }
        };
        let cached_context = cached_context.filter(|(_, c)| fits_together(system_cost, *c));
        let (context, context_cost, context_hit) = match cached_context {
            Some((text, cost)) => (text, cost, true),
            None if self.suppressed => (None, (0, 0), false),
            None => {
                // A cached system prompt costs what it cost when it was rendered.
                step.budget.charge(system_cost.0, system_cost.1);
                let pieces: Vec<&CompiledPiece> = self.contexts.iter().collect();
                let text = self.render_pieces("context", &pieces, &step)?;
                let (fuel, bytes) = step.used();
                (
                    Some(text).filter(|t| !t.is_empty()).map(PromptText::from),
                    (
                        fuel.saturating_sub(system_cost.0),
                        bytes.saturating_sub(system_cost.1),
                    ),
                    false,
                )
            }
        };
        let assembly = Assembly {
            system,
            tools: Arc::clone(self.wire_tools()),
            context,
            fingerprint,
        };
        if let Some(cache) = cache {
            if !system_hit {
                cache.system = Some(SystemPart {
                    key: self.key(&self.system_vars, &step),
                    text: assembly.system.clone(),
                    fingerprint,
                    cost: system_cost,
                });
            }
            if !context_hit {
                cache.context = Some(ContextPart {
                    key: self.key(&self.context_vars, &step),
                    text: assembly.context.clone(),
                    cost: context_cost,
                });
            }
            if let Some(stamp) = stamp {
                cache.last = Some((stamp, assembly.clone()));
            }
        }
        Ok(assembly)
    }

    fn render_system(&self, step: &StepValues<'_>) -> Result<String, Diagnostics> {
        let system_pieces = self.system_pieces(step)?;
        self.render_pieces("section", &system_pieces, step)
    }

    /// The sections that make up the system prompt for these values, in order.
    fn system_pieces(&self, step: &StepValues<'_>) -> Result<Vec<&CompiledPiece>, Diagnostics> {
        let mut effective: Vec<&CompiledPiece> = Vec::with_capacity(self.sections.len());
        for piece in &self.sections {
            if let Some(cond) = &piece.when {
                self.require(step, &cond.vars, &cond.unguarded, "section", piece, true)?;
                let on = cond
                    .id
                    .eval_condition_with(step.engine(), Some(&step.budget))
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
        self.mentions(values, None)
    }

    /// What validation renders, each system prompt section once where it can: the render
    /// check of `values` ([`check_renders`](Self::check_renders)), and then
    /// [`hidden_tool_mentions`](Self::hidden_tool_mentions) of `neutral`, which reuses a
    /// section's text (and charges its cost) when the section uses no variable whose value
    /// differs between the two. The results are what the two calls would give.
    pub(crate) fn check_renders_and_mentions(
        &self,
        values: &Values,
        neutral: &Values,
    ) -> (Result<(), Diagnostics>, Vec<Diagnostic>) {
        let record = RefCell::new(Vec::new());
        let checked = self
            .render_step(values, StepMode::Check, Some(&record))
            .map(drop);
        let rendered = record.into_inner();
        let mentions = self.mentions(neutral, Some((values, &rendered)));
        (checked, mentions)
    }

    /// `mentions-hidden-tool` for `values`; `prior`: sections already rendered for other
    /// values, reusable where the section's variables hold the same values.
    fn mentions(
        &self,
        values: &Values,
        prior: Option<(&Values, &[RenderedSection])>,
    ) -> Vec<Diagnostic> {
        let hidden: Vec<&str> = self
            .known_tools
            .iter()
            .map(String::as_str)
            .filter(|t| !self.registry.is_visible(t))
            .collect();
        if hidden.is_empty() {
            return Vec::new();
        }
        let step = StepValues::new(self, values);
        let Ok(pieces) = self.system_pieces(&step) else {
            return Vec::new();
        };
        let finder = WordFinder::new(&hidden);
        let reuse = |piece: &CompiledPiece| -> Option<&RenderedSection> {
            let (prior_values, rendered) = prior?;
            let same = match &piece.body {
                Body::Verbatim(_) => true,
                Body::Template { vars, .. } => {
                    vars.iter().all(|v| prior_values.get(v) == values.get(v))
                }
            };
            if !same {
                return None;
            }
            rendered
                .iter()
                .find(|r| std::ptr::eq(r.piece, std::ptr::from_ref(piece)))
        };
        let mut out = Vec::new();
        for piece in pieces {
            let text = match reuse(piece) {
                Some(r) => {
                    step.budget.add(r.cost.0, r.cost.1);
                    r.text.clone()
                }
                None => match self.render_pieces("section", &[piece], &step) {
                    Ok(text) => text,
                    Err(_) => return out,
                },
            };
            let mentioned = finder.mentioned(&text);
            let named: Vec<String> = hidden
                .iter()
                .zip(&mentioned)
                .filter(|(_, m)| **m)
                .map(|(t, _)| format!("`{t}`"))
                .collect();
            let Some(first) = hidden
                .iter()
                .zip(&mentioned)
                .find(|(_, m)| **m)
                .map(|(t, _)| *t)
            else {
                continue;
            };
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

    /// The resolved value (explicit, else default) of each variable in `names`.
    fn key(&self, names: &[String], step: &StepValues<'_>) -> StepKey {
        names
            .iter()
            .map(|n| step.values.get(n).or_else(|| default_of(step, n)).cloned())
            .collect()
    }

    fn check_required(&self, values: &Values) -> Result<(), Diagnostics> {
        if self.required.iter().all(|name| values.get(name).is_some()) {
            return Ok(());
        }
        let missing: Vec<Diagnostic> = self
            .required
            .iter()
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
        Err(Diagnostics::from_vec(missing))
    }

    /// Every given value of a typed (or `enum`) variable has its type and is a choice.
    fn check_types(&self, values: &Values) -> Result<(), Diagnostics> {
        let wrong: Vec<Diagnostic> = self
            .constrained
            .iter()
            .filter_map(|name| {
                let decl = self.declared.get(name)?;
                decl.check_value(values.get(name)?).err()
            })
            .collect();
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(Diagnostics::from_vec(wrong))
        }
    }

    /// Render `pieces` and join the non-empty ones with blank lines.
    fn render_pieces(
        &self,
        kind: &str,
        pieces: &[&CompiledPiece],
        step: &StepValues<'_>,
    ) -> Result<String, Diagnostics> {
        // Room for the texts as written (what most pieces print) and the blank lines.
        let mut out = String::with_capacity(pieces.iter().map(|p| p.text.len() + 2).sum());
        for piece in pieces {
            let separator_at = out.len();
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            let start = out.len();
            let before = step.record.as_ref().map(|_| step.used());
            match &piece.body {
                Body::Verbatim(text) => out.push_str(text),
                Body::Template {
                    engine,
                    vars,
                    unguarded,
                } => {
                    self.require(step, vars, unguarded, kind, piece, false)?;
                    match engine {
                        Engine::Substitution(s) => {
                            self.substitute(s, kind, piece, step, &mut out)?;
                        }
                        Engine::Compiled(template) => {
                            let text = template
                                .render_with(step.engine(), Some(&step.budget))
                                .map_err(|e| render_error(kind, piece, &e))?;
                            out.push_str(&text);
                        }
                    }
                    out.truncate(start + out[start..].trim_end().len());
                }
            }
            if let (Some(record), Some(before)) = (&step.record, before)
                && kind == "section"
            {
                let after = step.used();
                record.borrow_mut().push(RenderedSection {
                    piece: std::ptr::from_ref(*piece),
                    text: out[start..].to_owned(),
                    cost: (
                        after.0.saturating_sub(before.0),
                        after.1.saturating_sub(before.1),
                    ),
                });
            }
            if out.len() == start {
                out.truncate(separator_at);
            }
        }
        Ok(out)
    }

    /// Print a substitution into `out`, counting its bytes against the budget; a value
    /// the engine would refuse to print is left to the engine, for its own error.
    fn substitute(
        &self,
        s: &Substitution,
        kind: &str,
        piece: &CompiledPiece,
        step: &StepValues<'_>,
        out: &mut String,
    ) -> Result<(), Diagnostics> {
        let start = out.len();
        let room = usize::try_from(step.budget.room()).unwrap_or(usize::MAX);
        match s.render_into(&piece.text, |name| step.get(name), out, room) {
            Ok(()) => {
                step.budget.add_bytes((out.len() - start) as u64);
                Ok(())
            }
            Err(SubstitutionError::TooLong) => {
                out.truncate(start);
                Err(render_error(kind, piece, &TemplateError::output_limit()))
            }
            Err(SubstitutionError::Undefined) => {
                out.truncate(start);
                let text = self
                    .templates
                    .render_source(&piece.text, step.engine(), Some(&step.budget))
                    .map_err(|e| render_error(kind, piece, &e))?;
                out.push_str(&text);
                Ok(())
            }
        }
    }

    /// Every variable `vars` names has a value, or is optional and only used guarded
    /// (then the template itself decides what to print without it).
    fn require(
        &self,
        step: &StepValues<'_>,
        vars: &BTreeSet<String>,
        unguarded: &BTreeMap<String, Vec<usize>>,
        kind: &str,
        piece: &CompiledPiece,
        in_when: bool,
    ) -> Result<(), Diagnostics> {
        if vars.iter().all(|v| step.has(v)) {
            return Ok(());
        }
        let missing: Vec<Diagnostic> = vars
            .iter()
            .filter(|v| !step.has(v))
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

/// Whole-word searches for a few words, set up once and run over many texts.
struct WordFinder<'w> {
    finders: Vec<(&'w str, memchr::memmem::Finder<'w>)>,
}

impl<'w> WordFinder<'w> {
    fn new(words: &[&'w str]) -> Self {
        WordFinder {
            finders: words
                .iter()
                .map(|w| (*w, memchr::memmem::Finder::new(w.as_bytes())))
                .collect(),
        }
    }

    /// Per word, does `text` mention it as a whole word (not inside a longer word)?
    fn mentioned(&self, text: &str) -> Vec<bool> {
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        self.finders
            .iter()
            .map(|(word, finder)| {
                // A match of a non-empty word starts and ends on char boundaries; the
                // empty word matches between bytes too, and counts only between chars.
                finder.find_iter(text.as_bytes()).any(|i| {
                    if !text.is_char_boundary(i) {
                        return false;
                    }
                    let before = text.get(..i).and_then(|t| t.chars().next_back());
                    let after = text.get(i + word.len()..).and_then(|t| t.chars().next());
                    !before.is_some_and(is_word) && !after.is_some_and(is_word)
                })
            })
            .collect()
    }
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

/// A value as a template prints it, as text.
fn text_value(value: Option<&Value>) -> Option<Cow<'_, str>> {
    let value = value?;
    Some(match value.as_str() {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(value.to_string()),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: one search per word.
    fn mentions_word(text: &str, word: &str) -> bool {
        text_offset_of(text, word).is_some()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The one-pass search says what one search per word says, for tool-like names,
        /// names with other characters, and text with Unicode word characters.
        #[test]
        fn word_finder_agrees_with_mentions_word(
            text in "[a-z_ .,`éß0-9\n-]{0,60}",
            words in proptest::collection::vec("[a-z_é-]{0,6}", 0..5),
        ) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let fast = WordFinder::new(&words).mentioned(&text);
            let slow: Vec<bool> = words.iter().map(|w| mentions_word(&text, w)).collect();
            prop_assert_eq!(fast, slow);
        }
    }

    const TEXTS: &[&str] = &[
        "Use grep to search.",
        "Your shell is {{ shell }}; grep is not for you.",
        "Prefer {{ shell }} over bash.",
        "{% if 'grep' in tools %}grep{% else %}read_file{% endif %} first.",
        "Plain words about glob and {{ os }}.",
        "{{ shell | upper }} and list_dir",
        "Nothing to see.",
    ];
    const WHENS: &[Option<&str>] = &[None, Some("shell == 'bash'"), Some("os != 'windows'")];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Rendering each section once for both checks gives what the two calls give.
        #[test]
        fn check_renders_and_mentions_equals_the_two_calls(
            picks in proptest::collection::vec((0..TEXTS.len(), 0..WHENS.len()), 1..6),
            allow in proptest::sample::subsequence(vec!["bash", "read_file", "glob", "grep"], 0..=4),
        ) {
            let catalog = ToolCatalog::builtin();
            let mut layer = Layer::new("p");
            for (i, (t, w)) in picks.iter().enumerate() {
                let mut section = PromptSection::new(&format!("s{i}"), i as f64, TEXTS[*t])
                    .expect("section");
                section.when = WHENS[*w].map(str::to_owned);
                layer = layer.section(section);
            }
            if !allow.is_empty() {
                layer = layer.tools(crate::tools::ToolRestriction::allow(allow).expect("allow"));
            }
            let a = AssemblerBuilder::new(&catalog).layer(layer).build().expect("builds");
            let mut values = Values::new();
            for b in BUILTIN_VARIABLES {
                if !is_derived_variable(b.name) {
                    values.set(b.name, b.example);
                }
            }
            let mut neutral = values.clone();
            neutral.set("shell", "<shell>");
            let (checked, mentions) = a.check_renders_and_mentions(&values, &neutral);
            prop_assert_eq!(checked.is_ok(), a.check_renders(&values).is_ok());
            prop_assert_eq!(
                format!("{mentions:?}"),
                format!("{:?}", a.hidden_tool_mentions(&neutral))
            );
        }
    }

    #[test]
    fn word_finder_finds_whole_words_only() {
        let text = "use grep_all or `grep`, not regrep; read_file.";
        assert_eq!(
            WordFinder::new(&["grep", "read_file", "bash", "grep_all", "re"]).mentioned(text),
            [true, true, false, true, false]
        );
        // The empty word sits only between chars, never inside `é`'s two bytes.
        assert_eq!(WordFinder::new(&[""]).mentioned("aé"), [false]);
        assert_eq!(WordFinder::new(&[""]).mentioned("a  é"), [true]);
    }
}
