//! `majordomus serve` on a real socket, one module per concern, and the example rule
//! of the fixture `majordomus init` writes. Every test starts its own server on `--port 0` over a
//! throwaway repository.

/// Bad input, one row each: never a 500, always the envelope.
mod bad_input;
/// The in-flight bound and the header deadline.
mod bounds;
/// Freshness: an idle server is notified, and a running one sees edits, files and removals.
mod freshness;
/// The process's lifecycle: a taken port, SIGTERM, no layer.
mod lifecycle;
/// Liveness under scarcity: idle connections at a small descriptor limit.
mod liveness;
/// MCP over Streamable HTTP at `/mcp`: sessions, the compiled tools, resources, failures.
mod mcp;
/// The guard against peers that are not this machine, through the router.
mod peers;
/// The routes the table declares and the seed's examples (seed 003).
mod routes;

/// The URI of the example rule `majordomus init` writes.
const EXAMPLE_RULE: &str = "majordomus://rule/describe-changes-in-commits@1";
/// Its file.
const EXAMPLE_RULE_PATH: &str = ".ai/repo/rules/describe-changes-in-commits.md";
