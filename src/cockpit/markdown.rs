//! Markdown to HTML for the Cockpit's object pages, safely: raw HTML in a file is shown as text,
//! never passed through, and links or images with script-capable schemes are neutralised.

use pulldown_cmark::{html, Alignment, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

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

fn is_script_capable(dest: &str) -> bool {
    let lowered = dest.trim_start().to_ascii_lowercase();
    ["javascript:", "vbscript:", "data:", "file:"]
        .iter()
        .any(|scheme| lowered.starts_with(scheme))
}

/// Whether `dest` names a file of the repository relative to the document (no scheme, no
/// absolute path, not a fragment of the same page).
fn is_relative(dest: &str) -> bool {
    let path = dest.split(['?', '#']).next().unwrap_or_default();
    !path.is_empty()
        && !dest.starts_with('/')
        && !path
            .split('/')
            .next()
            .is_some_and(|first| first.contains(':'))
}

/// How a link found in a document is shown.
enum Destination<'a> {
    Keep(CowStr<'a>),
    /// A relative link to a repository file the layer holds: its object page.
    Object(String),
    /// A relative link to a file the Cockpit cannot show: the text stays, the link goes.
    Drop,
}

fn destination<'a>(dest: CowStr<'a>, resolve: &dyn Fn(&str) -> Option<String>) -> Destination<'a> {
    if is_script_capable(&dest) {
        Destination::Keep(CowStr::Borrowed("#"))
    } else if is_relative(&dest) {
        match resolve(dest.split(['?', '#']).next().unwrap_or_default()) {
            Some(href) => Destination::Object(href),
            None => Destination::Drop,
        }
    } else {
        Destination::Keep(dest)
    }
}

/// Headings of a document sit under the object page's own `h1` and its "Text" `h2`.
const HEADING_SHIFT: usize = 2;

fn shifted(level: HeadingLevel) -> HeadingLevel {
    HeadingLevel::try_from((level as usize + HEADING_SHIFT).min(6)).unwrap_or(HeadingLevel::H6)
}

/// Renders Markdown to HTML for a page that already has its `h1`, safely:
/// - raw HTML becomes text, so `<script>` shows as `<script>`;
/// - headings move two levels down (a document's `# Title` becomes an `h3`);
/// - links with script-capable schemes lead nowhere, and a relative link leads to the object
///   page of the file it names (`resolve` maps a link to that page), or is dropped;
/// - images become links to their source: the page loads nothing from elsewhere (its CSP would
///   refuse it anyway);
/// - tables scroll inside their own box on a narrow screen, and carry no inline `style` (a
///   column's alignment would be one, which the CSP refuses).
pub fn render(markdown: &str, resolve: &dyn Fn(&str) -> Option<String>) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    // For each open link or image: where its anchor starts in `events` and the text it shows
    // when it has none of its own, or `None` when the anchor was dropped.
    let mut anchors: Vec<Option<(usize, String)>> = Vec::new();
    let mut events: Vec<Event<'_>> = Vec::new();
    // A render abandoned by its client stops here (the page is never sent).
    for event in Parser::new_ext(markdown, options).take_while(|_| !super::render_bound::stopped())
    {
        match event {
            Event::Html(text) | Event::InlineHtml(text) => events.push(Event::Text(text)),
            Event::Start(Tag::Heading {
                level,
                id,
                classes,
                attrs,
            }) => events.push(Event::Start(Tag::Heading {
                level: shifted(level),
                id,
                classes,
                attrs,
            })),
            Event::End(TagEnd::Heading(level)) => {
                events.push(Event::End(TagEnd::Heading(shifted(level))))
            }
            Event::Start(Tag::Table(alignments)) => {
                // Focusable, so a keyboard can scroll it.
                events.push(Event::Html(CowStr::Borrowed(
                    "<div class=\"table-wrap\" tabindex=\"0\" role=\"region\" aria-label=\"Table\">",
                )));
                // A column's alignment is written as an inline `style`, which the page's CSP
                // refuses (and reports in the console): the columns keep the stylesheet's.
                let plain = vec![Alignment::None; alignments.len()];
                events.push(Event::Start(Tag::Table(plain)));
            }
            Event::End(TagEnd::Table) => {
                events.push(Event::End(TagEnd::Table));
                events.push(Event::Html(CowStr::Borrowed("</div>")));
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            })
            | Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let fallback = dest_url.to_string();
                let dest_url = match destination(dest_url, resolve) {
                    Destination::Keep(dest) => dest,
                    Destination::Object(href) => CowStr::from(href),
                    Destination::Drop => {
                        anchors.push(None);
                        continue;
                    }
                };
                anchors.push(Some((events.len(), fallback)));
                events.push(Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }));
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if let Some(Some((start, fallback))) = anchors.pop() {
                    // A link needs a name: one without text shows where it leads.
                    if events.len() == start + 1 {
                        events.push(Event::Text(CowStr::from(fallback)));
                    }
                    events.push(Event::End(TagEnd::Link));
                }
            }
            other => events.push(other),
        }
    }
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events.into_iter());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resolver that knows one file, `docs/guide.md`.
    fn guide(path: &str) -> Option<String> {
        (path == "../guide.md").then(|| "/cockpit/object?uri=guide".to_string())
    }

    fn plain(markdown: &str) -> String {
        render(markdown, &|_| None)
    }

    #[test]
    fn raw_html_is_escaped_not_passed_through() {
        let html = plain("hello <script>alert(1)</script>\n\n<div onclick=x>block</div>\n");
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<div onclick"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn script_links_are_neutralised() {
        let html =
            plain("[x](javascript:alert(1)) ![i](data:text/html,hi) [ok](https://example.com)");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(!html.contains("data:text"), "{html}");
        assert!(html.contains("https://example.com"), "{html}");
    }

    #[test]
    fn headings_sit_below_the_page_heading() {
        let html = plain("# Title\n\n## Why\n\n###### Deep\n");
        assert!(!html.contains("<h1"), "{html}");
        assert!(html.contains("<h3>Title</h3>"), "{html}");
        assert!(html.contains("<h4>Why</h4>"), "{html}");
        assert!(html.contains("<h6>Deep</h6>"), "{html}");
    }

    #[test]
    fn tables_scroll_in_their_own_box() {
        let html = plain("| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(
            html.starts_with(
                "<div class=\"table-wrap\" tabindex=\"0\" role=\"region\" aria-label=\"Table\"><table>"
            ),
            "{html}"
        );
        assert!(html.trim_end().ends_with("</table>\n</div>"), "{html}");
    }

    #[test]
    fn aligned_columns_carry_no_inline_style_the_csp_would_refuse() {
        let html = plain("| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n");
        assert!(html.contains("<td>3</td>"), "{html}");
        assert!(!html.contains("style="), "{html}");
    }

    #[test]
    fn images_become_links_and_load_nothing() {
        let html = plain("![a diagram](https://example.com/d.png) ![](https://example.com/e.png)");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("<a href=\"https://example.com/d.png\">a diagram</a>"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"https://example.com/e.png\">https://example.com/e.png</a>"),
            "{html}"
        );
    }

    #[test]
    fn relative_links_lead_to_object_pages_or_nowhere() {
        let html = render(
            "[the guide](../guide.md) and [elsewhere](other.md) and [a section](#why)",
            &guide,
        );
        assert!(
            html.contains("<a href=\"/cockpit/object?uri=guide\">the guide</a>"),
            "{html}"
        );
        assert!(!html.contains("other.md"), "{html}");
        assert!(html.contains("and elsewhere and"), "{html}");
        assert!(html.contains("<a href=\"#why\">a section</a>"), "{html}");
    }

    #[test]
    fn front_matter_is_not_part_of_the_body() {
        assert_eq!(body("---\nid: x\n---\n# Title\n"), "# Title\n");
        assert_eq!(body("# No front matter\n"), "# No front matter\n");
    }
}
