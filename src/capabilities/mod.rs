//! Handlers: one module per registry namespace, one `pub fn` per declared capability (`build.rs`
//! refuses a declaration without its handler and a `pub fn` without its declaration), and the
//! generated table of their shims, through which a context runs them. Helpers in these modules
//! stay private.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::call::Call;
use crate::context::Context;
use crate::error::CapabilityError;
use crate::registry::rt::Output;

#[allow(clippy::module_inception)]
pub(crate) mod capabilities;
pub(crate) mod dashboard;
pub(crate) mod environment;
pub(crate) mod executions;
pub(crate) mod health;
pub(crate) mod knowledge;
pub(crate) mod mcp;
pub(crate) mod objects;
pub(crate) mod peers;
pub(crate) mod perf;
pub(crate) mod plan;
pub(crate) mod recover;
pub(crate) mod repository;
pub(crate) mod server;
pub(crate) mod skills;
pub(crate) mod surface;

/// A generated handler shim: JSON in, a typed answer out, serialised by whichever caller needs it.
/// The shim takes the whole context; the handler it calls sees only its [`Call`].
pub type Handler = fn(&Context, Value) -> Result<Output, CapabilityError>;

// The shims and `HANDLERS`, generated from the registry beside the descriptors they pair with.
#[allow(clippy::all, clippy::pedantic, non_camel_case_types)]
mod table {
    use super::{invoke, CapabilityError, Context, Handler, Output};
    use crate::registry::types;
    include!(concat!(env!("OUT_DIR"), "/handlers.rs"));
}

pub use table::HANDLERS;

/// Runs a typed handler on a JSON input the executor has already validated, giving it the
/// handler's view of the context.
pub fn invoke<I, O>(
    ctx: &Context,
    input: Value,
    handler: fn(&Call, I) -> Result<O, CapabilityError>,
) -> Result<Output, CapabilityError>
where
    I: DeserializeOwned,
    O: Serialize + 'static,
{
    let typed: I = serde_json::from_value(input)
        .map_err(|e| CapabilityError::invalid_input(format!("the input does not fit: {e}")))?;
    Ok(Box::new(handler(&Call::new(ctx), typed)?))
}

// The executor runs a handler through its host; the table lives here, beside the handlers, so
// the context that hosts an execution never names them.
impl crate::executor::Dispatch for Context {
    fn run(&self, index: usize, input: Value) -> Result<Output, CapabilityError> {
        match HANDLERS.get(index) {
            Some(handler) => handler(self, input),
            None => Err(CapabilityError::internal(format!(
                "no handler at index {index} of the registry's table"
            ))),
        }
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
