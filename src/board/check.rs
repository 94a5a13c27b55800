//! Which paths a live exclusive claim holds: the question a commit or an edit asks before it
//! lands on another agent's paths. One glob set of every exclusive claim's globs, so a path
//! costs one match however many claims the board holds. Knows nothing of MCP or of any surface.

use globset::{GlobSet, GlobSetBuilder};

use super::claims::Holder;

/// A path and the exclusive claims holding it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldPath {
    pub path: String,
    pub holders: Vec<Holder>,
}

/// The exclusive claims of `claims` that `counts` keeps, as one matcher.
struct Exclusive<'a> {
    set: GlobSet,
    /// For each glob of `set`, the claim it belongs to.
    owner: Vec<&'a Holder>,
}

impl<'a> Exclusive<'a> {
    fn of(claims: &'a [Holder], counts: impl Fn(&Holder) -> bool) -> Exclusive<'a> {
        let mut builder = GlobSetBuilder::new();
        let mut owner = Vec::new();
        let mut add = |pattern: &str, holder: &'a Holder| {
            if let Ok(glob) = crate::layer::glob(pattern) {
                builder.add(glob);
                owner.push(holder);
            }
        };
        for h in claims.iter().filter(|h| h.claim.exclusive && counts(h)) {
            for g in &h.claim.globs {
                add(g, h);
                // As claims read it, `a/**` holds `a` itself too.
                if let Some(dir) = g.strip_suffix("/**") {
                    add(dir, h);
                }
            }
        }
        Exclusive {
            set: builder.build().unwrap_or_else(|_| GlobSet::empty()),
            owner,
        }
    }
}

/// The paths of `paths` (repository-relative) that an exclusive claim of `claims` holds, in
/// the order given, each with its holders once; a claim `counts` refuses is not asked.
pub fn held(
    claims: &[Holder],
    paths: &[String],
    counts: impl Fn(&Holder) -> bool,
) -> Vec<HeldPath> {
    let exclusive = Exclusive::of(claims, counts);
    if exclusive.owner.is_empty() {
        return Vec::new();
    }
    let mut matched = Vec::new();
    paths
        .iter()
        .filter_map(|path| {
            exclusive.set.matches_into(path.as_str(), &mut matched);
            let mut holders: Vec<Holder> = Vec::new();
            for &g in &matched {
                let h = exclusive.owner[g];
                if !holders.contains(h) {
                    holders.push(h.clone());
                }
            }
            (!holders.is_empty()).then(|| HeldPath {
                path: path.clone(),
                holders,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::record::ClaimRecord;

    fn holder(worktree: &str, globs: &[&str], exclusive: bool) -> Holder {
        Holder {
            pid: 1,
            worktree: worktree.into(),
            this_process: false,
            client: "c".into(),
            intent: None,
            claim: ClaimRecord {
                session: 1,
                globs: globs.iter().map(|g| g.to_string()).collect(),
                exclusive,
                claimed_at: 0,
                expires_at: u64::MAX,
                reason: None,
                issue: None,
            },
            origin: None,
        }
    }

    #[test]
    fn only_exclusive_claims_that_count_hold_a_path() {
        let claims = [
            holder("/a", &["src/**"], true),
            holder("/b", &["src/db/*.rs"], true),
            holder("/c", &["docs/**"], false),
            holder("/d", &["src/db/x.rs"], true),
        ];
        let paths: Vec<String> = ["src/db/x.rs", "docs/a.md", "README.md", "src"]
            .iter()
            .map(|p| p.to_string())
            .collect();
        let found = held(&claims, &paths, |h| h.worktree != "/d");
        let shown: Vec<(&str, Vec<&str>)> = found
            .iter()
            .map(|h| {
                let by = h.holders.iter().map(|x| x.worktree.as_str()).collect();
                (h.path.as_str(), by)
            })
            .collect();
        assert_eq!(
            shown,
            [("src/db/x.rs", vec!["/a", "/b"]), ("src", vec!["/a"])],
            "a shared claim holds nothing; the claim that does not count is left out"
        );
    }
}
