//! [`AssemblerBuilder`]: layers merged in order, removals applied, every piece compiled
//! and checked against its chain, into a [`PromptAssembler`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};

use minijinja::Value;

use super::analysis::{
    LayerTemplates, PieceAnalysis, PieceSource, WhenAnalysis, finish_piece, guidance_templates,
    referenced_variables,
};
use super::budget::{budget_exceeded, tokenizer_failed};
use super::{Body, CompiledPiece, KnownVariable, PromptAssembler, multiple_complete};
use crate::diagnostic::{Diagnostic, DiagnosticKind, DiagnosticSink, Diagnostics, Span};
use crate::prompt::layer::{Layer, TokenBudget};
use crate::prompt::section::{
    Order, PromptContext, PromptSection, Replaced, SectionName, SectionOrigin,
};
use crate::prompt::step_cache::StepCache;
use crate::prompt::template::TemplateSet;
use crate::prompt::variables::{
    BUILTIN_VARIABLES, MODEL_VARIABLE, PROVIDER_VARIABLE, RUNTIME_CONTEXT_VARIABLE, TOOLS_VARIABLE,
    VariableDecl, builtin_variable, is_derived_variable,
};
use crate::prompt::warnings;
use crate::suggest::help_did_you_mean;
use crate::texts::Texts;
use crate::tools::{ToolCatalog, ToolRegistry, WireTool};

/// A section or context where the merge put it: its text, its analysis, the template set
/// that holds its compiled text, and the layer that defined it (`None`: tool guidance).
pub(super) struct Placed<'a, T> {
    pub(super) item: &'a T,
    pub(super) analysis: &'a PieceAnalysis,
    pub(super) env: &'a Arc<minijinja::Environment<'static>>,
    pub(super) label: Option<&'a str>,
    /// The inherited piece of the same name it replaced, if any (boxed: the maps of
    /// placed pieces move their values on every insert, and few pieces replace one).
    pub(super) replaces: Option<Box<Replaced>>,
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
    texts: Option<Arc<Texts>>,
}

impl<'c> AssemblerBuilder<'c> {
    /// Start with the tools the host knows.
    pub fn new(catalog: &'c ToolCatalog) -> Self {
        AssemblerBuilder {
            catalog,
            layers: Vec::new(),
            compiled: Vec::new(),
            suppress: false,
            texts: None,
        }
    }

    /// The texts refusals, errors and the runtime-context wrapper are told in (default
    /// English). Tool descriptions and guidance come from the catalog.
    pub fn texts(mut self, texts: Arc<Texts>) -> Self {
        self.texts = Some(texts);
        self
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
        let texts = self.texts.clone().unwrap_or_else(Texts::english);
        let registry =
            ToolRegistry::restricted(catalog, self.layers.iter().filter_map(|l| l.tools.as_ref()))
                .with_texts(Arc::clone(&texts));
        let labelled: Vec<(&str, &crate::tools::ToolRestriction)> = self
            .layers
            .iter()
            .filter_map(|l| l.tools.as_ref().map(|r| (l.label.as_str(), r)))
            .collect();
        if !sink.has_errors() {
            let any_visible = registry.names().next().is_some();
            sink.extend(warnings::no_tools(catalog, &labelled, any_visible));
            sink.extend(warnings::allow_denied_by_parent(
                catalog,
                &labelled,
                any_visible,
            ));
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
                    overrides: false,
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
                        replaces: None,
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
                let old = sections.get(&s.name);
                if let Some(old) = old
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
                let replaces = old.map(|old| Box::new(replaced(old, &s.name, &old.item.origin)));
                sink.extend(warnings::override_marker(
                    ("section", &s.name, s.overrides),
                    replaces.as_deref(),
                    sections.keys(),
                    s.origin.name.clone(),
                ));
                sections.insert(
                    s.name.clone(),
                    Placed {
                        item: s,
                        analysis,
                        env: &compiled.env,
                        label: Some(layer.label.as_str()),
                        replaces,
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
                let replaces = contexts
                    .get(&c.name)
                    .map(|old| Box::new(replaced(old, &c.name, &old.item.origin)));
                sink.extend(warnings::override_marker(
                    ("context", &c.name, c.overrides),
                    replaces.as_deref(),
                    contexts.keys(),
                    c.origin.name.clone(),
                ));
                contexts.insert(
                    c.name.clone(),
                    Placed {
                        item: c,
                        analysis,
                        env: &compiled.env,
                        label: Some(layer.label.as_str()),
                        replaces,
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
        sink.extend(never_sent(&compiled_sections, &self.layers));
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
                        .map(|c| (&c.id, &*c.vars, p.when_source.as_str())),
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
        let replaced_sections: BTreeMap<SectionName, Replaced> = sorted
            .iter()
            .filter_map(|s| Some((s.item.name.clone(), s.replaces.as_deref()?.clone())))
            .collect();
        let replaced_contexts: BTreeMap<SectionName, Replaced> = sorted_ctx
            .iter()
            .filter_map(|c| Some((c.item.name.clone(), c.replaces.as_deref()?.clone())))
            .collect();
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
            if let Some(l) = &layer.budget.max_context_tokens {
                budget.max_context_tokens = Some(l.clone());
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
            context_piece_vars: contexts
                .iter()
                .map(|c| dependencies(std::slice::from_ref(c)))
                .collect(),
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
            replaced_sections,
            replaced_contexts,
            texts,
        })
    }
}

/// What a piece named `name` replaces when it takes the place of `old` (whose origin is
/// `origin`).
fn replaced<T>(old: &Placed<'_, T>, name: &SectionName, origin: &SectionOrigin) -> Replaced {
    match old.label {
        Some(layer) => Replaced::Piece {
            layer: layer.to_owned(),
            declared_at: origin.name.clone(),
        },
        None => Replaced::ToolGuidance {
            tool: name
                .tool_guidance_target()
                .unwrap_or(name.as_str())
                .to_owned(),
        },
    }
}

pub(super) fn duplicate(
    kind: &str,
    name: &SectionName,
    layer: &str,
    span: Option<Span>,
) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::DuplicateSection,
        format!("{kind} `{name}` is defined twice in `{layer}`"),
    )
    .at(span)
    .help(format!(
        "rename one of them or merge their text; a {kind} name may appear once per preset"
    ))
}

pub(super) fn apply_removals<V>(
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
            .help(help)
            .maybe_fix(
                name,
                crate::suggest::did_you_mean(name, candidates.iter().map(String::as_str)),
            ),
        );
    }
}

/// The variables the cacheable prefix depends on: those of its sections, and always
/// `provider` and `model`, which the fingerprint covers (a provider caches per model).
pub(super) fn prefix_dependencies(pieces: &[CompiledPiece]) -> Vec<String> {
    let mut vars = dependencies(pieces);
    for name in [PROVIDER_VARIABLE, MODEL_VARIABLE] {
        if let Err(at) = vars.binary_search_by(|v| v.as_str().cmp(name)) {
            vars.insert(at, name.to_owned());
        }
    }
    vars
}

pub(super) fn dependencies(pieces: &[CompiledPiece]) -> Vec<String> {
    // Borrowed while collecting: most names recur in many pieces, each is copied once.
    let mut vars: BTreeSet<&str> = BTreeSet::new();
    for p in pieces {
        if let Body::Template { vars: v, .. } = &p.body {
            vars.extend(v.iter().map(String::as_str));
        }
        if let Some(c) = &p.when {
            vars.extend(c.vars.iter().map(String::as_str));
        }
    }
    vars.into_iter()
        .filter(|v| !is_derived_variable(v))
        .map(str::to_owned)
        .collect()
}

/// `section-never-sent`: with exactly one `complete` section that has no `when`, every
/// other section is left out of every request. Reported for the innermost layer's own
/// sections (the preset being validated; an ancestor's are reported when it is), not for
/// a tool's guidance (layer 0), nor for sections of layers outside the `complete` one
/// (replacing a parent's parts with one whole prompt is what `complete` is for).
fn never_sent(pieces: &[CompiledPiece], layers: &[Arc<Layer>]) -> Vec<Diagnostic> {
    let whole: Vec<&CompiledPiece> = pieces
        .iter()
        .filter(|p| p.complete && p.when.is_none())
        .collect();
    let [whole] = whole[..] else {
        return Vec::new();
    };
    let leaf = layers.len();
    let from = whole
        .layer
        .checked_sub(1)
        .and_then(|i| layers.get(i))
        .map(|l| format!(" (from `{}`)", l.label))
        .unwrap_or_default();
    pieces
        .iter()
        .filter(|p| !p.complete && p.layer > 0 && p.layer == leaf && p.layer >= whole.layer)
        .map(|p| {
            Diagnostic::new(
                DiagnosticKind::SectionNeverSent,
                format!(
                    "section `{}` is never sent: `{}`{from} is `complete`, the whole system prompt",
                    p.name.as_str(),
                    whole.name.as_str()
                ),
            )
            .at(p.span.clone())
            .help(format!(
                "to build on that prompt, replace `{}` (`override: true`, `complete: true`) with a text that includes yours; to add sections to a prompt made of parts, extend a preset without a `complete` section, such as `standard`",
                whole.name.as_str()
            ))
        })
        .collect()
}
