//! Markdown to HTML for the Cockpit's object pages, safely: raw HTML in a file is shown as text,
//! never passed through, and links or images with script-capable schemes are neutralised.

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag};

/// The body of a Markdown file without its YAML front matter.
pub fn body(content: &str) -> &str {
    let text = content.strip_prefix('\u{feff}').unwrap_or(content);
    for opener in ["---\n", "---\r\n"] {
        if let Some(rest) = text.strip_prefix(opener) {
            for closer in ["\n---\n", "\n---\r\n"] {
                if let Some(end) = rest.find(closer) {
                    return &rest[end + closer.len()..];
                }
            }
            if let Some(stripped) = rest.strip_suffix("\n---") {
                let _ = stripped;
                return "";
            }
        }
    }
    text
}

fn safe_destination(dest: CowStr<'_>) -> CowStr<'_> {
    let lowered = dest.trim_start().to_ascii_lowercase();
    if ["javascript:", "vbscript:", "data:", "file:"]
        .iter()
        .any(|scheme| lowered.starts_with(scheme))
    {
        CowStr::Borrowed("#")
    } else {
        dest
    }
}

/// Renders Markdown to HTML with raw HTML escaped.
pub fn render(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        // Raw HTML becomes text, so `<script>` shows as `<script>`.
        Event::Html(text) | Event::InlineHtml(text) => Event::Text(text),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_destination(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: safe_destination(dest_url),
            title,
            id,
        }),
        other => other,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_escaped_not_passed_through() {
        let html = render("hello <script>alert(1)</script>\n\n<div onclick=x>block</div>\n");
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<div onclick"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn script_links_are_neutralised() {
        let html =
            render("[x](javascript:alert(1)) ![i](data:text/html,hi) [ok](https://example.com)");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(!html.contains("data:text"), "{html}");
        assert!(html.contains("https://example.com"), "{html}");
    }

    #[test]
    fn front_matter_is_not_part_of_the_body() {
        assert_eq!(body("---\nid: x\n---\n# Title\n"), "# Title\n");
        assert_eq!(body("# No front matter\n"), "# No front matter\n");
    }
}
