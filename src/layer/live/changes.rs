//! What changed between two generations of the index: the URIs added, the URIs
//! removed and the URIs whose content changed, computed once per published generation and read
//! by everything that tells clients about it. It compares what a read of each URI answers (an
//! object as `resolve` serves it, a skill file's bytes); it knows nothing of who is told.

use std::cmp::Ordering;

use crate::layer::index::Index;

/// The difference between two generations, each list sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// The generation compared against.
    pub from: u64,
    /// The generation that is now served.
    pub to: u64,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// URIs in both generations whose read answers differently.
    pub changed: Vec<String>,
}

impl Changes {
    /// Compares `old` with `new`: a merge of the two URI-sorted object lists, then of their
    /// skill files. Linear in the objects; equal objects cost one comparison of their fields.
    pub fn between(old: &Index, new: &Index) -> Changes {
        let mut changes = Changes {
            from: old.generation,
            to: new.generation,
            ..Changes::default()
        };
        merge(
            &old.objects,
            &new.objects,
            |o| o.uri.as_str(),
            |a, b| a == b,
            &mut changes,
        );
        merge(
            &files(old),
            &files(new),
            |f| f.0,
            |a, b| a.1 == b.1,
            &mut changes,
        );
        changes.added.sort_unstable();
        changes.removed.sort_unstable();
        changes.changed.sort_unstable();
        changes
    }

    /// Nothing a client can see changed: no notification is owed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// The set of URIs changed (`notifications/resources/list_changed`).
    pub(crate) fn list_changed(&self) -> bool {
        !self.added.is_empty() || !self.removed.is_empty()
    }

    /// Whether a subscriber to `uri` is owed `notifications/resources/updated`: its content
    /// changed, it disappeared, or it came back (a file caught mid-write is refused by one
    /// generation and read whole by the next: the subscriber must re-read it then too).
    pub(crate) fn touches(&self, uri: &str) -> bool {
        let has = |list: &[String]| list.binary_search_by(|u| u.as_str().cmp(uri)).is_ok();
        has(&self.changed) || has(&self.removed) || has(&self.added)
    }
}

/// Every skill file of `index` with the bytes a read returns, sorted by URI. The bytes, not the
/// digest: comparing them is cheaper than hashing both generations (digests are taken on first
/// use) and says the same.
fn files(index: &Index) -> Vec<(&str, &[u8])> {
    let mut files: Vec<(&str, &[u8])> = index
        .skills
        .iter()
        .flat_map(|s| s.files.iter())
        .map(|f| (f.uri.as_str(), f.bytes.as_slice()))
        .collect();
    files.sort_unstable();
    files
}

/// Walks two lists sorted by `key`, filing each URI as added, removed or changed.
fn merge<T>(
    old: &[T],
    new: &[T],
    key: impl Fn(&T) -> &str,
    same: impl Fn(&T, &T) -> bool,
    changes: &mut Changes,
) {
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        let order = match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) => key(a).cmp(key(b)),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                changes.removed.push(key(&old[i]).to_string());
                i += 1;
            }
            Ordering::Greater => {
                changes.added.push(key(&new[j]).to_string());
                j += 1;
            }
            Ordering::Equal => {
                if !same(&old[i], &new[j]) {
                    changes.changed.push(key(&new[j]).to_string());
                }
                i += 1;
                j += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Changes;

    #[test]
    fn a_subscriber_is_owed_an_update_when_its_uri_changes_goes_or_comes_back() {
        let changes = Changes {
            from: 1,
            to: 2,
            added: vec!["majordomus://rule/back@1".into()],
            removed: vec!["majordomus://rule/gone@1".into()],
            changed: vec!["majordomus://rule/edited@1".into()],
        };
        for uri in ["back", "gone", "edited"] {
            assert!(
                changes.touches(&format!("majordomus://rule/{uri}@1")),
                "{uri}"
            );
        }
        assert!(!changes.touches("majordomus://rule/untouched@1"));
        assert!(changes.list_changed() && !changes.is_empty());
    }
}
