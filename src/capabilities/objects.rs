//! Handlers of the `objects` namespace: listing, reading (through `resolve`, and nothing else)
//! and searching the layer's objects.

use serde_json::Value;

use crate::call::Call;
use crate::error::CapabilityError;
use crate::layer::spelling::Case;
use crate::layer::{Field, Object, Request, Scope};
use crate::registry::types::objects::{
    ApplicableInput, ApplicableOutput, GetInput, GetOutput, ListInput, ListOutput, SearchInput,
    SearchOutput,
};
use crate::registry::types::{
    ApplicableReason, ObjectScope, ObjectSummary,
    ObjectsApplicableOutputInstructionsItem as ApplicableInstructions,
    ObjectsApplicableOutputRulesItem as ApplicableRule, ObjectsListInputSort as SortBy,
    ObjectsSearchOutputHitsItem as Hit, ObjectsSearchOutputHitsItemMatchedItem as Matched,
    Provenance, ResourceView, ResourceViewBuiltinKind, ResourceViewBuiltinMediaType,
    ResourceViewBuiltinProvenance, SkillResource,
};
use crate::resolve::{self, Resolution};

/// A skill's files as the extension's entry lists them (`Skill::resources`); `None` for every
/// other object.
fn skill_files(index: &crate::layer::Index, o: &Object) -> Option<Vec<SkillResource>> {
    if o.kind != "skill" {
        return None;
    }
    Some(skill_resources(index.skill(&o.identity)?))
}

/// A skill's files as every answer that lists them shows them.
pub(crate) fn skill_resources(skill: &crate::layer::Skill) -> Vec<SkillResource> {
    skill
        .resources()
        .map(|r| SkillResource {
            uri: r.uri.to_string(),
            digest: r.digest.to_string(),
            size: r.size as i64,
        })
        .collect()
}

fn summary(index: &crate::layer::Index, o: &Object) -> ObjectSummary {
    ObjectSummary {
        files: skill_files(index, o),
        uri: o.uri.clone(),
        kind: o.kind.clone(),
        identity: o.identity.clone(),
        title: o.title.clone(),
        description: o.description.clone(),
        tags: o.tags.clone(),
        path: o.provenance.path.clone(),
        provider: provider_of(o).map(str::to_string),
        status: stamps(o).status,
        date: stamps(o).date,
    }
}

/// The front matter's `status` and `date` (for a knowledge note without a `date`, its
/// `recorded_at`), when each is text.
#[derive(Default, serde::Deserialize)]
struct Stamps {
    #[serde(default, deserialize_with = "text_or_none")]
    status: Option<String>,
    #[serde(default, deserialize_with = "text_or_none")]
    date: Option<String>,
    /// The day a knowledge note was recorded: its date when it has no `date` of its own.
    #[serde(default, deserialize_with = "text_or_none")]
    recorded_at: Option<String>,
}

fn text_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match <Value as serde::Deserialize>::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

/// Read from the metadata's text only when it names either key: most objects carry neither, and
/// a listing of thousands then parses nothing.
fn stamps(o: &Object) -> Stamps {
    let json = o.metadata.as_json();
    if !json.contains("\"status\"")
        && !json.contains("\"date\"")
        && !json.contains("\"recorded_at\"")
    {
        return Stamps::default();
    }
    let mut stamps: Stamps = serde_json::from_str(json).unwrap_or_default();
    stamps.date = stamps.date.or(stamps.recorded_at.take());
    stamps
}

/// The provider of an `instructions` object.
fn provider_of(o: &Object) -> Option<&'static str> {
    (o.kind == "instructions").then(|| crate::layer::provider(&o.provenance.path))
}

/// What a rule or an `instructions` object applies to, as the answers show it.
fn scope_view(o: &Object) -> Option<ObjectScope> {
    let (applies, patterns) = match crate::layer::scope_of_object(o)? {
        Scope::Always => ("always", Vec::new()),
        Scope::Directory(dir) => ("directory", vec![dir]),
        Scope::Globs(globs) => ("globs", globs),
        Scope::OnRequest => ("on_request", Vec::new()),
    };
    Some(ObjectScope {
        applies: applies.to_string(),
        patterns,
        provider: provider_of(o).map(str::to_string),
    })
}

/// Refuses a kind the index has no object of, naming the kinds it has.
fn check_kind(
    kinds: &std::collections::BTreeMap<String, usize>,
    kind: &str,
) -> Result<(), CapabilityError> {
    if kinds.contains_key(kind) {
        return Ok(());
    }
    let present: Vec<&str> = kinds.keys().map(String::as_str).collect();
    Err(CapabilityError::invalid_input(format!(
        "`kind`: no object of kind \"{kind}\" (kinds present: {})",
        if present.is_empty() {
            "none".to_string()
        } else {
            present.join(", ")
        }
    )))
}

pub fn list(ctx: &Call, input: ListInput) -> Result<ListOutput, CapabilityError> {
    let index = ctx.index()?;
    let kinds = index.counts_by_kind();
    if let Some(kind) = &input.kind {
        check_kind(&kinds, kind)?;
    }
    if let Some(provider) = &input.provider {
        if !crate::layer::PROVIDERS.contains(&provider.as_str()) {
            return Err(CapabilityError::invalid_input(format!(
                "`provider`: no provider \"{provider}\" (providers: {})",
                crate::layer::PROVIDERS.join(", ")
            )));
        }
    }
    let mut providers = std::collections::BTreeMap::new();
    for o in &index.objects {
        if let Some(p) = provider_of(o) {
            *providers.entry(p.to_string()).or_insert(0i64) += 1;
        }
    }
    let matching: Vec<&Object> = index
        .objects
        .iter()
        .filter(|o| input.kind.as_deref().is_none_or(|k| o.kind == k))
        .filter(|o| {
            input
                .tag
                .as_deref()
                .is_none_or(|t| o.tags.iter().any(|x| x == t))
        })
        .filter(|o| {
            input
                .provider
                .as_deref()
                .is_none_or(|p| provider_of(o) == Some(p))
        })
        .collect();
    let mut matching = matching;
    if input.sort != SortBy::Uri {
        // Objects without the sorted field go last in either direction.
        let key = |o: &Object| -> Option<String> {
            match input.sort {
                SortBy::Title => Some(o.title.clone()),
                SortBy::Status => stamps(o).status,
                SortBy::Date => stamps(o).date,
                SortBy::Uri => None,
            }
        };
        let mut keyed: Vec<(Option<String>, &Object)> =
            matching.into_iter().map(|o| (key(o), o)).collect();
        keyed.sort_by(|(a, _), (b, _)| match (a, b) {
            (Some(a), Some(b)) if input.descending => b.cmp(a),
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        matching = keyed.into_iter().map(|(_, o)| o).collect();
    } else if input.descending {
        matching.reverse();
    }
    let objects: Vec<ObjectSummary> = matching
        .iter()
        .skip(input.offset.max(0) as usize)
        .take(input.limit.max(0) as usize)
        .map(|o| summary(&index, o))
        .collect();
    Ok(ListOutput {
        total: matching.len() as i64,
        count: objects.len() as i64,
        offset: input.offset,
        objects,
        kinds: kinds.into_iter().map(|(k, n)| (k, n as i64)).collect(),
        providers,
        not_served: super::not_served(&index),
    })
}

pub fn get(ctx: &Call, input: GetInput) -> Result<GetOutput, CapabilityError> {
    let resolution = ctx.resolve(&input.uri)?;
    Ok(match &resolution {
        Resolution::Builtin {
            descriptor,
            answer,
            content,
        } => ResourceView::Builtin {
            uri: input.uri.clone(),
            id: descriptor.id.to_string(),
            kind: ResourceViewBuiltinKind::Query,
            identity: input
                .uri
                .trim_start_matches(crate::layer::URI_SCHEME)
                .to_string(),
            title: descriptor.title.to_string(),
            description: descriptor.description.to_string(),
            answer: match answer {
                Value::Object(map) => map.clone(),
                _ => serde_json::Map::new(),
            },
            provenance: ResourceViewBuiltinProvenance {
                capability: descriptor.id.to_string(),
                declared_in: descriptor.source.to_string(),
            },
            media_type: ResourceViewBuiltinMediaType::ApplicationJson,
            content: content.clone(),
        },
        Resolution::SkillFile { .. } => {
            let (skill, f) = resolution.skill_file().ok_or_else(|| {
                CapabilityError::internal(format!("`{}` vanished from its generation", input.uri))
            })?;
            ResourceView::Declarative {
                uri: f.uri.clone(),
                id: format!("skill.{}", skill.name),
                kind: "skill_file".to_string(),
                identity: format!("{}/{}", skill.name, f.path),
                title: f.path.clone(),
                description: None,
                metadata: serde_json::Map::from_iter([
                    ("digest".to_string(), Value::from(f.digest())),
                    (
                        "encoding".to_string(),
                        Value::from(if f.is_text { "text" } else { "base64" }),
                    ),
                ]),
                provenance: Provenance {
                    path: format!("{}/{}", skill.directory, f.path),
                    section: "repo".to_string(),
                    source_class: "skills".to_string(),
                    bytes: f.bytes.len() as i64,
                },
                media_type: f.media_type.to_string(),
                content: match f.text() {
                    Some(text) => text.to_string(),
                    None => crate::layer::base64(&f.bytes),
                },
                tags: Vec::new(),
                scope: None,
                files: None,
            }
        }
        Resolution::Declarative { index, .. } => {
            let o = resolution.object().ok_or_else(|| {
                CapabilityError::internal(format!("`{}` vanished from its generation", input.uri))
            })?;
            ResourceView::Declarative {
                uri: o.uri.clone(),
                id: resolve::object_id(o),
                kind: o.kind.clone(),
                identity: o.identity.clone(),
                title: o.title.clone(),
                description: o.description.clone(),
                metadata: o.metadata.to_map(),
                provenance: Provenance {
                    path: o.provenance.path.clone(),
                    section: o.provenance.section.clone(),
                    source_class: o.provenance.source_class.clone(),
                    bytes: o.provenance.bytes as i64,
                },
                media_type: o.media_type.clone(),
                content: o.content.clone(),
                tags: o.tags.clone(),
                scope: scope_view(o),
                files: skill_files(index, o),
            }
        }
    })
}

pub fn search(ctx: &Call, input: SearchInput) -> Result<SearchOutput, CapabilityError> {
    let index = ctx.index()?;
    if let Some(kind) = &input.kind {
        check_kind(&index.counts_by_kind(), kind)?;
    }
    let found = index
        .search(Request {
            query: &input.query,
            kind: input.kind.as_deref(),
            tag: input.tag.as_deref(),
            limit: input.limit.max(1) as usize,
        })
        .map_err(|e| CapabilityError::invalid_input(e.to_string()))?;
    Ok(SearchOutput {
        query: input.query,
        total: found.total as i64,
        hits: found
            .hits
            .into_iter()
            .filter_map(|h| {
                // A hit names an object or a skill's file of the generation it was found in.
                let o = index.searched(h.position)?;
                Some(Hit {
                    uri: o.uri.clone(),
                    kind: o.kind.clone(),
                    identity: o.identity.clone(),
                    title: o.title.clone(),
                    score: h.score as i64,
                    snippet: h.snippet,
                    matched: h.matched.iter().map(|f| matched(*f)).collect(),
                    provider: provider_of(o).map(str::to_string),
                    scope: scope_view(o),
                })
            })
            .collect(),
    })
}

/// The most paths one `objects.applicable` call may ask about.
const MAX_APPLICABLE_PATHS: usize = 100;

pub fn applicable(ctx: &Call, input: ApplicableInput) -> Result<ApplicableOutput, CapabilityError> {
    if input.paths.is_empty() || input.paths.len() > MAX_APPLICABLE_PATHS {
        return Err(CapabilityError::invalid_input(format!(
            "`paths`: give 1 to {MAX_APPLICABLE_PATHS} paths, not {}",
            input.paths.len()
        )));
    }
    // Names are kept as written even where the file system folds case: the rules' own globs
    // are matched as their authors wrote them, so a folded path would miss a rule's `Src/**`.
    let paths = crate::layer::spelling::paths("paths", &input.paths, Case::Kept)
        .map_err(|e| CapabilityError::invalid_input(e.to_string()))?;
    let index = ctx.index()?;
    let page = crate::layer::Page {
        offset: usize::try_from(input.offset).unwrap_or(0),
        limit: usize::try_from(input.limit).unwrap_or(1).max(1),
    };
    let found = index.scopes().applicable(&index.objects, &paths, page);
    let because = |reasons: &[crate::layer::Reason]| -> Vec<ApplicableReason> {
        reasons
            .iter()
            .map(|r| ApplicableReason {
                reason: r.reason.to_string(),
                pattern: (!r.pattern.is_empty()).then(|| r.pattern.to_string()),
                // `always` names no path: it stands for every path asked.
                paths: (!r.paths.is_empty())
                    .then(|| r.paths.iter().map(|p| p.to_string()).collect()),
            })
            .collect()
    };
    // The table answers in the declared order.
    let rules = found
        .rules
        .iter()
        .map(|a| ApplicableRule {
            uri: a.object.uri.clone(),
            identity: a.object.identity.clone(),
            title: a.object.title.clone(),
            class: a.class.to_string(),
            statement: a.statement.to_string(),
            because: because(&a.reasons),
        })
        .collect();
    let instructions = found
        .instructions
        .iter()
        .map(|a| ApplicableInstructions {
            uri: a.object.uri.clone(),
            path: a.object.provenance.path.clone(),
            provider: crate::layer::provider(&a.object.provenance.path).to_string(),
            title: a.object.title.clone(),
            because: because(&a.reasons),
        })
        .collect();
    let total = found.total_rules as i64;
    // The answer borrows the checked paths; it is all copied out above.
    drop(found);
    Ok(ApplicableOutput {
        paths,
        total,
        rules,
        instructions,
        not_served: super::not_served(&index),
    })
}

fn matched(field: Field) -> Matched {
    match field {
        Field::Identity => Matched::Identity,
        Field::Title => Matched::Title,
        Field::Tags => Matched::Tags,
        Field::Description => Matched::Description,
        Field::Statement => Matched::Statement,
        Field::Body => Matched::Body,
    }
}
