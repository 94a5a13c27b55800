//! An MCP session over Streamable HTTP at `/mcp`, for the sweeps, on the one HTTP harness
//! ([`Served`]): a session id and the next request id.

use serde_json::{json, Value};

use crate::serve_support::{Reply, Served};

/// An MCP session over Streamable HTTP at `/mcp`.
pub(super) struct HttpMcp {
    session: String,
    pub(super) next_id: u64,
}

impl HttpMcp {
    pub(super) fn initialize(server: &Served) -> HttpMcp {
        let reply = server.request(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": { "name": "conformance", "version": "1" },
                },
            })
            .to_string()
            .as_bytes(),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
        let session = reply
            .header("mcp-session-id")
            .expect("initialize names a session")
            .to_string();
        let mcp = HttpMcp {
            session,
            next_id: 0,
        };
        mcp.post(
            server,
            &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        );
        mcp
    }

    fn post(&self, server: &Served, message: &Value) -> Reply {
        server.request(
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Mcp-Session-Id", &self.session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            message.to_string().as_bytes(),
        )
    }

    /// The frame answering one request.
    pub(super) fn request(&mut self, server: &Served, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let reply = self.post(
            server,
            &json!({ "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params }),
        );
        assert_eq!(reply.status, 200, "{method}: {}", reply.text());
        reply.json()
    }
}
