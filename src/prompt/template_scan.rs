//! A static look at a template that already compiles: which filters, tests and functions
//! it names (in every branch, with the byte offset of each name), which statements it
//! uses, and which references to each variable are *guarded* — only evaluated when the
//! variable has a value.
//!
//! minijinja finds unknown filters, tests and functions only when a render reaches them,
//! so a typo in a branch that the representative render does not take would pass
//! validation. This scan sees every branch.
//!
//! A reference to `v` is guarded when it is
//! - the operand of a definedness test: `v is defined`, `v is undefined`,
//!   `v is not defined`, `v is not undefined`;
//! - the operand of the `default` filter (or its alias `d`): `v | default('none')`;
//! - in a later operand of an `and` chain after `v is defined` (or of an `or` chain after
//!   `v is undefined`), in the `then` part of `… if v is defined else …`, or in the `else`
//!   part of `… if v is undefined else …`;
//! - inside `{% if %}` / `{% elif %}` whose condition is such an `and` chain, in an
//!   `{% elif %}` / `{% else %}` reached only when an earlier `v is undefined` was false,
//!   or in a section whose `when` condition is such a chain.
//!
//! Anything else (`{% if v %}`, `v.x | default(…)`, a reference inside a macro body or in
//! parentheses) is unguarded: minijinja's strict mode would fail on an undefined `v`
//! there.

use std::collections::{BTreeMap, BTreeSet};

/// Identifiers that are syntax, not names.
const KEYWORDS: &[&str] = &[
    "and",
    "or",
    "not",
    "in",
    "is",
    "if",
    "else",
    "elif",
    "true",
    "false",
    "none",
    "True",
    "False",
    "None",
    "recursive",
];

/// Is `name` one the scan never takes for a variable (an operator or a literal)?
pub(crate) fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

/// What a template names, found without rendering it.
#[derive(Debug, Default)]
pub(crate) struct TemplateScan {
    /// Filters applied (`x | name`, `{% filter name %}`), with the offset of the name.
    pub(crate) filters: Vec<(String, usize)>,
    /// Tests performed (`x is name`), with the offset of the name.
    pub(crate) tests: Vec<(String, usize)>,
    /// Functions called (`name(...)`, `{% call name(...) %}`), with the offset of the
    /// name, and whether the call sits where `caller` / `loop` are callable.
    pub(crate) calls: Vec<Call>,
    /// Names the template binds itself (`set`, `for`, `with`, macro names and
    /// parameters).
    pub(crate) locals: BTreeSet<String>,
    /// Statements that would reach for another template (`include`, `import`, `from`,
    /// `extends`), with their offset.
    pub(crate) includes: Vec<(String, usize)>,
    /// Per variable name: the offset of every unguarded reference.
    pub(crate) unguarded: BTreeMap<String, Vec<usize>>,
    /// Per variable name: how many references are guarded.
    pub(crate) guarded: BTreeMap<String, usize>,
}

/// A function call found by the scan.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) name: String,
    pub(crate) offset: usize,
    /// Inside a macro body (`caller()` is defined there).
    pub(crate) in_macro: bool,
    /// Inside a `for` loop (`loop(...)` recurses there).
    pub(crate) in_loop: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    Ident(&'a str),
    Literal,
    Op(&'a str),
}

#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    tok: Tok<'a>,
    at: usize,
}

/// Scan a template (`expression: false`) or a bare expression (`true`).
pub(crate) fn scan(
    source: &str,
    expression: bool,
    outer_guards: &BTreeSet<String>,
) -> TemplateScan {
    let tags = lex(source, expression);
    let mut scan = TemplateScan::default();
    let mut frames: Vec<Frame> = Vec::new();
    let guards_now = |frames: &[Frame]| -> BTreeSet<String> {
        frames
            .last()
            .map_or_else(|| outer_guards.clone(), |f| f.body.clone())
    };
    for tag in &tags {
        let in_macro = frames.iter().any(|f| f.kind == "macro" || f.kind == "call");
        let in_loop = frames.iter().any(|f| f.kind == "for");
        let ctx = Ctx { in_macro, in_loop };
        match tag.kind {
            TagKind::Expr => {
                let g = guards_now(&frames);
                expr(&tag.tokens, &g, ctx, &mut scan);
            }
            TagKind::Block => {
                let Some(Tok::Ident(keyword)) = tag.tokens.first().map(|t| t.tok) else {
                    continue;
                };
                let rest = &tag.tokens[1..];
                let outer = guards_now(&frames);
                match keyword {
                    "if" => {
                        expr(rest, &outer, ctx, &mut scan);
                        let mut body = outer.clone();
                        body.extend(defined_by(rest));
                        frames.push(Frame {
                            kind: "if",
                            outer: outer.clone(),
                            negated: defined_by_negation(rest),
                            body,
                        });
                    }
                    "elif" => {
                        if let Some(f) = frames.last_mut().filter(|f| f.kind == "if") {
                            let mut g = f.outer.clone();
                            g.extend(f.negated.iter().cloned());
                            expr(rest, &g, ctx, &mut scan);
                            let mut body = g;
                            body.extend(defined_by(rest));
                            f.body = body;
                            f.negated.extend(defined_by_negation(rest));
                        }
                    }
                    "else" => {
                        if let Some(f) = frames.last_mut() {
                            let mut body = f.outer.clone();
                            if f.kind == "if" {
                                body.extend(f.negated.iter().cloned());
                            }
                            f.body = body;
                        }
                    }
                    "for" => {
                        let split = rest
                            .iter()
                            .position(|t| t.tok == Tok::Ident("in"))
                            .unwrap_or(rest.len());
                        bind_names(&rest[..split], &mut scan);
                        let iter = rest.get(split + 1..).unwrap_or(&[]);
                        // The loop variables may be filtered by an inline `if`.
                        let iter: Vec<Token<'_>> = iter
                            .iter()
                            .copied()
                            .filter(|t| t.tok != Tok::Ident("recursive"))
                            .collect();
                        expr_with_inline_if(&iter, &outer, ctx, &mut scan);
                        frames.push(Frame::plain("for", outer));
                    }
                    "set" => {
                        let eq = rest.iter().position(|t| t.tok == Tok::Op("="));
                        match eq {
                            Some(eq) => {
                                bind_names(&rest[..eq], &mut scan);
                                expr(&rest[eq + 1..], &outer, ctx, &mut scan);
                            }
                            None => {
                                // `{% set x | filter %}…{% endset %}`
                                let pipe = rest
                                    .iter()
                                    .position(|t| t.tok == Tok::Op("|"))
                                    .unwrap_or(rest.len());
                                bind_names(&rest[..pipe], &mut scan);
                                filter_chain(&rest[pipe..], &outer, ctx, &mut scan);
                                frames.push(Frame::plain("set", outer));
                            }
                        }
                    }
                    "with" => {
                        for part in split_top(rest, ",") {
                            match part.iter().position(|t| t.tok == Tok::Op("=")) {
                                Some(eq) => {
                                    bind_names(&part[..eq], &mut scan);
                                    expr(&part[eq + 1..], &outer, ctx, &mut scan);
                                }
                                None => expr(part, &outer, ctx, &mut scan),
                            }
                        }
                        frames.push(Frame::plain("with", outer));
                    }
                    "macro" => {
                        if let Some(Token {
                            tok: Tok::Ident(name),
                            ..
                        }) = rest.first()
                        {
                            scan.locals.insert((*name).to_owned());
                        }
                        macro_params(rest.get(1..).unwrap_or(&[]), &outer, ctx, &mut scan);
                        // A macro body runs where it is called: nothing is known there.
                        frames.push(Frame::plain("macro", BTreeSet::new()));
                    }
                    "call" => {
                        let mut rest = rest;
                        if rest.first().map(|t| t.tok) == Some(Tok::Op("(")) {
                            let close = matching_close(rest, 0).unwrap_or(rest.len() - 1);
                            macro_params(&rest[..=close], &outer, ctx, &mut scan);
                            rest = &rest[close + 1..];
                        }
                        expr(rest, &outer, ctx, &mut scan);
                        frames.push(Frame::plain("call", BTreeSet::new()));
                    }
                    "filter" => {
                        let mut chain = vec![Token {
                            tok: Tok::Op("|"),
                            at: tag.tokens[0].at,
                        }];
                        chain.extend_from_slice(rest);
                        filter_chain(&chain, &outer, ctx, &mut scan);
                        frames.push(Frame::plain("filter", outer));
                    }
                    "autoescape" | "block" => {
                        expr(rest, &outer, ctx, &mut scan);
                        let kind = if keyword == "block" {
                            "block"
                        } else {
                            "autoescape"
                        };
                        frames.push(Frame::plain(kind, outer));
                    }
                    "do" => expr(rest, &outer, ctx, &mut scan),
                    "include" | "import" | "from" | "extends" => {
                        scan.includes.push((keyword.to_owned(), tag.tokens[0].at));
                    }
                    k if k.starts_with("end") => {
                        frames.pop();
                    }
                    _ => expr(rest, &outer, ctx, &mut scan),
                }
            }
        }
    }
    scan
}

/// Variables a `when` condition being true proves defined (see the module docs): the
/// section's text may use them freely.
pub(crate) fn condition_guards(expression: &str) -> BTreeSet<String> {
    lex(expression, true)
        .first()
        .map(|tag| defined_by(&tag.tokens))
        .unwrap_or_default()
}

/// A comparison in a `when` condition between something whose values are known before
/// any render and literals: a variable (`audience == 'external'`, `audience != 'x'`,
/// `audience in ['a', 'b']`, `… not in …`) or the visible tools (`'grep' in tools`,
/// `'grep' not in tools`). Only these exact shapes are recognised, each an operand of
/// the condition's `and`/`or` (under any `not` and parentheses).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LiteralComparison {
    /// The variable compared, or `tools` for membership in the visible tools.
    pub(crate) subject: String,
    /// The comparison is true when the subject is *not* among the literals (`!=`,
    /// `not in`).
    pub(crate) negated: bool,
    /// A list of literals (`in [...]`) rather than one (`==`, `!=`, `'x' in tools`).
    pub(crate) list: bool,
    /// Each literal: its value and the byte range of its text (quotes included).
    pub(crate) literals: Vec<(ComparedLiteral, std::ops::Range<usize>)>,
    /// The byte range of the whole comparison.
    pub(crate) range: std::ops::Range<usize>,
}

/// A literal a [`LiteralComparison`] compares with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ComparedLiteral {
    /// `'text'` or `"text"` (without escapes).
    Text(String),
    /// `42`, `-1` is not recognised (it is an expression).
    Integer(i64),
}

/// The [`LiteralComparison`]s of a `when` expression.
pub(crate) fn literal_comparisons(expression: &str) -> Vec<LiteralComparison> {
    let mut out = Vec::new();
    if let Some(tag) = lex(expression, true).first() {
        collect_comparisons(expression, &tag.tokens, &mut out, 0);
    }
    out
}

fn collect_comparisons(
    source: &str,
    tokens: &[Token<'_>],
    out: &mut Vec<LiteralComparison>,
    depth: usize,
) {
    // Deeper than any condition a person writes: stop rather than recurse on.
    if depth > 32 {
        return;
    }
    for alternative in split_top_ident(tokens, "or") {
        for operand in split_top_ident(alternative, "and") {
            let mut operand = operand;
            while let [
                Token {
                    tok: Tok::Ident("not"),
                    ..
                },
                rest @ ..,
            ] = operand
            {
                operand = rest;
            }
            let inner = strip_parens(operand);
            if inner.len() != operand.len() {
                collect_comparisons(source, inner, out, depth + 1);
            } else if let Some(c) = comparison(source, inner) {
                out.push(c);
            }
        }
    }
}

/// One operand as a [`LiteralComparison`], if it has one of the recognised shapes.
fn comparison<'a>(source: &'a str, tokens: &[Token<'a>]) -> Option<LiteralComparison> {
    fn ident<'a>(t: &Token<'a>) -> Option<&'a str> {
        match t.tok {
            Tok::Ident(name) if !KEYWORDS.contains(&name) => Some(name),
            _ => None,
        }
    }
    let literal = |t: &Token<'_>| match t.tok {
        Tok::Literal => literal_at(source, t.at).map(|(v, end)| (v, t.at..end)),
        _ => None,
    };
    let first = tokens.first()?;
    let end = token_end(source, tokens.last()?)?;
    let range = first.at..end;
    let found = |subject: &str, negated, list, literals| {
        Some(LiteralComparison {
            subject: subject.to_owned(),
            negated,
            list,
            literals,
            range: range.clone(),
        })
    };
    match tokens {
        // `audience == 'external'`, `'external' != audience`
        [
            a,
            Token {
                tok: Tok::Op(op @ ("==" | "!=")),
                ..
            },
            b,
        ] => {
            let (name, lit) = match (ident(a), ident(b)) {
                (Some(name), None) => (name, literal(b)?),
                (None, Some(name)) => (name, literal(a)?),
                _ => return None,
            };
            (name != "tools").then_some(())?;
            found(name, *op == "!=", false, vec![lit])
        }
        // `'grep' in tools`, `'grep' not in tools`
        [
            lit,
            Token {
                tok: Tok::Ident("in"),
                ..
            },
            Token {
                tok: Tok::Ident("tools"),
                ..
            },
        ] => found("tools", false, false, vec![literal(lit)?]),
        [
            lit,
            Token {
                tok: Tok::Ident("not"),
                ..
            },
            Token {
                tok: Tok::Ident("in"),
                ..
            },
            Token {
                tok: Tok::Ident("tools"),
                ..
            },
        ] => found("tools", true, false, vec![literal(lit)?]),
        // `audience in ['a', 'b']`, `audience not in ('a', 'b')`
        [var, rest @ ..] => {
            let name = ident(var).filter(|n| *n != "tools")?;
            let (negated, rest) = match rest {
                [
                    Token {
                        tok: Tok::Ident("in"),
                        ..
                    },
                    rest @ ..,
                ] => (false, rest),
                [
                    Token {
                        tok: Tok::Ident("not"),
                        ..
                    },
                    Token {
                        tok: Tok::Ident("in"),
                        ..
                    },
                    rest @ ..,
                ] => (true, rest),
                _ => return None,
            };
            let (open, close) = match rest {
                [
                    Token {
                        tok: Tok::Op(open @ ("[" | "(")),
                        ..
                    },
                    ..,
                    Token {
                        tok: Tok::Op(close),
                        ..
                    },
                ] => (*open, *close),
                _ => return None,
            };
            if (open, close) != ("[", "]") && (open, close) != ("(", ")") {
                return None;
            }
            let items = &rest[1..rest.len() - 1];
            let mut literals = Vec::new();
            for (i, t) in items.iter().enumerate() {
                if i % 2 == 1 {
                    (t.tok == Tok::Op(",")).then_some(())?;
                } else {
                    literals.push(literal(t)?);
                }
            }
            (!literals.is_empty()).then_some(())?;
            found(name, negated, true, literals)
        }
        _ => None,
    }
}

/// The literal starting at byte `at` (a quoted text without escapes, or a whole number)
/// and the offset just past it.
fn literal_at(source: &str, at: usize) -> Option<(ComparedLiteral, usize)> {
    let rest = source.get(at..)?;
    let quote = rest.chars().next()?;
    if quote == '\'' || quote == '"' {
        let close = rest[1..].find(quote)? + 1;
        let text = &rest[1..close];
        if text.contains('\\') {
            return None;
        }
        return Some((ComparedLiteral::Text(text.to_owned()), at + close + 1));
    }
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let number = rest[..digits].parse().ok()?;
    // `1.5`, `1e3`, `0x1F`: not a whole number written plainly.
    if rest[digits..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.' || c == '_') {
        return None;
    }
    Some((ComparedLiteral::Integer(number), at + digits))
}

/// The offset just past token `t`.
fn token_end(source: &str, t: &Token<'_>) -> Option<usize> {
    match t.tok {
        Tok::Ident(name) => Some(t.at + name.len()),
        Tok::Op(op) => Some(t.at + op.len()),
        Tok::Literal => {
            let rest = source.get(t.at..)?;
            match rest.chars().next()? {
                q @ ('\'' | '"') => rest[1..].find(q).map(|i| t.at + i + 2),
                _ => Some(
                    t.at + rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                        .unwrap_or(rest.len()),
                ),
            }
        }
    }
}

#[derive(Debug)]
struct Frame {
    kind: &'static str,
    /// Guards outside the statement.
    outer: BTreeSet<String>,
    /// Variables known defined because an earlier condition of this `if` chain was false.
    negated: BTreeSet<String>,
    /// Guards in the current body.
    body: BTreeSet<String>,
}

impl Frame {
    fn plain(kind: &'static str, guards: BTreeSet<String>) -> Frame {
        Frame {
            kind,
            outer: guards.clone(),
            negated: BTreeSet::new(),
            body: guards,
        }
    }
}

#[derive(Clone, Copy)]
struct Ctx {
    in_macro: bool,
    in_loop: bool,
}

fn bind_names(tokens: &[Token<'_>], scan: &mut TemplateScan) {
    for (i, t) in tokens.iter().enumerate() {
        if let Tok::Ident(name) = t.tok
            && !KEYWORDS.contains(&name)
            && !(i > 0 && tokens[i - 1].tok == Tok::Op("."))
        {
            scan.locals.insert(name.to_owned());
        }
    }
}

/// `(a, b=expr, …)` of a macro or call block: the names are locals, defaults expressions.
fn macro_params(
    tokens: &[Token<'_>],
    guards: &BTreeSet<String>,
    ctx: Ctx,
    scan: &mut TemplateScan,
) {
    let inner = match (tokens.first(), tokens.last()) {
        (Some(a), Some(b))
            if a.tok == Tok::Op("(") && b.tok == Tok::Op(")") && tokens.len() >= 2 =>
        {
            &tokens[1..tokens.len() - 1]
        }
        _ => tokens,
    };
    for part in split_top(inner, ",") {
        match part.iter().position(|t| t.tok == Tok::Op("=")) {
            Some(eq) => {
                bind_names(&part[..eq], scan);
                expr(&part[eq + 1..], guards, ctx, scan);
            }
            None => bind_names(part, scan),
        }
    }
}

/// `| f(args) | g …` (a filter block or a set block): read as an expression, the names
/// after `|` are filters.
fn filter_chain(
    tokens: &[Token<'_>],
    guards: &BTreeSet<String>,
    ctx: Ctx,
    scan: &mut TemplateScan,
) {
    expr(tokens, guards, ctx, scan);
}

/// `iterable if cond` of a for loop.
fn expr_with_inline_if(
    tokens: &[Token<'_>],
    guards: &BTreeSet<String>,
    ctx: Ctx,
    scan: &mut TemplateScan,
) {
    match top_level_position(tokens, |t| t == Tok::Ident("if")) {
        Some(i) => {
            expr(&tokens[..i], guards, ctx, scan);
            expr(&tokens[i + 1..], guards, ctx, scan);
        }
        None => expr(tokens, guards, ctx, scan),
    }
}

/// Analyse one expression: record filters, tests, calls and variable references.
fn expr(tokens: &[Token<'_>], guards: &BTreeSet<String>, ctx: Ctx, scan: &mut TemplateScan) {
    // Ternary: `x if c else y` (the loosest operator).
    if let Some(i) = top_level_position(tokens, |t| t == Tok::Ident("if")) {
        let rest = &tokens[i + 1..];
        let (cond, otherwise) = match top_level_position(rest, |t| t == Tok::Ident("else")) {
            Some(e) => (&rest[..e], &rest[e + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        expr(cond, guards, ctx, scan);
        let mut then_guards = guards.clone();
        then_guards.extend(defined_by(cond));
        expr(&tokens[..i], &then_guards, ctx, scan);
        let mut else_guards = guards.clone();
        else_guards.extend(defined_by_negation(cond));
        expr(otherwise, &else_guards, ctx, scan);
        return;
    }
    // `a or b`: `b` is evaluated only when `a` is false.
    let disjuncts = split_top_ident(tokens, "or");
    if disjuncts.len() > 1 {
        let mut g = guards.clone();
        for d in disjuncts {
            expr(d, &g, ctx, scan);
            g.extend(defined_by_negation(d));
        }
        return;
    }
    // `a and b`: `b` is evaluated only when `a` is true.
    let conjuncts = split_top_ident(tokens, "and");
    if conjuncts.len() > 1 {
        let mut g = guards.clone();
        for c in conjuncts {
            expr(c, &g, ctx, scan);
            g.extend(defined_by(c));
        }
        return;
    }
    atoms(tokens, guards, ctx, scan);
}

/// Record the names in an expression without `if`/`or`/`and` at its top level.
fn atoms(tokens: &[Token<'_>], guards: &BTreeSet<String>, ctx: Ctx, scan: &mut TemplateScan) {
    let tok = |i: usize| tokens.get(i).map(|t| t.tok);
    for (i, t) in tokens.iter().enumerate() {
        let Tok::Ident(name) = t.tok else {
            continue;
        };
        let prev = i.checked_sub(1).and_then(&tok);
        let prev2 = i.checked_sub(2).and_then(&tok);
        if prev == Some(Tok::Op(".")) {
            continue; // an attribute or a method
        }
        if prev == Some(Tok::Op("|")) {
            scan.filters.push((name.to_owned(), t.at));
            continue;
        }
        let after_is = prev == Some(Tok::Ident("is"))
            || (prev == Some(Tok::Ident("not")) && prev2 == Some(Tok::Ident("is")));
        if after_is && name != "not" {
            scan.tests.push((name.to_owned(), t.at));
            continue;
        }
        if KEYWORDS.contains(&name) {
            continue;
        }
        let next = tok(i + 1);
        if next == Some(Tok::Op("(")) {
            scan.calls.push(Call {
                name: name.to_owned(),
                offset: t.at,
                in_macro: ctx.in_macro,
                in_loop: ctx.in_loop,
            });
            continue;
        }
        // A keyword argument's name: `f(x, name=value)`.
        if next == Some(Tok::Op("=")) {
            continue;
        }
        let tested = next == Some(Tok::Ident("is"))
            && matches!(
                (tok(i + 2), tok(i + 3)),
                (Some(Tok::Ident("defined" | "undefined")), _)
                    | (
                        Some(Tok::Ident("not")),
                        Some(Tok::Ident("defined" | "undefined"))
                    )
            );
        let defaulted =
            next == Some(Tok::Op("|")) && matches!(tok(i + 2), Some(Tok::Ident("default" | "d")));
        if tested || defaulted || guards.contains(name) {
            *scan.guarded.entry(name.to_owned()).or_default() += 1;
        } else {
            scan.unguarded
                .entry(name.to_owned())
                .or_default()
                .push(t.at);
        }
    }
}

/// Variables an expression being *true* proves defined: the `v is defined` (or
/// `v is not undefined`) operands of its top-level `and` chain.
fn defined_by(tokens: &[Token<'_>]) -> BTreeSet<String> {
    let tokens = strip_parens(tokens);
    if top_level_position(tokens, |t| t == Tok::Ident("if")).is_some()
        || split_top_ident(tokens, "or").len() > 1
    {
        return BTreeSet::new();
    }
    split_top_ident(tokens, "and")
        .into_iter()
        .filter_map(|c| definedness_test(strip_parens(c)).filter(|(_, defined)| *defined))
        .map(|(v, _)| v)
        .collect()
}

/// Variables an expression being *false* proves defined: the `v is undefined` (or
/// `v is not defined`) operands of its top-level `or` chain.
fn defined_by_negation(tokens: &[Token<'_>]) -> BTreeSet<String> {
    let tokens = strip_parens(tokens);
    if top_level_position(tokens, |t| t == Tok::Ident("if")).is_some()
        || split_top_ident(tokens, "and").len() > 1
    {
        return BTreeSet::new();
    }
    split_top_ident(tokens, "or")
        .into_iter()
        .filter_map(|d| definedness_test(strip_parens(d)).filter(|(_, defined)| !*defined))
        .map(|(v, _)| v)
        .collect()
}

/// `v is defined` → `(v, true)`; `v is undefined` / `v is not defined` → `(v, false)`.
fn definedness_test(tokens: &[Token<'_>]) -> Option<(String, bool)> {
    let toks: Vec<Tok<'_>> = tokens.iter().map(|t| t.tok).collect();
    match toks.as_slice() {
        [Tok::Ident(v), Tok::Ident("is"), Tok::Ident("defined")]
        | [
            Tok::Ident(v),
            Tok::Ident("is"),
            Tok::Ident("not"),
            Tok::Ident("undefined"),
        ] => Some(((*v).to_owned(), true)),
        [Tok::Ident(v), Tok::Ident("is"), Tok::Ident("undefined")]
        | [
            Tok::Ident(v),
            Tok::Ident("is"),
            Tok::Ident("not"),
            Tok::Ident("defined"),
        ]
        | [
            Tok::Ident("not"),
            Tok::Ident(v),
            Tok::Ident("is"),
            Tok::Ident("defined"),
        ] => Some(((*v).to_owned(), false)),
        _ => None,
    }
    .filter(|(v, _)| !KEYWORDS.contains(&v.as_str()))
}

fn strip_parens<'t, 'a>(mut tokens: &'t [Token<'a>]) -> &'t [Token<'a>] {
    while tokens.len() >= 2
        && tokens[0].tok == Tok::Op("(")
        && matching_close(tokens, 0) == Some(tokens.len() - 1)
    {
        tokens = &tokens[1..tokens.len() - 1];
    }
    tokens
}

fn matching_close(tokens: &[Token<'_>], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Op("(" | "[" | "{") => depth += 1,
            Tok::Op(")" | "]" | "}") => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn top_level_position(tokens: &[Token<'_>], want: impl Fn(Tok<'_>) -> bool) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate() {
        match t.tok {
            Tok::Op("(" | "[" | "{") => depth += 1,
            Tok::Op(")" | "]" | "}") => depth = depth.saturating_sub(1),
            tok if depth == 0 && want(tok) => return Some(i),
            _ => {}
        }
    }
    None
}

fn split_top_ident<'t, 'a>(tokens: &'t [Token<'a>], word: &str) -> Vec<&'t [Token<'a>]> {
    split_by(tokens, |t| t == Tok::Ident(word))
}

fn split_top<'t, 'a>(tokens: &'t [Token<'a>], op: &str) -> Vec<&'t [Token<'a>]> {
    split_by(tokens, |t| t == Tok::Op(op))
}

fn split_by<'t, 'a>(
    tokens: &'t [Token<'a>],
    is_sep: impl Fn(Tok<'_>) -> bool,
) -> Vec<&'t [Token<'a>]> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, t) in tokens.iter().enumerate() {
        match t.tok {
            Tok::Op("(" | "[" | "{") => depth += 1,
            Tok::Op(")" | "]" | "}") => depth = depth.saturating_sub(1),
            tok if depth == 0 && is_sep(tok) => {
                parts.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tokens[start..]);
    parts
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum TagKind {
    Expr,
    Block,
}

#[derive(Debug)]
struct Tag<'a> {
    kind: TagKind,
    tokens: Vec<Token<'a>>,
}

/// Split a template into its `{{ … }}` and `{% … %}` tags (comments and `raw` blocks
/// skipped), each as tokens with byte offsets.
fn lex(source: &str, expression: bool) -> Vec<Tag<'_>> {
    let bytes = source.as_bytes();
    let mut tags = Vec::new();
    if expression {
        let (tokens, _) = lex_code(source, 0, None);
        tags.push(Tag {
            kind: TagKind::Expr,
            tokens,
        });
        return tags;
    }
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        match bytes[i + 1] {
            b'#' => {
                i = source[i + 2..]
                    .find("#}")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
            }
            b'{' | b'%' => {
                let block = bytes[i + 1] == b'%';
                let mut start = i + 2;
                if matches!(bytes.get(start), Some(b'-' | b'+')) {
                    start += 1;
                }
                let end_marker = if block { "%}" } else { "}}" };
                let (tokens, end) = lex_code(source, start, Some(end_marker));
                let is_raw = block
                    && matches!(tokens.first().map(|t| t.tok), Some(Tok::Ident("raw")))
                    && tokens.len() == 1;
                tags.push(Tag {
                    kind: if block { TagKind::Block } else { TagKind::Expr },
                    tokens,
                });
                i = end;
                if is_raw {
                    i = skip_raw(source, i);
                }
            }
            _ => i += 1,
        }
    }
    tags
}

/// The end of `{% endraw %}` after offset `from`.
fn skip_raw(source: &str, from: usize) -> usize {
    let mut at = from;
    while let Some(open) = source[at..].find("{%") {
        let tag_start = at + open;
        let rest = source[tag_start + 2..].trim_start_matches(['-', '+']);
        if rest.trim_start().starts_with("endraw") {
            return source[tag_start..]
                .find("%}")
                .map_or(source.len(), |e| tag_start + e + 2);
        }
        at = tag_start + 2;
    }
    source.len()
}

const OPS: &[&str] = &[
    "**", "//", "==", "!=", ">=", "<=", "+", "-", "*", "/", "%", ".", ",", ":", "~", "=", "|", ">",
    "<", "(", ")", "[", "]", "{", "}", "!",
];

/// Tokens from `start` up to `end_marker` (or the end); returns them and the offset just
/// past the marker.
fn lex_code<'a>(
    source: &'a str,
    start: usize,
    end_marker: Option<&str>,
) -> (Vec<Token<'a>>, usize) {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut i = start;
    let mut depth = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(marker) = end_marker
            && depth == 0
        {
            let rest = &source[i..];
            for prefix in ["-", "+", ""] {
                if rest.starts_with(prefix) && rest[prefix.len()..].starts_with(marker) {
                    return (tokens, i + prefix.len() + marker.len());
                }
            }
        }
        if b.is_ascii_whitespace() {
            i += 1;
        } else if b == b'\'' || b == b'"' {
            let at = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            tokens.push(Token {
                tok: Tok::Literal,
                at,
            });
        } else if b.is_ascii_digit() {
            let at = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'_' | b'.'))
            {
                // `1.foo` is not a number followed by an attribute in practice.
                i += 1;
            }
            tokens.push(Token {
                tok: Tok::Literal,
                at,
            });
        } else if b.is_ascii_alphabetic() || b == b'_' {
            let at = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            tokens.push(Token {
                tok: Tok::Ident(&source[at..i]),
                at,
            });
        } else {
            let rest = &source[i..];
            let op = OPS.iter().find(|op| rest.starts_with(**op)).copied();
            match op {
                Some(op) => {
                    match op {
                        "(" | "[" | "{" => depth += 1,
                        ")" | "]" | "}" => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    tokens.push(Token {
                        tok: Tok::Op(op),
                        at: i,
                    });
                    i += op.len();
                }
                None => {
                    // Not ASCII (minijinja's identifiers are ASCII here): skip the char.
                    i += rest.chars().next().map_or(1, char::len_utf8);
                }
            }
        }
    }
    (tokens, bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparisons(expr: &str) -> Vec<(String, bool, bool, Vec<ComparedLiteral>, &str)> {
        literal_comparisons(expr)
            .into_iter()
            .map(|c| {
                let range = c.range.clone();
                (
                    c.subject,
                    c.negated,
                    c.list,
                    c.literals.into_iter().map(|(l, _)| l).collect(),
                    &expr[range],
                )
            })
            .collect()
    }

    #[test]
    fn literal_comparisons_in_conditions() {
        let text = |t: &str| ComparedLiteral::Text(t.to_owned());
        assert_eq!(
            comparisons("audience == 'extrenal'"),
            [(
                "audience".into(),
                false,
                false,
                vec![text("extrenal")],
                "audience == 'extrenal'"
            )]
        );
        assert_eq!(
            comparisons("\"x\" != audience"),
            [(
                "audience".into(),
                true,
                false,
                vec![text("x")],
                "\"x\" != audience"
            )]
        );
        assert_eq!(
            comparisons("level in [1, 2] and not ('grepp' in tools)"),
            [
                (
                    "level".into(),
                    false,
                    true,
                    vec![ComparedLiteral::Integer(1), ComparedLiteral::Integer(2)],
                    "level in [1, 2]"
                ),
                (
                    "tools".into(),
                    false,
                    false,
                    vec![text("grepp")],
                    "'grepp' in tools"
                ),
            ]
        );
        assert_eq!(
            comparisons("a not in ('x',) or 'bash' not in tools"),
            [
                ("a".into(), true, true, vec![text("x")], "a not in ('x',)"),
                (
                    "tools".into(),
                    true,
                    false,
                    vec![text("bash")],
                    "'bash' not in tools"
                ),
            ]
        );
        let literal = &literal_comparisons("mode == 'fast'")[0].literals[0];
        assert_eq!(literal.1, 8..14);
        // Other shapes are left alone.
        for expr in [
            "a.b == 'x'",
            "a == b",
            "a == 'x' ~ y",
            "a in ['x', y]",
            "a == 'it\\'s'",
            "a == 1.5",
            "tools == 'x'",
            "'x' in a",
            "a is defined",
            "",
        ] {
            assert_eq!(comparisons(expr), [], "{expr}");
        }
    }

    fn names(list: &[(String, usize)]) -> Vec<&str> {
        list.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn none() -> BTreeSet<String> {
        BTreeSet::new()
    }

    #[test]
    fn filters_tests_and_calls_in_every_branch() {
        let src = "{% if os == 'windows' %}{{ shell | shout }}{% else %}{{ x is odd }}{% endif %}\
                   {{ range(3) | join(',') }}{% filter upper %}a{% endfilter %}{{ v | default('n') }}";
        let s = scan(src, false, &none());
        assert_eq!(names(&s.filters), vec!["shout", "join", "upper", "default"]);
        assert_eq!(names(&s.tests), vec!["odd"]);
        let calls: Vec<&str> = s.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(calls, vec!["range"]);
        assert_eq!(s.filters[0].1, src.find("shout").unwrap());
    }

    #[test]
    fn strings_comments_raw_and_attributes_are_not_names() {
        let src = "{# {{ nope | bad }} #}{% raw %}{{ x | bad }}{% endraw %}{{ 'a | b' }}{{ x.upper() }}{{ x is not odd }}";
        let s = scan(src, false, &none());
        assert!(s.filters.is_empty(), "{:?}", s.filters);
        assert_eq!(names(&s.tests), vec!["odd"]);
        assert!(s.calls.is_empty());
    }

    #[test]
    fn macros_and_locals() {
        let src = "{% macro m(a, b=x | upper) %}{{ a }}{{ caller() }}{% endmacro %}{% call m(1) %}hi{% endcall %}\
                   {% for i in items if i is odd %}{{ loop.index }}{% endfor %}{% set z = 1 %}";
        let s = scan(src, false, &none());
        assert!(s.locals.contains("m") && s.locals.contains("a") && s.locals.contains("z"));
        assert!(s.locals.contains("i"));
        let caller = s.calls.iter().find(|c| c.name == "caller").unwrap();
        assert!(caller.in_macro);
        assert_eq!(names(&s.filters), vec!["upper"]);
        assert_eq!(names(&s.tests), vec!["odd"]);
    }

    #[test]
    fn guards() {
        let unguarded = |src: &str, expression: bool| {
            let s = scan(src, expression, &none());
            s.unguarded.get("v").cloned().unwrap_or_default().len()
        };
        for ok in [
            "{{ v | default('none') }}",
            "{{ v | d('none') }}",
            "{% if v is defined %}{{ v }}{% endif %}",
            "{% if v is defined and v == 'a' %}{{ v }}{% endif %}",
            "{% if v is undefined %}none{% else %}{{ v }}{% endif %}",
            "{% if v is not defined %}none{% elif v == 'a' %}{{ v }}{% else %}{{ v }}{% endif %}",
            "{{ v if v is defined else 'n' }}",
            "{{ 'n' if v is undefined else v }}",
            "{{ v is undefined or v == 'a' }}",
            "{% if (v is defined) and (x or v) %}{{ v }}{% endif %}",
        ] {
            assert_eq!(unguarded(ok, false), 0, "{ok}");
        }
        for bad in [
            "{{ v }}",
            "{% if v %}x{% endif %}",
            "{{ v.x | default('n') }}",
            "{% if v is defined or x %}{{ v }}{% endif %}",
            "{% if v is defined %}{% else %}{{ v }}{% endif %}",
            "{% if v is defined %}{% endif %}{{ v }}",
            "{% if v is defined %}{% macro m() %}{{ v }}{% endmacro %}{% endif %}",
            "{{ v if x else 'n' }}",
        ] {
            assert!(unguarded(bad, false) > 0, "{bad}");
        }
        assert_eq!(unguarded("v is defined and v == 'a'", true), 0);
        assert!(unguarded("v == 'a'", true) > 0);
        let when: BTreeSet<String> = ["v".to_owned()].into();
        assert!(scan("{{ v }}", false, &when).unguarded.is_empty());
    }

    #[test]
    fn includes_are_found() {
        let s = scan("a {% include 'x' %} {%- import 'y' as z %}", false, &none());
        assert_eq!(names(&s.includes), vec!["include", "import"]);
    }

    #[test]
    fn never_panics_on_odd_input() {
        for src in [
            "{{",
            "{%",
            "{{ 'unterminated",
            "{% if %}",
            "{% endif %}{% else %}",
            "{{ ) ] } }}",
            "é{{ é }}",
            "{#",
        ] {
            let _ = scan(src, false, &none());
            let _ = scan(src, true, &none());
        }
    }
}
