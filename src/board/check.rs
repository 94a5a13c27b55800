//! Which paths a live exclusive claim holds: the question a commit or an edit asks before it
//! lands on another agent's paths. Each record's claims are filed once per version of the record
//! (this process's while they do not change; another process's while neither its record file
//! nor its ledger changed: a reading hands back the same `Arc` until then), each as its holder,
//! the exclusive ones by where their globs can match: a literal glob by the path it names, a
//! directory's `dir/**` by that directory, any other glob by the directory its literal start
//! lies in, matched by a compiled glob the record's next version takes over. A path then asks
//! only the claims filed under itself and its own directories, so a check costs what those
//! hold, not what the whole board holds; and a claim's conflicts are looked for among holders
//! already made. Knows nothing of MCP or of any surface.

use std::collections::HashMap;
use std::sync::Arc;

use globset::GlobMatcher;

use super::claims::{Held, Holder};
use super::record::{ClaimRecord, Record, SessionRecord};
use super::{lock, Board};
use crate::layer::spelling::Case;

/// A path and the exclusive claims holding it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldPath {
    pub path: String,
    pub holders: Vec<Held>,
}

/// How one glob of a claim is asked.
#[derive(Clone, Debug)]
enum Test {
    /// Every path filed under its key matches (`dir/**` filed under `dir/`, a literal glob
    /// under itself).
    Filed,
    /// A path filed under its key matches when the compiled glob does.
    Glob(Arc<GlobMatcher>),
}

/// One record's claims, each as its holder with its agent's lease end (liveness is judged
/// when asked), a holder carried over from the record's last version when its claim and agent
/// did not change; and, made at the first check that asks, its exclusive claims filed by where
/// their globs can match.
#[derive(Debug, Default)]
pub(super) struct Filed {
    pub(super) held: Vec<(Arc<Held>, Option<u64>)>,
    filing: std::sync::OnceLock<Filing>,
    /// The globs the last version compiled, for the filing to take over.
    inherited: HashMap<String, Arc<GlobMatcher>>,
}

#[derive(Debug, Default)]
struct Filing {
    /// Literal globs by the path they name.
    exact: HashMap<String, Vec<(usize, Test)>>,
    /// Other globs by the directory (ending in `/`, or empty for the root) every path they
    /// match lies under.
    under: HashMap<String, Vec<(usize, Test)>>,
    compiled: HashMap<String, Arc<GlobMatcher>>,
}

/// Each record's claims as last filed: this process's by what it held then, every other
/// process's by its record as read (the same `Arc` while its file and ledger are unchanged).
#[derive(Debug, Default)]
pub(super) struct ClaimIndex {
    own: Option<(Arc<Record>, Arc<Filed>)>,
    others: HashMap<(u32, u64), (Arc<Record>, Arc<Filed>)>,
}

/// The literal start of a glob: every path it matches begins with it.
fn literal_prefix(glob: &str) -> &str {
    let end = glob.find(['*', '?', '[', '{', '\\']).unwrap_or(glob.len());
    &glob[..end]
}

/// What a holder shows of its agent's session.
fn agent_of(s: Option<&SessionRecord>) -> Option<(&str, &Option<String>, &str, &str)> {
    s.map(|s| {
        let fields = (s.client.as_str(), &s.intent, s.handle.as_str());
        (fields.0, fields.1, fields.2, s.transport.as_str())
    })
}

impl Filed {
    /// The claims of `record`; those of `previous` (the record's last version, as filed) that
    /// are unchanged, with their agent's name, are carried over.
    fn of(
        record: &Record,
        this_process: bool,
        case: Case,
        previous: Option<(&Record, &Filed)>,
    ) -> Filed {
        let before: HashMap<&ClaimRecord, usize> = previous
            .map(|(r, _)| r.claims.iter().enumerate().map(|(k, c)| (c, k)).collect())
            .unwrap_or_default();
        let mut filed = Filed {
            inherited: previous
                .and_then(|(_, f)| f.filing.get())
                .map(|f| f.compiled.clone())
                .unwrap_or_default(),
            ..Filed::default()
        };
        for c in &record.claims {
            let session = record.sessions.iter().find(|s| s.id == c.session);
            let kept = previous.and_then(|(r, f)| {
                let k = *before.get(c)?;
                let was = r.sessions.iter().find(|s| s.id == c.session);
                (agent_of(was) == agent_of(session)).then(|| Arc::clone(&f.held[k].0))
            });
            let held = kept.unwrap_or_else(|| {
                Arc::new(super::claims::held_of(
                    record,
                    session,
                    c,
                    this_process,
                    case,
                ))
            });
            filed
                .held
                .push((held, session.and_then(|s| s.lease_expires_at)));
        }
        filed
    }

    fn filing(&self) -> &Filing {
        self.filing.get_or_init(|| {
            let mut filing = Filing::default();
            for (at, (held, _)) in self.held.iter().enumerate() {
                let claim = &held.holder.claim;
                if !claim.exclusive {
                    continue;
                }
                for g in &claim.globs {
                    filing.file(at, g, &self.inherited);
                    // As claims read it, `a/**` holds `a` itself too.
                    if let Some(dir) = g.strip_suffix("/**") {
                        filing.file(at, dir, &self.inherited);
                    }
                }
            }
            filing
        })
    }

    /// The exclusive claims whose globs match `path`, each once, in the record's order.
    fn matching(&self, path: &str) -> Vec<usize> {
        let filing = self.filing();
        let mut found: Vec<usize> = Vec::new();
        let mut ask = |filed: Option<&Vec<(usize, Test)>>| {
            for (at, test) in filed.into_iter().flatten() {
                let hit = match test {
                    Test::Filed => true,
                    Test::Glob(m) => m.is_match(path),
                };
                if hit {
                    found.push(*at);
                }
            }
        };
        ask(filing.exact.get(path));
        ask(filing.under.get(""));
        for (i, _) in path.match_indices('/') {
            ask(filing.under.get(&path[..=i]));
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

impl Filing {
    /// Files `glob` of the claim at `at`; a glob that does not compile holds nothing, as before.
    fn file(&mut self, at: usize, glob: &str, inherited: &HashMap<String, Arc<GlobMatcher>>) {
        let prefix = literal_prefix(glob);
        if prefix.len() == glob.len() {
            let filed = self.exact.entry(glob.to_string()).or_default();
            filed.push((at, Test::Filed));
            return;
        }
        let literal_dir = glob
            .strip_suffix("/**")
            .filter(|d| literal_prefix(d).len() == d.len());
        if let Some(dir) = literal_dir {
            let filed = self.under.entry(format!("{dir}/")).or_default();
            filed.push((at, Test::Filed));
            return;
        }
        let known = (self.compiled.get(glob))
            .or_else(|| inherited.get(glob))
            .cloned();
        let matcher = match known {
            Some(m) => m,
            None => match crate::layer::glob(glob) {
                Ok(g) => Arc::new(g.compile_matcher()),
                Err(_) => return,
            },
        };
        self.compiled.insert(glob.to_string(), Arc::clone(&matcher));
        let dir = prefix.rfind('/').map_or("", |i| &prefix[..=i]);
        let filed = self.under.entry(dir.to_string()).or_default();
        filed.push((at, Test::Glob(matcher)));
    }
}

/// Whether a claim's holder is live at `now`: the claim has not expired, nor its agent's lease.
fn live((h, lease): &(Arc<Held>, Option<u64>), now: u64) -> bool {
    h.holder.claim.expires_at > now && lease.is_none_or(|end| end > now)
}

impl Board {
    /// The paths of `paths` (repository-relative, each in its one spelling) that a live
    /// exclusive claim holds, in the order given, each with its holders once (this process's
    /// first, then the other processes', then other clones'); a claim `counts` refuses is not
    /// asked.
    pub(crate) fn held_paths(
        &self,
        paths: &[String],
        counts: impl Fn(&Holder) -> bool,
    ) -> Vec<HeldPath> {
        let reading = self.read();
        let mut records = vec![self.own_filed()];
        records.extend(self.filed(&reading));
        let remote = Filed {
            held: (self.remote_held(self.case()).into_iter())
                .map(|h| (Arc::new(h), None))
                .collect(),
            ..Filed::default()
        };
        records.push(Arc::new(remote));
        let now = super::claims::now();
        paths
            .iter()
            .filter_map(|path| {
                let mut holders: Vec<Held> = Vec::new();
                for filed in &records {
                    for at in filed.matching(path) {
                        let entry = &filed.held[at];
                        let h = &entry.0;
                        if live(entry, now)
                            && counts(&h.holder)
                            && !holders.iter().any(|x| x.holder == h.holder)
                        {
                            holders.push(Held::clone(h));
                        }
                    }
                }
                (!holders.is_empty()).then(|| HeldPath {
                    path: path.clone(),
                    holders,
                })
            })
            .collect()
    }

    /// This process's claims as filed: the last filing while they have not changed.
    fn own_filed(&self) -> Arc<Filed> {
        let mut index = lock(&self.claim_index);
        let own = self.own_record(&lock(&self.joined));
        if let Some((was, filed)) = &index.own {
            if was.sessions == own.sessions && was.claims == own.claims {
                return Arc::clone(filed);
            }
        }
        let previous = index.own.take();
        let previous = previous.as_ref().map(|(r, f)| (r.as_ref(), f.as_ref()));
        let filed = Arc::new(Filed::of(&own, true, self.case(), previous));
        index.own = Some((Arc::new(own), Arc::clone(&filed)));
        filed
    }

    /// Every other live process's claims as filed, in the reading's order: a record filed
    /// before is not filed again.
    pub(super) fn filed(&self, reading: &super::Reading) -> Vec<Arc<Filed>> {
        let mut index = lock(&self.claim_index);
        let case = self.case();
        let mut kept = HashMap::new();
        let filed = (reading.others.iter())
            .map(|r| {
                let key = (r.pid, r.start);
                let filed = match index.others.remove(&key) {
                    Some((seen, filed)) if Arc::ptr_eq(&seen, r) => filed,
                    previous => {
                        let previous = previous.as_ref().map(|(r, f)| (r.as_ref(), f.as_ref()));
                        Arc::new(Filed::of(r, false, case, previous))
                    }
                };
                kept.insert(key, (Arc::clone(r), Arc::clone(&filed)));
                filed
            })
            .collect();
        index.others = kept;
        filed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(worktree: &str, globs: &[&str], exclusive: bool) -> Held {
        Held {
            holder: Holder {
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
            },
            handle: "a1.1".into(),
            transport: "stdio",
        }
    }

    #[test]
    fn each_kind_of_glob_holds_the_paths_it_matches_and_no_other() {
        let claims: [(&[&str], bool); 7] = [
            (&["src/**"], true),
            (&["src/db/*.rs"], true),
            (&["src/db/x.rs"], true),
            (&["**/*.md"], true),
            (&["docs/{a,b}/**", "lib/m?.rs"], true),
            (&["src/dbx/**"], true),
            (&["README.md"], false),
        ];
        let index = Filed {
            held: (claims.iter().enumerate())
                .map(|(k, (globs, exclusive))| {
                    (Arc::new(holder(&format!("/{k}"), globs, *exclusive)), None)
                })
                .collect(),
            ..Filed::default()
        };
        for (path, held_by) in [
            ("src/db/x.rs", &[0, 1, 2][..]),
            ("src/db/y.rs", &[0, 1]),
            ("src/db/deep/y.rs", &[0]),
            ("src", &[0]),
            ("srcs/a.rs", &[]),
            ("README.md", &[3]),
            ("docs/a/b/c.md", &[3, 4]),
            ("docs/c/x.rs", &[]),
            ("lib/m1.rs", &[4]),
            ("lib/m12.rs", &[]),
            ("src/dbx", &[0, 5]),
            ("src/db", &[0]),
        ] {
            assert_eq!(index.matching(path), held_by, "{path}");
        }
    }
}
