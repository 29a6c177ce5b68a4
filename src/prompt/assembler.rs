//! [`PromptAssembler`]: layers in, byte-stable [`Assembly`] out.
//!
//! Building checks everything that can be checked without values (names, duplicates,
//! removals, template syntax, variable references, tool restrictions, statically
//! conflicting `complete` sections). Assembling renders with one step's values.
//!
//! One concern a file: the shared types and the accessors here; [`AssemblerBuilder`] in
//! `builder`; what compiling a template finds on its own and per chain in `analysis`;
//! rendering a step and the step cache's use in `step`; the checks only `validate` runs
//! (hidden tool mentions, unguarded optional variables) in `checks`; token budgets in
//! `budget`.

use crate::texts::Texts;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};

use minijinja::Value;

use super::fingerprint::{Fingerprint, PrefixHasher};
use super::layer::TokenBudget;
use super::prompt_text::PromptText;
use super::section::{Order, Replaced, SectionName};
use super::step_cache::StepCache;
use super::substitution::Substitution;
use super::template::{FrozenTemplate, TemplateSet, find_reference};
use super::variables::VariableDecl;
use super::warnings;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::tools::{ToolRegistry, WireTool};

mod analysis;
mod budget;
mod builder;
mod checks;
mod step;

pub(crate) use analysis::LayerTemplates;
pub use builder::AssemblerBuilder;

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
    /// The inherited piece of the same name it replaced, if any.
    pub replaces: Option<Replaced>,
}

#[derive(Debug)]
enum Body {
    /// `template: false`: the text as written (trailing whitespace trimmed). It costs
    /// nothing of the template budget.
    Verbatim(Arc<str>),
    Template {
        engine: Engine,
        vars: Arc<BTreeSet<String>>,
        /// Per variable, the offsets of references not guarded by a definedness test or
        /// `default` (see `template_scan`).
        unguarded: Arc<BTreeMap<String, Vec<usize>>>,
    },
}

/// How a template body is printed.
#[derive(Debug)]
enum Engine {
    /// By minijinja, compiled.
    Compiled(FrozenTemplate),
    /// Text and `{{ name }}` only (most sections): printed without the engine, exactly as
    /// it would print them. Its output counts against the template budget's bytes.
    Substitution(Arc<Substitution>),
}

#[derive(Debug)]
struct Condition {
    id: FrozenTemplate,
    vars: Arc<BTreeSet<String>>,
    unguarded: Arc<BTreeMap<String, Vec<usize>>>,
}

#[derive(Debug)]
struct CompiledPiece {
    name: SectionName,
    order: Order,
    complete: bool,
    body: Body,
    when: Option<Condition>,
    span: Option<Span>,
    /// Template and `when` sources with their positions, to point errors at a reference
    /// (the text shared with the layer's analysis: one copy however many chains).
    text: Arc<str>,
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
            (self.when_source.as_str(), &self.origin.when)
        } else {
            (&*self.text, &self.origin.text)
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
            (self.when_source.as_str(), &self.origin.when, true)
        } else {
            (&*self.text, &self.origin.text, false)
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
    /// The same, per context piece (in the order of `contexts`).
    context_piece_vars: Vec<Vec<String>>,
    cache: Mutex<StepCache>,
    /// The fingerprint's hash of the tools (they never change), taken on first use.
    prefix_hasher: OnceLock<PrefixHasher>,
    /// Every tool the catalog knows, visible or not.
    known_tools: Vec<String>,
    /// Token budgets (the tools were checked when building).
    budget: TokenBudget,
    /// Per section that replaced an inherited one, what it replaced.
    replaced_sections: BTreeMap<SectionName, Replaced>,
    /// Per context that replaced an inherited one, what it replaced (kept when runtime
    /// context is suppressed, for `show`).
    replaced_contexts: BTreeMap<SectionName, Replaced>,
    /// The texts in effect (locale pack and `texts:` overrides over English).
    texts: Arc<Texts>,
}

impl PromptAssembler {
    /// The visible tools (for running calls).
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Send the calls of visible tools to other handlers: for each tool, `handler` says
    /// which (or `None`: keep it). Names, descriptions, schemas, timeouts and approval
    /// stay, so the prompt and the tools sent are unchanged — how a run connects the MCP
    /// tools validation built from the lock ([`ToolOrigin::Mcp`]) to live servers.
    ///
    /// [`ToolOrigin::Mcp`]: crate::tools::ToolOrigin::Mcp
    pub fn replace_tool_handlers(
        &mut self,
        handler: impl FnMut(&crate::tools::ToolDefinition) -> Option<crate::tools::ExternalHandler>,
    ) {
        Arc::make_mut(&mut self.registry).replace_handlers(handler);
    }

    /// The texts refusals, errors and the runtime-context wrapper are told in.
    pub fn texts(&self) -> &Arc<Texts> {
        &self.texts
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

    /// The variables the system prompt (with the fingerprint: `provider` and `model`)
    /// depends on, in name order: only a change of one of them changes it.
    pub fn system_variables(&self) -> impl Iterator<Item = &str> {
        self.system_vars.iter().map(String::as_str)
    }

    /// Section names in final order (before `when` is evaluated).
    pub fn section_names(&self) -> impl Iterator<Item = &str> {
        self.sections.iter().map(|p| p.name.as_str())
    }

    /// What the section `name` replaced (an inherited section of that name, or a tool's
    /// guidance), if it replaced anything.
    pub fn replaced_section(&self, name: &str) -> Option<&Replaced> {
        self.replaced_sections
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, r)| r)
    }

    /// What the context `name` replaced (an inherited context of that name), if anything.
    pub fn replaced_context(&self, name: &str) -> Option<&Replaced> {
        self.replaced_contexts
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, r)| r)
    }
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
