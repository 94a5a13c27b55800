//! Skills in the Agent Skills format, driven through the
//! real binary: what a `SKILL.md` must say, which files belong to a skill, and the MCP skills
//! extension (`skills/list`, `skills/get`, `resources/directory/read`, `skill://` reads).

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::support::{run_in, stderr, stdout, Fixture, McpServer};

/// `repository info` of the fixture: its diagnostics and its skill count.
fn info(fixture: &Fixture) -> Value {
    let out = run_in(fixture.root(), &["repository", "info"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("JSON")
}

/// The codes and severities of the diagnostics reported for `path`.
fn diagnostics_of(info: &Value, path: &str) -> Vec<(String, String)> {
    info["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["path"] == path)
        .map(|d| {
            (
                d["severity"].as_str().unwrap_or_default().to_string(),
                d["code"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn skill_uris(fixture: &Fixture) -> Vec<String> {
    let out = run_in(fixture.root(), &["objects", "list", "--kind", "skill"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    answer["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .map(|o| o["uri"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_standard_skill_md_is_a_skill_and_unknown_keys_only_warn() {
    let fixture = Fixture::new();
    let path = ".ai/repo/skills/pdf-tools/SKILL.md";
    fixture.write(
        path,
        "---\nname: pdf-tools\ndescription: Fill and merge PDF forms. Use when a PDF is involved.\nlicense: Apache-2.0\ncompatibility: needs python3\nmetadata:\n  author: someone\n  version: \"1.0\"\nallowed-tools: Bash(python3:*) Read\nx-vendor-hint: kept\n---\n\n# PDF tools\n\nRun the scripts.\n",
    );
    let info = info(&fixture);
    assert_eq!(
        diagnostics_of(&info, path),
        [("warning".to_string(), "unknown_key".to_string())],
        "{info:#}"
    );
    assert_eq!(info["index"]["state"], "ok", "{info:#}");
    let uris = skill_uris(&fixture);
    assert!(
        uris.contains(&"majordomus://skill/pdf-tools".to_string()),
        "{uris:?}"
    );
    let out = run_in(
        fixture.root(),
        &["objects", "get", "majordomus://skill/pdf-tools"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let object: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    let metadata = &object["metadata"];
    assert_eq!(
        metadata["allowed-tools"], "Bash(python3:*) Read",
        "{object:#}"
    );
    assert_eq!(metadata["metadata"]["version"], "1.0", "{object:#}");
    assert_eq!(metadata["x-vendor-hint"], "kept", "{object:#}");
}

#[test]
fn bad_skill_front_matter_is_a_diagnostic_with_a_stable_code() {
    let fixture = Fixture::new();
    let long = "d".repeat(2000);
    let cases: [(&str, String, &str); 6] = [
        (
            "no-front-matter",
            "# No front matter\n".to_string(),
            "malformed_front_matter",
        ),
        (
            "yaml-error",
            "---\nname: yaml-error\ndescription: [unclosed\n---\n".to_string(),
            "malformed_front_matter",
        ),
        (
            "Bad_Name",
            "---\nname: Bad_Name\ndescription: Bad.\n---\n".to_string(),
            "schema_violation",
        ),
        (
            "long-description",
            format!("---\nname: long-description\ndescription: {long}\n---\n"),
            "schema_violation",
        ),
        (
            "elsewhere",
            "---\nname: not-elsewhere\ndescription: Moved.\n---\n".to_string(),
            "identity_mismatch",
        ),
        (
            "no-description",
            "---\nname: no-description\n---\n".to_string(),
            "missing_field",
        ),
    ];
    for (dir, text, _) in &cases {
        fixture.write(&format!(".ai/repo/skills/{dir}/SKILL.md"), text);
    }
    let info = info(&fixture);
    assert_eq!(info["index"]["state"], "degraded", "{info:#}");
    let uris = skill_uris(&fixture);
    for (dir, _, code) in &cases {
        let path = format!(".ai/repo/skills/{dir}/SKILL.md");
        let found = diagnostics_of(&info, &path);
        assert!(
            found.iter().any(|(s, c)| s == "error" && c == code),
            "{path}: expected `{code}`, got {found:?}"
        );
        assert!(
            !uris.iter().any(|u| u.ends_with(&format!("/{dir}"))),
            "{path} was served: {uris:?}"
        );
    }
    // The rest of the layer is still served: init's own skill.
    assert!(
        uris.contains(&"majordomus://skill/prepare-a-change".to_string()),
        "{uris:?}"
    );
}

/// A fixture with one skill of four files: the `SKILL.md`, a script, a nested reference and a
/// binary asset.
fn with_pdf_skill() -> Fixture {
    let fixture = Fixture::new();
    let dir = ".ai/repo/skills/pdf-tools";
    fixture.write(
        &format!("{dir}/SKILL.md"),
        "---\nname: pdf-tools\ndescription: Fill and merge PDF forms. Use when a PDF is involved.\nlicense: Apache-2.0\n---\n\n# PDF tools\n\nRun `scripts/fill.py`.\n",
    );
    fixture.write(&format!("{dir}/scripts/fill.py"), "print('fill')\n");
    fixture.write(&format!("{dir}/references/forms/fields.md"), "# Fields\n");
    fixture.write(
        &format!("{dir}/assets/logo.png"),
        [0x89u8, b'P', b'N', b'G', 0, 0xff, 0x10],
    );
    fixture
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        other => panic!("not base64: {other}"),
    };
    let mut out = Vec::new();
    for chunk in text.as_bytes().chunks(4) {
        let digits: Vec<u8> = chunk
            .iter()
            .filter(|c| **c != b'=')
            .map(|c| value(*c))
            .collect();
        let n = digits
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, d)| n | (u32::from(*d) << (18 - 6 * i)));
        for i in 0..digits.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// The bytes a `resources/read` of `uri` returns: its text, or its decoded blob.
fn read_bytes(server: &mut McpServer, uri: &str) -> (Vec<u8>, String) {
    let read = server.result("resources/read", json!({ "uri": uri }));
    let content = &read["contents"][0];
    assert_eq!(content["uri"], uri, "{read}");
    let mime = content["mimeType"].as_str().unwrap_or_default().to_string();
    match (content["text"].as_str(), content["blob"].as_str()) {
        (Some(text), None) => (text.as_bytes().to_vec(), mime),
        (None, Some(blob)) => (base64_decode(blob), mime),
        _ => panic!("{uri}: neither text nor blob: {read}"),
    }
}

#[test]
fn skills_list_get_and_every_file_read_with_its_digest() {
    let fixture = with_pdf_skill();
    let mut server = McpServer::start(fixture.root());
    let init = server.initialize();
    assert_eq!(
        init["capabilities"]["extensions"]["io.modelcontextprotocol/skills"]["directoryRead"], true,
        "{init:#}"
    );
    let listed = server.result("skills/list", json!({}));
    let skills = listed["skills"].as_array().expect("skills");
    let names: Vec<&str> = skills
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["pdf-tools", "prepare-a-change"], "{listed:#}");
    let got = server.result("skills/get", json!({ "uri": "skill://pdf-tools/SKILL.md" }));
    let skill = &got["skill"];
    assert_eq!(skill, &skills[0], "skills/get and skills/list agree");
    assert_eq!(skill["frontmatter"]["license"], "Apache-2.0", "{got:#}");
    let resources = skill["resources"].as_array().expect("resources");
    let uris: Vec<&str> = resources
        .iter()
        .map(|r| r["uri"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-tools/SKILL.md",
            "skill://pdf-tools/assets/logo.png",
            "skill://pdf-tools/references/forms/fields.md",
            "skill://pdf-tools/scripts/fill.py",
        ]
    );
    for resource in resources {
        let uri = resource["uri"].as_str().expect("uri");
        let (bytes, mime) = read_bytes(&mut server, uri);
        let on_disk = std::fs::read(
            fixture
                .root()
                .join(".ai/repo/skills/pdf-tools")
                .join(uri.trim_start_matches("skill://pdf-tools/")),
        )
        .expect("the file");
        assert_eq!(bytes, on_disk, "{uri} reads as its bytes");
        assert_eq!(resource["size"], on_disk.len(), "{uri}");
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(resource["digest"], format!("sha256:{digest}"), "{uri}");
        if uri.ends_with("logo.png") {
            assert_eq!(mime, "image/png");
        }
        if uri.ends_with("SKILL.md") {
            assert_eq!(mime, "text/markdown");
        }
    }
    // Every file is in resources/list too.
    let all = server.resource_uris();
    for uri in &uris {
        assert!(
            all.iter().any(|u| u == uri),
            "{uri} is not in resources/list"
        );
    }
}

#[test]
fn directory_read_lists_direct_children_and_refuses_files_and_strangers() {
    let fixture = with_pdf_skill();
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let top = server.result(
        "resources/directory/read",
        json!({ "uri": "skill://pdf-tools/" }),
    );
    let children: Vec<(String, String)> = top["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| {
            (
                r["uri"].as_str().unwrap_or_default().to_string(),
                r["mimeType"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let expected = [
        ("skill://pdf-tools/SKILL.md", "text/markdown"),
        ("skill://pdf-tools/assets/", "inode/directory"),
        ("skill://pdf-tools/references/", "inode/directory"),
        ("skill://pdf-tools/scripts/", "inode/directory"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(u, m)| (u.to_string(), m.to_string()))
        .collect();
    assert_eq!(children, expected, "{top:#}");
    let nested = server.result(
        "resources/directory/read",
        json!({ "uri": "skill://pdf-tools/references/" }),
    );
    assert_eq!(
        nested["resources"][0]["uri"], "skill://pdf-tools/references/forms/",
        "{nested}"
    );
    for (method, uri, named) in [
        (
            "resources/directory/read",
            "skill://pdf-tools/scripts/fill.py",
            "is a file",
        ),
        ("resources/directory/read", "skill://nobody/", "in no skill"),
        (
            "resources/directory/read",
            "majordomus://skill/pdf-tools",
            "not a skill://",
        ),
        (
            "resources/directory/read",
            "skill://pdf-tools/../../etc/",
            "no directory",
        ),
        (
            "skills/get",
            "skill://pdf-tools/scripts/fill.py",
            "does not name a skill",
        ),
        ("skills/get", "skill://nobody/SKILL.md", "names no skill"),
    ] {
        let error = server.error(method, json!({ "uri": uri }));
        assert_eq!(error["code"], -32602, "{method} {uri}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(uri) && message.contains(named),
            "{method} {uri}: {message}"
        );
    }
    let error = server.error("skills/get", json!({}));
    assert_eq!(error["code"], -32602, "{error}");
}

#[test]
fn a_skill_past_a_bound_or_with_a_link_is_refused_whole_and_bad_bytes_are_a_blob() {
    let fixture = Fixture::new();
    let skill = |name: &str| {
        fixture.write(
            &format!(".ai/repo/skills/{name}/SKILL.md"),
            format!("---\nname: {name}\ndescription: A skill.\n---\n\n# {name}\n"),
        );
        format!(".ai/repo/skills/{name}")
    };
    let many = skill("many-files");
    for i in 0..600 {
        fixture.write(&format!("{many}/data/{i:03}.txt"), "x");
    }
    let big = skill("big-asset");
    fixture.write(
        &format!("{big}/assets/huge.bin"),
        vec![7u8; 20 * 1024 * 1024],
    );
    let linked = skill("linked");
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc", fixture.root().join(&linked).join("etc"))
        .expect("a link to /etc");
    let latin = skill("latin-script");
    fixture.write(
        &format!("{latin}/scripts/run.sh"),
        [b'e', b'c', b'h', b'o', b' ', 0xe9, b'\n'],
    );

    let info = info(&fixture);
    for (dir, code, named) in [
        (&many, "skill_too_large", "512 files"),
        (&big, "skill_too_large", "16 MiB"),
        (&linked, "symlink", "etc"),
    ] {
        let path = format!("{dir}/SKILL.md");
        let found: Vec<&Value> = info["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["path"] == path.as_str())
            .collect();
        assert!(
            found
                .iter()
                .any(|d| d["code"] == code
                    && d["message"].as_str().unwrap_or_default().contains(named)),
            "{path}: {found:?}"
        );
    }
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let listed = server.result("skills/list", json!({}));
    let names: Vec<&str> = listed["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["latin-script", "prepare-a-change"], "{listed:#}");
    let (bytes, mime) = read_bytes(&mut server, "skill://latin-script/scripts/run.sh");
    assert_eq!(bytes, [b'e', b'c', b'h', b'o', b' ', 0xe9, b'\n']);
    assert_eq!(mime, "text/x-shellscript");
    let read = server.result(
        "resources/read",
        json!({ "uri": "skill://latin-script/scripts/run.sh" }),
    );
    assert!(read["contents"][0]["blob"].is_string(), "{read}");
    for uri in [
        "skill://linked/etc/passwd",
        "skill://many-files/data/000.txt",
    ] {
        let error = server.error("resources/read", json!({ "uri": uri }));
        assert_eq!(error["code"], -32002, "{uri}: {error}");
    }
}

#[test]
fn the_first_call_names_each_skill() {
    let fixture = with_pdf_skill();
    let mut server = McpServer::start(fixture.root());
    let init = server.initialize();
    let text = init["instructions"].as_str().expect("instructions");
    let skills = text
        .split(" Skills: ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .expect("a sentence naming the skills");
    let named: Vec<&str> = skills.split(", ").collect();
    assert!(
        named.contains(&"pdf-tools") && named.contains(&"prepare-a-change"),
        "{text}"
    );
    let discovered = server.result(
        "server/discover",
        json!({ "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        } }),
    );
    assert_eq!(
        discovered["instructions"], init["instructions"],
        "{discovered:#}"
    );
    assert_eq!(
        discovered["capabilities"]["extensions"]["io.modelcontextprotocol/skills"]["directoryRead"],
        true
    );
}

#[test]
fn init_adds_a_source_for_skills_kept_where_agents_look() {
    let fixture = Fixture::bare();
    fixture.git(&["init", "-q"]);
    fixture.write(
        ".claude/skills/release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: Write release notes from the log.\n---\n\n# Release notes\n",
    );
    fixture.write(".claude/skills/release-notes/template.md", "## Changes\n");
    fixture.write(
        ".agents/skills/triage/SKILL.md",
        "---\nname: triage\ndescription: Triage a new issue.\n---\n\n# Triage\n",
    );
    let out = run_in(fixture.root(), &["init"]);
    assert!(out.status.success(), "{}", stderr(&out));
    fixture.commit("a layer beside the agents' skills");
    let sources = std::fs::read_to_string(fixture.root().join(".ai/repo/knowledge/sources.yaml"))
        .expect("sources.yaml");
    assert!(sources.contains(".claude/skills/*/SKILL.md"), "{sources}");
    assert!(sources.contains(".agents/skills/*/SKILL.md"), "{sources}");
    let info = info(&fixture);
    assert_eq!(info["index"]["state"], "ok", "{info:#}");
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let got = server.result(
        "skills/get",
        json!({ "uri": "skill://release-notes/SKILL.md" }),
    );
    let uris: Vec<&str> = got["skill"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r["uri"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://release-notes/SKILL.md",
            "skill://release-notes/template.md"
        ]
    );
    server.result("skills/get", json!({ "uri": "skill://triage/SKILL.md" }));
}
