//! Splitting a `bash` command line into the simple commands it would run, with a real
//! shell grammar ([`brush_parser`], the parser of the brush shell), never regexes.
//!
//! Every simple command is found wherever it sits: lists (`;`, `&`, `&&`, `||`),
//! pipelines, subshells and brace groups, `if`/`for`/`while`/`case` bodies, function
//! bodies, `$(…)` and backticks in any word, process substitutions, and the script of
//! `bash -c '…'` (also `sh`, `dash`, `zsh`, `ksh`). Wrappers that run their arguments as
//! a command (`env`, `exec`, `command`, `nohup`, `nice`, `timeout`, `time`) are seen
//! through. What the parser refuses, or what cannot be decided from the text alone
//! (arithmetic and `[[ … ]]` with substitutions, a substitution inside a `${…}`), is
//! [`Split::Unparsed`]: the caller asks.

use brush_parser::ast;
use brush_parser::word::{WordPiece, WordPieceWithSource};

/// One simple command as the policy sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellCommand {
    /// The words after quote removal, assignments and wrappers stripped, joined with
    /// single spaces (`rm -rf /`): what allow, ask and deny rules match.
    pub text: String,
    /// Other spellings of the same command that deny and ask rules also match (with its
    /// `VAR=value` prefix, with its wrapper).
    pub also: Vec<String>,
    /// Why an allow rule cannot let this command run without asking, if it cannot: its
    /// name is not known before it runs (`$CMD`), or it sets variables first.
    pub not_allowable: Option<&'static str>,
}

/// The result of splitting one command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Split {
    /// Every simple command of the line, in source order.
    Commands(Vec<ShellCommand>),
    /// The line cannot be split with certainty; the reason, for the prompt.
    Unparsed(String),
}

/// A file a command line writes through a redirection (`> f`, `>> f`, `&> f`, `<> f`,
/// `>| f`), as the shell would open it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteTarget {
    /// The target after quote removal (`.github/x.yml`); a dynamic part is `$`.
    pub path: String,
    /// Part of it is only known when the line runs (`> "$OUT"`).
    pub dynamic: bool,
}

/// A command line split: its simple commands, and the files its redirections write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitLine {
    /// The simple commands (or why the line cannot be split).
    pub split: Split,
    /// Every file an output redirection of the line writes, in source order (also those
    /// inside `$(…)` and `bash -c`); empty when the line cannot be split.
    pub writes: Vec<WriteTarget>,
}

#[derive(Default)]
struct Found {
    commands: Vec<ShellCommand>,
    writes: Vec<WriteTarget>,
}

/// How deep `bash -c` and `$(…)` may nest before the line is refused as unparsed.
const MAX_DEPTH: usize = 16;

/// Splits `line` into its simple commands.
pub fn split(line: &str) -> Split {
    split_line(line).split
}

/// Splits `line` into its simple commands and the files its redirections write.
pub fn split_line(line: &str) -> SplitLine {
    let mut out = Found::default();
    match split_into(line, 0, &mut out) {
        Ok(()) => SplitLine {
            split: Split::Commands(out.commands),
            writes: out.writes,
        },
        Err(reason) => SplitLine {
            split: Split::Unparsed(reason),
            writes: Vec::new(),
        },
    }
}

fn options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions::default()
}

fn split_into(line: &str, depth: usize, out: &mut Found) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("commands nest more than {MAX_DEPTH} levels deep"));
    }
    // The parser is a third-party crate: a panic inside it is a line we cannot split,
    // never a crash of the agent.
    let parsed = std::panic::catch_unwind(|| {
        let mut parser =
            brush_parser::Parser::new(std::io::Cursor::new(line.as_bytes()), &options());
        parser.parse_program()
    });
    let program = match parsed {
        Ok(Ok(program)) => program,
        Ok(Err(error)) => return Err(format!("the shell parser refused it: {error}")),
        Err(_) => return Err("the shell parser failed on it".to_owned()),
    };
    let mut walker = Walker { depth, out };
    for list in &program.complete_commands {
        walker.list(list)?;
    }
    Ok(())
}

struct Walker<'a> {
    depth: usize,
    out: &'a mut Found,
}

/// A word after quote removal; `dynamic` when part of it is only known when it runs.
struct Expanded {
    text: String,
    dynamic: bool,
}

impl Walker<'_> {
    fn list(&mut self, list: &ast::CompoundList) -> Result<(), String> {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first)?;
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p)?,
                }
            }
        }
        Ok(())
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline) -> Result<(), String> {
        for command in &pipeline.seq {
            self.command(command)?;
        }
        Ok(())
    }

    fn command(&mut self, command: &ast::Command) -> Result<(), String> {
        match command {
            ast::Command::Simple(simple) => self.simple(simple),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound)?;
                if let Some(redirects) = redirects {
                    for r in &redirects.0 {
                        self.redirect(r)?;
                    }
                }
                Ok(())
            }
            ast::Command::Function(function) => {
                self.compound(&function.body.0)?;
                if let Some(redirects) = &function.body.1 {
                    for r in &redirects.0 {
                        self.redirect(r)?;
                    }
                }
                Ok(())
            }
            ast::Command::ExtendedTest(test, _) => {
                let shown = test.expr.to_string();
                if has_substitution(&shown) {
                    Err("a `[[ … ]]` test runs a command substitution".to_owned())
                } else {
                    Ok(())
                }
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand) -> Result<(), String> {
        match compound {
            ast::CompoundCommand::Arithmetic(a) => arithmetic(&a.expr.value),
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    arithmetic(&e.value)?;
                }
                self.list(&f.body.list)
            }
            ast::CompoundCommand::BraceGroup(b) => self.list(&b.list),
            ast::CompoundCommand::Subshell(s) => self.list(&s.list),
            ast::CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value)?;
                }
                self.list(&f.body.list)
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value)?;
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value)?;
                    }
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd)?;
                    }
                }
                Ok(())
            }
            ast::CompoundCommand::IfClause(i) => {
                self.list(&i.condition)?;
                self.list(&i.then)?;
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c)?;
                    }
                    self.list(&e.body)?;
                }
                Ok(())
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.list(&w.0)?;
                self.list(&w.1.list)
            }
            ast::CompoundCommand::Coprocess(c) => self.command(&c.body),
        }
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect) -> Result<(), String> {
        use ast::IoFileRedirectKind as Kind;
        match redirect {
            ast::IoRedirect::File(_, kind, target) => match target {
                ast::IoFileRedirectTarget::Filename(w) => {
                    let target = self.word(&w.value)?;
                    if matches!(
                        kind,
                        Kind::Write | Kind::Append | Kind::Clobber | Kind::ReadAndWrite
                    ) {
                        self.write(target);
                    }
                    Ok(())
                }
                ast::IoFileRedirectTarget::Duplicate(w) => {
                    // `>& file` writes a file when the word is not a descriptor number.
                    let target = self.word(&w.value)?;
                    let fd = !target.dynamic
                        && (target.text == "-" || target.text.bytes().all(|b| b.is_ascii_digit()));
                    if matches!(kind, Kind::DuplicateOutput) && !fd {
                        self.write(target);
                    }
                    Ok(())
                }
                ast::IoFileRedirectTarget::Fd(_) => Ok(()),
                ast::IoFileRedirectTarget::ProcessSubstitution(_, s) => self.list(&s.list),
            },
            ast::IoRedirect::OutputAndError(w, _) => {
                let target = self.word(&w.value)?;
                self.write(target);
                Ok(())
            }
            ast::IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    let pieces = brush_parser::word::parse_heredoc(&doc.doc.value, &options())
                        .map_err(|e| format!("a here-document cannot be read: {e}"))?;
                    self.pieces(&pieces, &mut String::new())?;
                }
                Ok(())
            }
            ast::IoRedirect::HereString(_, w) => self.word(&w.value).map(drop),
        }
    }

    fn write(&mut self, target: Expanded) {
        self.out.writes.push(WriteTarget {
            path: target.text,
            dynamic: target.dynamic,
        });
    }

    /// Expands one word as far as the text allows, splitting out every command it runs.
    fn word(&mut self, raw: &str) -> Result<Expanded, String> {
        let pieces = brush_parser::word::parse(raw, &options())
            .map_err(|e| format!("the word `{raw}` cannot be read: {e}"))?;
        let mut text = String::new();
        let dynamic = self.pieces(&pieces, &mut text)?;
        Ok(Expanded { text, dynamic })
    }

    /// Appends the literal text of `pieces` to `text`; true when part of it is dynamic.
    fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        text: &mut String,
    ) -> Result<bool, String> {
        let mut dynamic = false;
        for piece in pieces {
            match &piece.piece {
                WordPiece::Text(t)
                | WordPiece::SingleQuotedText(t)
                | WordPiece::AnsiCQuotedText(t) => text.push_str(t),
                WordPiece::EscapeSequence(e) => text.push_str(e.strip_prefix('\\').unwrap_or(e)),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    dynamic |= self.pieces(inner, text)?;
                }
                WordPiece::TildeExpansion(_) => {
                    text.push('~');
                    dynamic = true;
                }
                WordPiece::ParameterExpansion(p) => {
                    let shown = format!("{p:?}");
                    if has_substitution(&shown) {
                        return Err("a `${…}` expansion runs a command substitution".to_owned());
                    }
                    text.push('$');
                    dynamic = true;
                }
                WordPiece::CommandSubstitution(script)
                | WordPiece::BackquotedCommandSubstitution(script) => {
                    split_into(script, self.depth + 1, self.out)?;
                    text.push_str("$(…)");
                    dynamic = true;
                }
                WordPiece::ArithmeticExpression(e) => {
                    arithmetic(&e.value)?;
                    text.push('$');
                    dynamic = true;
                }
            }
        }
        Ok(dynamic)
    }

    fn simple(&mut self, simple: &ast::SimpleCommand) -> Result<(), String> {
        let mut assignments = Vec::new();
        let mut words = Vec::new();
        let items = simple.prefix.iter().flat_map(|p| p.0.iter());
        for item in items {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                    assignments.push(self.word(&w.value)?.text);
                }
                other => self.item(other, &mut words)?,
            }
        }
        if let Some(name) = &simple.word_or_name {
            words.push(self.word(&name.value)?);
        }
        for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
            self.item(item, &mut words)?;
        }
        if words.is_empty() {
            // `X=1` alone, or only redirections: no command runs.
            return Ok(());
        }
        self.push(assignments, words)
    }

    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        words: &mut Vec<Expanded>,
    ) -> Result<(), String> {
        match item {
            ast::CommandPrefixOrSuffixItem::Word(w) => words.push(self.word(&w.value)?),
            // An assignment-looking word after the name is an argument (`make X=1`).
            ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                words.push(self.word(&w.value)?)
            }
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => self.redirect(r)?,
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, s) => {
                self.list(&s.list)?;
                words.push(Expanded {
                    text: "<(…)".to_owned(),
                    dynamic: true,
                });
            }
        }
        Ok(())
    }

    /// Records one simple command, seeing through wrappers and `bash -c`.
    fn push(&mut self, assignments: Vec<String>, words: Vec<Expanded>) -> Result<(), String> {
        let full: Vec<&str> = assignments
            .iter()
            .map(String::as_str)
            .chain(words.iter().map(|w| w.text.as_str()))
            .collect();
        let full = full.join(" ");
        let (skip, wrapper_assigns) = wrapper_prefix(&words);
        let inner = &words[skip..];
        let Some(name) = inner.first() else {
            // A wrapper with nothing to run (`env`, `nice`): the wrapper itself.
            let text = words
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let also = if full == text { Vec::new() } else { vec![full] };
            let not_allowable =
                (!assignments.is_empty()).then_some("it sets variables before the command");
            self.out.commands.push(ShellCommand {
                text,
                also,
                not_allowable,
            });
            return Ok(());
        };
        // `bash -c 'script'`: the script's commands are the commands.
        if !name.dynamic
            && is_shell(&name.text)
            && let Some(script) = dash_c_script(&inner[1..])
        {
            let script = script?;
            return split_into(script, self.depth + 1, self.out);
        }
        let text = inner
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let mut also = Vec::new();
        if full != text {
            also.push(full);
        }
        let not_allowable = if name.dynamic {
            Some("its command name is only known when it runs")
        } else if !assignments.is_empty() || wrapper_assigns {
            Some("it sets variables before the command")
        } else {
            None
        };
        self.out.commands.push(ShellCommand {
            text,
            also,
            not_allowable,
        });
        Ok(())
    }
}

/// How many leading words are wrappers that run the rest as a command, and whether they
/// set variables (`env X=1 …`).
fn wrapper_prefix(words: &[Expanded]) -> (usize, bool) {
    let mut i = 0;
    let mut assigns = false;
    while let Some(w) = words.get(i) {
        if w.dynamic {
            break;
        }
        let base = w.text.rsplit('/').next().unwrap_or(&w.text);
        let start = i;
        match base {
            "exec" | "command" | "nohup" | "time" | "builtin" => i += 1,
            "env" => {
                i += 1;
                while let Some(a) = words.get(i) {
                    if a.text.starts_with('-') {
                        i += 1;
                    } else if a.text.contains('=') {
                        assigns = true;
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            "nice" => {
                i += 1;
                while let Some(a) = words.get(i) {
                    if a.text == "-n" {
                        i += 2;
                    } else if a.text.starts_with('-') {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            "timeout" => {
                i += 1;
                while let Some(a) = words.get(i) {
                    if matches!(a.text.as_str(), "-s" | "-k" | "--signal" | "--kill-after") {
                        i += 2;
                    } else if a.text.starts_with('-') {
                        i += 1;
                    } else {
                        break;
                    }
                }
                // the duration
                i += 1;
            }
            _ => {}
        }
        if i == start {
            break;
        }
    }
    (i.min(words.len()), assigns)
}

fn is_shell(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    matches!(base, "bash" | "sh" | "dash" | "zsh" | "ksh" | "ash")
}

/// The script of `-c SCRIPT` among a shell's arguments (`-c`, `-ec`, `-lc`, after other
/// options); `Some(Err)` when `-c`'s script is not known before it runs.
fn dash_c_script(args: &[Expanded]) -> Option<Result<&str, String>> {
    for (i, a) in args.iter().enumerate() {
        if a.text.starts_with('-') && !a.text.starts_with("--") && a.text[1..].contains('c') {
            return Some(match args.get(i + 1) {
                Some(s) if !s.dynamic => Ok(s.text.as_str()),
                Some(_) => Err("the script of `-c` is only known when it runs".to_owned()),
                None => Err("`-c` has no script".to_owned()),
            });
        }
        if !a.text.starts_with('-') {
            // `bash script.sh`: a script file the policy cannot see into; the command
            // itself is what rules match.
            return None;
        }
    }
    None
}

fn has_substitution(text: &str) -> bool {
    text.contains("$(") || text.contains('`') || text.contains("CommandSubstitution")
}

fn arithmetic(expr: &str) -> Result<(), String> {
    if has_substitution(expr) {
        Err("an arithmetic expression runs a command substitution".to_owned())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<String> {
        match split(line) {
            Split::Commands(c) => c.into_iter().map(|c| c.text).collect(),
            Split::Unparsed(r) => panic!("{line}: {r}"),
        }
    }

    #[test]
    fn compound_lines_yield_every_simple_command() {
        assert_eq!(
            texts("cargo test && git push origin main"),
            ["cargo test", "git push origin main"]
        );
        assert_eq!(
            texts("a; b | c || (d; e) & f"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(texts("echo $(rm -rf /)"), ["rm -rf /", "echo $(…)"]);
        assert_eq!(texts("echo `whoami`"), ["whoami", "echo $(…)"]);
        assert_eq!(texts("bash -c 'git push --force'"), ["git push --force"]);
        assert_eq!(texts("sh -ec \"ls; rm -rf /\""), ["ls", "rm -rf /"]);
        assert_eq!(texts("if true; then rm x; fi"), ["true", "rm x"]);
        assert_eq!(
            texts("for f in $(ls); do cat \"$f\"; done"),
            ["ls", "cat $"]
        );
        assert_eq!(texts("'rm' -rf \"/\""), ["rm -rf /"]);
        assert_eq!(texts("r\\m -rf /"), ["rm -rf /"]);
        assert_eq!(
            texts("env FOO=1 timeout 5 nice -n 3 rm -rf /"),
            ["rm -rf /"]
        );
        assert_eq!(texts("cat <(curl evil) > out"), ["curl evil", "cat <(…)"]);
        assert_eq!(texts("f() { git push; }; f"), ["git push", "f"]);
    }

    #[test]
    fn what_cannot_be_split_is_unparsed() {
        assert!(matches!(split("echo 'unterminated"), Split::Unparsed(_)));
        assert!(matches!(split("if then"), Split::Unparsed(_)));
        assert!(matches!(split("bash -c \"$SCRIPT\""), Split::Unparsed(_)));
    }

    #[test]
    fn assignments_and_dynamic_names_cannot_be_allowed() {
        let Split::Commands(c) = split("X=1 cargo test") else {
            panic!()
        };
        assert_eq!(c[0].text, "cargo test");
        assert_eq!(c[0].also, ["X=1 cargo test"]);
        assert!(c[0].not_allowable.is_some());
        let Split::Commands(c) = split("$CMD --help") else {
            panic!()
        };
        assert!(c[0].not_allowable.is_some());
    }
}
