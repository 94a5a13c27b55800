//! The path sweep: `../` chains, absolute paths, `file://` URIs,
//! percent-encodings and committed symlinks out of the repository never reach a file outside it,
//! over stdio or HTTP, while a control rule inside it is still read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::Fixture;
use majordomus_registry_lang::protocol;

use super::http_client::HttpMcp;
use super::secrets::around;
use super::surfaces::Recorded;
use super::{
    base_input, encoded, query_of, reads, route_of, string_properties, tool_of, with_query,
};
use crate::serve_support::{Reply, Served};

/// The marker of the file outside the repository.
const OUTSIDE: &str = "MJOUTSIDE4d81e0";
/// The marker of an ordinary rule inside it: the control that shows the sweep sees content.
const INSIDE: &str = "MJINSIDE92c5b7";
/// The control rule's URI.
const CONTROL_URI: &str = "majordomus://rule/inside-control@1";

/// A rule's text: valid front matter, and `marker` in its statement and body.
fn rule_text(id: &str, marker: &str) -> String {
    format!(
        "---\nid: {id}\nversion: 1\nkind: rule\ntitle: Rule {id}\ndescription: A rule that says {marker}.\nstatement: Say {marker}.\nstatus: active\nclass: advisory\n---\n\n# Rule {id}\n\n{marker}\n"
    )
}

/// A repository whose committed symlinks point out of it, at files that would each be a valid
/// object if followed, plus an ordinary control rule; and the directory outside.
#[cfg(unix)]
struct Escapes {
    fixture: Fixture,
    outside: tempfile::TempDir,
}

#[cfg(unix)]
impl Escapes {
    fn new() -> Escapes {
        use std::os::unix::fs::symlink;
        let outside = tempfile::TempDir::new().expect("a directory outside the repository");
        std::fs::write(
            outside.path().join("outside.md"),
            rule_text("escape", OUTSIDE),
        )
        .expect("the outside rule");
        std::fs::write(
            outside.path().join("SKILL.md"),
            format!("---\nname: escape\ndescription: {OUTSIDE}\n---\n\n{OUTSIDE}\n"),
        )
        .expect("the outside skill");
        let fixture = Fixture::with_objects();
        fixture.write(
            ".ai/repo/rules/inside-control.md",
            rule_text("inside-control", INSIDE),
        );
        let root = fixture.root();
        let target = outside.path().join("outside.md");
        std::fs::create_dir_all(root.join(".ai/repo/skills")).expect("the skills directory");
        let links: [(&str, PathBuf); 6] = [
            (".ai/repo/rules/escape.md", target.clone()),
            (".ai/repo/skills/escape", outside.path().to_path_buf()),
            ("docs/out", outside.path().to_path_buf()),
            ("docs/linked.md", target.clone()),
            (
                "docs/relative.md",
                Path::new("..").join(Escapes::relative_from_docs(root, &target)),
            ),
            ("docs/parent", PathBuf::from("..")),
        ];
        for (link, to) in links {
            symlink(&to, root.join(link)).unwrap_or_else(|e| panic!("{link}: {e}"));
        }
        fixture.commit("links out of the repository");
        Escapes { fixture, outside }
    }

    /// `target` as a path relative to the repository root (`../<outside dir>/outside.md`).
    fn relative_from_docs(root: &Path, target: &Path) -> PathBuf {
        let mut up = PathBuf::new();
        let mut base = root.to_path_buf();
        loop {
            if let Ok(rest) = target.strip_prefix(&base) {
                return up.join(rest);
            }
            up.push("..");
            base = base.parent().expect("a common ancestor").to_path_buf();
        }
    }

    fn outside_file(&self) -> String {
        self.outside.path().join("outside.md").display().to_string()
    }

    /// Every string that names the outside file, or a place outside the repository, in a way
    /// some careless resolver might follow.
    fn payloads(&self) -> Vec<String> {
        let absolute = self.outside_file();
        let dir = self.outside.path().display().to_string();
        let from_root = Escapes::relative_from_docs(self.fixture.root(), Path::new(&absolute))
            .display()
            .to_string();
        let deep = format!("{}{}", "../".repeat(12), absolute.trim_start_matches('/'));
        let mut payloads = vec![
            absolute.clone(),
            dir.clone(),
            from_root.clone(),
            deep.clone(),
            format!("./{from_root}"),
            format!("docs/../{from_root}"),
            format!("file://{absolute}"),
            format!("file:{absolute}"),
            format!("file://localhost{absolute}"),
            format!("majordomus://rule/../../{from_root}"),
            "majordomus://rule/../../x".to_string(),
            "majordomus://document/../../outside.md".to_string(),
            format!("majordomus://document/../{from_root}"),
            format!("majordomus://document/{deep}"),
            format!("majordomus://document/{absolute}"),
            format!("majordomus://document/{from_root}"),
            format!("majordomus://document/file://{absolute}"),
            format!("majordomus://{absolute}"),
            format!("majordomus:///{from_root}"),
            format!("majordomus://document/..%2F..%2F{}", encoded(&from_root)),
            format!(
                "majordomus://document/%2e%2e%2f%2e%2e%2f{}",
                encoded(&from_root)
            ),
            format!("majordomus://document/{}", encoded(&absolute)),
            format!("majordomus://rule/%2E%2E/%2E%2E/{}", encoded(&from_root)),
            encoded(&absolute),
            encoded(&format!("file://{absolute}")),
            format!("majordomus://document/..\\..\\{from_root}"),
            "majordomus://document/docs/linked.md\u{0}".to_string(),
            // The committed links, by path and by the URI each would have if followed.
            ".ai/repo/rules/escape.md".to_string(),
            "docs/linked.md".to_string(),
            "docs/relative.md".to_string(),
            "docs/out/outside.md".to_string(),
            "docs/parent".to_string(),
            ".ai/repo/skills/escape/SKILL.md".to_string(),
            "majordomus://rule/escape@1".to_string(),
            "majordomus://skill/escape".to_string(),
            "majordomus://document/docs/linked.md".to_string(),
            "majordomus://document/docs/relative.md".to_string(),
            "majordomus://document/docs/out/outside.md".to_string(),
            "majordomus://document/docs/out/SKILL.md".to_string(),
            "majordomus://document/docs/parent/docs/linked.md".to_string(),
            "majordomus://document/docs/out".to_string(),
            "majordomus://document/.ai/repo/rules/escape.md".to_string(),
        ];
        payloads.dedup();
        payloads
    }
}

/// Asserts that `text`, what `surface` answered to `payload`, holds nothing from outside.
fn assert_inside(surface: &str, payload: &str, text: &str) {
    if let Some(at) = text.find(OUTSIDE) {
        panic!(
            "{surface} read outside the repository for {payload:?}: …{}…",
            around(text, at)
        );
    }
}

/// Injects every payload into every string property of every read tool over stdio, and into
/// `resources/read`. Returns the number of injected calls.
#[cfg(unix)]
fn inject_over_stdio(session: &mut Recorded, payloads: &[String]) -> usize {
    let mut injected = 0;
    for d in reads() {
        let Some(tool) = d.tool else { continue };
        for property in string_properties(d) {
            for payload in payloads {
                let mut input = base_input(d);
                input[property.as_str()] = json!(payload);
                // A result (success or refusal), never a JSON-RPC error: an `internal` here
                // would be a resolver that tried and failed.
                let result = session.call(tool, input.clone());
                if result["isError"] == true {
                    let code = &result["_meta"]["majordomus"]["error"]["code"];
                    assert!(
                        code == "invalid_input" || code == "not_found",
                        "{tool} {input}: {result}"
                    );
                }
                assert_inside(&format!("{tool}.{property}"), payload, &result.to_string());
                injected += 1;
            }
        }
    }
    for payload in payloads {
        let frame = session.request("resources/read", json!({ "uri": payload }));
        if let Some(code) = frame["error"]["code"].as_i64() {
            assert!(
                code == protocol::RESOURCE_NOT_FOUND || code == protocol::INVALID_PARAMS,
                "resources/read {payload:?}: {frame}"
            );
        }
        assert_inside("resources/read", payload, &frame.to_string());
        injected += 1;
    }
    injected
}

#[cfg(unix)]
#[test]
fn no_path_or_symlink_reaches_outside_the_repository_over_stdio() {
    let escapes = Escapes::new();
    let payloads = escapes.payloads();
    for discovery in ["vcs", "filesystem"] {
        let mut session = Recorded::start(
            escapes.fixture.root(),
            &["--discovery", discovery],
            &[("MAJORDOMUS_LOG", "trace")],
        );
        session.initialize();
        // The control: an ordinary rule is read, content and all, so the sweep sees content.
        let control = session.call_ok(tool_of("objects.get"), json!({ "uri": CONTROL_URI }));
        assert!(
            control["content"]
                .as_str()
                .is_some_and(|c| c.contains(INSIDE)),
            "{control}"
        );
        // The links were seen, and refused as links.
        let info = session.call_ok(tool_of("repository.info"), json!({}));
        let refused: BTreeSet<&str> = info["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["code"] == "symlink")
            .filter_map(|d| d["path"].as_str())
            .collect();
        for link in [
            ".ai/repo/rules/escape.md",
            "docs/linked.md",
            "docs/relative.md",
        ] {
            assert!(
                refused.contains(link),
                "{link} is refused as a symlink: {info}"
            );
        }
        let injected = inject_over_stdio(&mut session, &payloads);
        assert!(injected >= 50, "only {injected} injected calls");
        let finished = session.server.close();
        assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
        eprintln!(
            "path sweep, MCP over stdio ({discovery} discovery): {} payloads, {injected} injected calls",
            payloads.len()
        );
        assert_inside(
            "an answer over stdio",
            "the whole session",
            &session.transcript,
        );
        assert_inside("stderr of `mcp`", "the whole session", &finished.stderr);
    }
}

#[cfg(unix)]
#[test]
fn no_path_or_symlink_reaches_outside_the_repository_over_http() {
    let escapes = Escapes::new();
    let payloads = escapes.payloads();
    let mut server =
        Served::start_with_env(escapes.fixture.root(), &[], &[("MAJORDOMUS_LOG", "trace")])
            .recording();
    let control = server.get(&format!(
        "{}?uri={}",
        route_of("objects.get"),
        encoded(CONTROL_URI)
    ));
    assert!(control.text().contains(INSIDE), "{}", control.text());
    let mut injected = 0;
    for d in reads() {
        let Some(route) = d.route else { continue };
        for property in string_properties(d) {
            for payload in &payloads {
                let mut input = base_input(d);
                input[property.as_str()] = json!(payload);
                check(
                    &server,
                    route.path,
                    payload,
                    &with_query(route.path, &query_of(&input)),
                );
                injected += 1;
            }
        }
    }
    for payload in &payloads {
        // Encoded, so the server decodes exactly the payload; and raw, so it decodes the
        // percent-escapes the payload itself carries.
        for uri in [encoded(payload), payload.replace(['#', '&', ' '], "")] {
            let api = check(
                &server,
                "GET /api/v1/object",
                payload,
                &format!("{}?uri={uri}", route_of("objects.get")),
            );
            assert!(
                api.status == 404 || api.status == 400,
                "{payload:?}: {} {}",
                api.status,
                api.text()
            );
            let page = check(
                &server,
                "the Cockpit's object page",
                payload,
                &format!("/cockpit/object?uri={uri}"),
            );
            assert!(
                page.status == 404 || page.status == 400,
                "{payload:?}: {}",
                page.status
            );
            injected += 2;
        }
    }
    // Traversal in the request path itself.
    let absolute = escapes.outside_file();
    for target in [
        format!("/cockpit/assets/../../../..{absolute}"),
        format!("/cockpit/assets/..%2F..%2F..%2F..{}", encoded(&absolute)),
        format!("/cockpit/assets/%2e%2e/%2e%2e/%2e%2e{absolute}"),
        format!("/api/v1/..%2F..%2F..{}", encoded(&absolute)),
        format!("/cockpit/..%2F..%2F..{absolute}"),
        format!("/%2e%2e/%2e%2e/%2e%2e{absolute}"),
    ] {
        check(&server, "a request path", &target, &target);
        injected += 1;
    }
    let mut mcp = HttpMcp::initialize(&server);
    for payload in &payloads {
        let frame = mcp.request(&server, "resources/read", json!({ "uri": payload }));
        assert!(frame.get("error").is_some(), "{payload:?}: {frame}");
        assert_inside("resources/read over /mcp", payload, &frame.to_string());
        injected += 1;
    }
    let (_, err) = server.stop();
    assert!(injected >= 50, "only {injected} injected requests");
    eprintln!(
        "path sweep, HTTP: {} payloads, {injected} injected requests",
        payloads.len()
    );
    assert_inside(
        "an answer over HTTP",
        "the whole session",
        &server.transcript(),
    );
    assert_inside("stderr of `serve`", "the whole session", &err);
}

/// GETs `target`, which carries `payload`: never a 5xx, never anything from outside.
fn check(server: &Served, surface: &str, payload: &str, target: &str) -> Reply {
    let reply = server.get(target);
    assert!(
        reply.status < 500,
        "{target}: {} {}",
        reply.status,
        reply.text()
    );
    assert_inside(surface, payload, &reply.text());
    reply
}
