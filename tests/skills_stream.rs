//! A `skills/list` page longer than the stdio writer's buffer, through the real binary and real
//! pipes: it leaves as one line byte for byte what a lone request gets, and answers pipelined
//! around it (before, between, after) come whole and in request order.

use serde_json::{json, Value};

use crate::support::{Fixture, McpServer};

/// The stdio writer's buffer (`mcp::stdio`): a page longer than this is written past it.
const WRITER_BUFFER: usize = 64 * 1024;

fn fixture(count: usize) -> Fixture {
    let fixture = Fixture::new();
    for i in 0..count {
        let name = format!("s-{i:04}");
        fixture.write(
            &format!(".ai/repo/skills/{name}/SKILL.md"),
            format!("---\nname: {name}\ndescription: Skill {i} of a long page.\n---\n\n# {name}\n"),
        );
        fixture.write(
            &format!(".ai/repo/skills/{name}/references/notes.md"),
            format!("Notes of {i}.\n"),
        );
    }
    fixture.commit("a long page of skills");
    fixture
}

fn line(id: u64, method: &str, params: Value) -> String {
    format!(
        "{}\n",
        json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
    )
}

#[test]
fn a_page_longer_than_the_writer_buffer_is_one_whole_line_among_pipelined_answers() {
    let fixture = fixture(300);
    let mut server = McpServer::start(fixture.root());
    server.initialize();
    server.send(line(1, "skills/list", json!({})).trim_end());
    let lone = server.recv_line();
    assert!(
        lone.len() > WRITER_BUFFER,
        "the page ({} bytes) must be longer than the writer's buffer",
        lone.len()
    );
    let listed: Value = serde_json::from_str(&lone).expect("one JSON frame");
    assert_eq!(
        listed["result"]["skills"].as_array().map(Vec::len),
        Some(301)
    );

    let batch: String = [
        line(2, "ping", json!({})),
        line(3, "skills/list", json!({})),
        line(4, "skills/get", json!({ "uri": "skill://s-0150/SKILL.md" })),
        line(5, "skills/list", json!({})),
        line(6, "ping", json!({})),
    ]
    .concat();
    server.send_bytes(batch.as_bytes());
    for id in 2..=6u64 {
        let answer = server.recv_line();
        let frame: Value = serde_json::from_str(&answer)
            .unwrap_or_else(|e| panic!("answer {id} is not one JSON frame ({e})"));
        assert_eq!(frame["id"], id, "answers come in request order");
        assert!(frame.get("result").is_some(), "{id}: {}", frame["error"]);
        if id == 3 || id == 5 {
            let same = lone.replacen("\"id\":1,", &format!("\"id\":{id},"), 1);
            assert!(answer == same, "page {id} differs from the lone page");
        }
        if id == 4 {
            assert_eq!(frame["result"]["skill"], listed["result"]["skills"][151]);
        }
    }
}
