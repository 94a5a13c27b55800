//! Bad input, one row each, never a 500 and always the envelope: foreign hosts and origins, bodies
//! over the bound (announced or chunked), truncated or not an object, unknown, wrong-typed,
//! out-of-range and repeated parameters, unknown routes and methods.

use std::io::Write;

use crate::serve_support::{
    chunked_over, finish_sending, fixture_repo, read_reply, route_of, Served,
};
use majordomus::http::MAX_BODY_BYTES;

#[test]
fn a_foreign_host_is_refused() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.request("GET", "/healthz", &[("Host", "evil.example")], b"");
    reply.assert_error(403, "forbidden");
}

#[test]
fn a_localhost_subdomain_host_is_allowed() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let host = format!("api.localhost:{}", served.port);
    let reply = served.request("GET", "/healthz", &[("Host", &host)], b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn an_ipv6_loopback_host_is_allowed() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let host = format!("[::1]:{}", served.port);
    let reply = served.request("GET", "/healthz", &[("Host", &host)], b"");
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[test]
fn a_post_from_a_foreign_origin_is_refused() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.request(
        "POST",
        route_of("peers.announce"),
        &[("Origin", "http://evil.example")],
        br#"{"intent":"x"}"#,
    );
    reply.assert_error(403, "forbidden");
}

#[test]
fn a_post_from_the_same_origin_passes_the_guard() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let origin = format!("http://{}", served.host());
    let reply = served.request(
        "POST",
        route_of("peers.announce"),
        &[("Origin", &origin)],
        br#"{"intent":"x"}"#,
    );
    // Past the guard, the capability itself answers: a new agent, with its handle.
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(reply.json()["handle"].is_string(), "{}", reply.text());
}

#[test]
fn a_body_announced_over_the_bound_is_refused_unread() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let announced = (MAX_BODY_BYTES + 1).to_string();
    let head = served.request_bytes(
        "POST",
        route_of("peers.announce"),
        &[("Content-Length", &announced)],
        b"",
    );
    let mut stream = served.connect();
    stream.write_all(&head).expect("the head is sent");
    // Not one byte of the body is sent: the answer must come from the headers alone.
    let reply = read_reply(&mut stream);
    reply.assert_error(413, "payload_too_large");
}

#[test]
fn a_chunked_body_over_the_bound_is_refused_in_the_envelope() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let body = chunked_over(MAX_BODY_BYTES, b' ');
    let request = served.request_bytes(
        "POST",
        route_of("peers.announce"),
        &[("Transfer-Encoding", "chunked")],
        &body,
    );
    let mut stream = served.connect();
    // The server may stop reading at the bound; a refused write is part of the answer.
    let _ = stream.write_all(&request);
    let reply = read_reply(&mut stream);
    reply.assert_error(413, "payload_too_large");
}

#[test]
fn a_truncated_body_is_a_client_error_and_the_server_keeps_serving() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let request = served.request_bytes(
        "POST",
        route_of("peers.announce"),
        &[("Content-Length", "100")],
        br#"{"intent":"#,
    );
    let mut stream = served.connect();
    stream.write_all(&request).expect("sent");
    finish_sending(&stream);
    let reply = read_reply(&mut stream);
    assert_ne!(reply.status, 500, "{}", reply.text());
    reply.assert_error(400, "invalid_input");
    assert_eq!(served.get("/healthz").status, 200, "still serving");
}

#[test]
fn a_body_that_is_json_but_not_an_object_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.post_json(route_of("peers.announce"), "[1, 2]");
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("object"), "{message}");
}

#[test]
fn a_body_that_is_not_json_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.post_json(route_of("peers.announce"), "{\"intent\": ");
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("JSON"), "{message}");
}

#[test]
fn an_unknown_parameter_is_400_naming_it() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get(&format!("{}?bogus=1", route_of("objects.list")));
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("`bogus`"), "{message}");
}

#[test]
fn a_wrong_typed_parameter_is_400_naming_it() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get(&format!(
        "{}?query=rule&limit=abc",
        route_of("objects.search")
    ));
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("`limit`"), "{message}");
}

#[test]
fn an_out_of_range_parameter_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get(&format!(
        "{}?query=rule&limit=0",
        route_of("objects.search")
    ));
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("limit"), "{message}");
}

#[test]
fn a_repeated_scalar_parameter_is_400() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.get(&format!(
        "{}?kind=rule&kind=prompt",
        route_of("objects.list")
    ));
    let message = reply.assert_error(400, "invalid_input");
    assert!(message.contains("`kind`"), "{message}");
}

#[test]
fn an_unknown_route_is_404() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    served
        .get("/api/v1/no-such-route")
        .assert_error(404, "not_found");
}

#[test]
fn a_known_path_with_another_method_is_405() {
    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let reply = served.post_json(route_of("objects.list"), "{}");
    reply.assert_error(405, "method_not_allowed");
}

/// A bad GET parameter gets the message the same value gets as a tool's argument over MCP:
/// for every GET route with a tool, an unknown parameter, and each integer, number and boolean
/// parameter given a word, a fraction or both (repeated).
#[test]
fn a_bad_get_parameter_reads_the_same_over_http_and_mcp() {
    use majordomus::registry::{self, lang::Type, rt::Method};
    use serde_json::{json, Map, Value};

    let repo = fixture_repo();
    let served = Served::start(repo.path());
    let (session, _) = served.mcp_initialize("same-words");
    let mut id = 10;
    let mut compared = 0;
    for d in registry::all() {
        let (Some(route), Some(tool)) = (d.route, d.tool) else {
            continue;
        };
        if route.method != Method::Get {
            continue;
        }
        // (query, the same value as JSON arguments)
        let mut cases: Vec<(String, Value)> = vec![("bogus=1".into(), json!({ "bogus": "1" }))];
        for (name, schema) in &d.input().properties {
            match schema.ty {
                Some(Type::Integer) | Some(Type::Number) => {
                    cases.push((format!("{name}=abc"), json!({ name: "abc" })));
                    cases.push((format!("{name}=1&{name}=2"), json!({ name: ["1", "2"] })));
                }
                Some(Type::Boolean) => {
                    cases.push((format!("{name}=maybe"), json!({ name: "maybe" })));
                }
                _ => {}
            }
        }
        for (query, arguments) in cases {
            let over_http = served.get(&format!("{}?{query}", route.path));
            let http = over_http.assert_error(400, "invalid_input");
            id += 1;
            let answer = served.mcp(
                Some(&session),
                &json!({
                    "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": { "name": tool, "arguments": Value::Object(
                        arguments.as_object().cloned().unwrap_or_else(Map::new)
                    ) },
                }),
            );
            let answer = answer.json();
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("{tool}: {answer}"));
            assert_eq!(
                text.strip_prefix("invalid_input: "),
                Some(http.as_str()),
                "{} ?{query}",
                d.id
            );
            compared += 1;
        }
    }
    assert!(compared >= 20, "{compared} compared");
}
