//! Every independent problem of a preset file in one pass: when the shape check refuses a
//! file only for *local* problems (an unknown key, a value of the wrong type, a value out
//! of its set), the offending key/value pairs and list items are removed from its tree
//! (*pruned*) and the rest goes on through the typed pass and the full build, so that one
//! `validate` also reports the unknown tools, template errors, undefined variables and
//! secrets that today's file holds besides its shape problems.
//!
//! The pruned preset only finds diagnostics. It is never the file's [`ParsedPreset`]: the
//! file still fails to parse ([`PresetEntry::parsed`](super::catalog::PresetEntry::parsed)
//! is an error), so it is never locked, rendered, run, trusted or extended, and its
//! validation never yields a [`ValidPreset`](super::validate::ValidPreset).
//!
//! Conservative rules, "when in doubt, stop as before":
//!
//! - nothing is pruned (the shape problems come alone) after a YAML syntax error, an
//!   exceeded limit, an encoding problem or an unsupported `version`, or when a key is
//!   missing, a key is repeated, the top level is not a mapping, a problem is about
//!   `name`, `version` or `extends`, the file uses aliases, merge keys or unusual tags, or
//!   a problem cannot be tied to one node of the tree; and when the pruned tree does not
//!   read as a preset (a pruned key was required);
//! - a later problem that may *depend* on a pruned part is not reported ([`Scope::keeps`]):
//!   each pruned part marks the top-level block it is in (a misspelt top-level key, the
//!   block it was meant to be; an unknown one nobody means, every block), and a later
//!   problem is dropped when its own block, or a block its kind reads (`unknown-variable`
//!   reads `variables`, `unknown-tool` reads `tools`, `commands`, `mcpServers`, ...), is
//!   marked; a kind not listed reads everything and is dropped. Problems in the text
//!   itself (`template-syntax`, `literal-secret`, ...) are always kept;
//! - a later problem at the position of a shape problem, or inside a pruned part (secrets
//!   aside: the text is still in the file), is not reported.

use std::collections::{HashMap, HashSet};

use super::source::ParsedPreset;
use super::source_file::SourceFile;
use super::tree::{Kind, NodeId, Tree};
use crate::diagnostic::{Diagnostic, DiagnosticKind};

/// A refused file with its local problems pruned: the preset that is left, and what was
/// pruned (to tell which later problems to report).
#[derive(Clone, Debug)]
pub(crate) struct Salvaged {
    /// What is left of the file. Only for finding more diagnostics; never used.
    pub(crate) preset: ParsedPreset,
    pub(crate) scope: Scope,
}

/// What was pruned from a file.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    /// The top-level blocks a pruned part is in (or was meant for).
    blocks: Vec<String>,
    /// A pruned part could be meant for any block.
    everything: bool,
    /// Where the pruned parts are: (line, column) of their start and of their end.
    pruned: Vec<((u32, u32), (u32, u32))>,
    /// Where the shape problems are: (line, column).
    problems: HashSet<(u32, u32)>,
    /// The file's top-level keys with the line each starts on, in file order.
    top_level: Vec<(u32, String)>,
}

/// What a later problem's kind reads besides the block it is in.
enum Reads {
    /// Only the text it points at: reported whatever was pruned.
    Text,
    /// Its own block and these.
    Blocks(&'static [&'static str]),
    /// Anything.
    Everything,
}

const TOOL_BLOCKS: &[&str] = &["tools", "commands", "mcpServers"];

fn reads(kind: DiagnosticKind) -> Reads {
    use DiagnosticKind as K;
    match kind {
        K::TemplateSyntax
        | K::LiteralSecret
        | K::UnknownFilter
        | K::UnknownTest
        | K::UnknownFunction
        | K::MissingParent
        | K::ExtendsCycle
        | K::InvalidName
        | K::NameMismatch => Reads::Text,
        K::UnknownVariable | K::MissingValue => Reads::Blocks(&["variables"]),
        K::UnknownTool
        | K::GlobNoMatch
        | K::DuplicateTool
        | K::BadToolOrder
        | K::EmptyRestriction
        | K::PermissionUnknownTool => Reads::Blocks(TOOL_BLOCKS),
        K::DuplicateSection | K::NonFiniteOrder | K::MultipleComplete | K::RemoveUnknown => {
            Reads::Blocks(&["persona", "contexts"])
        }
        K::UnknownText | K::TextDropsToken | K::MissingLocale => {
            Reads::Blocks(&["texts", "locale"])
        }
        K::InvalidValue
        | K::WrongType
        | K::ModelParameterRange
        | K::ModelParameterRefused
        | K::InsecureEndpoint => Reads::Blocks(&[]),
        _ => Reads::Everything,
    }
}

/// Shape problems that leave the rest of the file worth reading.
fn is_local(kind: DiagnosticKind) -> bool {
    matches!(
        kind,
        DiagnosticKind::UnknownKey | DiagnosticKind::WrongType | DiagnosticKind::InvalidValue
    )
}

/// A file with more shape problems than this is not worth reading further (nor the time):
/// its problems come alone.
const MAX_PROBLEMS: usize = 1_000;

/// Top-level keys whose problems stop the reading: the file's identity and its parent.
const STOPPING: &[&str] = &["name", "version", "extends"];

/// Where a node sits: in a mapping (as the key or the value of its entry `index`) or in a
/// list (item `index`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Place {
    parent: NodeId,
    index: usize,
}

/// Prune `tree` of the parts `problems` (the shape check's, all of `source`) are about,
/// when every problem is local; `None`: stop as before (see the module doc).
pub(super) fn prune(
    source: &SourceFile,
    tree: &mut Tree,
    problems: &[Diagnostic],
) -> Option<Scope> {
    if problems.is_empty()
        || problems.len() > MAX_PROBLEMS
        || !tree.duplicates.is_empty()
        || tree.unusual_tags
    {
        return None;
    }
    let root = tree.root?;
    let Kind::Map(root_entries) = &tree.nodes[root].kind else {
        return None;
    };
    let mut top_level = Vec::with_capacity(root_entries.len());
    for e in root_entries {
        top_level.push((tree.nodes[e.key].pos.line, tree.key_text(e.key)?.to_owned()));
    }
    // Where each node is, and which nodes start at each position.
    let mut place: Vec<Option<Place>> = vec![None; tree.nodes.len()];
    let mut is_key = vec![false; tree.nodes.len()];
    let mut at: HashMap<(u32, u32), Vec<NodeId>> = HashMap::new();
    for (id, node) in tree.nodes.iter().enumerate() {
        at.entry((node.pos.line, node.pos.column))
            .or_default()
            .push(id);
        match &node.kind {
            Kind::Alias(_) => return None,
            Kind::Map(entries) => {
                for (index, e) in entries.iter().enumerate() {
                    if tree.is_merge_key(e.key) {
                        return None;
                    }
                    place[e.key] = Some(Place { parent: id, index });
                    is_key[e.key] = true;
                    place[e.value] = Some(Place { parent: id, index });
                }
            }
            Kind::Seq(items) => {
                for (index, &item) in items.iter().enumerate() {
                    place[item] = Some(Place { parent: id, index });
                }
            }
            Kind::Scalar { .. } => {}
        }
    }
    let inside = |outer: NodeId, mut node: NodeId| loop {
        if node == outer {
            return true;
        }
        match place[node] {
            Some(p) => node = p.parent,
            None => return false,
        }
    };
    let mut scope = Scope {
        blocks: Vec::new(),
        everything: false,
        pruned: Vec::new(),
        problems: HashSet::with_capacity(problems.len()),
        top_level,
    };
    let mut cuts: Vec<Place> = Vec::with_capacity(problems.len());
    for d in problems {
        if !is_local(d.kind) {
            return None;
        }
        let span = d.span.as_ref().filter(|s| s.file == source.display)?;
        scope.problems.insert((span.line, span.column));
        // The node the problem is about: an unknown key's key; else, of the nodes
        // starting there, the one holding the others (a list item's mapping, not its
        // first key).
        let nodes = at.get(&(span.line, span.column))?;
        let &node = if d.kind == DiagnosticKind::UnknownKey {
            let mut keys = nodes.iter().filter(|&&n| is_key[n]);
            let key = keys.next()?;
            if keys.next().is_some() {
                return None;
            }
            key
        } else {
            nodes
                .iter()
                .find(|&&n| nodes.iter().all(|&other| inside(n, other)))?
        };
        let cut = place[node]?;
        // The top-level entry it is in.
        let mut top = cut;
        while top.parent != root {
            top = place[top.parent]?;
        }
        let Kind::Map(entries) = &tree.nodes[root].kind else {
            return None;
        };
        let block = tree.key_text(entries[top.index].key)?;
        let meant = if top == cut && d.kind == DiagnosticKind::UnknownKey {
            // A misspelt top-level key stands for the block it was meant to be.
            d.fix.as_ref().map(|f| f.with.as_str())
        } else {
            Some(block)
        };
        match meant {
            Some(meant) if STOPPING.contains(&meant) || STOPPING.contains(&block) => {
                return None;
            }
            Some(meant) => scope.blocks.push(meant.to_owned()),
            None => scope.everything = true,
        }
        scope.pruned.push(extent(tree, cut));
        cuts.push(cut);
    }
    // Each mapping or list cut once, whatever number of its parts go.
    let mut by_parent: HashMap<NodeId, HashSet<usize>> = HashMap::new();
    for cut in cuts {
        by_parent.entry(cut.parent).or_default().insert(cut.index);
    }
    for (parent, gone) in by_parent {
        let mut index = 0;
        let mut keep = || {
            index += 1;
            !gone.contains(&(index - 1))
        };
        match &mut tree.nodes[parent].kind {
            Kind::Map(entries) => entries.retain(|_| keep()),
            Kind::Seq(items) => items.retain(|_| keep()),
            _ => return None,
        }
    }
    Some(scope)
}

/// Where what `cut` removes starts and ends, (line, column): a mapping entry's key and
/// value, or a list item, with everything in them.
fn extent(tree: &Tree, cut: Place) -> ((u32, u32), (u32, u32)) {
    let (first, last) = match &tree.nodes[cut.parent].kind {
        Kind::Map(entries) => (entries[cut.index].key, entries[cut.index].value),
        Kind::Seq(items) => (items[cut.index], items[cut.index]),
        _ => (cut.parent, cut.parent),
    };
    let start = tree.nodes[first].pos;
    ((start.line, start.column), end_of(tree, last))
}

/// Where a node ends, its content included (a list's or mapping's own position is where
/// it starts).
fn end_of(tree: &Tree, node: NodeId) -> (u32, u32) {
    let mut end = (0, 0);
    let mut stack = vec![node];
    while let Some(id) = stack.pop() {
        let pos = tree.nodes[id].pos;
        end = end.max((pos.end_line, pos.end_column));
        match &tree.nodes[id].kind {
            Kind::Map(entries) => stack.extend(entries.iter().flat_map(|e| [e.key, e.value])),
            Kind::Seq(items) => stack.extend(items.iter().copied()),
            _ => {}
        }
    }
    end
}

impl Scope {
    /// Report `d`, found in the pruned preset of the file `file`?
    fn keeps(&self, file: &str, d: &Diagnostic) -> bool {
        let here = d.span.as_ref().filter(|s| *s.file == *file);
        if let Some(span) = here {
            let at = (span.line, span.column);
            if self.problems.contains(&at) {
                return false;
            }
            if d.kind != DiagnosticKind::LiteralSecret
                && self
                    .pruned
                    .iter()
                    .any(|(start, end)| *start <= at && at < *end)
            {
                return false;
            }
        }
        let also: &[&str] = match reads(d.kind) {
            Reads::Text => return true,
            Reads::Everything => return false,
            Reads::Blocks(blocks) => blocks,
        };
        if self.everything {
            return false;
        }
        // The block it is in; a problem elsewhere (another file, no position) may read
        // anything.
        let Some(span) = here else {
            return false;
        };
        let Some((_, own)) = self
            .top_level
            .iter()
            .take_while(|(line, _)| *line <= span.line)
            .last()
        else {
            return false;
        };
        !self
            .blocks
            .iter()
            .any(|b| b == own || also.contains(&b.as_str()))
    }

    /// The shape problems and the later problems of the pruned preset of `file` that do
    /// not depend on what was pruned: sorted by position in `file` (other files' after,
    /// as found), without repeats.
    pub(crate) fn merge(
        &self,
        file: &str,
        shape: &[Diagnostic],
        later: Vec<Diagnostic>,
    ) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = shape.to_vec();
        for d in later {
            if self.keeps(file, &d) && !out.contains(&d) {
                out.push(d);
            }
        }
        in_file_order(file, out)
    }
}

/// `diagnostics` sorted by position in `file` (stable: those at one position keep their
/// order), those of other files or of no position after them, as found.
pub(crate) fn in_file_order(file: &str, mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    diagnostics.sort_by_key(|d| match &d.span {
        Some(s) if *s.file == *file => (0, s.line, s.column),
        _ => (1, 0, 0),
    });
    diagnostics
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::DiagnosticKind as K;
    use crate::preset::{PresetCatalog, validate_in_catalog};
    use crate::tools::ToolCatalog;

    /// `validate` of the file `text` (named `p`): its diagnostics' kinds and lines, and
    /// whether it passed.
    fn validate(text: &str) -> (Vec<(K, u32)>, bool) {
        let mut catalog = PresetCatalog::builtin();
        catalog.add_text("p", "p.yaml", text).unwrap();
        let v = validate_in_catalog(&catalog, "p", &ToolCatalog::builtin());
        let found = v
            .diagnostics
            .iter()
            .map(|d| (d.kind, d.span.as_ref().map_or(0, |s| s.line)))
            .collect();
        (found, v.is_valid())
    }

    #[test]
    fn every_independent_problem_is_reported_in_one_pass() {
        let (found, valid) = validate(
            "version: 1\nname: p\ndescripton: x\nextends: standard\nmodel:\n  provider: openai\n  \
             name: gpt-4o\n  apiKey: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\ntools:\n  \
             allow: [read_fiel]\npersona:\n  sections:\n    - name: a\n      order: 5\n      \
             text: \"{{ projct }}\"\n    - name: b\n      order: 6\n      text: \"{{ foo\"\n",
        );
        assert!(!valid);
        assert_eq!(
            found,
            [
                (K::UnknownKey, 3),
                (K::UnknownKey, 8),
                (K::LiteralSecret, 8),
                (K::UnknownTool, 10),
                (K::UnknownVariable, 15),
                (K::TemplateSyntax, 18),
            ]
        );
    }

    #[test]
    fn a_pruned_file_never_passes_nor_parses() {
        let text = "version: 1\nname: p\ndescripton: x\n";
        let (found, valid) = validate(text);
        assert!(!valid);
        assert_eq!(found, [(K::UnknownKey, 3)]);
        let mut catalog = PresetCatalog::builtin();
        catalog.add_text("p", "p.yaml", text).unwrap();
        assert!(catalog.parsed("p").is_some_and(|p| p.is_err()));
        assert!(catalog.get("p").is_some_and(|e| e.salvaged().is_some()));
    }

    #[test]
    fn a_missing_key_stops_as_before() {
        // Missing `text`: the shape problems alone, not the unknown tool.
        let (found, _) = validate(
            "version: 1\nname: p\ndescripton: x\ntools:\n  allow: [read_fiel]\npersona:\n  \
             sections:\n    - name: a\n      order: 5\n",
        );
        assert_eq!(found, [(K::UnknownKey, 3), (K::MissingField, 8)]);
        // A misspelt `name` is missing too once pruned.
        let (found, _) = validate("version: 1\nnmae: p\ntools:\n  allow: [read_fiel]\n");
        assert_eq!(found, [(K::UnknownKey, 2)]);
    }

    #[test]
    fn a_syntax_error_stops_as_before() {
        let (found, _) =
            validate("version: 1\nname: p\ntools:\n  allow: [read_fiel]\npersona: [\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, K::YamlSyntax);
    }

    #[test]
    fn problems_of_name_version_or_extends_stop_as_before() {
        let (found, _) =
            validate("version: 1\nname: p\nextends: [standard]\ntools:\n  allow: [read_fiel]\n");
        assert_eq!(found, [(K::WrongType, 3)]);
    }

    #[test]
    fn what_depends_on_a_pruned_part_is_not_reported() {
        // `allow` pruned: the unknown tool of `deny` in the same block is not said (what
        // the block restricts has changed).
        let (found, _) = validate(
            "version: 1\nname: p\nextends: standard\ntools:\n  allow: read_file\n  deny: [bsh]\n\
             persona:\n  sections:\n    - name: a\n      order: 5\n      text: Use bash.\n",
        );
        assert_eq!(found, [(K::WrongType, 5)]);
    }

    #[test]
    fn the_uses_of_a_pruned_block_are_not_reported() {
        // A misspelt `variables`: its variables are not declared, so their uses are not
        // unknown; a broken template still is.
        let (found, _) = validate(
            "version: 1\nname: p\nvariabls:\n  project:\n    description: x\npersona:\n  \
             sections:\n    - name: a\n      order: 5\n      text: \"{{ project }}\"\n    \
             - name: b\n      order: 6\n      text: \"{{ foo\"\n",
        );
        assert_eq!(found, [(K::UnknownKey, 3), (K::TemplateSyntax, 13)]);
    }

    #[test]
    fn an_unknown_key_nobody_means_adds_only_problems_of_the_text() {
        // An unknown top-level key nobody means could have been any block: only problems
        // of the text itself are added.
        let (found, _) = validate("version: 1\nname: p\nzzzz: 1\ntools:\n  allow: [read_fiel]\n");
        assert_eq!(found, [(K::UnknownKey, 3)]);
    }

    #[test]
    fn a_child_of_a_pruned_file_is_told_as_before() {
        let mut catalog = PresetCatalog::builtin();
        let parent = "version: 1\nname: p\ndescripton: x\ntools:\n  allow: [read_fiel]\n";
        catalog.add_text("p", "p.yaml", parent).unwrap();
        catalog
            .add_text("c", "c.yaml", "version: 1\nname: c\nextends: p\n")
            .unwrap();
        let v = validate_in_catalog(&catalog, "c", &ToolCatalog::builtin());
        let kinds: Vec<K> = v.diagnostics.iter().map(|d| d.kind).collect();
        // The parent is invalid, with its shape problems; its other problems are its own
        // `validate`'s.
        assert_eq!(kinds, [K::MissingParent, K::UnknownKey]);
        assert!(!v.is_valid());
    }
}
