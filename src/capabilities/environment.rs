//! Handler of the `environment` namespace: the preflight report of this environment and of what
//! each client loads here (see `preflight`).

use crate::call::Call;
use crate::error::CapabilityError;
use crate::registry::types::environment::{PreflightInput, PreflightOutput};

pub fn preflight(ctx: &Call, _input: PreflightInput) -> Result<PreflightOutput, CapabilityError> {
    Ok(crate::preflight::report(ctx))
}
