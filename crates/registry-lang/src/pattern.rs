//! The `pattern` dialect: the part of regular-expression syntax that ECMA-262 (with the `u` flag,
//! as JSON Schema validators such as ajv compile a `pattern`) and the `regex` crate read alike.
//! A published pattern is read by clients in ECMA-262 and checked here with `regex`; outside
//! this subset the two disagree (`\d` and `\w` are Unicode-aware here and ASCII there, `.` stops
//! at `\r` there and not here, `\b`, inline flags, `\pL` and nested classes exist on one side
//! only), so a declaration outside it is refused with what to write instead. Compiled by the
//! crate (layer kind schemas) and by `build.rs` (the registry).

use regex_syntax::ast::{
    self, AssertionKind, Ast, ClassSet, ClassSetItem, GroupKind, LiteralKind, SpecialLiteralKind,
};

/// Why `pattern` is outside the shared subset (or not a pattern at all), or `None` when both
/// dialects read it alike.
pub fn problem(pattern: &str) -> Option<String> {
    let parsed = match ast::parse::Parser::new().parse(pattern) {
        Ok(a) => a,
        Err(e) => return Some(format!("is not a valid regular expression: {e}")),
    };
    // Parsing to the AST is lenient about some things the compiler refuses; the compiler's word
    // is final for what `validate` will run.
    if let Err(e) = regex_syntax::Parser::new().parse(pattern) {
        return Some(format!("is not a valid regular expression: {e}"));
    }
    let mut why = None;
    walk(&parsed, pattern, &mut why);
    why.map(|w| {
        format!("{w}; a pattern must read alike in ECMA-262 (how clients check it) and here")
    })
}

fn walk(node: &Ast, text: &str, why: &mut Option<String>) {
    if why.is_some() {
        return;
    }
    let refuse = |why: &mut Option<String>, what: String| *why = Some(what);
    match node {
        Ast::Empty(_) => {}
        Ast::Flags(_) => refuse(why, "uses inline flags such as `(?i)`, which ECMA-262 has not".into()),
        Ast::Literal(l) => {
            if l.kind == LiteralKind::Verbatim && "]{}".contains(l.c) {
                refuse(why, format!("writes a bare `{}`, which ECMA-262 refuses (escape it)", l.c));
            } else if let Some(w) = literal(l, false) {
                refuse(why, w);
            }
        }
        Ast::Dot(_) => refuse(
            why,
            "uses `.`, which stops at `\\r`, U+2028 and U+2029 in ECMA-262 and only at `\\n` here (write a class such as `[^\\n]`)".into(),
        ),
        Ast::Assertion(a) => match a.kind {
            AssertionKind::StartLine | AssertionKind::EndLine => {}
            AssertionKind::WordBoundary | AssertionKind::NotWordBoundary => refuse(
                why,
                "uses `\\b` or `\\B`, whose words are ASCII in ECMA-262 and Unicode here".into(),
            ),
            _ => refuse(
                why,
                format!("uses the assertion `{}`, which ECMA-262 has not", &text[a.span.start.offset..a.span.end.offset]),
            ),
        },
        Ast::ClassUnicode(c) => refuse(
            why,
            format!(
                "uses the Unicode class `{}`, which ECMA-262 writes differently",
                &text[c.span.start.offset..c.span.end.offset]
            ),
        ),
        Ast::ClassPerl(c) => refuse(why, perl(&text[c.span.start.offset..c.span.end.offset])),
        Ast::ClassBracketed(c) => class(&c.kind, text, why),
        Ast::Repetition(r) => walk(&r.ast, text, why),
        Ast::Group(g) => {
            match &g.kind {
                GroupKind::CaptureIndex(_) => {}
                GroupKind::CaptureName { starts_with_p, .. } => {
                    if *starts_with_p {
                        refuse(why, "names a group with `(?P<…>`, which ECMA-262 has not (write `(?<…>`)".into());
                    }
                }
                GroupKind::NonCapturing(flags) => {
                    if !flags.items.is_empty() {
                        refuse(why, "uses inline flags such as `(?i:…)`, which ECMA-262 has not".into());
                    }
                }
            }
            walk(&g.ast, text, why);
        }
        Ast::Alternation(a) => a.asts.iter().for_each(|n| walk(n, text, why)),
        Ast::Concat(c) => c.asts.iter().for_each(|n| walk(n, text, why)),
    }
}

fn perl(written: &str) -> String {
    format!(
        "uses `{written}`, which matches Unicode here and ASCII in ECMA-262 (write the class out, such as `[0-9]`, `[A-Za-z0-9_]` or `[ \\t\\n]`)"
    )
}

/// Why a literal is written in a way one dialect reads and the other refuses.
fn literal(l: &ast::Literal, in_class: bool) -> Option<String> {
    let ok = match &l.kind {
        LiteralKind::Verbatim => true,
        // ECMA-262's `u` flag lets only its syntax characters and `/` be escaped (and `-` in a
        // class); `regex` calls more characters meta.
        LiteralKind::Meta | LiteralKind::Superfluous => {
            "^$\\.*+?()[]{}|/".contains(l.c) || (in_class && l.c == '-')
        }
        LiteralKind::Special(s) => matches!(
            s,
            SpecialLiteralKind::Tab
                | SpecialLiteralKind::LineFeed
                | SpecialLiteralKind::CarriageReturn
                | SpecialLiteralKind::FormFeed
                | SpecialLiteralKind::VerticalTab
        ),
        // `\x7F` is read alike; `\x{…}`, `\u{…}` without the flag, octal and `\U` are not.
        LiteralKind::HexFixed(ast::HexLiteralKind::X) => true,
        LiteralKind::HexFixed(ast::HexLiteralKind::UnicodeShort) => true,
        LiteralKind::Octal | LiteralKind::HexFixed(_) | LiteralKind::HexBrace(_) => false,
    };
    (!ok).then(|| {
        format!(
            "writes `{}` as an escape ECMA-262 reads differently or refuses",
            l.c.escape_default()
        )
    })
}

fn class(set: &ClassSet, text: &str, why: &mut Option<String>) {
    match set {
        ClassSet::BinaryOp(_) => {
            *why = Some("uses a class operation (`&&`, `--`, `~~`), which ECMA-262 has not".into())
        }
        ClassSet::Item(item) => class_item(item, text, why),
    }
}

fn class_item(item: &ClassSetItem, text: &str, why: &mut Option<String>) {
    if why.is_some() {
        return;
    }
    match item {
        ClassSetItem::Empty(_) => {}
        ClassSetItem::Literal(l) => *why = literal(l, true),
        ClassSetItem::Range(r) => *why = literal(&r.start, true).or_else(|| literal(&r.end, true)),
        ClassSetItem::Ascii(_) => {
            *why = Some("uses a POSIX class such as `[:alpha:]`, which ECMA-262 has not".into())
        }
        ClassSetItem::Unicode(c) => {
            *why = Some(format!(
                "uses the Unicode class `{}`, which ECMA-262 writes differently",
                &text[c.span.start.offset..c.span.end.offset]
            ))
        }
        ClassSetItem::Perl(c) => *why = Some(perl(&text[c.span.start.offset..c.span.end.offset])),
        ClassSetItem::Bracketed(_) => {
            *why =
                Some("nests a class inside a class, which ECMA-262 reads as a literal `[`".into())
        }
        ClassSetItem::Union(u) => u.items.iter().for_each(|i| class_item(i, text, why)),
    }
}
