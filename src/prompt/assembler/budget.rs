//! Token budgets: `maxSystemTokens` and friends, measured with the tokenizer.

use super::PromptAssembler;
use crate::diagnostic::Span;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics};
use crate::prompt::layer::{TokenBudget, TokenLimit};
use crate::prompt::section::SectionName;
use crate::prompt::template::{TEMPLATE_FUEL, TEMPLATE_OUTPUT_BYTES, TemplateError};

impl PromptAssembler {
    /// The system prompt within `maxSystemTokens`? (A cached one was checked when it was
    /// rendered.)
    pub(super) fn check_system_tokens(&self, system: &str) -> Result<(), Diagnostics> {
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

    /// The runtime context within `maxContextTokens`? Checked on every render of it (a
    /// step whose facts changed), so a run never sends one over budget.
    pub(super) fn check_context_tokens(&self, context: &str) -> Result<(), Diagnostics> {
        let Some(limit) = &self.budget.max_context_tokens else {
            return Ok(());
        };
        match crate::tokens::count(context) {
            Ok(n) if n > limit.tokens as usize => {
                Err(
                    budget_exceeded("the runtime context takes", n, "maxContextTokens", limit)
                        .into(),
                )
            }
            Ok(_) => Ok(()),
            Err(e) => Err(tokenizer_failed(&e, limit).into()),
        }
    }

    /// The worst case of the runtime context over `runs` (each a set of values; `validate`
    /// gives one per approval policy and sandbox mode, with and without the optional
    /// variables): the first render over `maxContextTokens`, if any.
    pub fn check_context_budget<'a>(
        &self,
        runs: impl IntoIterator<Item = &'a crate::prompt::Values>,
    ) -> Option<Diagnostic> {
        let limit = self.budget.max_context_tokens.as_ref()?;
        let mut worst = 0usize;
        for values in runs {
            let Ok(pieces) = self.rendered_contexts(values) else {
                continue;
            };
            let text: Vec<&str> = pieces.iter().map(|p| p.text.as_str()).collect();
            match crate::tokens::count(&text.join("\n\n")) {
                Ok(n) => worst = worst.max(n),
                Err(e) => return Some(tokenizer_failed(&e, limit)),
            }
        }
        (worst > limit.tokens as usize).then(|| {
            budget_exceeded(
                "at worst, the runtime context takes",
                worst,
                "maxContextTokens",
                limit,
            )
        })
    }

    /// The token budgets in force (per key, the nearest layer's).
    pub fn token_budget(&self) -> &TokenBudget {
        &self.budget
    }
}

pub(super) fn budget_exceeded(
    what: &str,
    measured: usize,
    key: &str,
    limit: &TokenLimit,
) -> Diagnostic {
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
    .help(if key == "maxContextTokens" {
        format!(
            "shorten or `remove` contexts (or turn the runtime context off with `includeRuntimeContext: false`), or raise `{key}` to at least {measured}"
        )
    } else {
        format!(
            "shorten or `remove` sections, hide tools you do not need, or raise `{key}` to at least {measured}"
        )
    })
}

pub(super) fn tokenizer_failed(
    e: &crate::tokens::TokenizerError,
    limit: &TokenLimit,
) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::BudgetExceeded, e.to_string())
        .at(limit.span.clone())
        .help("this build's tokenizer data is broken; reinstall agent-presets")
}

pub(super) fn limit_exceeded(
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
        crate::prompt::template::TEMPLATE_RECURSION_LIMIT,
    ))
}
