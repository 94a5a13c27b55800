//! The integration tests: one binary, one module per surface. Modules that drive the real
//! binary use `CARGO_BIN_EXE_majordomus`; the registry and generator modules use the library.

mod support;

// The declaration language, the generator and the surface generator, through the language
// crate's public API (with `codegen`, as build.rs links it), under the names the modules use.
use majordomus_registry_lang as lang;
use majordomus_registry_lang::{codegen, surface as surface_gen};

/// The generator over a fixture registry: snapshots and determinism.
mod generator;

/// The fixture's generated Rust, compiled: the golden file is code, not just text.
#[cfg(not(feature = "bless-snapshots"))]
#[allow(dead_code, clippy::all)]
mod fixture_generated {
    use majordomus::registry::rt;
    include!("snapshots/fixture_registry.rs.txt");
}
/// The fixture's generated handler table, compiled against the fixture's handlers.
#[cfg(not(feature = "bless-snapshots"))]
#[allow(clippy::all)]
mod fixture_table {
    use crate::fixture_generated::types;
    use majordomus::capabilities::{invoke, Handler};
    use majordomus::registry::rt::Output;
    use majordomus::{CapabilityError, Context};
    include!("snapshots/fixture_handlers.rs.txt");
}
#[cfg(not(feature = "bless-snapshots"))]
#[path = "fixture_handlers.rs"]
mod capabilities;

/// Generated types and tables against their declarations.
mod generated;

/// The real registry's `tools/list` (one file per tool) and OpenAPI document, as snapshots.
mod projection_snapshots;

/// Every refusal of a registry file, on small YAML inputs.
mod registry;

/// Build errors name the line and column, and bad registry input is a located refusal.
mod registry_positions;

/// The executor: validation, cache, counters, error codes.
mod executor;

/// A `tools/call` answer: its text block is its `structuredContent`, a cached one the same bytes.
mod tool_answer;

/// The CLI over the real binary: derived words and flags, exit codes, fixed commands.
mod cli;

/// The common glob shapes matched without regex agree with `globset` on every glob and path.
mod glob_shape;

/// The indexed scope table answers what matching every glob with `globset` answers.
mod scope_table;

/// The layer index: root, manifest, sources, kinds, every diagnostic, freshness.
mod layer;

/// Discovery through the real binary: `auto`, which files become objects, the ignore files.
mod discovery;

/// Only the repository's own ignore files count: none above the work tree's top.
mod ignore_above;

/// The generated manual: the references, the README's tool table, man pages, the walk.
mod reference;

/// A new user's first hour: init's examples, client standing and wiring, man page, completions.
mod first_hour;

/// MCP over stdio through the real binary and real pipes.
mod mcp_stdio;

/// A live layer: subscriptions, listens and event streams on both transports.
mod live;

/// One URI, one answer over MCP and the CLI.
mod objects;

/// Agent files as `instructions` objects and `objects.applicable`.
mod applicable;

/// The instructions carry the layer's blocking rules and skills.
mod mcp_layer_instructions;

/// Search that answers questions: relevance over a layer written for it, bad queries.
mod search;

/// Properties over any input, with proptest: URIs, origin URLs, query binding.
mod properties;

/// The validator decides what JSON Schema decides (against the `jsonschema` crate), `1.0` is an
/// integer, and a `pattern` must read alike in ECMA-262 and here.
mod validator;

/// Every tool name in prose is one the registry projects.
mod mcp_prose;

/// The writers on fixture repositories, and read-only mode.
mod writers;

/// `majordomus serve` as a child on a real socket, and a hand-written HTTP/1.1 client.
mod serve_support;

/// HTTP serving on a real socket: routes, guards, bad input, MCP at /mcp, lifecycle.
mod http_serve;

/// The npm packages and the wheel take their versions from Cargo.toml alone.
mod packaging;
/// Every `determinism: repository` capability answers alike over CLI, HTTP and MCP, in two processes.
mod parity;

/// Hygiene: module comments, and the tests ARCHITECTURE.md cites exist.
mod tidy;
mod tidy_code;

/// Hygiene of the module graph: the cycles once broken stay broken, no new pair names each other.
mod module_graph;

/// The Cockpit runner's CLI and curl lines, run in a shell against the real binary.
mod runner;

/// The Cockpit on a real socket: refusals the HTTP layer makes are the Cockpit's pages.
mod cockpit_served;

/// The Cockpit's pages through the library: every page whole, errors as pages, safe Markdown.
mod cockpit;
mod cockpit_derived;
/// The Cockpit as a team lead reads it after agents worked: findings, the plan, an issue's and
/// an agent's pages, messages as text, agents' calls apart from the Cockpit's own.
mod cockpit_lead;

/// The conformance sweeps: secrets, paths, reads that change nothing, and bad-input rows.
mod mcp_conformance;

/// A busy or failing server stays correct, and clients are bounded: sessions, writers, faults.
mod busy;
/// A board on a file system that fills: claims unavailable, health says so.
mod full_disk;
/// The hostile corpus through the real binary: bounded parsing, configuration read
/// like objects, no credential served, bounded pages, the smaller holes.
mod hostile;
/// Every message the protocol refuses is refused, on every transport and in both eras.
mod mcp_messages;
/// MCP's modern era beside the legacy one, over stdio and HTTP: results, hints, paging, bad input.
mod mcp_modern;

/// One board of peers per repository: many processes, worktrees, deaths, bad records.
mod peers_board;

/// What every process of a repository executed, listed from any of them; bad logs skipped.
mod executions;

/// Health, the server's status, the overview and the executions page, through the server.
mod operations;
mod peers_claims;
/// Claims that bring their context, what git shows per worktree, the check and its hooks.
mod peers_mesh;

/// Agents in one checkout: the hooks act for the agent that runs them; one spelling of a path.
mod same_checkout;

/// Messages between peers: recipients, unread counts, notifications, bounds, bad input.
mod peers_messages;

/// The plan as the agents' work queue: create, ready, claim once across processes, abandoned.
mod plan_across;
mod plan_queue;

/// Agents, not processes: one agent per stdio process on both eras, HTTP agents by handle and
/// lease, a replaced issue claim never served, a refused claim journaled as refused.
mod agents;

/// The surface's classification: one row per rule.
mod surface_diff;

/// `majordomus surface`, `surface diff` and `surface check` through the real binary.
mod surface;

/// What a cold start keeps while it does less before its first answer.
mod builtin_kinds_start;
/// Every error page the Cockpit can produce has a heading naming its condition.
mod cockpit_headings;
/// The Cockpit's event streams are bounded, and a closed tab makes room.
mod cockpit_streams;
mod cold_start;
/// `majordomus doctor`: what each client loads, approval, broken settings, `--strict`.
mod doctor;
mod doctor_reads;
/// Cheap pages under a flood of large ones, and bounded listens.
mod flood;
/// The busy refusals past the sessions cap, the listens' bound and the large-render slots, held.
mod held_refusals;
/// A message is answered alike however the dispatcher reads it (its envelope, or a value).
mod mcp_envelope;
/// Every figure the README states comes from a benchmark's record or a listed setting.
mod readme_figures;
/// Every busy refusal the same way: 503 `busy`, `Retry-After`, held.
mod refusals;
/// The board shared on a git remote, across clones, against a real git server.
mod remote_board;
/// The shared board when its remote cannot be reached, refuses, or holds what this build cannot read.
mod remote_board_failures;
/// Skills in the Agent Skills format and the MCP skills extension, through the real binary.
mod skills;
/// A skill's files beyond the extension: search, listings, freshness, ignored files.
mod skills_files;
/// `skills/list` pages bounded by bytes: wide entries, a walk, an entry longer than a page.
mod skills_page_bytes;
/// `skills/list` of more skills than a page holds, walked by cursor on both eras.
mod skills_pages;
/// A `skills/list` page longer than the stdio writer's buffer, among pipelined answers.
mod skills_stream;
mod skills_walk;

/// Answers sized for a context on a large layer: every listing's default page, RFC 3339 times.
mod listings;
/// How the binary starts: linked at a fixed address, a fixed command parsed by the small tree.
mod start;
/// How the binary is linked: statically against glibc where it can be, and what that changes.
mod start_static;
/// serve keeps serving, and stops with exit 0, after its stderr reader is gone.
mod stderr_closed;
/// What a client pays for: the tools/list it loads, the bill, toolsets by flag and manifest.
mod toolsets;
