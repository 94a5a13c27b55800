//! Cursors of paged listings: opaque to the client, bound to the listing that issued them, to
//! the index generation they page and to this process, so a cursor of another listing, from
//! before a change, or from another server, is refused (-32602 naming it) rather than paging a
//! different listing. A listing that is not paged refuses any cursor the same way. A cursor
//! always names a later page than the first; there is no cursor for an empty page because there
//! is no empty page.

use std::sync::OnceLock;

use serde_json::{json, Value};

use super::frame::RpcError;
use majordomus_registry_lang::protocol;

/// This process's mark on its cursors.
fn salt() -> u64 {
    static SALT: OnceLock<u64> = OnceLock::new();
    *SALT.get_or_init(|| {
        let mut bytes = [0u8; 8];
        match getrandom::fill(&mut bytes) {
            Ok(()) => u64::from_le_bytes(bytes),
            // Without randomness the process id still tells servers apart.
            Err(_) => u64::from(std::process::id()).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        }
    })
}

/// A paged listing: what a cursor is bound to besides its generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Resources,
    Skills,
}

impl Listing {
    const ALL: [Listing; 2] = [Listing::Resources, Listing::Skills];

    /// The method that lists it.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Listing::Resources => "resources/list",
            Listing::Skills => "skills/list",
        }
    }

    /// Its mark in a cursor.
    fn tag(self) -> u64 {
        match self {
            Listing::Resources => 1,
            Listing::Skills => 2,
        }
    }
}

/// The cursor of page `page` (> 0) of `listing` in `generation`.
pub fn encode(listing: Listing, generation: u64, page: usize) -> String {
    format!(
        "{:016x}{:02x}{:016x}{:08x}",
        salt(),
        listing.tag(),
        generation,
        page
    )
}

/// Refuses a cursor given to a listing that has no pages (`tools/list`, `resources/templates/list`):
/// its one answer holds everything, so a cursor can only be a mistake (one of another listing).
pub fn unpaged(method: &str, cursor: Option<&Value>) -> Result<(), RpcError> {
    match cursor {
        None | Some(Value::Null) => Ok(()),
        Some(cursor) => Err(refusal(
            format!(
                "`{method}` is not paged: its one answer holds everything, so it takes no `cursor` (omit it)"
            ),
            cursor.clone(),
        )),
    }
}

/// The page `cursor` (the request's `cursor` parameter, when given) names in `listing` as of
/// `generation`, with `pages` pages; 0 without a cursor.
pub fn page_of(
    listing: Listing,
    cursor: Option<&Value>,
    generation: u64,
    pages: usize,
) -> Result<usize, RpcError> {
    let text = match cursor {
        None | Some(Value::Null) => return Ok(0),
        Some(Value::String(text)) => text.as_str(),
        Some(_) => {
            return Err(refusal(
                "`cursor` must be a string: the `nextCursor` of an earlier page".to_string(),
                cursor.cloned().unwrap_or(Value::Null),
            ))
        }
    };
    let shown = shown(text);
    if text.is_empty() {
        return Err(refusal(
            "`cursor` is empty: omit it to list from the first page".to_string(),
            json!(text),
        ));
    }
    let field = |range: std::ops::Range<usize>| {
        text.get(range)
            .filter(|f| f.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|f| u64::from_str_radix(f, 16).ok())
    };
    let parsed = (text.len() == 42)
        .then(|| {
            Some((
                field(0..16)?,
                field(16..18)?,
                field(18..34)?,
                field(34..42)?,
            ))
        })
        .flatten();
    let Some((_, tag, cursor_generation, page)) = parsed.filter(|(mark, _, _, _)| *mark == salt())
    else {
        return Err(refusal(
            format!("cursor `{shown}` is not one this server issued: list again without a cursor"),
            json!(text),
        ));
    };
    if tag != listing.tag() {
        let issuer = Listing::ALL
            .into_iter()
            .find(|l| l.tag() == tag)
            .map_or("another listing", Listing::method);
        return Err(refusal(
            format!(
                "cursor `{shown}` pages `{issuer}`, not `{}`: a cursor pages only the listing that issued it; list again without a cursor",
                listing.method()
            ),
            json!(text),
        ));
    }
    if cursor_generation != generation {
        return Err(refusal(
            format!(
                "cursor `{shown}` pages the layer as it was (generation {cursor_generation}); it has changed since (generation {generation}): list again without a cursor"
            ),
            json!(text),
        ));
    }
    match usize::try_from(page) {
        Ok(page) if page > 0 && page < pages => Ok(page),
        _ => Err(refusal(
            format!("cursor `{shown}` names no page of this listing: list again without a cursor"),
            json!(text),
        )),
    }
}

fn refusal(message: String, cursor: Value) -> RpcError {
    RpcError::new(protocol::INVALID_PARAMS, message).with_data(json!({ "cursor": cursor }))
}

/// A cursor as an error message shows it: bounded, whatever the client sent.
fn shown(text: &str) -> String {
    let mut shown: String = text.chars().take(64).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_names_its_page_only_in_its_own_listing_and_generation() {
        let cursor = json!(encode(Listing::Skills, 7, 2));
        assert_eq!(page_of(Listing::Skills, Some(&cursor), 7, 3).ok(), Some(2));
        let other = page_of(Listing::Resources, Some(&cursor), 7, 3).expect_err("refused");
        assert!(other
            .message
            .contains("pages `skills/list`, not `resources/list`"));
        for (generation, pages) in [(8, 3), (7, 2)] {
            let error =
                page_of(Listing::Skills, Some(&cursor), generation, pages).expect_err("refused");
            assert_eq!(error.code, protocol::INVALID_PARAMS);
            assert_eq!(error.data, Some(json!({ "cursor": cursor })));
        }
    }

    #[test]
    fn garbage_empty_and_non_string_cursors_are_refused_by_name() {
        let forged = format!("{:016x}{:02x}{:016x}{:08x}", salt() ^ 1, 1, 7, 1);
        for (cursor, named) in [
            (json!("garbage"), "`garbage`"),
            (json!(""), "empty"),
            (json!(12), "must be a string"),
            (json!(forged), "not one this server issued"),
            (json!(encode(Listing::Resources, 7, 0)), "names no page"),
        ] {
            let error = page_of(Listing::Resources, Some(&cursor), 7, 3)
                .err()
                .unwrap_or_else(|| panic!("{cursor} was accepted"));
            assert_eq!(error.code, protocol::INVALID_PARAMS, "{cursor}");
            assert!(error.message.contains(named), "{cursor}: {}", error.message);
        }
    }
}
