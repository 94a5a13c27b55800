//! The hostile corpus: what a committed file, a page open beside `serve` or a
//! misbehaving client could do, each reproduced through the real binary. Every case names the
//! file or field it refuses, and the rest of the layer is still served.

use serde_json::Value;

use crate::support::{run_in, stderr, stdout, Fixture, McpServer};

/// `repository info` of `fixture` as JSON; the command must succeed.
fn info(fixture: &Fixture) -> Value {
    let out = run_in(fixture.root(), &["repository", "info"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("repository info answers JSON")
}

/// The diagnostics of `path` in a report, as (code, message).
fn diagnostics_of(report: &Value, path: &str) -> Vec<(String, String)> {
    report["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["path"] == path)
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default().to_string(),
                d["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Runs `repository info`, which must fail with `exit` and a message naming `path`; returns it.
fn refused(fixture: &Fixture, exit: i32, path: &str) -> String {
    let out = run_in(fixture.root(), &["repository", "info"]);
    assert_eq!(out.status.code(), Some(exit), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains(path), "{path} is not named: {message}");
    message
}

mod yaml {
    //! Nested flow collections made serde_yaml quadratic (50 KB of `[`
    //! took 5.7 s, a 4 MiB file about ten hours) while `mcp` answered nothing.

    use super::*;

    const RULE: &str = ".ai/repo/rules/deep.md";
    const ISSUE: &str = ".ai/repo/project/issues/deep.yaml";

    #[test]
    fn nested_front_matter_and_issue_files_are_too_deep_and_the_rest_is_served() {
        let fixture = Fixture::with_objects();
        // 200 KB of `[` cost serde_yaml 45 s; the bound refuses it after 33.
        fixture.write(
            RULE,
            format!("---\ntitle: {}\n---\n# Deep\n", "[".repeat(200_000)),
        );
        fixture.write(
            ISSUE,
            format!("id: deep\ntitle: x\ntags: {}\n", "{a: ".repeat(100_000)),
        );
        fixture.write(
            ".ai/repo/project/issues/dashes.yaml",
            format!("id: dashes\ntitle: x\ntags:\n{}x\n", "- ".repeat(50_000)),
        );
        fixture.commit("deep documents");
        let report = info(&fixture);
        for path in [RULE, ISSUE, ".ai/repo/project/issues/dashes.yaml"] {
            let found = diagnostics_of(&report, path);
            assert_eq!(found.len(), 1, "{path}: {found:?}");
            let (code, message) = &found[0];
            assert_eq!(code, "too_deep", "{path}: {message}");
            assert!(message.contains("more than 32 levels"), "{message}");
        }
        assert_eq!(report["index"]["state"], "degraded");
        // The rest of the layer: the scaffold's rule and prompt, the added objects.
        assert_eq!(report["counts"]["rule"], 1, "{}", report["counts"]);
        assert_eq!(report["counts"]["issue"], 1, "{}", report["counts"]);
        assert_eq!(report["counts"]["adr"], 1, "{}", report["counts"]);
    }

    #[test]
    fn front_matter_over_the_yaml_bound_is_oversized_unparsed() {
        let fixture = Fixture::new();
        // 2 MiB of front matter: within an object's 4 MiB, past a YAML document's 1 MiB.
        let filler = "# filler line of a comment that a parser would have to read\n";
        fixture.write(
            RULE,
            format!(
                "---\n{}id: deep\n---\n# Deep\n",
                filler.repeat(2 * 1024 * 1024 / filler.len())
            ),
        );
        fixture.commit("large front matter");
        let found = diagnostics_of(&info(&fixture), RULE);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "oversized", "{}", found[0].1);
        assert!(found[0].1.contains("1 MiB"), "{}", found[0].1);
    }

    #[test]
    fn a_nested_configuration_file_stops_the_build_naming_it() {
        for (path, text) in [
            (
                ".ai/repo/knowledge/sources.yaml",
                format!("version: 1\nsources: {}\n", "[".repeat(100_000)),
            ),
            (
                ".ai/repo/knowledge/kinds.yaml",
                format!("version: 1\nkinds:\n{}x\n", "- ".repeat(100_000)),
            ),
            (
                ".ai/manifest.yaml",
                format!(
                    "schema: ai-repository/v1\nsections: {}\n",
                    "{a: ".repeat(100_000)
                ),
            ),
        ] {
            let fixture = Fixture::new();
            fixture.write(path, text);
            let message = refused(&fixture, 10, path);
            assert!(message.contains("majordomus: too_deep: "), "{message}");
            assert!(message.contains("more than 32 levels"), "{message}");
        }
    }
}

mod configuration {
    //! A committed `sources.yaml -> /dev/zero` grew the process to a
    //! gigabyte, `-> /dev/stdin` made `mcp` read its client's messages as configuration, and a
    //! manifest linked outside echoed the outside file's values.

    use super::*;

    const SOURCES: &str = ".ai/repo/knowledge/sources.yaml";

    fn link(fixture: &Fixture, path: &str, to: &std::path::Path) {
        let at = fixture.root().join(path);
        let _ = std::fs::remove_file(&at);
        std::os::unix::fs::symlink(to, at).expect("a symbolic link");
    }

    #[test]
    fn a_configuration_file_linked_to_a_device_is_refused_unread() {
        for (path, device) in [
            (SOURCES, "/dev/zero"),
            (".ai/repo/knowledge/kinds.yaml", "/dev/urandom"),
            (".ai/manifest.yaml", "/dev/zero"),
        ] {
            let fixture = Fixture::new();
            link(&fixture, path, std::path::Path::new(device));
            let message = refused(&fixture, 10, path);
            assert!(message.contains("is a symbolic link"), "{message}");
        }
    }

    #[test]
    fn a_manifest_linked_outside_is_refused_without_echoing_it() {
        let outside = tempfile::TempDir::new().expect("a directory outside");
        let secret = outside.path().join("manifest.yaml");
        std::fs::write(&secret, "schema: outside-value-7f3a\nsections: {}\n").expect("written");
        let fixture = Fixture::new();
        link(&fixture, ".ai/manifest.yaml", &secret);
        let message = refused(&fixture, 10, ".ai/manifest.yaml");
        assert!(message.contains("is a symbolic link"), "{message}");
        assert!(!message.contains("outside-value-7f3a"), "{message}");
    }

    #[test]
    fn sources_linked_to_stdin_are_not_read_from_the_client() {
        let fixture = Fixture::new();
        link(&fixture, SOURCES, std::path::Path::new("/dev/stdin"));
        let mut server = McpServer::start(fixture.root());
        // Before the fix, this message became the sources file.
        let _ = server.try_send(r#"{"version": 1, "sources": [], "marker": "client-bytes-91c2"}"#);
        let finished = server.close();
        let text = format!("{}{}", finished.stderr, finished.rest.join("\n"));
        assert!(text.contains("is a symbolic link"), "{text}");
        assert!(!text.contains("client-bytes-91c2"), "{text}");
    }

    #[test]
    fn a_named_pipe_or_a_directory_is_not_a_configuration_file() {
        for (kind, describe) in [("fifo", "a named pipe"), ("dir", "a directory")] {
            let fixture = Fixture::new();
            let at = fixture.root().join(SOURCES);
            std::fs::remove_file(&at).expect("init wrote sources.yaml");
            if kind == "fifo" {
                let made = std::process::Command::new("mkfifo")
                    .arg(&at)
                    .status()
                    .expect("mkfifo runs");
                assert!(made.success());
            } else {
                std::fs::create_dir(&at).expect("a directory");
            }
            let message = refused(&fixture, 10, SOURCES);
            assert!(message.contains(describe), "{message}");
        }
    }

    #[test]
    fn an_oversized_configuration_file_is_refused_unparsed() {
        let fixture = Fixture::new();
        let mut text = std::fs::read_to_string(fixture.root().join(SOURCES)).expect("sources");
        let filler = "# a comment line that pads the file past the bound\n";
        text.push_str(&filler.repeat(1024 * 1024 / filler.len() + 1));
        fixture.write(SOURCES, text);
        let message = refused(&fixture, 10, SOURCES);
        assert!(message.contains("majordomus: oversized: "), "{message}");
    }
}

mod holes {
    //! The smaller holes, each through the served or the run binary.

    use super::*;
    use crate::serve_support::Served;

    #[test]
    fn the_objects_pager_saturates_an_offset_near_the_integer_limit() {
        let fixture = Fixture::new();
        for i in 0..150 {
            fixture.write(&format!("docs/page-{i:03}.md"), format!("# Page {i}\n"));
        }
        fixture.commit("150 documents: two pages");
        let served = Served::start(fixture.root());
        for offset in ["9223372036854775807", "9223372036854775700", "1000"] {
            let reply = served.get(&format!("/cockpit/objects?offset={offset}"));
            assert_eq!(reply.status, 200, "{offset}: {}", reply.text());
            let page = reply.text();
            assert!(page.contains("Page 2 of 2"), "{offset}: {page}");
            assert!(
                page.contains("offset=100"),
                "{offset}: a link back to page 2"
            );
            assert!(!page.contains("922337203685477"), "{offset}: {page}");
        }
        let first = served.get("/cockpit/objects?offset=0").text();
        assert!(first.contains("Page 1 of 2"), "{first}");
    }

    #[test]
    fn host_headers_a_browser_would_not_send_are_refused() {
        let fixture = Fixture::new();
        let served = Served::start(fixture.root());
        let port = served.port;
        for host in [
            format!("evil.com:{port}.localhost"),
            "evil.com:80.localhost".to_string(),
            "[::1".to_string(),
            format!("[::1:{port}"),
            "localhost:65536".to_string(),
            "127.0.0.1:4294967297".to_string(),
        ] {
            let reply = served.request("GET", "/api/v1/repository", &[("Host", &host)], b"");
            reply.assert_error(403, "forbidden");
        }
        let two = format!(
            "GET /api/v1/repository HTTP/1.1\r\nHost: localhost:{port}\r\nHost: evil.com\r\nConnection: close\r\n\r\n"
        );
        served
            .send_raw(two.as_bytes())
            .assert_error(403, "forbidden");
        let absolute = format!(
            "GET http://evil.com/api/v1/repository HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"
        );
        served
            .send_raw(absolute.as_bytes())
            .assert_error(403, "forbidden");
        // The same request with matching authorities is served.
        let matching = format!(
            "GET http://localhost:{port}/api/v1/repository HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(served.send_raw(matching.as_bytes()).status, 200);
        let ipv6 = served.request(
            "GET",
            "/healthz",
            &[("Host", &format!("[::1]:{port}"))],
            b"",
        );
        assert_eq!(ipv6.status, 200, "{}", ipv6.text());
    }

    #[test]
    fn json_answers_and_refusals_are_never_sniffed() {
        let fixture = Fixture::new();
        let served = Served::start(fixture.root());
        for target in [
            "/api/v1/repository",
            "/api/v1/nothing-here",
            "/openapi.json",
            "/",
        ] {
            let reply = served.get(target);
            assert_eq!(
                reply.header("x-content-type-options"),
                Some("nosniff"),
                "{target}: {:?}",
                reply.headers
            );
        }
        let refused = served.request("GET", "/api/v1/repository", &[("Host", "evil.com")], b"");
        assert_eq!(refused.header("x-content-type-options"), Some("nosniff"));
    }

    #[test]
    fn a_checkout_s_fsmonitor_is_never_run() {
        let fixture = Fixture::with_objects();
        let marker = fixture.root().join("fsmonitor-ran");
        let hook = fixture.root().join(".git/fsmonitor-hook");
        std::fs::write(
            &hook,
            format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
        )
        .expect("the hook");
        let mut permissions = std::fs::metadata(&hook).expect("hook").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&hook, permissions).expect("executable");
        fixture.git(&["config", "core.fsmonitor", &hook.display().to_string()]);
        // git itself runs it: the configuration is live.
        fixture.git(&["status", "--porcelain"]);
        assert!(marker.exists(), "git runs the configured hook");
        std::fs::remove_file(&marker).expect("reset");
        let report = info(&fixture);
        assert_eq!(report["index"]["state"], "ok", "{}", report["diagnostics"]);
        let identity = run_in(fixture.root(), &["repository", "identity"]);
        assert!(identity.status.success(), "{}", stderr(&identity));
        assert!(!marker.exists(), "majordomus ran the checkout's fsmonitor");
    }

    #[test]
    fn a_kind_pattern_that_does_not_compile_is_refused_naming_it() {
        let fixture = Fixture::new();
        fixture.write(
            ".ai/repo/knowledge/kinds.yaml",
            "version: 1\nkinds:\n  runbook:\n    format: markdown\n    schema:\n      type: object\n      additionalProperties: false\n      properties:\n        code: { type: string, pattern: '([a-z]{1000}){1000}' }\n",
        );
        let message = refused(&fixture, 10, ".ai/repo/knowledge/kinds.yaml");
        assert!(message.contains("`properties.code`"), "{message}");
        assert!(message.contains("cannot be compiled"), "{message}");
    }
}

mod credentials {
    //! An untracked `docs/private-notes.md` holding a token was served
    //! whole on every surface, and a `.env` claimed by a source served its keys in clear.

    use super::*;

    const TOKEN: &str = "ghp_hostile0corpus0token0abcdefghij";
    const PASSWORD: &str = "s3cr3t-hostile-corpus";

    /// Every answer the CLI gives about the layer, joined: the report, the listing, a search.
    fn everything_served(fixture: &Fixture) -> String {
        let mut all = String::new();
        for args in [
            &["repository", "info"][..],
            &["objects", "list"][..],
            &["objects", "search", "hostile"][..],
        ] {
            let out = run_in(fixture.root(), args);
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            all.push_str(&stdout(&out));
        }
        all
    }

    #[test]
    fn a_document_holding_a_token_is_excluded_naming_line_and_shape_never_the_value() {
        let fixture = Fixture::with_objects();
        fixture.write(
            "docs/private-notes.md",
            format!("# Private notes\n\nhostile corpus\nthe deploy token is {TOKEN}\n"),
        );
        // Committed: tracked, so discovery claims it and only the content check keeps it out.
        fixture.commit("notes with a token");
        let report = info(&fixture);
        let found = diagnostics_of(&report, "docs/private-notes.md");
        assert_eq!(found.len(), 1, "{found:?}");
        let (code, message) = &found[0];
        assert_eq!(code, "contains_credential");
        assert!(message.contains("line 4"), "{message}");
        assert!(message.contains("a GitHub token"), "{message}");
        let served = everything_served(&fixture);
        assert!(!served.contains(TOKEN), "the token was served");
        assert!(
            !served.contains("ghp_hostile"),
            "part of the token was served"
        );
        // The rest of the layer is served.
        assert_eq!(report["counts"]["document"], 1, "{}", report["counts"]);
    }

    /// A GitHub token spelled in pieces, so this file holds none whole.
    fn name_token() -> String {
        ["gh", "p_", "hostile0name0token0abcdefghij"].concat()
    }

    #[test]
    fn a_file_whose_name_holds_a_token_is_excluded_naming_the_shape_never_the_name() {
        let token = name_token();
        let fixture = Fixture::with_objects();
        fixture.write(
            &format!("docs/{token}.md"),
            "# Hostile name\n\nhostile corpus, harmless text\n",
        );
        fixture.commit("a note whose name is a token");
        let report = info(&fixture);
        let found = diagnostics_of(&report, "docs/[redacted].md");
        assert_eq!(found.len(), 1, "{}", report["diagnostics"]);
        assert_eq!(found[0].0, "contains_credential");
        assert!(found[0].1.contains("a GitHub token"), "{}", found[0].1);
        let mut served = everything_served(&fixture);
        let mut server = McpServer::start(fixture.root());
        server.initialize();
        served.push_str(
            &server
                .result("resources/list", serde_json::json!({}))
                .to_string(),
        );
        served.push_str(
            &server
                .call(
                    "majordomus_search",
                    serde_json::json!({ "query": "hostile" }),
                )
                .to_string(),
        );
        // The Cockpit and the HTTP API, and a build logged at trace.
        let web = crate::serve_support::Served::start(fixture.root());
        for target in [
            "/cockpit",
            "/cockpit/objects",
            "/cockpit/search?q=hostile",
            "/api/v1/objects",
            "/api/v1/repository",
        ] {
            let reply = web.get(target);
            assert_eq!(reply.status, 200, "{target}");
            served.push_str(&reply.text());
        }
        let traced = crate::support::bin()
            .current_dir(fixture.root())
            .env("MAJORDOMUS_LOG", "trace")
            .args(["objects", "list"])
            .output()
            .expect("the binary runs");
        served.push_str(&stderr(&traced));
        assert!(!served.contains(&token), "the token was served");
        assert!(
            !served.contains("hostile0name"),
            "part of the token was served"
        );
        // The rest of the layer is served.
        assert!(
            report["counts"]["rule"].as_i64() >= Some(1),
            "{}",
            report["counts"]
        );
    }

    #[test]
    fn a_skill_file_whose_name_holds_a_token_refuses_the_skill_never_naming_it() {
        let token = name_token();
        let fixture = Fixture::new();
        fixture.write(
            ".ai/repo/skills/deploy/SKILL.md",
            "---\nname: deploy\ndescription: Deploys.\n---\n\n# Deploy\n",
        );
        fixture.write(&format!(".ai/repo/skills/deploy/{token}.txt"), "harmless\n");
        fixture.commit("a skill with a file named as a token");
        let report = info(&fixture);
        let found = diagnostics_of(&report, ".ai/repo/skills/deploy/SKILL.md");
        assert_eq!(found.len(), 1, "{}", report["diagnostics"]);
        assert_eq!(found[0].0, "contains_credential");
        assert!(found[0].1.contains("a GitHub token"), "{}", found[0].1);
        let mut server = McpServer::start(fixture.root());
        server.initialize();
        let listed = server
            .result("resources/list", serde_json::json!({}))
            .to_string();
        assert!(!listed.contains(&token), "{listed}");
        assert!(!report.to_string().contains(&token));
    }

    #[test]
    fn an_env_file_a_source_claims_is_excluded_with_its_keys_unread() {
        let fixture = Fixture::new();
        let sources = fixture.root().join(".ai/repo/knowledge/sources.yaml");
        let mut text = std::fs::read_to_string(&sources).expect("sources");
        text.push_str("  - id: envs\n    kind: document\n    pathspec: \"**/.env*\"\n");
        fixture.write(".ai/repo/knowledge/sources.yaml", text);
        fixture.write(
            ".env",
            format!(
                "# hostile corpus\nAPP_NAME=demo\nDB_PASSWORD={PASSWORD}\nGITHUB_TOKEN={TOKEN}\n"
            ),
        );
        fixture.commit("a pull request that claims .env");
        let report = info(&fixture);
        let found = diagnostics_of(&report, ".env");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "contains_credential");
        assert!(found[0].1.contains("line 3"), "{}", found[0].1);
        assert!(found[0].1.contains("environment secret"), "{}", found[0].1);
        let served = everything_served(&fixture);
        for value in [PASSWORD, TOKEN] {
            assert!(!served.contains(value), "{value} was served");
        }
    }

    #[test]
    fn this_checkout_s_layer_which_talks_about_tokens_still_indexes_ok() {
        let out = run_in(crate::support::this_checkout(), &["repository", "info"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        assert_eq!(report["index"]["state"], "ok", "{}", report["diagnostics"]);
        let rules = report["counts"]["rule"].as_i64().unwrap_or_default();
        assert!(rules >= 5, "{}", report["counts"]);
    }

    #[test]
    fn the_origin_loses_a_token_in_its_user_its_query_and_its_fragment() {
        for (origin, expected) in [
            (
                format!("ssh://{TOKEN}@git.example/o/r.git"),
                "ssh://git.example/o/r.git",
            ),
            (
                format!("https://git.example/o/r.git?private_token={TOKEN}#{PASSWORD}"),
                "https://git.example/o/r.git",
            ),
            (
                format!("{TOKEN}@git.example:o/r.git"),
                "git.example:o/r.git",
            ),
        ] {
            let fixture = Fixture::new();
            fixture.git(&["remote", "add", "origin", &origin]);
            let out = run_in(fixture.root(), &["repository", "identity"]);
            assert!(out.status.success(), "{}", stderr(&out));
            let identity: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
            assert_eq!(identity["origin"], expected, "{origin}");
        }
    }
}

mod pages {
    //! A 4 MB document of links took 24 s to render on 1,000 objects,
    //! and abandoned renders burned both cores for 20 s.

    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use majordomus::cockpit::{self, render_bound, Request};
    use majordomus::context::{Context, Options};
    use majordomus::layer::Discovery;

    use super::*;
    use crate::serve_support::Served;

    const LINKS: &str = "docs/links.md";

    /// A layer of 1,000 documents and one document of `links` relative links to them.
    fn fixture_with_links(links: usize) -> Fixture {
        let fixture = Fixture::new();
        for i in 0..1_000 {
            fixture.write(&format!("docs/d/{i:04}.md"), format!("# Document {i}\n"));
        }
        let mut text = String::from("# Links\n\n");
        for i in 0..links {
            text.push_str(&format!("[d{i}](d/{:04}.md) ", i % 1_000));
        }
        fixture.write(LINKS, text);
        fixture.commit("a document of links");
        fixture
    }

    fn object_target() -> String {
        format!(
            "/cockpit/object?uri=majordomus%3A%2F%2Fdocument%2F{}",
            LINKS.replace('/', "%2F")
        )
    }

    #[test]
    fn a_page_of_many_links_resolves_each_once_up_to_the_bound() {
        // About 1.3 MB of links, past the bound on resolved links.
        let links = render_bound::MAX_RESOLVED_LINKS + 40_000;
        let fixture = fixture_with_links(links);
        let served = Served::start(fixture.root());
        let reply = served.get(&object_target());
        assert_eq!(reply.status, 200, "{}", reply.text());
        let page = reply.text();
        let resolved = page
            .matches("href=\"/cockpit/object?uri=majordomus%3A%2F%2Fdocument%2Fdocs%2Fd%2F")
            .count();
        assert_eq!(resolved, render_bound::MAX_RESOLVED_LINKS);
        // Every link's text is still shown.
        assert!(page.contains(&format!("d{}", links - 1)));
    }

    #[test]
    fn an_abandoned_render_stops_and_says_so() {
        let fixture = fixture_with_links(20_000);
        let ctx = Context::open(Options {
            start: fixture.root().to_path_buf(),
            discovery: Discovery::Filesystem,
            ..Options::default()
        });
        let target = object_target();
        let query = target.split_once('?').map(|(_, q)| q);
        let request = Request {
            path: "/object",
            query,
            form: None,
            post: false,
            host: "127.0.0.1:8741",
        };
        let later = Instant::now() + Duration::from_secs(3600);
        let whole = render_bound::run(Arc::new(AtomicBool::new(false)), later, || {
            cockpit::render(&ctx, &request)
        });
        assert_eq!(whole.status, 200);
        let gone = render_bound::run(Arc::new(AtomicBool::new(true)), later, || {
            cockpit::render(&ctx, &request)
        });
        assert_eq!(gone.status, 503, "{}", gone.html);
        assert!(gone.html.contains("client went away"), "{}", gone.html);
        let past = Instant::now() - Duration::from_secs(1);
        let late = render_bound::run(Arc::new(AtomicBool::new(false)), past, || {
            cockpit::render(&ctx, &request)
        });
        assert_eq!(late.status, 503, "{}", late.html);
        // Outside a bound (the library's callers), nothing stops a render.
        assert_eq!(cockpit::render(&ctx, &request).status, 200);
    }
}
