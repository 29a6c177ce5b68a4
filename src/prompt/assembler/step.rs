//! One step: values in, an [`Assembly`] out, with parts reused from the step cache
//! when the values they depend on have not changed.

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use minijinja::Value;

use super::budget::limit_exceeded;
use super::multiple_complete;
use super::{Assembly, Body, CompiledPiece, Engine, PromptAssembler, RenderedPiece};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics};
use crate::prompt::fingerprint::{Fingerprint, PrefixHasher};
use crate::prompt::prompt_text::PromptText;
use crate::prompt::step_cache::{
    ContextPart, PiecePart, RenderCost, StepKey, SystemPart, same_value,
};
use crate::prompt::substitution::{Substitution, SubstitutionError};
use crate::prompt::template::{
    AssemblyBudget, BUDGET_KEY, TEMPLATE_FUEL, TEMPLATE_OUTPUT_BYTES, TemplateError,
};
use crate::prompt::variables::{
    MODEL_VARIABLE, PROVIDER_VARIABLE, RUNTIME_CONTEXT_VARIABLE, TOOLS_VARIABLE, Values,
};

/// One step's values as its templates see them: the given value, else the declared
/// default; `tools` and `runtime_context` from the assembler. The engine's context (a
/// map of every variable with a value, and the assembly's budget) is built only when a
/// piece needs the engine, once per step, and shared by every piece that does.
pub(super) struct StepValues<'a> {
    pub(super) assembler: &'a PromptAssembler,
    pub(super) values: &'a Values,
    /// The template budget of this assembly.
    pub(super) budget: Arc<AssemblyBudget>,
    pub(super) engine: OnceCell<Value>,
    /// When set, each system prompt section rendered is kept here (validation renders
    /// the same sections twice, see [`PromptAssembler::check_renders_and_mentions`]).
    pub(super) record: Option<&'a RefCell<Vec<RenderedSection>>>,
}

/// One section as a step rendered it, and what it cost of the budget.
pub(super) struct RenderedSection {
    /// The piece's address in its assembler.
    pub(super) piece: *const CompiledPiece,
    pub(super) text: String,
    pub(super) cost: RenderCost,
}

impl<'a> StepValues<'a> {
    pub(super) fn new(assembler: &'a PromptAssembler, values: &'a Values) -> Self {
        StepValues {
            assembler,
            values,
            budget: Arc::new(AssemblyBudget::default()),
            engine: OnceCell::new(),
            record: None,
        }
    }

    /// The value of the known variable `name`, if it has one.
    pub(super) fn get(&self, name: &str) -> Option<&Value> {
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
    pub(super) fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The engine's context value.
    pub(super) fn engine(&self) -> &Value {
        self.engine.get_or_init(|| {
            let mut map: BTreeMap<&str, Value> = BTreeMap::new();
            map.insert(BUDGET_KEY, Value::from_dyn_object(Arc::clone(&self.budget)));
            // Both the known variables and the given values are in name order: one walk
            // of the two finds each variable's value without a lookup per name.
            let mut given = self.values.iter().peekable();
            for (name, var) in &self.assembler.variables {
                while given.next_if(|(g, _)| *g < name.as_str()).is_some() {}
                let value = if name == TOOLS_VARIABLE {
                    Some(&self.assembler.tools_value)
                } else if name == RUNTIME_CONTEXT_VARIABLE {
                    Some(&self.assembler.runtime_context_value)
                } else {
                    given
                        .next_if(|(g, _)| *g == name.as_str())
                        .map(|(_, v)| v)
                        .or(var.default.as_ref())
                };
                if let Some(v) = value {
                    map.insert(name, v.clone());
                }
            }
            Value::from(map)
        })
    }

    /// What the renders of this assembly used so far.
    pub(super) fn used(&self) -> RenderCost {
        self.budget.used()
    }
}

/// Does a cached part's key hold exactly the values `names` resolve to now?
pub(super) fn key_matches(names: &[String], key: &[Option<Value>], step: &StepValues<'_>) -> bool {
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

pub(super) fn default_of<'v>(step: &StepValues<'v>, name: &str) -> Option<&'v Value> {
    step.assembler
        .variables
        .get(name)
        .and_then(|v| v.default.as_ref())
}

/// What [`PromptAssembler::render_step`] does besides rendering.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum StepMode {
    /// A real step: reuse and remember parts, fingerprint the prefix.
    Assemble,
    /// `validate`'s render: every part rendered afresh, no fingerprint, nothing kept.
    Check,
}

impl PromptAssembler {
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

    pub(super) fn render_each(
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
                replaces: match kind {
                    "context" => self.replaced_context(piece.name.as_str()),
                    _ => self.replaced_section(piece.name.as_str()),
                }
                .cloned(),
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
    pub(super) fn render_step(
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
        let mut cache = guard.as_deref_mut();
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
                let memo = cache.as_deref_mut().map(|c| &mut c.context_pieces);
                let text = self.render_contexts(&step, memo)?;
                self.check_context_tokens(&text)?;
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

    /// The runtime context: its pieces rendered in order, as [`Self::render_pieces`] would
    /// (non-empty texts joined by a blank line). With `memo` (a real step), a piece whose
    /// own values are those of its last render is not rendered again but charged what
    /// it cost, when that certainly fits the budget (else it renders, and fails exactly
    /// as a fresh assembler would): a new date re-renders the date, not every context.
    pub(super) fn render_contexts(
        &self,
        step: &StepValues<'_>,
        memo: Option<&mut Vec<Option<PiecePart>>>,
    ) -> Result<String, Diagnostics> {
        let Some(memo) = memo else {
            let pieces: Vec<&CompiledPiece> = self.contexts.iter().collect();
            return self.render_pieces("context", &pieces, step);
        };
        memo.resize_with(self.contexts.len(), || None);
        // Room for what the pieces printed last time, and the blank lines.
        let last: usize = memo.iter().flatten().map(|p| p.text.len() + 2).sum();
        let mut out = String::with_capacity(last);
        let push = |out: &mut String, text: &str| {
            if !text.is_empty() {
                if !out.is_empty() {
                    out.push_str("\n\n");
                }
                out.push_str(text);
            }
        };
        for ((piece, names), slot) in self
            .contexts
            .iter()
            .zip(&self.context_piece_vars)
            .zip(memo.iter_mut())
        {
            if let Some(part) = slot.as_ref().filter(|part| {
                key_matches(names, &part.key, step) && fits_together(step.used(), part.cost)
            }) {
                step.budget.add(part.cost.0, part.cost.1);
                push(&mut out, &part.text);
                continue;
            }
            let before = step.used();
            let text = self.render_pieces("context", &[piece], step)?;
            let after = step.used();
            push(&mut out, &text);
            *slot = Some(PiecePart {
                key: self.key(names, step),
                text,
                cost: (
                    after.0.saturating_sub(before.0),
                    after.1.saturating_sub(before.1),
                ),
            });
        }
        Ok(out)
    }

    pub(super) fn render_system(&self, step: &StepValues<'_>) -> Result<String, Diagnostics> {
        let system_pieces = self.system_pieces(step)?;
        self.render_pieces("section", &system_pieces, step)
    }

    /// The sections that make up the system prompt for these values, in order.
    pub(super) fn system_pieces(
        &self,
        step: &StepValues<'_>,
    ) -> Result<Vec<&CompiledPiece>, Diagnostics> {
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

    /// The resolved value (explicit, else default) of each variable in `names`.
    pub(super) fn key(&self, names: &[String], step: &StepValues<'_>) -> StepKey {
        names
            .iter()
            .map(|n| step.values.get(n).or_else(|| default_of(step, n)).cloned())
            .collect()
    }

    pub(super) fn check_required(&self, values: &Values) -> Result<(), Diagnostics> {
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
    pub(super) fn check_types(&self, values: &Values) -> Result<(), Diagnostics> {
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
    pub(super) fn render_pieces(
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
    pub(super) fn substitute(
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
    pub(super) fn require(
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
}

/// A value as a template prints it, as text.
pub(super) fn text_value(value: Option<&Value>) -> Option<Cow<'_, str>> {
    let value = value?;
    Some(match value.as_str() {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(value.to_string()),
    })
}

/// Would a fresh assembly that renders both parts stay within the template budget? A
/// margin of two fuel covers minijinja's rounding of fuel to whole units; near the edge
/// the parts are rendered again, which gives exactly the fresh outcome.
pub(super) fn fits_together(a: RenderCost, b: RenderCost) -> bool {
    a.0.saturating_add(b.0).saturating_add(2) < TEMPLATE_FUEL
        && a.1.saturating_add(b.1) <= TEMPLATE_OUTPUT_BYTES
}

pub(super) fn render_error(kind: &str, piece: &CompiledPiece, e: &TemplateError) -> Diagnostics {
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
