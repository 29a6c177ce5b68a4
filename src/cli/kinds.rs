//! One-line meanings of the diagnostic kinds, for SARIF rule descriptions (and the
//! README's table, which a test keeps in sync with [`DiagnosticKind::ALL`]).

use crate::diagnostic::DiagnosticKind;

/// What a diagnostic of `kind` means, in one sentence.
pub(crate) fn kind_meaning(kind: DiagnosticKind) -> &'static str {
    use DiagnosticKind as K;
    match kind {
        K::YamlSyntax => "The file is not well-formed YAML.",
        K::DuplicateKey => "A mapping repeats a key (reported at the second occurrence).",
        K::UnknownKey => "A key the preset format does not define.",
        K::WrongType => "A value of the wrong type, e.g. a list where text belongs.",
        K::MissingField => "A required key is absent.",
        K::UnsupportedVersion => "`version` is not a format version this build understands.",
        K::Encoding => "The file is not UTF-8 or holds a NUL byte.",
        K::LimitExceeded => {
            "A size, nesting, alias, extends-depth or template-fuel limit was exceeded."
        }
        K::Io => {
            "A file or directory could not be read, or the command could not run as asked (an unknown preset name, a bad argument)."
        }
        K::InvalidValue => {
            "A value outside its allowed set, e.g. `openai-compatible` without `baseUrl`."
        }
        K::InvalidName => "A preset, section, context, variable or tool name breaks its pattern.",
        K::NameMismatch => "A preset's `name` differs from its file name.",
        K::BuiltinShadow => "A custom preset takes the name of a built-in one.",
        K::DuplicatePreset => "Two preset files of one source (one directory) offer the same name.",
        K::MissingParent => "`extends` names a preset that does not exist (or is invalid).",
        K::ExtendsCycle => "`extends` leads back to a preset already in the chain.",
        K::DuplicateSection => "Two sections or contexts share a name in one preset.",
        K::NonFiniteOrder => "An `order` that is NaN or infinite.",
        K::MultipleComplete => "Two or more effective `complete: true` sections.",
        K::RemoveUnknown => "`remove` names neither an inherited section nor `tool:<known tool>`.",
        K::CompleteMayConflict => {
            "Two or more `complete` sections whose `when` conditions can hold together (warning)."
        }
        K::OverrideDropsPlaceholder => {
            "A section replacing an inherited one drops variables the original used (warning)."
        }
        K::TemplateSyntax => "A template or `when` expression does not compile.",
        K::UnknownVariable => "A template references a variable nobody declares.",
        K::MissingValue => "A known variable has no value when a template needs it.",
        K::TemplateRender => "A template failed while rendering.",
        K::VolatileInPrefix => {
            "A volatile variable (e.g. `date`) in the cacheable system prompt (warning)."
        }
        K::UnknownFilter => "A template applies a filter that does not exist.",
        K::UnknownTest => "A template performs a test (`is …`) that does not exist.",
        K::UnknownFunction => {
            "A template calls a function that is neither built in nor one of its macros, or `debug()`."
        }
        K::EmptyRestriction => "A tool restriction with nothing in it (`tools: {}`).",
        K::GlobNoMatch => "A tool glob that matches no known tool.",
        K::UnknownTool => "A tool name no registry knows.",
        K::BadToolOrder => {
            "A bad explicit tool order: `<rest>` missing or repeated, or a duplicate."
        }
        K::DuplicateTool => "Two tools registered under one name.",
        K::NoTools => "An allow list whose entries all name tools that end up hidden (warning).",
        K::MentionsHiddenTool => {
            "A section's rendered text names a known tool that is not visible (warning)."
        }
        K::LiteralSecret => "A value that looks like an API key or other secret.",
        K::BudgetExceeded => {
            "The system prompt or the tools take more tokens than the preset's `budget` allows."
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_sentence() {
        for kind in DiagnosticKind::ALL {
            let text = kind_meaning(*kind);
            assert!(text.ends_with('.') || text.ends_with(')'), "{kind}: {text}");
        }
    }
}
