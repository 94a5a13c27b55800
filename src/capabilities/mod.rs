//! Handlers: one module per registry namespace, one `pub fn` per declared capability (`build.rs`
//! refuses a declaration without its handler and a `pub fn` without its declaration). Helpers in
//! these modules stay private.

#[allow(clippy::module_inception)]
pub mod capabilities;
pub mod dashboard;
pub mod environment;
pub mod executions;
pub mod health;
pub mod knowledge;
pub mod mcp;
pub mod objects;
pub mod peers;
pub mod perf;
pub mod plan;
pub mod recover;
pub mod repository;
pub mod server;
pub mod surface;

/// A writer's refused place: outside `.ai/` or through a symlink is the caller's refusal; an
/// I/O failure on the way is internal.
pub(crate) fn place_error(e: crate::write::PlaceError) -> crate::error::CapabilityError {
    match e {
        crate::write::PlaceError::Io { .. } => {
            crate::error::CapabilityError::internal(e.to_string())
        }
        _ => crate::error::CapabilityError::refused(e.to_string()),
    }
}

/// A finding about the layer as every answer shows it (secrets redacted).
pub(crate) fn diagnostic_view(d: &crate::layer::Diagnostic) -> crate::registry::types::Diagnostic {
    use crate::layer::Severity;
    use crate::registry::types::DiagnosticSeverity;
    crate::registry::types::Diagnostic {
        severity: match d.severity {
            Severity::Error => DiagnosticSeverity::Error,
            Severity::Warning => DiagnosticSeverity::Warning,
            Severity::Info => DiagnosticSeverity::Info,
        },
        code: d.code.to_string(),
        path: d.path.clone(),
        message: crate::secrets::redact(&d.message).into_owned(),
    }
}

/// How many of the layer's files with errors a listing names beside its answer.
const NOT_SERVED_SHOWN: usize = 5;

/// The first files of the layer whose errors keep their objects out of every answer, for the
/// listings that would otherwise be silent about them (a rule with a typo applies nowhere);
/// `None` when every file is served.
pub(crate) fn not_served(
    index: &crate::layer::Index,
) -> Option<Vec<crate::registry::types::Diagnostic>> {
    let shown: Vec<_> = index
        .errors()
        .take(NOT_SERVED_SHOWN)
        .map(diagnostic_view)
        .collect();
    (!shown.is_empty()).then_some(shown)
}
