//! One JSON-RPC message, any bytes, to the MCP dispatcher (`Server::handle`, what stdio and `/mcp`
//! both call) on a fresh session over a small layer made once. Whatever arrives, the answer is
//! nothing (a notification, a response) or one JSON frame on one line, and never an internal
//! error.
//!
//! The context is read-only: a writer reached by the fuzzer would change the fixture between
//! runs, and the executor's input validation it shares with every tool is fuzzed all the same.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use majordomus::context::{Context, Options, Transport};
use majordomus::layer::Discovery;
use majordomus::mcp::{Server, Session};

/// A layer scaffolded by `majordomus init` in a directory of its own, once per process.
fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let root: PathBuf =
            std::env::temp_dir().join(format!("majordomus-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("a fixture directory");
        majordomus::init::init(&root).expect("init scaffolds a layer");
        let issues = root.join(".ai/repo/project/issues");
        std::fs::create_dir_all(&issues).expect("the issues directory");
        std::fs::write(
            issues.join("first.yaml"),
            "id: first\ntitle: The first issue\n",
        )
        .expect("an issue");
        let ctx = Context::open(Options {
            start: root,
            discovery: Discovery::Filesystem,
            strict: false,
            read_only: true,
            watch: None,
            only_kinds: None,
        });
        ctx.index().expect("the fixture indexes");
        Server::new(ctx)
    })
}

fuzz_target!(|data: &[u8]| {
    let server = server();
    let mut session = Session::new(Transport::Stdio);
    // An `initialize` first, on some runs, so the calls after it run as a peer.
    for line in data.split(|b| *b == b'\n').take(4) {
        if let Some(frame) = server.handle(&mut session, line) {
            let parsed: serde_json::Value = match serde_json::from_str(&frame) {
                Ok(v) => v,
                Err(e) => panic!("a frame that is not JSON ({e}): {frame}"),
            };
            assert!(!frame.contains('\n'), "a frame is one line: {frame}");
            // Nothing a client sends makes a read-only server over a good layer fail inside.
            assert_ne!(
                parsed["error"]["code"],
                majordomus::registry::lang::protocol::INTERNAL_ERROR,
                "{frame}"
            );
        }
    }
    if let Some(peer) = session.peer {
        server.context().peers().detach(peer);
    }
});
