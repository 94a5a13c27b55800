//! What an entry keeps of an execution's input besides its digest: the URIs it names and the
//! repository-relative paths, each cut to a bound and redacted, and the issue it names by id.

use super::{MAX_NAMED, MAX_NAME_CHARS};

/// Adds the URI of the issue `input` names by its id, if it names one and `uris` has room: an
/// issue claimed, stamped or released, or paths claimed for it, is found by its URI as the
/// executions of any object are.
pub(super) fn with_issue(input: &serde_json::Value, uris: &mut Vec<String>) {
    let issue = input
        .get("issue")
        .and_then(serde_json::Value::as_str)
        .filter(|id| {
            !id.is_empty()
                && id.len() <= 200
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        });
    if let (Some(id), true) = (issue, uris.len() < MAX_NAMED) {
        let uri = format!("{}issue/{id}", crate::layer::URI_SCHEME);
        if !uris.contains(&uri) {
            uris.push(uri);
        }
    }
}

/// The URIs [`super::Ended::entry`] keeps, as the input writes them (neither cut nor redacted): what an
/// execution may have read.
pub(crate) fn named_uris(input: &serde_json::Value) -> impl Iterator<Item = &str> {
    named(input, Named::Uris)
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Named {
    Uris,
    Paths,
}

pub(super) fn named(input: &serde_json::Value, what: Named) -> impl Iterator<Item = &str> {
    let keys: &[&str] = match what {
        Named::Uris => &["uri", "uris"],
        Named::Paths => &["path", "paths", "globs"],
    };
    input
        .as_object()
        .into_iter()
        .flatten()
        .filter(move |(key, _)| keys.contains(&key.as_str()))
        .flat_map(|(_, value)| match value {
            serde_json::Value::Array(items) => items.as_slice(),
            one => std::slice::from_ref(one),
        })
        .filter_map(serde_json::Value::as_str)
        .filter(move |text| match what {
            Named::Uris => text.starts_with("majordomus://") || text.starts_with("skill://"),
            Named::Paths => is_repository_relative(text),
        })
        .take(MAX_NAMED)
}

/// A name as an entry keeps it: at most [`MAX_NAME_CHARS`], redacted.
pub(super) fn kept(text: &str) -> String {
    // No more bytes than the bound is no more characters either.
    let text = if text.len() <= MAX_NAME_CHARS {
        text
    } else {
        text.char_indices()
            .nth(MAX_NAME_CHARS)
            .map_or(text, |(end, _)| &text[..end])
    };
    crate::secrets::redact(text).into_owned()
}

/// Whether `path` reads as a path inside the repository: not absolute, no `..`, no `~`, no
/// drive or scheme.
fn is_repository_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with('~')
        && !path.starts_with('\\')
        && !path.contains(':')
        && !path.split(['/', '\\']).any(|part| part == "..")
}
