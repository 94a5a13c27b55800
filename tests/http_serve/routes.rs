//! The routes the table declares, each answering its examples, `/api/v1`, `/openapi.json`,
//! `/healthz` and `HEAD`, the root as JSON or HTML, and the seed's examples (seed 003).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::serve_support::{fixture_repo, query_of, route_of, Served};
use crate::support::run;
use majordomus::registry::{self, rt::Method};

#[test]
fn every_declared_route_answers_its_examples() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    // A read of an agent's own state (its inbox) is asked as an agent, by its handle.
    let agent = served.api_agent("the sweep");
    let mut swept = 0;
    for d in registry::all() {
        let Some(route) = d.route else { continue };
        match route.method {
            Method::Get => {
                assert!(!d.examples.is_empty(), "`{}` declares an example", d.id);
                for example in d.examples {
                    let input: Value = serde_json::from_str(example.input).expect("JSON example");
                    let target = format!("{}{}", route.path, query_of(&input));
                    let reply =
                        served.request("GET", &target, &[("Majordomus-Agent", &agent)], b"");
                    assert_eq!(
                        reply.status,
                        200,
                        "GET {target} ({}): {}",
                        example.name,
                        reply.text()
                    );
                    assert!(reply.json().is_object(), "GET {target} answers an object");
                }
            }
            // Commands are not run by the sweep; their route exists and takes POST only.
            Method::Post => {
                let reply = served.get(route.path);
                reply.assert_error(405, "method_not_allowed");
            }
        }
        swept += 1;
    }
    assert!(swept >= 10, "only {swept} routes were swept");
}

#[test]
fn a_program_is_an_agent_by_the_handle_announce_gives_and_refused_without_one() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (_, d) = registry::by_id("peers.announce").expect("declared");
    let example = d.examples.first().expect("an example").input;
    let reply = served.post_json(route_of("peers.announce"), example);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(reply.json()["handle"].is_string(), "{}", reply.text());
    let inbox = served.get(route_of("peers.inbox"));
    let message = inbox.assert_error(422, "refused");
    assert!(message.contains("POST /api/v1/peers/announce"), "{message}");
}

#[test]
fn the_root_is_json_by_default_and_html_for_a_browser() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let json = served.get("/");
    assert_eq!(json.status, 200);
    assert!(json
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/json")));
    assert_eq!(json.json()["surfaces"]["mcp"], "/mcp");

    let html = served.request("GET", "/", &[("Accept", "text/html,*/*;q=0.8")], b"");
    assert_eq!(html.status, 200);
    assert!(html
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/html")));
    assert!(
        html.text().contains("<h1>majordomus</h1>"),
        "{}",
        html.text()
    );
}

#[test]
fn api_v1_lists_exactly_the_tables_routes() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let index = served.get("/api/v1").json();
    let listed: BTreeSet<(String, String, String)> = index["routes"]
        .as_array()
        .expect("routes")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().expect("a string").to_string();
            (s("method"), s("path"), s("capability"))
        })
        .collect();
    let declared: BTreeSet<(String, String, String)> = registry::all()
        .iter()
        .filter_map(|d| {
            let r = d.route?;
            Some((
                r.method.as_str().to_string(),
                r.path.to_string(),
                d.id.to_string(),
            ))
        })
        .collect();
    assert_eq!(listed, declared);
    assert_eq!(index["count"], declared.len());
}

#[test]
fn openapi_json_is_the_bytes_majordomus_openapi_prints() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get("/openapi.json");
    assert_eq!(reply.status, 200);
    let printed = run(&["openapi"]);
    assert!(printed.status.success());
    assert_eq!(reply.body, printed.stdout);
}

/// Every POST in the OpenAPI document lists the 413 a body over the bound gets, and that is what
/// such a body gets on each of them.
#[test]
fn openapi_lists_413_on_every_post_and_each_answers_it() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let document = served.get("/openapi.json").json();
    let announced = (majordomus::http::MAX_BODY_BYTES + 1).to_string();
    let mut posts = 0;
    for (path, operations) in document["paths"].as_object().expect("paths") {
        let Some(post) = operations.get("post") else {
            continue;
        };
        assert!(
            post["responses"].get("413").is_some(),
            "POST {path} does not list 413: {}",
            post["responses"]
        );
        // Announced over the bound, and not one byte sent: the headers alone get the 413.
        let head = served.request_bytes("POST", path, &[("Content-Length", &announced)], b"");
        let mut stream = served.connect();
        std::io::Write::write_all(&mut stream, &head).expect("the head is sent");
        crate::serve_support::read_reply(&mut stream).assert_error(413, "payload_too_large");
        posts += 1;
    }
    assert!(posts >= 5, "{posts} POST routes");
}

#[test]
fn healthz_answers_200() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get("/healthz");
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn head_of_a_get_route_is_200_without_a_body() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.request("HEAD", route_of("objects.list"), &[], b"");
    assert_eq!(reply.status, 200);
    assert!(
        reply.body.is_empty(),
        "HEAD sends no body: {}",
        reply.text()
    );
}

#[test]
fn the_repository_uri_reads_as_the_builtin_report() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get("/api/v1/object?uri=majordomus://repository");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let view = reply.json();
    assert_eq!(view["source"], "builtin");
    assert_eq!(view["id"], "repository.info");
    assert_eq!(view["media_type"], "application/json");
}

#[test]
fn a_uri_nothing_projects_is_not_found() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get("/api/v1/object?uri=majordomus://rule/none@1");
    reply.assert_error(404, "not_found");
}

/// The preflight a server answers (its route and its Cockpit's doctor page) checks the port it
/// serves, not the default one: on a port of its own it names where it listens.
#[test]
fn the_preflight_a_server_answers_names_the_port_it_serves() {
    let fixture = crate::support::Fixture::new();
    let served = crate::serve_support::Served::start(fixture.root());
    assert_ne!(served.port, 8741, "the test serves on a port of its own");
    let reply = served.get("/api/v1/environment/preflight");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let report = reply.json();
    let port = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == "port")
        .expect("a port check")
        .clone();
    let seen = port["seen"].as_str().unwrap_or_default();
    assert!(
        seen.contains(&format!(":{}", served.port)) && !seen.contains("8741"),
        "{port}"
    );
    let page = served.get("/cockpit/doctor");
    assert_eq!(page.status, 200);
    assert!(
        page.text().contains(&format!(":{}", served.port)),
        "the page names the port"
    );
}

/// The Cockpit's MCP page lists every protocol version served, the modern era's included.
#[test]
fn the_cockpit_lists_every_protocol_version_served() {
    let fixture = crate::support::Fixture::new();
    let served = crate::serve_support::Served::start(fixture.root());
    let page = served.get("/cockpit/mcp").text();
    let facts = page
        .split("<dt>Protocol versions</dt>")
        .nth(1)
        .and_then(|rest| rest.split("</dd>").next())
        .expect("the versions line");
    for version in ["2026-07-28", "2025-11-25", "2024-11-05"] {
        assert!(facts.contains(version), "{version} in {facts}");
    }
}
