//! How a declared name becomes a Rust identifier: one conversion each for type names, field
//! names (raw when a keyword) and the words of an enum, used by every generated artefact.

use quote::format_ident;

/// `get_object`, `objects-list`, `ResourceView` → `GetObject`, `ObjectsList`, `ResourceView`.
pub fn pascal(name: &str) -> String {
    let mut out = String::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let shouting = part.chars().all(|c| !c.is_ascii_lowercase());
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            if shouting {
                out.extend(chars.map(|c| c.to_ascii_lowercase()));
            } else {
                out.extend(chars);
            }
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) || out.is_empty() {
        out.insert(0, 'V');
    }
    out
}

/// A property name as a Rust field name: snake case, raw when it is a keyword.
pub fn field_ident(name: &str) -> proc_macro2::Ident {
    let mut snake = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !snake.ends_with('_') {
                snake.push('_');
            }
            snake.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            snake.push(c);
        } else if !snake.ends_with('_') {
            snake.push('_');
        }
    }
    if snake.is_empty() || snake.starts_with(|c: char| c.is_ascii_digit()) {
        snake.insert(0, '_');
    }
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern",
        "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
        "pub", "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use",
        "where", "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv",
        "typeof", "unsized", "virtual", "yield", "try", "gen",
    ];
    if ["self", "Self", "super", "crate"].contains(&snake.as_str()) {
        snake.push('_');
    }
    if KEYWORDS.contains(&snake.as_str()) {
        proc_macro2::Ident::new_raw(&snake, proc_macro2::Span::call_site())
    } else {
        format_ident!("{}", snake)
    }
}

pub(super) fn type_ident(name: &str) -> proc_macro2::Ident {
    format_ident!("{}", name)
}
