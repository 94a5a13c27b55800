//! A modern `tools/call` of a writer queues with the writers, as a legacy one does: a flood of
//! them waiting for the checkout's write lock takes no thread a read needs, and one start wins.

use std::sync::Arc;

use serde_json::json;

use crate::busy::{plan_of, ForeignWriter};
use crate::serve_support::{route_of, Served};
use crate::support::tool_of;
use crate::support::PATIENCE;

use super::http::{headers, request};
use super::modern;

#[test]
fn modern_writers_waiting_for_the_lock_never_starve_reads() {
    let fixture = plan_of(1);
    let served = Arc::new(Served::start_with_env(
        fixture.root(),
        &[],
        &[("MAJORDOMUS_LOG", "info")],
    ));
    // A move of the plan acts for an agent: on this era it names itself by handle.
    let announce = tool_of("peers.announce");
    let announced = served.mcp_with(
        None,
        &headers("tools/call", Some(announce)),
        &request(
            json!(0),
            "tools/call",
            modern(json!({ "name": announce, "arguments": { "intent": "start i00" } })),
        ),
    );
    let handle = announced.json()["result"]["structuredContent"]["handle"]
        .as_str()
        .unwrap_or_else(|| panic!("a handle: {}", announced.text()))
        .to_string();
    let held = ForeignWriter::hold(fixture.root());
    let tool = tool_of("plan.transition");
    let writers: Vec<_> = (0..100)
        .map(|i| {
            let served = Arc::clone(&served);
            let handle = handle.clone();
            std::thread::spawn(move || {
                let call = modern(json!({
                    "name": tool,
                    "arguments": { "issue": "i00", "transition": "start", "agent": handle },
                }));
                served.mcp_with(
                    None,
                    &headers("tools/call", Some(tool)),
                    &request(json!(i), "tools/call", call),
                )
            })
        })
        .collect();
    // The writers are queued once the first says it waits for the lock another process holds.
    assert!(
        served
            .log_line("a write is waiting for the write lock held by", PATIENCE)
            .is_some(),
        "a writer waits for the lock: {}",
        served.log()
    );
    for target in [route_of("plan.issues"), "/healthz", "/cockpit"] {
        let reply = served.get(target);
        assert_eq!(
            reply.status,
            200,
            "{target} while writers wait: {}",
            reply.text()
        );
    }
    drop(held);
    let replies: Vec<_> = writers
        .into_iter()
        .map(|w| w.join().expect("a writer's client"))
        .collect();
    let started = replies
        .iter()
        .filter(|r| r.status == 200 && r.json()["result"]["isError"] == false)
        .count();
    assert_eq!(started, 1, "one start succeeded");
    for reply in &replies {
        assert!(
            [200, 503].contains(&reply.status),
            "the others were refused or told to retry: {} {}",
            reply.status,
            reply.text()
        );
    }
}
