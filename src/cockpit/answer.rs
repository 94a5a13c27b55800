//! One answer as a person reads it, derived from its capability's output schema: arrays of
//! objects become tables (a column per declared property, in declared order), objects become
//! definition lists, `majordomus://` URIs and capability ids become links to their pages, enums
//! and booleans become badges that say their value in words, timestamps become readable dates
//! over their raw value, long text folds away, and the JSON stays one click away. Every string is
//! escaped here, and the work is bounded (rows, characters, depth, total bytes): a huge or
//! malformed answer is cut and says where, never a failure. A value that disagrees with its
//! schema is rendered as what it is, marked as not declared that way. It knows no page: the
//! templates call it through the `answer` filter, and the runner and object pages through
//! [`render`].

use std::fmt::Write as _;

use serde_json::Value;

use super::render_bound;
use crate::registry::lang::{Additional, Schema, Type};

/// Rows of one table shown; past it, the table says how many it left out.
pub const MAX_ROWS: usize = 500;
/// Items of one list of plain values shown.
pub const MAX_ITEMS: usize = 200;
/// Bytes of one string shown; past it, the text is cut and says so.
pub const MAX_TEXT: usize = 16 * 1024;
/// Characters past which a string folds away behind its beginning.
pub const FOLD_TEXT: usize = 160;
/// Nesting shown as tables and lists; deeper values are shown as compact JSON.
pub const MAX_DEPTH: usize = 8;
/// Bytes of HTML one answer may take; past it the rest is left to the JSON.
pub const MAX_HTML: usize = 1024 * 1024;
/// Bytes of the JSON shown under the answer.
pub const MAX_JSON: usize = 256 * 1024;

/// Renders `value`, the answer of a capability whose output schema is `schema`, as escaped HTML:
/// the readable answer, then its JSON in a `<details>`.
pub fn render(schema: &Schema, value: &Value) -> String {
    let mut r = Renderer {
        out: String::with_capacity(4096),
        stopped: false,
    };
    r.out.push_str("<div class=\"answer\">");
    r.value(schema, value, 0);
    if r.stopped {
        r.out.push_str(
            "<p class=\"notice\" role=\"note\">The rest of this answer is not shown here: it is too \
             large to read as a page. Its JSON below, and the same call from a shell, have it.</p>",
        );
    }
    r.out.push_str("</div>");
    json_details(value, &mut r.out);
    r.out
}

/// The JSON of `value`, pretty, cut at [`MAX_JSON`] bytes with a note saying so.
fn json_details(value: &Value, out: &mut String) {
    let mut text = Bounded {
        bytes: Vec::new(),
        limit: MAX_JSON,
        total: 0,
    };
    // A write past the bound is refused by `Bounded`, which stops serde at once; what was
    // written up to there is kept.
    let _ = serde_json::to_writer_pretty(&mut text, value);
    let cut = text.total > MAX_JSON;
    let kept = match std::str::from_utf8(&text.bytes) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&text.bytes[..e.valid_up_to()]).unwrap_or_default(),
    };
    out.push_str("<details class=\"answer-json\"><summary>The answer as JSON</summary>");
    if cut {
        let _ = write!(
            out,
            "<p class=\"notice\" role=\"note\">Only the first {} KB are shown here; the same call \
             from a shell gives the whole answer.</p>",
            MAX_JSON / 1024
        );
    }
    out.push_str("<pre><code>");
    escape(kept, out);
    if cut {
        out.push_str("\n…");
    }
    out.push_str("</code></pre></details>");
}

/// A writer that keeps at most `limit` bytes and refuses the write that would pass it.
struct Bounded {
    bytes: Vec<u8>,
    limit: usize,
    total: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.total += buf.len();
        let room = self.limit.saturating_sub(self.bytes.len());
        if buf.len() > room {
            self.bytes.extend_from_slice(&buf[..room]);
            return Err(std::io::Error::other("the shown JSON is full"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Renderer {
    out: String,
    /// The HTML budget is spent or the render was stopped: nothing more is written.
    stopped: bool,
}

/// What a value is, in words, for a note about a value that disagrees with its schema.
fn what(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing (null)",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn expected(ty: Type) -> &'static str {
    match ty {
        Type::Object => "an object",
        Type::Array => "a list",
        Type::String => "text",
        Type::Integer => "an integer",
        Type::Number => "a number",
        Type::Boolean => "a boolean",
    }
}

fn fits(ty: Type, value: &Value) -> bool {
    match ty {
        Type::Object => value.is_object(),
        Type::Array => value.is_array(),
        Type::String => value.is_string(),
        Type::Integer => value.is_i64() || value.is_u64(),
        Type::Number => value.is_number(),
        Type::Boolean => value.is_boolean(),
    }
}

/// The schema that accepts anything: values shown as what they are.
fn any() -> &'static Schema {
    static ANY: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
    ANY.get_or_init(Schema::default)
}

impl Renderer {
    /// Whether to stop: the budget is spent, or the page's render was stopped.
    fn full(&mut self) -> bool {
        if !self.stopped && (self.out.len() > MAX_HTML || render_bound::stopped()) {
            self.stopped = true;
        }
        self.stopped
    }

    fn value(&mut self, schema: &Schema, value: &Value, depth: usize) {
        if self.full() {
            return;
        }
        let schema = match &schema.one_of {
            Some(one_of) => match variant(one_of, value) {
                Some(v) => v,
                None => any(),
            },
            None => schema,
        };
        if let Some(ty) = schema.ty {
            if !value.is_null() && !fits(ty, value) {
                let _ = write!(
                    self.out,
                    "<span class=\"mismatch\">Not as declared: {} where {} was declared.</span> ",
                    what(value),
                    expected(ty)
                );
                return self.value(any(), value, depth);
            }
        }
        if depth > MAX_DEPTH {
            let text = value.to_string();
            self.out.push_str("<code>");
            self.text_bounded(&text);
            self.out.push_str("</code>");
            return;
        }
        match value {
            Value::Null => self.out.push_str("<span class=\"none\">none</span>"),
            Value::Bool(b) => self.out.push_str(if *b {
                "<span class=\"badge yes\">yes</span>"
            } else {
                "<span class=\"badge no\">no</span>"
            }),
            Value::Number(n) => {
                let _ = write!(self.out, "{n}");
            }
            Value::String(s) => self.string(schema, s),
            Value::Array(items) => self.array(schema, items, depth),
            Value::Object(map) => self.object(schema, map, depth),
        }
    }

    fn object(&mut self, schema: &Schema, map: &serde_json::Map<String, Value>, depth: usize) {
        if map.is_empty() {
            self.out.push_str("<span class=\"none\">none</span>");
            return;
        }
        self.out.push_str("<dl class=\"facts answer-object\">");
        let mut shown = 0;
        for (name, property) in &schema.properties {
            let Some(v) = map.get(name) else { continue };
            if self.full() {
                break;
            }
            self.out.push_str("<dt>");
            self.out.push_str(&heading(name));
            self.out.push_str("</dt><dd>");
            self.value(property, v, depth + 1);
            self.out.push_str("</dd>");
            shown += 1;
        }
        if shown < map.len() {
            let undeclared = match &schema.additional {
                Additional::Map(s) => s.as_ref(),
                _ => any(),
            };
            for (name, v) in map {
                if schema.properties.iter().any(|(p, _)| p == name) {
                    continue;
                }
                if self.full() {
                    break;
                }
                // A map's keys are data, not names a schema declared: shown as they are.
                self.out.push_str("<dt><code>");
                self.text_bounded(name);
                self.out.push_str("</code></dt><dd>");
                self.value(undeclared, v, depth + 1);
                self.out.push_str("</dd>");
            }
        }
        self.out.push_str("</dl>");
    }

    fn array(&mut self, schema: &Schema, items: &[Value], depth: usize) {
        if items.is_empty() {
            self.out.push_str("<span class=\"none\">none</span>");
            return;
        }
        let item = schema.items.as_deref().unwrap_or_else(|| any());
        let tabular = items.iter().all(Value::is_object)
            && matches!(item.ty, None | Some(Type::Object))
            && item.one_of.is_none();
        if tabular {
            return self.table(item, items, depth);
        }
        let shown = items.len().min(MAX_ITEMS);
        let plain = items[..shown]
            .iter()
            .all(|v| !v.is_object() && !v.is_array());
        self.out.push_str(if plain {
            "<ul class=\"values\">"
        } else {
            "<ul class=\"answer-list\">"
        });
        for v in &items[..shown] {
            if self.full() {
                break;
            }
            self.out.push_str("<li>");
            self.value(item, v, depth + 1);
            self.out.push_str("</li>");
        }
        self.out.push_str("</ul>");
        if shown < items.len() {
            let _ = write!(
                self.out,
                "<p class=\"note\">The first {shown} of {} shown; the JSON has every one.</p>",
                items.len()
            );
        }
    }

    fn table(&mut self, item: &Schema, rows: &[Value], depth: usize) {
        let shown = &rows[..rows.len().min(MAX_ROWS)];
        // The declared properties some shown row has, in declared order, then undeclared keys in
        // the order they first appear.
        let mut columns: Vec<(&str, &Schema)> = item
            .properties
            .iter()
            .filter(|(name, _)| shown.iter().any(|r| r.get(name).is_some()))
            .map(|(name, s)| (name.as_str(), s))
            .collect();
        if !matches!(item.additional, Additional::Forbidden) || item.properties.is_empty() {
            let undeclared = match &item.additional {
                Additional::Map(s) => s.as_ref(),
                _ => any(),
            };
            for row in shown {
                for key in row.as_object().into_iter().flat_map(|m| m.keys()) {
                    if columns.len() >= 32 {
                        break;
                    }
                    if !columns.iter().any(|(c, _)| *c == key) {
                        columns.push((key.as_str(), undeclared));
                    }
                }
            }
        }
        self.out
            .push_str("<div class=\"table-wrap\"><table class=\"answer-table\"><thead><tr>");
        for (name, _) in &columns {
            self.out.push_str("<th scope=\"col\">");
            self.out.push_str(&heading(name));
            self.out.push_str("</th>");
        }
        self.out.push_str("</tr></thead><tbody>");
        for row in shown {
            if self.full() {
                break;
            }
            self.out.push_str("<tr>");
            for (name, schema) in &columns {
                // The heading again, for a phone where each row stands as a card of its cells.
                self.out.push_str("<td data-label=\"");
                self.out.push_str(&heading(name));
                self.out.push_str("\">");
                match row.get(*name) {
                    Some(Value::String(s))
                        if *name == SNIPPET && schema.ty == Some(Type::String) =>
                    {
                        self.snippet(s)
                    }
                    Some(v) => self.value(schema, v, depth + 1),
                    None => self.out.push_str("<span class=\"none\">—</span>"),
                }
                self.out.push_str("</td>");
            }
            self.out.push_str("</tr>");
        }
        self.out.push_str("</tbody></table></div>");
        if shown.len() < rows.len() {
            let _ = write!(
                self.out,
                "<p class=\"note\">The first {} of {} rows shown; the JSON has every one.</p>",
                shown.len(),
                rows.len()
            );
        }
    }

    fn string(&mut self, schema: &Schema, s: &str) {
        let declared_word =
            schema.enumeration.is_some() || schema.constant.as_ref().is_some_and(Value::is_string);
        if declared_word && s.len() <= 64 {
            self.out.push_str("<span class=\"badge ");
            self.out.push_str(&class_of(s));
            self.out.push_str("\">");
            self.text_bounded(s);
            self.out.push_str("</span>");
        } else if let Some(href) = link_of(s) {
            self.out.push_str("<a href=\"");
            escape(&href, &mut self.out);
            self.out.push_str("\"><code>");
            wbr(s, &mut self.out);
            self.out.push_str("</code></a>");
        } else if let Some(readable) = readable_time(s) {
            self.out.push_str("<time datetime=\"");
            escape(s, &mut self.out);
            self.out.push_str("\">");
            self.out.push_str(&readable);
            self.out.push_str("</time>");
        } else if s.chars().count() > FOLD_TEXT || s.contains('\n') {
            let begin: String = s.chars().take(FOLD_TEXT / 2).collect();
            let begin = begin.lines().next().unwrap_or_default();
            self.out.push_str("<details class=\"long-text\"><summary>");
            escape(begin, &mut self.out);
            let _ = write!(
                self.out,
                "… <span class=\"hint\">({} characters)</span></summary><div class=\"text\">",
                s.chars().count()
            );
            self.text_bounded(s);
            self.out.push_str("</div></details>");
        } else {
            self.text_bounded(s);
        }
    }

    /// A search hit's snippet: its text escaped, the terms it marks `**so**` in `<mark>`. The
    /// marks are the only markup; whatever else the text holds is shown as text.
    fn snippet(&mut self, s: &str) {
        let s = &s[..floor_boundary(s, MAX_TEXT)];
        self.out.push_str("<span class=\"snippet\">");
        for (part, mark) in crate::layer::snippet_parts(s) {
            if mark {
                self.out.push_str("<mark>");
                escape(&part, &mut self.out);
                self.out.push_str("</mark>");
            } else {
                escape(&part, &mut self.out);
            }
        }
        self.out.push_str("</span>");
    }

    /// `text`, escaped, cut at [`MAX_TEXT`] bytes with a note saying so.
    fn text_bounded(&mut self, text: &str) {
        if text.len() <= MAX_TEXT {
            return escape(text, &mut self.out);
        }
        let mut end = MAX_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        escape(&text[..end], &mut self.out);
        let _ = write!(
            self.out,
            "… <span class=\"note\">(cut: {} of {} bytes shown)</span>",
            end,
            text.len()
        );
    }
}

/// The property a search hit's marked sentence is declared as: its `**term**` marks are the
/// search's, not text, and read as highlights.
const SNIPPET: &str = "snippet";

/// The largest char boundary of `s` at or below `at`.
fn floor_boundary(s: &str, at: usize) -> usize {
    let mut end = at.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// The variant of a tagged `oneOf` whose tag `value` carries.
fn variant<'s>(one_of: &'s crate::registry::lang::OneOf, value: &Value) -> Option<&'s Schema> {
    let tag = value.get(&one_of.tag)?;
    one_of.variants.iter().find(|v| {
        v.properties
            .iter()
            .any(|(name, s)| *name == one_of.tag && s.constant.as_ref() == Some(tag))
    })
}

/// The page a value names: a `majordomus://` URI's object page, or a capability's page.
fn link_of(s: &str) -> Option<String> {
    if s.len() > 2048 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    if s.starts_with(crate::layer::URI_SCHEME) && s.len() > crate::layer::URI_SCHEME.len() {
        let query = serde_urlencoded::to_string([("uri", s)]).ok()?;
        return Some(format!("/cockpit/object?{query}"));
    }
    crate::registry::by_id(s).map(|(_, d)| format!("/cockpit/capabilities/{}", d.id))
}

/// A column or field heading from a property name: `blocked_by` reads "Blocked by".
pub fn heading(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    for (i, word) in name.split(['_', '-']).filter(|w| !w.is_empty()).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let upper = [
            "id", "uri", "url", "mcp", "http", "cli", "api", "json", "html", "adr",
        ];
        if upper.contains(&word) {
            out.push_str(&word.to_ascii_uppercase());
        } else if i == 0 {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push_str(word);
        }
    }
    let mut escaped = String::with_capacity(out.len());
    escape(&out, &mut escaped);
    escaped
}

/// A class for a badge from its word: letters, digits, `-` and `_` only, so no word can leave
/// the attribute.
fn class_of(word: &str) -> String {
    word.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(40)
        .collect()
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `2026-12-01` reads "1 Dec 2026"; `2026-12-01T14:03:05Z` reads "1 Dec 2026, 14:03:05 UTC";
/// anything else is not a timestamp.
pub fn readable_time(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(range)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let date = format!("{day} {} {year}", MONTHS[month as usize - 1]);
    if b.len() == 10 {
        return Some(date);
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 16 || b[13] != b':' {
        return None;
    }
    let (hour, minute) = (digits(11..13)?, digits(14..16)?);
    if hour > 23 || minute > 59 {
        return None;
    }
    let mut rest = &s[16..];
    let mut second = None;
    if let Some(after) = rest.strip_prefix(':') {
        second = Some(digits(17..19)?);
        rest = after.get(2..)?;
        if let Some(fraction) = rest.strip_prefix('.') {
            let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            rest = &fraction[n..];
        }
    }
    let zone = match rest {
        "Z" | "z" => "UTC".to_string(),
        "" => String::new(),
        offset
            if offset.len() == 6
                && matches!(offset.as_bytes()[0], b'+' | b'-')
                && offset.as_bytes()[3] == b':'
                && offset[1..3]
                    .bytes()
                    .chain(offset[4..].bytes())
                    .all(|c| c.is_ascii_digit()) =>
        {
            format!("UTC{offset}")
        }
        _ => return None,
    };
    let mut out = format!("{date}, {hour:02}:{minute:02}");
    if let Some(second) = second {
        let _ = write!(out, ":{second:02}");
    }
    if !zone.is_empty() {
        out.push(' ');
        out.push_str(&zone);
    }
    Some(out)
}

/// `text`, escaped for HTML text and attribute values.
pub(super) fn escape(text: &str, out: &mut String) {
    let mut last = 0;
    for (i, c) in text.char_indices() {
        let replacement = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&text[last..i]);
        out.push_str(replacement);
        last = i + 1;
    }
    out.push_str(&text[last..]);
}

/// An identifier, path or URI, escaped, that may break after its separators.
fn wbr(text: &str, out: &mut String) {
    let mut rest = text;
    while let Some(at) = rest.find(['_', '.', '/', '@', ':', ',']) {
        escape(&rest[..=at], out);
        out.push_str("<wbr>");
        rest = &rest[at + 1..];
    }
    escape(rest, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Schema {
        crate::registry::lang::schema_from_json(&v).expect("the fixture schema reads")
    }

    /// A capability no registry declares, with nested arrays, enums, URIs, ids, timestamps and
    /// optional fields: how it reads follows from its schema alone.
    #[test]
    fn a_fixture_answer_reads_as_tables_lists_links_and_badges_from_its_schema() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "plan": { "type": "object", "properties": {
                    "name": { "type": "string" },
                    "open": { "type": "boolean" } } },
                "issues": { "type": "array", "items": { "type": "object", "properties": {
                    "uri": { "type": "string" },
                    "status": { "type": "string", "enum": ["ready", "done"] },
                    "answered_by": { "type": "string" },
                    "started_at": { "type": "string" },
                    "notes": { "type": "string" },
                    "steps": { "type": "array", "items": { "type": "object", "properties": {
                        "step": { "type": "integer" },
                        "done": { "type": "boolean" } } } },
                    "depends_on": { "type": "array", "items": { "type": "string" } } },
                    "required": ["uri", "status"] } },
                "elsewhere": { "type": "string" }
            }
        }));
        let answer = json!({
            "plan": { "name": "the <plan>", "open": true },
            "issues": [
                { "uri": "majordomus://issue/a", "status": "ready", "answered_by": "objects.get",
                  "started_at": "2026-12-01T14:03:05Z", "depends_on": ["majordomus://issue/b"],
                  "steps": [{ "step": 1, "done": false }, { "step": 2, "done": true }] },
                { "uri": "majordomus://issue/b", "status": "done", "answered_by": "a.b",
                  "depends_on": [] }
            ],
            "elsewhere": "https://example.com/x"
        });
        let html = render(&s, &answer);
        // The object is a definition list; its nested object another.
        assert!(
            html.starts_with(
                "<div class=\"answer\"><dl class=\"facts answer-object\"><dt>Plan</dt><dd><dl"
            ),
            "{html}"
        );
        assert!(
            html.contains("<dt>Name</dt><dd>the &lt;plan&gt;</dd>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"badge yes\">yes</span>"),
            "{html}"
        );
        // The array of objects is a table: the declared columns some row has, in declared order
        // (`notes`, in no row, has none), with word headings.
        let head = "<thead><tr><th scope=\"col\">URI</th><th scope=\"col\">Status</th><th scope=\"col\">Answered by</th><th scope=\"col\">Started at</th><th scope=\"col\">Steps</th><th scope=\"col\">Depends on</th></tr></thead>";
        assert!(html.contains(head), "{html}");
        assert!(!html.contains(">Notes<"), "{html}");
        // A nested array of objects is a nested table.
        assert!(html.contains("<td data-label=\"Steps\"><div class=\"table-wrap\"><table class=\"answer-table\"><thead><tr><th scope=\"col\">Step</th><th scope=\"col\">Done</th>"), "{html}");
        // Enums are badges in words; a URI and a capability id are links to their pages; an
        // unknown id and a foreign URI are text.
        assert!(
            html.contains("<span class=\"badge ready\">ready</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"badge done\">done</span>"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"/cockpit/object?uri=majordomus%3A%2F%2Fissue%2Fb\">"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"/cockpit/capabilities/objects.get\">"),
            "{html}"
        );
        assert!(
            !html.contains("href=\"/cockpit/capabilities/a.b\""),
            "{html}"
        );
        assert!(html.contains("<dd>https://example.com/x</dd>"), "{html}");
        // A timestamp is a readable date over its raw value; an absent optional cell says so.
        assert!(
            html.contains(
                "<time datetime=\"2026-12-01T14:03:05Z\">1 Dec 2026, 14:03:05 UTC</time>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<td data-label=\"Started at\"><span class=\"none\">—</span></td>"),
            "{html}"
        );
        assert!(
            html.contains("<td data-label=\"Depends on\"><span class=\"none\">none</span></td>"),
            "an empty list: {html}"
        );
        // The JSON stays one click away, in the answer's own key order.
        let json_at = html
            .find("<details class=\"answer-json\"><summary>The answer as JSON</summary>")
            .expect(&html);
        assert!(html[json_at..].contains("&quot;plan&quot;: {"), "{html}");
    }

    #[test]
    fn timestamps_read_as_dates_and_other_text_does_not() {
        assert_eq!(readable_time("2026-12-01").as_deref(), Some("1 Dec 2026"));
        assert_eq!(
            readable_time("2026-12-01T14:03:05.123Z").as_deref(),
            Some("1 Dec 2026, 14:03:05 UTC")
        );
        assert_eq!(
            readable_time("2026-02-28T09:30+02:00").as_deref(),
            Some("28 Feb 2026, 09:30 UTC+02:00")
        );
        for not in [
            "2026-13-01",
            "2026-12-01T25:00Z",
            "2026-12-01x",
            "v2026-12-01",
            "12/01/2026",
        ] {
            assert_eq!(readable_time(not), None, "{not}");
        }
    }

    #[test]
    fn headings_are_words() {
        assert_eq!(heading("blocked_by"), "Blocked by");
        assert_eq!(heading("uri"), "URI");
        assert_eq!(heading("server_id"), "Server ID");
    }

    #[test]
    fn a_value_against_its_schema_renders_as_declared_and_a_disagreeing_one_says_so() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "count": { "type": "integer" },
                "names": { "type": "array", "items": { "type": "string" } }
            }
        }));
        let html = render(&s, &json!({ "count": "seven", "names": "<b>x</b>" }));
        assert!(
            html.contains("Not as declared: text where an integer was declared"),
            "{html}"
        );
        assert!(
            html.contains("Not as declared: text where a list was declared"),
            "{html}"
        );
        assert!(html.contains("&lt;b&gt;x&lt;/b&gt;"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
    }

    #[test]
    fn a_huge_answer_is_bounded_and_says_where_it_was_cut() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "rows": { "type": "array", "items": { "type": "object", "properties": {
                    "name": { "type": "string" } } } },
                "blob": { "type": "string" }
            }
        }));
        let rows: Vec<Value> = (0..10_000)
            .map(|i| json!({ "name": format!("<script>alert({i})</script>") }))
            .collect();
        let blob = "<img src=x onerror=alert(1)>".repeat(40_000);
        let html = render(&s, &json!({ "rows": rows, "blob": blob }));
        assert!(
            html.len() < MAX_HTML + MAX_JSON + 64 * 1024,
            "{}",
            html.len()
        );
        assert!(html.contains("The first 500 of 10000 rows shown"));
        assert!(html.contains("Only the first 256 KB are shown here"));
        assert!(html.contains("(cut: "));
        assert!(!html.contains("<script"));
        assert!(!html.contains("<img"));
    }
}
