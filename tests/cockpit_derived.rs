//! The Cockpit's pages derived from the registry and the index, never written down: the
//! overview names every namespace, the objects page every kind the index holds, the MCP page
//! every tool and era, the API page every route, and every capability's answer and built-in
//! resource reads from its schema.

use majordomus::cockpit;
use majordomus::registry;
use serde_json::Value;

use crate::cockpit::{assert_whole, unescape, Cockpit};

#[test]
fn the_overview_names_every_namespace_of_the_registry() {
    let cockpit = Cockpit::new();
    let html = cockpit.ok("");
    for namespace in registry::all().iter().map(|d| d.namespace) {
        assert!(
            html.contains(&format!(
                r#"<a href="/cockpit/capabilities?namespace={namespace}">{namespace}</a>"#
            )),
            "the overview links namespace `{namespace}`"
        );
    }
}

#[test]
fn the_objects_page_names_every_kind_the_index_holds() {
    let cockpit = Cockpit::new();
    let info = cockpit
        .ctx
        .execute("repository.info", serde_json::json!({}))
        .expect("repository.info answers");
    let counts = info["counts"].as_object().expect("counts per kind");
    assert!(counts.len() >= 5, "the fixture holds several kinds: {info}");
    let html = cockpit.ok("/objects");
    for (kind, count) in counts {
        assert!(
            html.contains(&format!(
                r#"<a href="/cockpit/objects?kind={kind}"><span class="figure">{count}</span> {kind}</a>"#
            )),
            "the objects page links kind `{kind}` with its count {count}"
        );
    }
    let total = info["index"]["objects"].as_u64().expect("an object count");
    assert_eq!(
        counts.values().filter_map(Value::as_u64).sum::<u64>(),
        total
    );
}

#[test]
fn the_mcp_page_lists_every_tool_with_its_effect_in_words() {
    let cockpit = Cockpit::new();
    let html = cockpit.ok("/mcp");
    let tools: Vec<_> = registry::all()
        .iter()
        .filter(|d| d.tool.is_some())
        .collect();
    assert_eq!(html.matches("<tr data-tool=").count(), tools.len());
    for d in tools {
        let effect = d.effect.as_str();
        assert!(
            html.contains(&format!(
                r#"<tr data-tool="{}" data-effect="{effect}">"#,
                d.tool.unwrap_or_default()
            )),
            "{}",
            d.id
        );
    }
    let read_only = cockpit.ok("/mcp?effect=read");
    assert!(
        !read_only.contains(r#"data-effect="process_state""#),
        "the filter shows only reads"
    );
}

#[test]
fn the_mcp_page_shows_each_era_with_what_it_serves_and_does_not() {
    use majordomus_registry_lang::protocol;
    let cockpit = Cockpit::new();
    let html = cockpit.ok("/mcp");
    let section = html
        .split(r#"<h2 id="eras">"#)
        .nth(1)
        .and_then(|rest| rest.split("<h2").next())
        .expect("an Eras section");
    let shown = |method: &str| format!("<code>{}</code>", method.replace('/', "/<wbr>"));
    let mut rows = 0;
    for (era, methods, not_served) in [
        (
            "modern",
            protocol::MODERN_METHODS,
            protocol::MODERN_NOT_SERVED,
        ),
        ("legacy", protocol::METHODS, protocol::NOT_SERVED),
    ] {
        let part = section
            .split(&format!("<h3>{era} ("))
            .nth(1)
            .and_then(|rest| rest.split("<h3>").next())
            .unwrap_or_else(|| panic!("a part for the {era} era"));
        for method in methods {
            assert!(part.contains(&shown(method)), "{era} serves {method}");
            rows += 1;
        }
        for (method, why) in not_served {
            assert!(
                part.contains(&shown(method)),
                "{era} does not serve {method}"
            );
            // As minijinja escapes text.
            let escaped = why
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
                .replace('\'', "&#x27;")
                .replace('/', "&#x2f;");
            assert!(part.contains(&escaped), "{era}: {why}");
            rows += 1;
        }
    }
    assert!(rows >= 20, "{rows}");
}

#[test]
fn the_api_page_lists_every_route() {
    let cockpit = Cockpit::new();
    let html = cockpit.ok("/api");
    for d in registry::all() {
        if let Some(route) = d.route {
            assert!(
                html.contains(&format!(r#"<a href="/cockpit/capabilities/{}">"#, d.id)),
                "{}",
                d.id
            );
            assert!(html.contains(route.method.as_str()), "{}", d.id);
        }
    }
    assert!(html.contains(r#"<a href="/openapi.json">"#), "{html}");
}

#[test]
fn assets_are_named_by_their_content_and_served_only_under_that_name() {
    let cockpit = Cockpit::new();
    let html = unescape(&cockpit.ok(""));
    let css = html
        .split(r#"<link rel="stylesheet" href="/cockpit/assets/"#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page links its stylesheet");
    assert!(
        css.starts_with("cockpit.") && css.ends_with(".css") && css.len() > "cockpit..css".len(),
        "{css}"
    );
    let asset = cockpit::asset(css).expect("the linked stylesheet is served");
    assert_eq!(asset.content_type, "text/css; charset=utf-8");
    assert!(cockpit::asset("cockpit.css").is_none(), "no unhashed name");
}

#[test]
fn every_capability_s_answer_reads_from_its_schema_with_the_json_one_click_away() {
    let cockpit = Cockpit::new();
    let mut rendered = 0;
    for d in registry::all() {
        if d.kind != registry::rt::Kind::Query {
            continue;
        }
        let Some(example) = d.examples.first() else {
            continue;
        };
        let input: Value = serde_json::from_str(example.input).expect("an example reads");
        let pairs: Vec<(String, String)> = input
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| match v {
                Value::String(s) => (k.clone(), s.clone()),
                other => (k.clone(), other.to_string()),
            })
            .collect();
        let query = serde_urlencoded::to_string(&pairs).expect("a query encodes");
        let target = format!("/capabilities/{}/run?{query}", d.id);
        let page = cockpit.get(&target);
        if page.status != 200 {
            // An example may need what this fixture lacks; it still renders whole.
            assert_whole(&target, &page.html);
            continue;
        }
        assert_whole(&target, &page.html);
        let html = &page.html;
        assert!(html.contains("<div class=\"answer\">"), "{target}: {html}");
        assert!(
            html.contains("<summary>The answer as JSON</summary>"),
            "{target}: {html}"
        );
        assert!(
            !html.contains("Not as declared"),
            "{target}: a real answer agrees with its schema: {html}"
        );
        rendered += 1;
    }
    assert!(rendered >= 12, "only {rendered} answers rendered");
}

#[test]
fn the_capabilities_answer_is_a_table_with_ids_as_links_and_effects_as_badges() {
    let cockpit = Cockpit::new();
    let html = cockpit.ok("/capabilities/capabilities.list/run");
    assert!(
        html.contains(
            r#"<a href="/cockpit/capabilities/objects.get"><code>objects.<wbr>get</code></a>"#
        ),
        "{html}"
    );
    assert!(
        html.contains(r#"<span class="badge read">read</span>"#),
        "{html}"
    );
    assert!(html.contains(r#"<th scope="col">ID</th>"#), "{html}");
}

#[test]
fn builtin_resources_read_from_their_schema() {
    let cockpit = Cockpit::new();
    // The MCP projection holds lists of objects (its eras, its tools); so does the repository
    // report (its declared sources), even of a fixture without diagnostics.
    for (uri, tables) in [
        ("majordomus%3A%2F%2Fmcp", true),
        ("majordomus%3A%2F%2Frepository", true),
    ] {
        let html = cockpit.ok(&format!("/object?uri={uri}"));
        assert!(
            html.contains("<dl class=\"facts answer-object\">"),
            "{uri}: {html}"
        );
        assert_eq!(
            html.contains("<table class=\"answer-table\">"),
            tables,
            "{uri}: {html}"
        );
        assert!(
            html.contains("<summary>The answer as JSON</summary>"),
            "{uri}: {html}"
        );
        assert!(!html.contains("Not as declared"), "{uri}: {html}");
    }
}
