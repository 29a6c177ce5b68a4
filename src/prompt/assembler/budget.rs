//! Token budgets: `maxSystemTokens` and friends, measured with the tokenizer.

use super::PromptAssembler;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics};
use crate::prompt::layer::{TokenBudget, TokenLimit};

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
    .help(format!(
        "shorten or `remove` sections, hide tools you do not need, or raise `{key}` to at least {measured}"
    ))
}

pub(super) fn tokenizer_failed(
    e: &crate::tokens::TokenizerError,
    limit: &TokenLimit,
) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::BudgetExceeded, e.to_string())
        .at(limit.span.clone())
        .help("this build's tokenizer data is broken; reinstall agent-presets")
}
