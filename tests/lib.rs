//! The integration tests: one binary, one module per surface. Modules that drive the real
//! binary use `CARGO_BIN_EXE_majordomus`; the registry and generator modules use the library.

mod support;

/// Every refusal of SPEC §3.2, on small YAML inputs.
mod registry;

/// The layer index of SPEC §4: root, manifest, sources, kinds, every diagnostic, freshness.
mod layer;
