//! Conversions from the registry's run-time vocabulary to the generated output types the
//! handlers answer with. Shared by the handler modules; declares nothing.

use crate::registry::rt::{self, Descriptor};
use crate::registry::types;

pub(crate) fn kind(kind: rt::Kind) -> types::CapabilityKind {
    match kind {
        rt::Kind::Query => types::CapabilityKind::Query,
        rt::Kind::Command => types::CapabilityKind::Command,
    }
}

pub(crate) fn effect(effect: rt::Effect) -> types::Effect {
    match effect {
        rt::Effect::Read => types::Effect::Read,
        rt::Effect::ProcessState => types::Effect::ProcessState,
        rt::Effect::RepositoryMutation => types::Effect::RepositoryMutation,
    }
}

pub(crate) fn determinism(determinism: rt::Determinism) -> types::Determinism {
    match determinism {
        rt::Determinism::Repository => types::Determinism::Repository,
        rt::Determinism::Process => types::Determinism::Process,
        rt::Determinism::Environment => types::Determinism::Environment,
    }
}

pub(crate) fn route_method(method: rt::Method) -> types::HttpMethod {
    match method {
        rt::Method::Get => types::HttpMethod::Get,
        rt::Method::Post => types::HttpMethod::Post,
    }
}

pub(crate) fn resource(d: &Descriptor) -> Option<types::ResourceExposure> {
    d.resource.map(|r| types::ResourceExposure {
        uri: r.uri.to_string(),
        name: r.name.to_string(),
    })
}

pub(crate) fn route(d: &Descriptor) -> Option<types::Route> {
    d.route.map(|r| types::Route {
        method: route_method(r.method),
        path: r.path.to_string(),
    })
}

pub(crate) fn hints(d: &Descriptor) -> types::Hints {
    let h = d.hints();
    types::Hints {
        read_only: h.read_only,
        destructive: h.destructive,
        idempotent: h.idempotent,
        open_world: h.open_world,
    }
}

pub(crate) fn summary(d: &Descriptor) -> types::CapabilitySummary {
    types::CapabilitySummary {
        id: d.id.to_string(),
        namespace: d.namespace.to_string(),
        title: d.title.to_string(),
        description: d.description.to_string(),
        kind: kind(d.kind),
        effect: effect(d.effect),
        determinism: determinism(d.determinism),
        tool: d.tool.map(str::to_string),
        resource: resource(d),
        route: route(d),
        cli: d.cli_words(),
        tags: d.tags.iter().map(|t| t.to_string()).collect(),
    }
}

pub(crate) fn effect_of_filter(e: types::McpProjectionInputEffect) -> types::Effect {
    match e {
        types::McpProjectionInputEffect::Read => types::Effect::Read,
        types::McpProjectionInputEffect::ProcessState => types::Effect::ProcessState,
        types::McpProjectionInputEffect::RepositoryMutation => types::Effect::RepositoryMutation,
    }
}

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
