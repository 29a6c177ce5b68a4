//! Validation = the full build: resolve `extends`, turn every preset of the chain into a
//! layer, compile every template, check every variable, tool, glob, order and provider
//! constraint, build the assembler, and render once with representative values. A preset
//! that validates renders.

use std::sync::{Arc, Mutex, Weak};

use super::catalog::{PresetCatalog, PresetEntry, TargetId};
use super::locale_pack::LocalePacks;
use super::provenance::admitting_rule;
use super::resolve::{Lookup, PresetChain, resolve_chain};
use super::source::ParsedPreset;
use super::spec::{ModelSpec, NamedMap, PresetFile, Provider, VariableEntry, is_valid_env_name};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Span};
use crate::endpoint::{
    EndpointError, ModelSettings, Transport, check_base_url, strict_tools_allowed,
};
use crate::prompt::{
    AssemblerBuilder, BUILTIN_VARIABLES, Layer, LayerTemplates, PromptAssembler, PromptContext,
    PromptSection, RemoveEntry, SectionOrigin, TokenBudget, TokenLimit, Values, VariableDecl,
};
use crate::provider::lint::{LintMemo, ToolRules, lint_tool};
use crate::provider::wire_tools;
use crate::tools::{OrderEntry, ToolCatalog, ToolPattern, ToolRestriction};

/// The outcome of validating one preset: every diagnostic, and the valid preset when
/// there was no error.
#[derive(Debug)]
pub struct Validation {
    /// Errors and warnings, in the order found.
    pub diagnostics: Vec<Diagnostic>,
    /// Present iff no diagnostic is an error.
    pub preset: Option<ValidPreset>,
}

impl Validation {
    /// No errors?
    pub fn is_valid(&self) -> bool {
        self.preset.is_some()
    }
}

/// A preset's run limits (`limits:`), each `None` when no preset of the chain sets it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunLimits {
    /// The most model requests of one run.
    pub max_steps: Option<u32>,
    /// The most tool calls of one answer that run.
    pub max_tool_calls: Option<u32>,
}

/// A preset that passed the full build. Only this can hand out an assembler.
#[derive(Debug)]
pub struct ValidPreset {
    chain: Vec<ParsedPreset>,
    assembler: PromptAssembler,
    /// The catalog it was validated against: the host's tools and the ones it brings.
    tools: Arc<ToolCatalog>,
}

impl ValidPreset {
    /// The preset's name.
    pub fn name(&self) -> &str {
        self.leaf().file.name.value.as_str()
    }

    /// The texts its model reads (locale pack and `texts:` over English).
    pub fn texts(&self) -> &Arc<crate::texts::Texts> {
        self.assembler.texts()
    }

    /// The preset's description.
    pub fn description(&self) -> Option<&str> {
        self.leaf().file.description.as_deref()
    }

    /// The resolved chain, root first, this preset last.
    pub fn chain(&self) -> &[ParsedPreset] {
        &self.chain
    }

    fn leaf(&self) -> &ParsedPreset {
        // A chain always holds at least the preset itself.
        &self.chain[self.chain.len() - 1]
    }

    /// Model defaults: the nearest preset in the chain that sets `model`.
    pub fn model(&self) -> Option<&ModelSpec> {
        self.chain.iter().rev().find_map(|p| p.file.model.as_ref())
    }

    /// The run limits the chain sets: each of `limits.maxSteps` and
    /// `limits.maxToolCalls` from the nearest preset that sets it (`None`: the default,
    /// or the flag `run` was given).
    pub fn limits(&self) -> RunLimits {
        let nearest = |pick: fn(&super::spec::LimitsSpec) -> Option<u32>| {
            self.chain
                .iter()
                .rev()
                .find_map(|p| p.file.limits.as_ref().and_then(pick))
        };
        RunLimits {
            max_steps: nearest(|l| l.max_steps.as_ref().map(|v| v.value)),
            max_tool_calls: nearest(|l| l.max_tool_calls.as_ref().map(|v| v.value)),
        }
    }

    /// The environment variables the chain's `passEnv` lists name (root first, each once):
    /// pass them to [`ToolContext::with_passed_env`](crate::tools::ToolContext::with_passed_env)
    /// so `bash` gives them to commands besides its base allowlist.
    pub fn pass_env(&self) -> Vec<&str> {
        super::chain_settings::pass_env_of(&self.chain_refs())
    }

    /// The chain as references, for [`super::chain_settings`].
    fn chain_refs(&self) -> Vec<&ParsedPreset> {
        self.chain.iter().collect()
    }

    /// The permission rules in force (`permissions:` along the chain, merged): what a run
    /// decides each tool call with. A rule that does not parse is an error `validate`
    /// reports, so a valid preset's rules all compile.
    pub fn policy(&self) -> crate::policy::Policy {
        super::permissions::policy_of(&self.chain_refs()).unwrap_or_default()
    }

    /// The hooks in force (`hooks:` along the chain; each event's lists append, root
    /// first): what a run starts at each event (`Agent::with_hooks`, feature `client`).
    pub fn hooks(&self) -> crate::hooks::Hooks {
        super::hooks::hooks_of(&self.chain_refs())
    }

    /// The success checks in force (`checks:` along the chain, root first): what a run
    /// runs after each final answer (`Agent::with_checks`, feature `client`).
    pub fn checks(&self) -> Vec<crate::checks::Check> {
        super::checks::checks_of(&self.chain_refs())
    }

    /// The output contract in force (`output:`, the nearest preset that sets it): the
    /// schema the final answer must satisfy and its retries. `None`: free text.
    pub fn output(&self) -> Option<super::output::OutputContract> {
        super::output::output_of(&self.chain_refs())
    }

    /// The sandbox commands run in: the nearest `sandbox` in the chain, else
    /// `workspace-write`.
    pub fn sandbox_mode(&self) -> crate::process::SandboxMode {
        super::chain_settings::sandbox_mode_of(&self.chain_refs())
    }

    /// The chain's `allowRead` paths (root first, each once), as written: resolve relative
    /// ones against the workspace ([`crate::process::SandboxProfile::with_allow_read`]).
    pub fn allow_read(&self) -> Vec<&str> {
        super::chain_settings::allow_read_of(&self.chain_refs())
    }

    /// A [`ToolContext`](crate::tools::ToolContext) rooted at `workspace` that runs this
    /// preset's tools as `run` does (without `--sandbox`): the environment variables it
    /// passes (`passEnv`) and the sandbox it declares ([`sandbox_mode`](Self::sandbox_mode),
    /// its `allowRead` resolved against the workspace), so commands run where the system
    /// prompt ([`default_values`](Self::default_values)' `sandbox`) says they do. No
    /// provider's key variable reaches a program
    /// ([`withheld_env`](super::chain_settings::withheld_env) of its `model` block's key);
    /// a host sending the key from another variable withholds that one with
    /// `.with_hidden_env(withheld_env(Some(name)))`.
    pub fn tool_context(
        &self,
        workspace: impl AsRef<std::path::Path>,
    ) -> Result<crate::tools::ToolContext, crate::tools::WorkspaceError> {
        use super::chain_settings::{api_key_env_of, withheld_env};
        let context = crate::tools::ToolContext::new(workspace)?;
        let sandbox = self.sandbox_profile(self.sandbox_mode(), context.workspace());
        let key = api_key_env_of(&self.chain_refs());
        Ok(context
            .with_passed_env(self.pass_env())
            .with_hidden_env(withheld_env(key.as_deref()))
            .with_sandbox(sandbox))
    }

    /// A sandbox of `mode` with this preset's `allowRead` resolved against `workspace`.
    pub fn sandbox_profile(
        &self,
        mode: crate::process::SandboxMode,
        workspace: &std::path::Path,
    ) -> crate::process::SandboxProfile {
        super::chain_settings::sandbox_profile_of(&self.chain_refs(), mode, workspace)
    }

    /// The values the preset itself supplies: `model` and `provider` from its nearest
    /// `model` block, and `sandbox` ([`sandbox_mode`](Self::sandbox_mode)). Add the runtime facts (`cwd`, `os`, `shell`, `date`, declared
    /// variables) before assembling.
    pub fn default_values(&self) -> Values {
        let mut values = Values::new();
        if let Some(model) = self.model() {
            values.set("model", model.name.value.clone());
            values.set("provider", model.provider.value.as_str());
        }
        values.set("sandbox", self.sandbox_mode().as_str());
        values
    }

    /// The catalog the preset was validated against: the host's tools, its command
    /// tools and its MCP servers' tools as the lock lists them.
    pub fn tool_catalog(&self) -> &ToolCatalog {
        &self.tools
    }

    /// The MCP servers the preset declares (along `extends`, the nearest declaration of
    /// each name), in declaration order.
    pub fn mcp_servers(&self) -> Vec<super::own_tools::DeclaredServer<'_>> {
        let chain: Vec<&ParsedPreset> = self.chain.iter().collect();
        super::own_tools::declared_servers(&chain)
    }

    /// The command tools the preset declares (along `extends`, the nearest declaration
    /// of each name), in declaration order.
    pub fn commands(&self) -> Vec<super::own_tools::DeclaredCommand<'_>> {
        let chain: Vec<&ParsedPreset> = self.chain.iter().collect();
        super::own_tools::declared_commands(&chain)
    }

    /// The assembler (prompt + visible tools).
    pub fn assembler(&self) -> &PromptAssembler {
        &self.assembler
    }

    /// Take the assembler.
    pub fn into_assembler(self) -> PromptAssembler {
        self.assembler
    }

    /// Warnings found while validating.
    pub fn warnings(&self) -> &[Diagnostic] {
        self.assembler.warnings()
    }
}

/// Validate the preset `name` of a catalog (and its `extends` chain) against the known
/// tools. A name nobody offers is a `missing-parent`-free error of its own: `io`.
pub fn validate_in_catalog(catalog: &PresetCatalog, name: &str, tools: &ToolCatalog) -> Validation {
    // The file's preset, or the pruned rest of a file refused for local shape problems.
    let validate = |leaf: &ParsedPreset| {
        validate_preset_with(
            leaf,
            |n| catalog.parsed(n).into(),
            || catalog.names().map(str::to_owned).collect(),
            tools,
            Some(catalog.lint_memo()),
            &|p| cached_layer(catalog.get(p.name()), p),
            (
                catalog.packs(),
                catalog.locale(),
                Some(&|p| is_own_file(catalog, p)),
            ),
        )
    };
    let leaf = match catalog.parsed(name) {
        Some(Ok(p)) => p,
        Some(Err(ds)) => return unparsed(ds, catalog.get(name), validate),
        None => {
            let names: Vec<&str> = catalog.names().collect();
            let help = crate::suggest::help_did_you_mean(name, names.iter().copied())
                .unwrap_or_else(|| format!("available presets: {}", names.join(", ")));
            return Validation {
                diagnostics: vec![
                    Diagnostic::new(
                        DiagnosticKind::MissingParent,
                        format!("no preset named `{name}`"),
                    )
                    .help(help),
                ],
                preset: None,
            };
        }
    };
    validate(leaf)
}

/// The validation of a preset file that does not parse: its problems, and, when it was
/// refused for local shape problems only, what the full build of the rest of it (`build`
/// of the pruned file, see `super::salvage`) finds besides, less what may depend on the
/// pruned parts. Never a preset: the file is invalid whatever the build says.
fn unparsed(
    problems: &Diagnostics,
    entry: Option<&PresetEntry>,
    build: impl FnOnce(&ParsedPreset) -> Validation,
) -> Validation {
    let diagnostics = match entry.and_then(PresetEntry::salvaged) {
        Some(salvaged) => {
            let later = build(&salvaged.preset).diagnostics;
            salvaged
                .scope
                .merge(&salvaged.preset.source.display, problems.as_slice(), later)
        }
        None => problems.iter().cloned().collect(),
    };
    Validation {
        diagnostics,
        preset: None,
    }
}

/// The locale packs on offer, the locale asked for (`--locale`), and which files are the
/// user's own (a project's pack does not re-word a chain of only those; `None`: no
/// catalog says, every pack applies).
type PackScope<'a> = (
    &'a LocalePacks,
    Option<&'a str>,
    Option<&'a dyn Fn(&ParsedPreset) -> bool>,
);

/// Is `preset` a file of the user's own: a built-in, the user directory's, a host's text?
fn is_own_file(catalog: &PresetCatalog, preset: &ParsedPreset) -> bool {
    use super::catalog::PresetSource;
    catalog.entry_of(preset).is_some_and(|e| {
        matches!(
            e.source(),
            PresetSource::Builtin | PresetSource::User | PresetSource::Inline
        )
    })
}

/// The layer of `preset` as its catalog entry keeps it (derived once however many chains
/// it is in), or derived now when `entry` is not where it came from.
fn cached_layer(entry: Option<&PresetEntry>, preset: &ParsedPreset) -> Arc<FileLayer> {
    entry
        .filter(|e| e.parsed().is_ok_and(|q| std::ptr::eq(q, preset)))
        .and_then(PresetEntry::file_layer)
        .unwrap_or_else(|| Arc::new(FileLayer::of(preset)))
}

/// Validate a preset named by its file (or read from standard input), see
/// [`PresetCatalog::add_file`]: its `extends` are looked up in its own directory first,
/// then in the catalog.
pub fn validate_target(catalog: &PresetCatalog, id: TargetId, tools: &ToolCatalog) -> Validation {
    let Some(entry) = catalog.target(id) else {
        return Validation {
            diagnostics: vec![Diagnostic::new(
                DiagnosticKind::Io,
                "no such target in this catalog",
            )],
            preset: None,
        };
    };
    // The file's preset, or the pruned rest of a file refused for local shape problems
    // (never the entry's own parse: its layer is derived afresh by `cached_layer`).
    let validate = |leaf: &ParsedPreset| {
        validate_preset_with(
            leaf,
            |n| catalog.lookup_for_target(id, n).map(|e| e.parsed()).into(),
            || catalog.names().map(str::to_owned).collect(),
            tools,
            Some(catalog.lint_memo()),
            &|p| {
                let own = Some(entry).filter(|e| e.parsed().is_ok_and(|q| std::ptr::eq(q, p)));
                cached_layer(own.or_else(|| catalog.lookup_for_target(id, p.name())), p)
            },
            (
                catalog.packs(),
                catalog.locale(),
                Some(&|p| is_own_file(catalog, p)),
            ),
        )
    };
    match entry.parsed() {
        Ok(leaf) => validate(leaf),
        Err(ds) => unparsed(ds, Some(entry), validate),
    }
}

/// Validate `leaf` and its chain against the known tools.
pub fn validate_preset<'a, L, N>(
    leaf: &'a ParsedPreset,
    lookup: L,
    names: N,
    tools: &ToolCatalog,
) -> Validation
where
    L: Fn(&str) -> Lookup<'a>,
    N: Fn() -> Vec<String>,
{
    validate_preset_with(
        leaf,
        lookup,
        names,
        tools,
        None,
        &|p| Arc::new(FileLayer::of(p)),
        (&LocalePacks::builtin(), None, None),
    )
}

/// [`validate_preset`], with each file's layer from `layer_of`.
fn validate_preset_with<'a, L, N>(
    leaf: &'a ParsedPreset,
    lookup: L,
    names: N,
    tools: &ToolCatalog,
    memo: Option<&LintMemo>,
    layer_of: &dyn Fn(&ParsedPreset) -> Arc<FileLayer>,
    locale: PackScope<'_>,
) -> Validation
where
    L: Fn(&str) -> Lookup<'a>,
    N: Fn() -> Vec<String>,
{
    let chain = match resolve_chain(leaf, lookup, names) {
        Ok(c) => c,
        Err(ds) => {
            let mut diagnostics = ds.into_vec();
            // Report the leaf's own problems too, so one run shows everything.
            diagnostics.extend(layer_of(leaf).diagnostics.iter().cloned());
            return Validation {
                diagnostics,
                preset: None,
            };
        }
    };
    validate_chain_with(&chain, tools, memo, layer_of, locale)
}

/// Validate an already resolved chain.
pub fn validate_chain(chain: &PresetChain<'_>, tools: &ToolCatalog) -> Validation {
    validate_chain_with(
        chain,
        tools,
        None,
        &|p| Arc::new(FileLayer::of(p)),
        (&LocalePacks::builtin(), None, None),
    )
}

/// What one preset file contributes to every chain it is in: its layer, and the
/// problems of the file itself (found once, reported with each chain).
#[derive(Debug)]
pub(crate) struct FileLayer {
    layer: Arc<Layer>,
    diagnostics: Vec<Diagnostic>,
    /// Other presets of the batch extend this file: its templates are compiled into
    /// the shared cache also when the file is the preset validated (its children, next in
    /// the batch's family order, find them there instead of compiling them again).
    extended: bool,
}

impl FileLayer {
    /// Derive the layer of `preset` (secret scan included).
    pub(crate) fn of(preset: &ParsedPreset) -> FileLayer {
        let mut diagnostics = Vec::new();
        let layer = Arc::new(layer_from_preset(preset, &mut diagnostics));
        FileLayer {
            layer,
            diagnostics,
            extended: false,
        }
    }

    /// [`FileLayer::of`], for a file other presets of the batch extend.
    pub(crate) fn extended(mut self, extended: bool) -> FileLayer {
        self.extended = extended;
        self
    }
}

/// The compiled templates of the files chains extend, kept for the files used most
/// recently: a file that many presets extend (the root of a family of presets) is
/// compiled once while they are validated, and memory stays bounded however many files
/// there are. Keeping every extended file's templates for the whole run cost 20 MiB
/// on 1,000 generated presets; most of the saving is in the few files many presets
/// extend, which a recency cache keeps.
struct TemplateCache {
    /// The file (weak: a dropped catalog's files are forgotten, and the allocation a
    /// `Weak` keeps cannot be reused by another file while the entry exists), its
    /// templates, and when it was last used.
    entries: Vec<(Weak<FileLayer>, Arc<LayerTemplates>, u64)>,
    clock: u64,
}

impl TemplateCache {
    /// How many files' templates are kept (~40 KB each on the generated workload).
    const CAPACITY: usize = 64;
}

/// The templates of `file`'s layer, compiled once while it stays in the cache.
fn layer_templates(file: &Arc<FileLayer>) -> Arc<LayerTemplates> {
    static CACHE: Mutex<TemplateCache> = Mutex::new(TemplateCache {
        entries: Vec::new(),
        clock: 0,
    });
    let key = Arc::downgrade(file);
    if let Ok(mut cache) = CACHE.lock() {
        cache.entries.retain(|(w, ..)| w.strong_count() > 0);
        cache.clock += 1;
        let now = cache.clock;
        if let Some(entry) = cache.entries.iter_mut().find(|(w, ..)| w.ptr_eq(&key)) {
            entry.2 = now;
            return Arc::clone(&entry.1);
        }
    }
    let compiled = Arc::new(LayerTemplates::of(&file.layer));
    if let Ok(mut cache) = CACHE.lock() {
        // Another thread may have compiled it meanwhile: keep one.
        if let Some(entry) = cache.entries.iter().find(|(w, ..)| w.ptr_eq(&key)) {
            return Arc::clone(&entry.1);
        }
        if cache.entries.len() >= TemplateCache::CAPACITY
            && let Some(oldest) = (0..cache.entries.len()).min_by_key(|&i| cache.entries[i].2)
        {
            cache.entries.swap_remove(oldest);
        }
        let now = cache.clock;
        cache.entries.push((key, Arc::clone(&compiled), now));
    }
    compiled
}

fn validate_chain_with(
    chain: &PresetChain<'_>,
    tools: &ToolCatalog,
    memo: Option<&LintMemo>,
    layer_of: &dyn Fn(&ParsedPreset) -> Arc<FileLayer>,
    (packs, locale, own_file): PackScope<'_>,
) -> Validation {
    let mut diagnostics = Vec::new();
    let presets = chain.presets();
    // The host's tools plus the ones this preset brings (commands, locked MCP tools).
    let own_catalog = super::own_tools::preset_catalog(presets, tools, &mut diagnostics);
    let tools: &ToolCatalog = &own_catalog;
    // The texts the model reads: the locale pack and `texts:`, over English.
    let chain_texts = super::texts::resolve(presets, packs, locale, own_file);
    diagnostics.extend(chain_texts.diagnostics.iter().cloned());
    let replaced_tools;
    let tools = if chain_texts.replaces_tools() {
        replaced_tools = tools.with_texts(
            |name| chain_texts.tool_texts(name),
            |name, path| chain_texts.param_text(name, path),
        );
        &replaced_tools
    } else {
        tools
    };
    let mut builder = AssemblerBuilder::new(tools).texts(Arc::clone(&chain_texts.texts));
    for (i, preset) in presets.iter().enumerate() {
        let file = layer_of(preset);
        diagnostics.extend(file.diagnostics.iter().cloned());
        // A built-in preset whose sections a locale pack or `texts:` replaces.
        if let Some(patched) = chain_texts.patch_layer(preset, &file.layer) {
            builder = builder.layer(patched);
            continue;
        }
        let layer = Arc::clone(&file.layer);
        // A file other presets extend is compiled once for all of them; the preset being
        // validated compiles its own file here (most files are extended by none), unless
        // the batch said that others extend it.
        builder = if i + 1 < presets.len() || file.extended {
            builder.compiled_layer(layer, layer_templates(&file))
        } else {
            builder.shared_layer(layer)
        };
    }
    let assembler = match builder.build() {
        Ok(a) => Some(a),
        Err(ds) => {
            diagnostics.extend(ds);
            None
        }
    };
    if let Some(a) = &assembler {
        diagnostics.extend(check_provider(chain, a, memo));
        diagnostics.extend(a.warnings().iter().cloned());
        if let Some(leaf) = presets.last() {
            diagnostics.extend(declared_but_hidden(leaf, tools, a));
            diagnostics.extend(replaced_own_tools(presets));
            diagnostics.extend(unknown_server_tools(leaf, tools));
        }
        let visible: std::collections::BTreeSet<&str> =
            a.registry().names().map(|n| n.as_str()).collect();
        diagnostics.extend(super::permissions::check(presets, tools, &visible));
        diagnostics.extend(super::hooks::check(presets, tools, &visible));
        diagnostics.extend(super::checks::check(presets));
        if !diagnostics
            .iter()
            .any(|d| d.kind == DiagnosticKind::InvalidOutputSchema)
        {
            super::output::check_dialects(presets, &mut diagnostics);
        }
        let unguarded = a.unguarded_optional_uses();
        let statically_missing = !unguarded.is_empty();
        diagnostics.extend(unguarded);
        // Render once without the optional variables and once with them, so both sides
        // of their guards are exercised.
        let without = representative_values(a);
        let mut with = without.clone();
        for name in a.optional_variables() {
            // A value of its type (and one of its `enum` values, if any).
            let value = match a.declaration(name) {
                Some(decl) => decl.representative_value(),
                None => format!("<{name}>").into(),
            };
            with.set(name, value);
        }
        let runs = if with == without {
            vec![without]
        } else {
            vec![without, with]
        };
        // Rendered text that names a tool the model cannot see. A value that happens to be
        // a tool's name (`shell` is `bash`) is the caller's, not the preset's wording.
        let mut neutral = runs[0].clone();
        let names: Vec<(String, String)> = neutral
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|t| (k.to_owned(), t.to_owned())))
            .collect();
        for (name, text) in names {
            if tools.get(&text).is_some() {
                neutral.set(name.clone(), format!("<{name}>"));
            }
        }
        // The first render check and the mentions share the sections they both render.
        let (first, mentions) = a.check_renders_and_mentions(&runs[0], &neutral);
        diagnostics.extend(mentions);
        // The runtime context's worst case: every approval policy and sandbox mode the
        // run may set, with and without the optional variables (only under a
        // `maxContextTokens`: without one there is nothing to measure).
        let worst_context = if a.token_budget().max_context_tokens.is_some() {
            let mut facts = Vec::new();
            for v in &runs {
                for approval in ["ask", "yes", "refuse"] {
                    for sandbox in ["read-only", "workspace-write", "full-access"] {
                        facts.push(
                            v.clone()
                                .with("approval", approval)
                                .with("sandbox", sandbox),
                        );
                    }
                }
            }
            a.check_context_budget(&facts)
        } else {
            None
        };
        let results = std::iter::once(first).chain(runs[1..].iter().map(|v| a.check_renders(v)));
        for result in results {
            // The fingerprint is not part of what `validate` checks: skip it.
            if let Err(ds) = result {
                diagnostics.extend(
                    ds.into_iter()
                        .filter(|d| !(statically_missing && d.kind == DiagnosticKind::MissingValue))
                        .map(explain_validate_render),
                );
                break;
            }
        }
        // Said once, for the worst case: the render check above may have met the same
        // budget with its own values.
        if let Some(d) = worst_context {
            diagnostics.retain(|x| {
                !(x.kind == DiagnosticKind::BudgetExceeded
                    && x.message.contains("maxContextTokens"))
            });
            diagnostics.push(d);
        }
    }
    let has_error = diagnostics.iter().any(Diagnostic::is_error);
    let preset = match assembler {
        Some(assembler) if !has_error => Some(ValidPreset {
            chain: chain.presets().iter().map(|p| (*p).clone()).collect(),
            assembler,
            tools: Arc::new(own_catalog.into_owned()),
        }),
        _ => None,
    };
    Validation {
        diagnostics,
        preset,
    }
}

/// `declared-tool-hidden`: a command tool or an MCP server `leaf` itself declares (not one
/// it inherits: hiding a parent's tool is narrowing) none of whose tools the assembled
/// preset shows. A server whose tools are not locked (or that lists none) is left alone.
fn declared_but_hidden(
    leaf: &ParsedPreset,
    tools: &ToolCatalog,
    assembler: &PromptAssembler,
) -> Vec<Diagnostic> {
    use crate::tools::external::ToolOrigin;
    let visible: std::collections::BTreeSet<&str> =
        assembler.registry().names().map(|n| n.as_str()).collect();
    let help = "restrictions along `extends` intersect: extend a preset that allows it (e.g. `standard` instead of `minimal`), or add it to the `allow` (and take it out of the `deny`) that hides it; if the preset does not need it, remove the declaration";
    let mut out = Vec::new();
    for (name, _) in leaf.file.commands.iter().flat_map(NamedMap::iter) {
        let n = name.value.as_str();
        let is_command = tools
            .get(n)
            .is_some_and(|d| matches!(d.origin(), ToolOrigin::Command { .. }));
        if is_command && !visible.contains(n) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::DeclaredToolHidden,
                    format!(
                        "command tool `{n}` is declared but hidden in `{}`: the model never sees it",
                        leaf.name()
                    ),
                )
                .at(leaf.span_of(name))
                .help(help),
            );
        }
    }
    for (name, _) in leaf.file.mcp_servers.iter().flat_map(NamedMap::iter) {
        let s = name.value.as_str();
        let of_server: Vec<&str> = tools
            .names()
            .filter(|t| {
                tools.get(t).is_some_and(
                    |d| matches!(d.origin(), ToolOrigin::Mcp { server, .. } if server == s),
                )
            })
            .collect();
        if of_server.is_empty() || of_server.iter().any(|t| visible.contains(t)) {
            continue;
        }
        out.push(
            Diagnostic::new(
                DiagnosticKind::DeclaredToolHidden,
                format!(
                    "MCP server `{s}` is declared but hidden in `{}`: none of its tools ({}) is visible",
                    leaf.name(),
                    crate::suggest::list_names(of_server.iter().copied())
                ),
            )
            .at(leaf.span_of(name))
            .help(help),
        );
    }
    out
}

/// `own-tool-replaced`: a command tool or MCP server of the leaf that takes the place of
/// one an ancestor declares under its name, without `override: true`.
fn replaced_own_tools(presets: &[&ParsedPreset]) -> Vec<Diagnostic> {
    let Some((leaf, ancestors)) = presets.split_last() else {
        return Vec::new();
    };
    let inherited = |kind: &str, name: &str| {
        ancestors.iter().rev().find_map(|p| {
            let declared = match kind {
                "command tool" => p
                    .file
                    .commands
                    .iter()
                    .flat_map(NamedMap::iter)
                    .find(|(n, _)| n.value == name)
                    .map(|(n, _)| n),
                _ => p
                    .file
                    .mcp_servers
                    .iter()
                    .flat_map(NamedMap::iter)
                    .find(|(n, _)| n.value == name)
                    .map(|(n, _)| n),
            }?;
            Some((p, declared))
        })
    };
    let own = leaf
        .file
        .commands
        .iter()
        .flat_map(NamedMap::iter)
        .map(|(n, c)| ("command tool", n, c.overrides.as_ref()))
        .chain(
            leaf.file
                .mcp_servers
                .iter()
                .flat_map(NamedMap::iter)
                .map(|(n, s)| ("MCP server", n, s.overrides.as_ref())),
        );
    let mut out = Vec::new();
    for (kind, name, marked) in own {
        if marked.is_some_and(|m| m.value) {
            continue;
        }
        let Some((parent, at)) = inherited(kind, &name.value) else {
            continue;
        };
        let span = parent.span_of(at);
        out.push(
            Diagnostic::new(
                DiagnosticKind::OwnToolReplaced,
                format!(
                    "{kind} `{}` replaces the one `{}` declares ({}:{}) without `override: true`",
                    name.value,
                    parent.name(),
                    parent.source.display,
                    span.line
                ),
            )
            .at(leaf.span_of(name))
            .help("if replacing it is intended, add `override: true` to this entry; to keep both, give yours another name"),
        );
    }
    out
}

/// `unknown-server-tool`: a key under a leaf server's `tools:` that names none of the
/// tools the lock lists for it (a server with no locked tools is not checked).
fn unknown_server_tools(leaf: &ParsedPreset, tools: &ToolCatalog) -> Vec<Diagnostic> {
    use crate::tools::external::ToolOrigin;
    let mut out = Vec::new();
    for (server, spec) in leaf.file.mcp_servers.iter().flat_map(NamedMap::iter) {
        let Some(per_tool) = &spec.tools else {
            continue;
        };
        let offered: Vec<&str> = tools
            .names()
            .filter_map(|t| match tools.get(t).map(|d| d.origin()) {
                Some(ToolOrigin::Mcp { server: s, tool }) if *s == server.value => {
                    Some(tool.as_str())
                }
                _ => None,
            })
            .collect();
        if offered.is_empty() {
            continue;
        }
        for (key, _) in per_tool.iter() {
            if offered.contains(&key.value.as_str()) {
                continue;
            }
            let help = crate::suggest::help_did_you_mean(&key.value, offered.iter().copied())
                .unwrap_or_else(|| {
                    format!(
                        "the server's tools are {}; spell the key as the server names the tool, or remove it",
                        crate::suggest::list_names(offered.iter().copied())
                    )
                });
            out.push(
                Diagnostic::new(
                    DiagnosticKind::UnknownServerTool,
                    format!(
                        "MCP server `{}` has no tool `{}`: these settings apply to nothing",
                        server.value, key.value
                    ),
                )
                .at(leaf.span_of(key))
                .help(help),
            );
        }
    }
    out
}

/// Provider lint of exactly the tools `run` would send: the visible tools in the schema
/// dialect of the nearest `model` block's endpoint, or, without one, the portable schemas
/// against the rules every provider applies. Each problem points at the `allow` entry
/// that made the tool visible (the nearest one), else at the provider, else at the
/// preset's name.
fn check_provider(
    chain: &PresetChain<'_>,
    assembler: &PromptAssembler,
    memo: Option<&LintMemo>,
) -> Vec<Diagnostic> {
    let model = chain
        .presets()
        .iter()
        .rev()
        .find_map(|p| p.file.model.as_ref().map(|m| (*p, m)));
    let registry = assembler.registry();
    let (rules, tools) = match model {
        Some((_, spec)) => {
            let settings = ModelSettings::from_spec(spec);
            (
                ToolRules::for_settings(&settings),
                wire_tools(&settings, registry),
            )
        }
        None => (ToolRules::any_provider(), registry.schemas()),
    };
    let mut out = Vec::new();
    for tool in &tools {
        let problems = match memo {
            Some(memo) => memo.lint(&rules, tool),
            None => lint_tool(&rules, tool),
        };
        if problems.is_empty() {
            continue;
        }
        let admitted_by =
            admitting_rule(chain.presets(), &tool.name).map(|(p, entry)| p.span_of(entry));
        let span = admitted_by
            .or_else(|| model.map(|(p, spec)| p.span_of(&spec.provider)))
            .or_else(|| {
                chain
                    .presets()
                    .last()
                    .map(|leaf| leaf.span_of(&leaf.file.name))
            });
        out.extend(problems.into_iter().map(|d| d.at(span.clone())));
    }
    out
}

/// Built-in variables get example values; declared variables their defaults, or a
/// placeholder when `required` (callers must pass them, so validation cannot know them).
/// Which declaration applies is the assembler's business (the nearest one wins).
pub(crate) fn representative_values(assembler: &PromptAssembler) -> Values {
    let mut values = Values::new();
    for b in BUILTIN_VARIABLES {
        if !crate::prompt::is_derived_variable(b.name) {
            values.set(b.name, b.example);
        }
    }
    for name in assembler.required_variables() {
        let value = match assembler.declaration(name) {
            Some(decl) => decl.representative_value(),
            None => format!("<{name}>").into(),
        };
        values.set(name, value);
    }
    values
}

fn explain_validate_render(d: Diagnostic) -> Diagnostic {
    if d.kind == DiagnosticKind::MissingValue {
        d.help("give the variable a `default`, or mark it `required: true` so every caller must pass `--var`")
    } else {
        d
    }
}

/// Turn one preset file into a layer, reporting what the file itself gets wrong.
fn layer_from_preset(preset: &ParsedPreset, out: &mut Vec<Diagnostic>) -> Layer {
    let file: &PresetFile = &preset.file;
    let display = &preset.source.display;
    let source: &str = &preset.source.text;
    let mut layer = Layer::new(file.name.value.clone());

    check_secrets(display, source, out);
    for text_file in preset.text_files() {
        check_secrets(&text_file.display, &text_file.text, out);
    }
    if let Some(model) = &file.model {
        check_model(preset, model, out);
    }
    check_pass_env(preset, out);
    check_allow_read(preset, out);
    super::own_tools::check_file(preset, out);
    super::output::check_file(preset, out);

    if let Some(persona) = &file.persona {
        if let Some(flag) = &persona.include_runtime_context {
            layer.include_runtime_context = Some(flag.value);
            layer.include_runtime_context_span = Some(preset.span_of(flag));
        }
        for s in persona.sections.iter().flatten() {
            let name_span = preset.span_of(&s.name);
            let section = PromptSection::new(&s.name.value, s.order.value, s.text.value.clone());
            let section = match section {
                Ok(sec) => sec,
                Err(d) => {
                    let span = if d.kind == DiagnosticKind::NonFiniteOrder {
                        preset.span_of(&s.order)
                    } else {
                        name_span
                    };
                    out.push(d.at(span));
                    continue;
                }
            };
            let mut section = section
                .complete(s.complete.unwrap_or(false))
                .template(s.template.unwrap_or(true))
                .overrides(s.overrides.unwrap_or(false))
                .with_origin(SectionOrigin {
                    name: Some(name_span),
                    text: Some(preset.text_origin(&s.text)),
                    when: s.when.as_ref().map(|w| preset.text_origin(w)),
                });
            if let Some(w) = &s.when {
                let expression = match braced_expression(&w.value) {
                    Some(inner) => {
                        out.push(when_with_braces(preset, w, inner));
                        // Go on with the expression inside, so its own problems show too.
                        inner.to_owned()
                    }
                    None => w.value.clone(),
                };
                section = section.when(expression);
            }
            layer.sections.push(section);
        }
        for r in persona.remove.iter().flatten() {
            layer.remove.push(RemoveEntry {
                name: r.value.clone(),
                span: Some(preset.span_of(r)),
            });
        }
    }

    for c in file.contexts.iter().flatten() {
        let name_span = preset.span_of(&c.name);
        match PromptContext::new(&c.name.value, c.order.value, c.text.value.clone()) {
            Ok(ctx) => layer.contexts.push(
                ctx.template(c.template.unwrap_or(true))
                    .overrides(c.overrides.unwrap_or(false))
                    .with_origin(SectionOrigin {
                        name: Some(name_span),
                        text: Some(preset.text_origin(&c.text)),
                        when: None,
                    }),
            ),
            Err(d) => {
                let span = if d.kind == DiagnosticKind::NonFiniteOrder {
                    preset.span_of(&c.order)
                } else {
                    name_span
                };
                out.push(d.at(span));
            }
        }
    }

    for entry in file.variables.iter().flat_map(|v| v.iter()) {
        let span = preset.span_of(&entry.name);
        match VariableDecl::new(&entry.name.value, entry.spec.description.clone()) {
            Ok(mut decl) => {
                decl.value_type = entry.spec.value_type.as_ref().map(|t| t.value);
                decl.choices = typed_choices(preset, &decl, entry, out);
                decl.default = typed_default(preset, &decl, entry, out);
                decl.required = entry.spec.required.unwrap_or(false);
                decl.volatile = entry.spec.volatile.unwrap_or(false);
                decl.span = Some(span);
                layer.variables.push(decl);
            }
            Err(d) => out.push(d.at(span)),
        }
    }

    if let Some(budget) = &file.budget {
        let limit = |v: &Option<super::spec::Spanned<u32>>| {
            v.as_ref().map(|l| TokenLimit {
                tokens: l.value,
                span: Some(preset.span_of(l)),
            })
        };
        layer.budget = TokenBudget {
            max_system_tokens: limit(&budget.max_system_tokens),
            max_tool_tokens: limit(&budget.max_tool_tokens),
            max_context_tokens: limit(&budget.max_context_tokens),
        };
    }

    if let Some(tools) = &file.tools {
        let mut restriction = ToolRestriction {
            span: Some(preset.span_of(tools)),
            ..ToolRestriction::default()
        };
        let spec = &tools.value;
        let mut patterns = |list: &[super::spec::Spanned<String>]| -> Vec<ToolPattern> {
            list.iter()
                .filter_map(|p| {
                    ToolPattern::new(&p.value, Some(preset.span_of(p)))
                        .map_err(|d| out.push(d))
                        .ok()
                })
                .collect()
        };
        restriction.allow = spec.allow.as_deref().map(&mut patterns);
        restriction.deny = spec.deny.as_deref().map(&mut patterns).unwrap_or_default();
        restriction.order = spec.order.as_ref().map(|list| {
            list.iter()
                .map(|e| OrderEntry {
                    name: e.value.clone(),
                    span: Some(preset.span_of(e)),
                })
                .collect()
        });
        layer.tools = Some(restriction);
    }
    layer
}

/// `{{ os == 'linux' }}` → `os == 'linux'`: a `when` written as a template output.
fn braced_expression(when: &str) -> Option<&str> {
    let inner = when.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    let inner = inner.strip_prefix('-').unwrap_or(inner);
    let inner = inner.strip_suffix('-').unwrap_or(inner);
    (!inner.contains("{{") && !inner.contains("}}")).then(|| inner.trim())
}

fn when_with_braces(
    preset: &ParsedPreset,
    when: &super::spec::Spanned<String>,
    inner: &str,
) -> Diagnostic {
    let quoted = if inner.contains('"') {
        format!("'{}'", inner.replace('\'', "''"))
    } else {
        format!("\"{inner}\"")
    };
    Diagnostic::new(
        DiagnosticKind::TemplateSyntax,
        "`when` is an expression: write it without `{{ }}`",
    )
    .at(preset.span_of(when))
    .help(format!("write `when: {quoted}`"))
}

/// The `enum` values of a variable, typed. An empty `enum` allows nothing, and a value
/// listed twice is a slip: both are `invalid-value`. (The shape check has made sure each
/// value is written as a value of the type.)
fn typed_choices(
    preset: &ParsedPreset,
    decl: &VariableDecl,
    entry: &VariableEntry,
    out: &mut Vec<Diagnostic>,
) -> Vec<minijinja::Value> {
    let Some(list) = &entry.spec.choices else {
        return Vec::new();
    };
    let name = &entry.name.value;
    if list.is_empty() {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!("`enum` of variable `{name}` lists no values, so no value is allowed"),
            )
            .at(preset.span_of(&entry.name))
            .help("list the allowed values (`enum: [a, b]`), or remove `enum`"),
        );
        return Vec::new();
    }
    let value_type = decl.effective_type();
    let mut choices: Vec<minijinja::Value> = Vec::with_capacity(list.len());
    for item in list {
        let Some(value) = value_type.parse(&item.value) else {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::WrongType,
                    format!(
                        "`enum` value `{}` of variable `{name}` is not {}",
                        item.value,
                        value_type.describe()
                    ),
                )
                .at(preset.span_of(item)),
            );
            continue;
        };
        if choices
            .iter()
            .any(|c| c.kind() == value.kind() && *c == value)
        {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidValue,
                    format!("`{}` is listed twice in the `enum` of `{name}`", item.value),
                )
                .at(preset.span_of(item))
                .help("list each allowed value once"),
            );
            continue;
        }
        choices.push(value);
    }
    choices
}

/// The `default` of a variable, typed and checked against its `enum`.
fn typed_default(
    preset: &ParsedPreset,
    decl: &VariableDecl,
    entry: &VariableEntry,
    out: &mut Vec<Diagnostic>,
) -> Option<minijinja::Value> {
    let default = entry.spec.default.as_ref()?;
    match decl.parse_value(&default.value) {
        Ok(value) => Some(value),
        Err(d) => {
            let message = if decl.effective_type().parse(&default.value).is_some() {
                format!(
                    "the default `{}` of variable `{}` is not one of its `enum` values",
                    default.value, entry.name.value
                )
            } else {
                format!(
                    "the default `{}` of variable `{}` is not {}",
                    default.value,
                    entry.name.value,
                    decl.effective_type().describe()
                )
            };
            let kind = d.kind;
            out.push(
                Diagnostic::new(kind, message)
                    .at(preset.span_of(default))
                    .maybe_help(d.help),
            );
            None
        }
    }
}

/// The most `stop` sequences the OpenAI dialect accepts.
const MAX_OPENAI_STOP: usize = 4;

/// The smallest thinking budget Anthropic accepts.
const MIN_THINKING_BUDGET: u32 = 1024;

/// The sampling and reasoning parameters of a `model` block against its provider's
/// published request schema: each value in range, and no parameter the provider (or the
/// combination) refuses.
fn check_model_params(preset: &ParsedPreset, model: &ModelSpec, out: &mut Vec<Diagnostic>) {
    let provider = model.provider.value;
    let anthropic = provider == Provider::Anthropic;
    let who = provider.as_str();
    let range = |span: Span, message: String, help: String| {
        Diagnostic::new(DiagnosticKind::ModelParameterRange, message)
            .at(span)
            .help(help)
    };
    let refused = |span: Span, message: String, help: &str| {
        Diagnostic::new(DiagnosticKind::ModelParameterRefused, message)
            .at(span)
            .help(help)
    };
    let thinking = model.thinking_budget.as_ref();
    if let Some(t) = &model.temperature {
        let max = if anthropic { 1.0 } else { 2.0 };
        if !(t.value.is_finite() && (0.0..=max).contains(&t.value)) {
            out.push(range(
                preset.span_of(t),
                format!(
                    "`temperature: {}` is out of range: {who} takes 0 to {max}",
                    t.value
                ),
                format!(
                    "set a value from 0 (focused) to {max}, or drop it for the provider's default"
                ),
            ));
        } else if anthropic && thinking.is_some() {
            out.push(refused(
                preset.span_of(t),
                "anthropic refuses `temperature` with extended thinking (`thinkingBudget`)".into(),
                "drop `temperature`, or drop `thinkingBudget`",
            ));
        }
    }
    if let Some(p) = &model.top_p {
        if !(p.value.is_finite() && (0.0..=1.0).contains(&p.value)) {
            out.push(range(
                preset.span_of(p),
                format!("`topP: {}` is out of range: {who} takes 0 to 1", p.value),
                "set a probability mass from 0 to 1 (e.g. `topP: 0.9`), or drop it".into(),
            ));
        } else if anthropic && thinking.is_some() && p.value < 0.95 {
            out.push(refused(
                preset.span_of(p),
                format!(
                    "anthropic refuses `topP: {}` with extended thinking (`thinkingBudget`): it must be at least 0.95",
                    p.value
                ),
                "raise `topP` to 0.95 or more, drop it, or drop `thinkingBudget`",
            ));
        }
    }
    if let Some(seed) = &model.seed
        && anthropic
    {
        out.push(refused(
            preset.span_of(seed),
            "anthropic has no `seed` parameter".into(),
            "drop `seed`: it is sent only on the OpenAI dialect (openai, deepseek, openai-compatible)",
        ));
    }
    if let Some(stop) = &model.stop {
        if !anthropic && stop.value.len() > MAX_OPENAI_STOP {
            out.push(range(
                preset.span_of(stop),
                format!(
                    "`stop` lists {} sequences: {who} takes at most {MAX_OPENAI_STOP}",
                    stop.value.len()
                ),
                format!("keep the {MAX_OPENAI_STOP} that matter most"),
            ));
        }
        for item in &stop.value {
            if item.value.trim().is_empty() {
                out.push(range(
                    preset.span_of(item),
                    "a `stop` sequence is empty or only whitespace, which providers refuse".into(),
                    "remove it, or write the text that should end the answer".into(),
                ));
            }
        }
    }
    if let Some(effort) = &model.reasoning_effort {
        use crate::endpoint::ReasoningEffort as E;
        if provider == Provider::Deepseek {
            out.push(refused(
                preset.span_of(effort),
                "deepseek has no `reasoningEffort` parameter".into(),
                "drop `reasoningEffort`; pick DeepSeek's reasoning by the model `name`",
            ));
        } else if anthropic && matches!(effort.value, E::None | E::Minimal) {
            out.push(refused(
                preset.span_of(effort),
                format!(
                    "anthropic refuses `reasoningEffort: {}`: it takes low, medium, high, xhigh or max",
                    effort.value.as_str()
                ),
                "use `low` for the least effort",
            ));
        }
    }
    if let Some(budget) = thinking {
        if !anthropic {
            out.push(refused(
                preset.span_of(budget),
                format!("`thinkingBudget` is Anthropic's extended thinking; {who} has none"),
                "use `reasoningEffort` on the OpenAI dialect (openai, openai-compatible), or drop it",
            ));
        } else {
            let max_tokens = model
                .max_tokens
                .as_ref()
                .map_or(crate::endpoint::ANTHROPIC_DEFAULT_MAX_TOKENS, |m| m.value);
            if budget.value < MIN_THINKING_BUDGET || budget.value >= max_tokens {
                out.push(range(
                    preset.span_of(budget),
                    format!(
                        "`thinkingBudget: {}` is out of range: anthropic takes at least {MIN_THINKING_BUDGET} and less than `maxTokens` ({max_tokens})",
                        budget.value
                    ),
                    if budget.value >= max_tokens {
                        format!("raise `maxTokens` above {}, or lower the budget", budget.value)
                    } else {
                        format!("set at least `thinkingBudget: {MIN_THINKING_BUDGET}`")
                    },
                ));
            }
        }
    }
}

fn check_model(preset: &ParsedPreset, model: &ModelSpec, out: &mut Vec<Diagnostic>) {
    if model.provider.value == Provider::OpenaiCompatible && model.base_url.is_none() {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidValue,
                "provider `openai-compatible` needs `baseUrl`",
            )
            .at(preset.span_of(&model.provider))
            .help("add `baseUrl: https://…` (the server's OpenAI-compatible API root)"),
        );
    }
    if let Some(url) = &model.base_url {
        let v = url.value.as_str();
        let allow = model.allow_insecure.as_ref().is_some_and(|a| a.value);
        match check_base_url(v, allow) {
            Err(EndpointError::NotHttp { .. }) => out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidValue,
                    format!("`baseUrl` must be an http(s) URL, not `{v}`"),
                )
                .at(preset.span_of(url))
                .help("write it like `https://api.deepseek.com`"),
            ),
            Err(e @ EndpointError::Insecure { .. }) => out.push(
                Diagnostic::new(DiagnosticKind::InsecureEndpoint, format!("`baseUrl` {}", e))
                    .at(preset.span_of(url))
                    .help(e.help()),
            ),
            Ok(Transport::Cleartext) => {
                let at = match &model.allow_insecure {
                    Some(flag) => preset.span_of(flag),
                    None => preset.span_of(url),
                };
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::InsecureAllowed,
                        format!(
                            "`allowInsecure: true` sends the API key and the conversation to `{v}` unencrypted"
                        ),
                    )
                    .at(at)
                    .help("use `https://` if the server offers it; keep `allowInsecure` only for a network you trust"),
                );
            }
            Ok(Transport::Tls | Transport::Loopback) => {}
        }
    }
    if model.name.value.trim().is_empty() {
        out.push(
            Diagnostic::new(DiagnosticKind::InvalidValue, "`model.name` is empty")
                .at(preset.span_of(&model.name))
                .help("name the model, e.g. `deepseek-v4-flash`"),
        );
    }
    if let Some(max) = &model.max_tokens
        && max.value == 0
    {
        out.push(
            Diagnostic::new(DiagnosticKind::InvalidValue, "`maxTokens` must be at least 1")
                .at(preset.span_of(max))
                .help("set the largest number of tokens the model may generate per reply, e.g. `maxTokens: 4096`"),
        );
    }
    check_model_params(preset, model, out);
    if let Some(strict) = &model.strict_tools
        && strict.value
        && !strict_tools_allowed(
            model.provider.value,
            model.base_url.as_ref().map(|u| u.value.as_str()),
        )
    {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidValue,
                "DeepSeek supports `strictTools` only at its beta API root",
            )
            .at(preset.span_of(strict))
            .help("add `baseUrl: https://api.deepseek.com/beta`, or drop `strictTools`"),
        );
    }
    if let Some(env) = &model.api_key_env {
        let v = env.value.as_str();
        // A key in a known format is already reported by the file-wide secret scan.
        if let Some(name) = env_reference(v) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidValue,
                    format!(
                        "`apiKeyEnv` takes the variable's name, not a reference to it: drop the {}",
                        if v.starts_with("${") {
                            "`${` and `}`"
                        } else if v.starts_with('$') {
                            "`$`"
                        } else {
                            "`%` signs"
                        }
                    ),
                )
                .at(preset.span_of(env))
                .help(format!("write `apiKeyEnv: {name}`: the name is looked up in the environment, not expanded in the file")),
            );
        } else if !is_valid_env_name(v) && crate::secrets::find_secrets(v).is_empty() {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::LiteralSecret,
                    "`apiKeyEnv` takes the NAME of an environment variable, not a key",
                )
                .at(preset.span_of(env))
                .help("write e.g. `apiKeyEnv: DEEPSEEK_API_KEY` and export the key in that variable; if this was a real key, rotate it"),
            );
        }
    }
}

/// The variable name in a shell or Windows reference to it: `$NAME`, `${NAME}`,
/// `%NAME%`.
fn env_reference(v: &str) -> Option<&str> {
    let name = if let Some(rest) = v.strip_prefix("${") {
        rest.strip_suffix('}')?
    } else if let Some(rest) = v.strip_prefix('$') {
        rest
    } else {
        v.strip_prefix('%')?.strip_suffix('%')?
    };
    is_valid_env_name(name).then_some(name)
}

/// `passEnv` entries must be environment variable names, and none may name a credential:
/// whatever a command sees, the model can read.
fn check_pass_env(preset: &ParsedPreset, out: &mut Vec<Diagnostic>) {
    for name in preset.file.pass_env.iter().flatten() {
        let v = name.value.as_str();
        if !is_valid_env_name(v) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidName,
                    format!("`passEnv` takes environment variable names; `{v}` is not one"),
                )
                .at(preset.span_of(name))
                .help("write names like `CARGO_HOME` or `NODE_OPTIONS`: letters, digits and `_`, not starting with a digit"),
            );
        } else if crate::secrets::is_credential_name(v) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidValue,
                    format!("`passEnv` names `{v}`, which looks like it holds a credential; commands never get credentials"),
                )
                .at(preset.span_of(name))
                .help("remove it: whatever a command sees, the model can read and repeat. A command that needs a credential needs a sandbox that injects it (a credential helper, a proxy), not the agent's environment"),
            );
        }
    }
}

/// `allowRead` entries must be absolute or workspace-relative paths. They need not exist
/// (a preset is validated on other machines than it runs on; a missing path is skipped
/// when a command runs), but `~` is not expanded and `/` would open everything.
fn check_allow_read(preset: &ParsedPreset, out: &mut Vec<Diagnostic>) {
    for path in preset.file.allow_read.iter().flatten() {
        let v = path.value.as_str();
        let problem = if v.trim().is_empty() {
            Some((
                "`allowRead` has an empty path".to_owned(),
                "write an absolute path or one relative to the workspace".to_owned(),
            ))
        } else if v.starts_with('~') {
            Some((
                format!("`allowRead` path `{v}` starts with `~`, which is not expanded"),
                "write the absolute path (`/home/me/...`); the home directory's secrets stay unreadable either way".to_owned(),
            ))
        } else if v.contains('\0') {
            Some((
                "`allowRead` path contains a NUL character".to_owned(),
                "remove it".to_owned(),
            ))
        } else if std::path::Path::new(v)
            .components()
            .all(|c| matches!(c, std::path::Component::RootDir))
            && v.starts_with('/')
        {
            Some((
                format!("`allowRead` path `{v}` opens the whole filesystem"),
                "name the directories commands need; for no sandbox at all, set `sandbox: full-access`".to_owned(),
            ))
        } else {
            None
        };
        if let Some((message, help)) = problem {
            out.push(
                Diagnostic::new(DiagnosticKind::InvalidValue, message)
                    .at(preset.span_of(path))
                    .help(help),
            );
        }
    }
}

/// Report every key-like string in the file (values, comments, anywhere), by position,
/// without ever repeating the key.
fn check_secrets(display: &Arc<str>, source: &str, out: &mut Vec<Diagnostic>) {
    if !crate::secrets::may_hold_secrets(source) {
        return;
    }
    for (i, line) in source.lines().enumerate() {
        for m in crate::secrets::find_secrets(line) {
            let column = line[..m.range.start].chars().count() as u32 + 1;
            let len = line[m.range.clone()].chars().count() as u32;
            out.push(
                Diagnostic::new(
                    DiagnosticKind::LiteralSecret,
                    format!("this looks like {}; presets must not contain secrets", m.what),
                )
                .at(Span::new(Arc::clone(display), i as u32 + 1, column).with_len(len))
                .help("put the key in an environment variable and name that variable in `model.apiKeyEnv`; rotate the key if this file was ever shared"),
            );
        }
    }
}
