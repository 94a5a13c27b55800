//! Markdown that stays Markdown whatever text it carries: table cells that no `|`, newline or
//! HTML tag in a description can break, fences longer than any backtick run inside them, long
//! texts cut with a line saying so, and schema tables shared by the capability and layer
//! references. Knows nothing of the registry or the layer.

use serde_json::Value;

/// `text` as one table cell: on one line, its pipes escaped, and no raw HTML outside its code
/// spans (inside one, `<` is already literal and an entity would show as written).
pub fn cell(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(one_line.len());
    // The length of the backtick run that opened the code span we are in, if any.
    let mut open: Option<usize> = None;
    let mut chars = one_line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => {
                let mut run = 1;
                while chars.peek() == Some(&'`') {
                    chars.next();
                    run += 1;
                }
                open = match open {
                    None => Some(run),
                    Some(n) if n == run => None,
                    still => still,
                };
                out.push_str(&"`".repeat(run));
            }
            '|' => out.push_str("\\|"),
            '<' if open.is_none() => out.push_str("&lt;"),
            '>' if open.is_none() => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

/// `text` as an inline code span, its fence longer than any backtick run inside.
pub fn code(text: &str) -> String {
    let ticks = "`".repeat(longest_run(text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// `text` as inline code inside a table cell.
pub fn code_cell(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let ticks = "`".repeat(longest_run(text, '`') + 1);
    // A code span that starts or ends with a backtick needs a space to stay one span.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{ticks}{pad}{}{pad}{ticks}", one_line.replace('|', "\\|"))
}

/// A table with `header` and `rows`, every cell already made with [`cell`] or [`code_cell`].
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!("| {} |\n", header.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for row in rows {
        let cells: Vec<&str> = (0..header.len())
            .map(|i| row.get(i).map_or("", String::as_str))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// A fenced block of `text` in `language`, its fence longer than any backtick run in it.
pub fn fence(language: &str, text: &str) -> String {
    let ticks = "`".repeat(longest_run(text, '`').max(2) + 1);
    let mut body = text.to_string();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    format!("{ticks}{language}\n{body}{ticks}\n")
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// At most `max_lines` lines of `text`, and when some were cut, how many there were.
pub fn cut(text: &str, max_lines: usize) -> (String, Option<usize>) {
    let total = text.lines().count();
    if total <= max_lines {
        return (text.to_string(), None);
    }
    let mut kept: String = text.lines().take(max_lines).collect::<Vec<_>>().join("\n");
    kept.push('\n');
    (kept, Some(total))
}

/// One row of a schema table: a property (nested ones by their dotted path) and what it takes.
#[derive(Debug, PartialEq)]
pub struct Field {
    pub path: String,
    pub ty: String,
    pub required: bool,
    pub default: Option<String>,
    pub allowed: String,
    pub description: String,
}

/// How deep nested properties are listed; deeper ones are described by their parent's type.
const MAX_DEPTH: usize = 4;

/// The rows of an object schema (JSON Schema as published), nested objects and arrays of
/// objects flattened to `parent.child` and `parent[].child`.
pub fn fields(schema: &Value) -> Vec<Field> {
    let mut out = Vec::new();
    collect(schema, "", 0, &mut out);
    out
}

fn collect(schema: &Value, prefix: &str, depth: usize, out: &mut Vec<Field>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, property) in properties {
        let path = format!("{prefix}{name}");
        out.push(Field {
            path: path.clone(),
            ty: type_of(property),
            required: required.contains(&name.as_str()),
            default: property.get("default").map(compact),
            allowed: allowed(property),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        });
        if depth + 1 >= MAX_DEPTH {
            continue;
        }
        if property.get("properties").is_some() {
            collect(property, &format!("{path}."), depth + 1, out);
        }
        if let Some(items) = property.get("items") {
            if items.get("properties").is_some() {
                collect(items, &format!("{path}[]."), depth + 1, out);
            }
        }
    }
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A schema's type in words: `string`, `array of integer`, `map of string`, `any`.
pub fn type_of(schema: &Value) -> String {
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        let names: Vec<String> = variants.iter().map(type_of).collect();
        return format!("one of: {}", names.join(", "));
    }
    if let Some(name) = schema.get("$ref").and_then(Value::as_str) {
        return name.rsplit('/').next().unwrap_or(name).to_string();
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ if schema.get("const").is_some() => "constant".to_string(),
        _ => "any".to_string(),
    };
    match ty.as_str() {
        "array" => match schema.get("items") {
            Some(items) => format!("array of {}", type_of(items)),
            None => "array".to_string(),
        },
        "object" => match schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) if schema.get("properties").is_none() => {
                format!("map of {}", type_of(values))
            }
            _ => "object".to_string(),
        },
        _ => ty,
    }
}

/// What values a schema allows beyond its type: enum, const, bounds, lengths, pattern.
fn allowed(schema: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(words) = schema.get("enum").and_then(Value::as_array) {
        let words: Vec<String> = words.iter().map(|w| code(&compact(w))).collect();
        parts.push(format!("one of {}", words.join(", ")));
    }
    if let Some(c) = schema.get("const") {
        parts.push(format!("always {}", code(&compact(c))));
    }
    for (key, word) in [
        ("minimum", "≥"),
        ("maximum", "≤"),
        ("minLength", "length ≥"),
        ("maxLength", "length ≤"),
    ] {
        if let Some(n) = schema.get(key) {
            parts.push(format!("{word} {n}"));
        }
    }
    if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
        parts.push(format!("matches {}", code(p)));
    }
    if let Some(items) = schema.get("items") {
        let inner = allowed(items);
        if !inner.is_empty() {
            parts.push(format!("each {inner}"));
        }
    }
    parts.join("; ")
}

/// The table of `fields`, or a line saying there are none.
pub fn fields_table(fields: &[Field]) -> String {
    if fields.is_empty() {
        return "No fields.\n".to_string();
    }
    let rows: Vec<Vec<String>> = fields
        .iter()
        .map(|f| {
            vec![
                code_cell(&f.path),
                cell(&f.ty),
                if f.required { "yes" } else { "no" }.to_string(),
                f.default.as_deref().map(code_cell).unwrap_or_default(),
                cell(&f.allowed),
                cell(&f.description),
            ]
        })
        .collect();
    table(
        &[
            "field",
            "type",
            "required",
            "default",
            "allowed values",
            "description",
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

    /// Every table of `doc` as rows of cell texts (header first), as a Markdown parser reads it.
    pub(crate) fn tables(doc: &str) -> Vec<Vec<Vec<String>>> {
        let mut tables = Vec::new();
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut row: Vec<String> = Vec::new();
        let mut cell_text: Option<String> = None;
        for event in Parser::new_ext(doc, Options::ENABLE_TABLES) {
            match event {
                Event::Start(Tag::Table(_)) => rows.clear(),
                Event::End(TagEnd::Table) => tables.push(std::mem::take(&mut rows)),
                Event::Start(Tag::TableHead | Tag::TableRow) => row.clear(),
                Event::End(TagEnd::TableHead | TagEnd::TableRow) => {
                    rows.push(std::mem::take(&mut row));
                }
                Event::Start(Tag::TableCell) => cell_text = Some(String::new()),
                Event::End(TagEnd::TableCell) => row.push(cell_text.take().unwrap_or_default()),
                Event::Text(t) | Event::Code(t) => {
                    if let Some(c) = cell_text.as_mut() {
                        c.push_str(&t);
                    }
                }
                _ => {}
            }
        }
        tables
    }

    #[test]
    fn a_cell_keeps_its_text_whatever_markdown_it_holds() {
        let nasty = [
            "a | b || c",
            "line one\nline two\n\n# not a heading",
            "<script>alert(1)</script> and <b>bold</b>",
            "`skills/<name>/SKILL.md` and <name>",
            "`code | with pipe`",
            "ends with a backslash \\",
            "| leading pipe",
        ];
        let rows: Vec<Vec<String>> = nasty.iter().map(|t| vec![cell(t), code_cell(t)]).collect();
        let doc = table(&["text", "code"], &rows);
        let parsed = tables(&doc);
        assert_eq!(parsed.len(), 1, "{doc}");
        assert_eq!(parsed[0].len(), nasty.len() + 1, "{doc}");
        for (i, text) in nasty.iter().enumerate() {
            let row = &parsed[0][i + 1];
            assert_eq!(row.len(), 2, "{doc}");
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            // A cell keeps a description's Markdown: a code span renders as code.
            assert_eq!(row[0], words.replace('`', ""), "{doc}");
            assert!(
                !row[0].contains("&lt;"),
                "an entity shown as written: {doc}"
            );
            assert_eq!(row[1].trim(), words, "{doc}");
        }
    }

    #[test]
    fn a_fence_is_longer_than_any_backtick_run_inside() {
        let text = "before\n````\ninside\n````\nafter";
        let doc = format!("{}\nafter the block\n", fence("markdown", text));
        let mut in_block = String::new();
        let mut blocks = 0;
        for event in Parser::new(&doc) {
            match event {
                Event::Start(Tag::CodeBlock(_)) => blocks += 1,
                Event::Text(t) if blocks == 1 && in_block.len() < text.len() => {
                    in_block.push_str(&t)
                }
                _ => {}
            }
        }
        assert_eq!(blocks, 1, "{doc}");
        assert_eq!(in_block.trim_end(), text);
    }

    #[test]
    fn a_schema_with_every_type_becomes_one_row_per_field() {
        let schema = serde_json::json!({
            "type": "object",
            "required": ["s", "i"],
            "properties": {
                "s": { "type": "string", "enum": ["a|b", "c"], "description": "pipes | and\nlines" },
                "i": { "type": "integer", "minimum": 1, "maximum": 9, "default": 3 },
                "n": { "type": "number" },
                "b": { "type": "boolean", "default": true },
                "a": { "type": "array", "items": { "type": "string", "pattern": "^x|y$" } },
                "o": { "type": "object", "properties": { "inner": { "type": "string" } } },
                "m": { "type": "object", "additionalProperties": { "type": "string" } },
                "c": { "const": "rule" },
                "any": {},
                "ao": { "type": "array", "items": { "type": "object", "properties": { "x": { "type": "integer" } } } }
            }
        });
        let rows = fields(&schema);
        let paths: Vec<&str> = rows.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            ["s", "i", "n", "b", "a", "o", "o.inner", "m", "c", "any", "ao", "ao[].x"]
        );
        let types: Vec<&str> = rows.iter().map(|r| r.ty.as_str()).collect();
        assert_eq!(
            types,
            [
                "string",
                "integer",
                "number",
                "boolean",
                "array of string",
                "object",
                "string",
                "map of string",
                "constant",
                "any",
                "array of object",
                "integer"
            ]
        );
        let doc = fields_table(&rows);
        let parsed = tables(&doc);
        assert_eq!(parsed[0].len(), rows.len() + 1, "{doc}");
        assert!(parsed[0].iter().all(|r| r.len() == 6), "{doc}");
        assert_eq!(parsed[0][1][4], "one of a|b, c", "{doc}");
        assert!(doc.contains("`a\\|b`"), "{doc}");
        assert_eq!(parsed[0][1][5], "pipes | and lines", "{doc}");
        assert_eq!(parsed[0][2][3], "3", "{doc}");
        assert_eq!(parsed[0][5][4], "each matches ^x|y$", "{doc}");
    }

    #[test]
    fn a_long_text_is_cut_and_says_how_long_it_was() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let (kept, total) = cut(&text, 10);
        assert_eq!(kept.lines().count(), 10);
        assert_eq!(total, Some(100));
        assert_eq!(cut("short\n", 10), ("short\n".to_string(), None));
    }
}
