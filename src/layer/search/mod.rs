//! Search over one index generation: a query becomes terms and quoted phrases
//! (`terms`), each object's fields are weighed by BM25F (`fields`: identity and title above
//! description, tags and statement, above body), and each hit gets the sentence where its
//! strongest terms meet (`snippet`).
//!
//! Two ways reach the same answer. A long-running process prepares each generation's postings
//! (`postings`) on a thread of its own, or reads from disk the ones an earlier start kept for
//! the same files (`postings::stored`); until they are there, and in a one-shot command that
//! never builds them, a search scans: each object's runs of three bytes (`layer::trigrams`)
//! rule out most objects that cannot hold a term without reading them, a case-free substring
//! search (`case_free`, over each object's own text) rules out more (a term is a prefix of each
//! word it stands for), and the rest are counted word by word. Both give every object the same
//! counts, the same document frequencies and the same body lengths, so scores and order are the
//! same to the last bit; ties go by position, which is URI order.

mod case_free;
mod corpus;
mod fields;
mod postings;
mod snippet;
mod terms;

use corpus::Ahead;
pub use corpus::{Corpus, SKILL_FILE_KIND};
pub(crate) use fields::trigrams;
pub use fields::Field;
pub use postings::{stored, Prepared, StoredError};
pub use snippet::parts as snippet_parts;
pub use terms::QueryError;

use std::borrow::Cow;

use crate::layer::object::Object;

use fields::{Counts, Matcher, Texts, FIELDS};
use terms::Unit;

use super::parallel;

/// BM25's saturation and body-length normalisation, at their usual values.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// What to search for.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub query: &'a str,
    pub kind: Option<&'a str>,
    pub tag: Option<&'a str>,
    pub limit: usize,
}

/// One object that matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The object's position in the searched [`Corpus`]: `Index::objects`, then the skills' files.
    pub position: usize,
    /// The relevance in thousandths, rounded: what the order is decided by.
    pub score: u64,
    /// The sentence where the strongest terms meet, terms marked `**so**`.
    pub snippet: String,
    /// The fields that hold at least one of the query's units, strongest first.
    pub matched: Vec<Field>,
}

/// The hits of one query: how many objects matched, and the best `limit` of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub total: usize,
    pub hits: Vec<Hit>,
}

/// The objects holding one unit, by position, with their counts.
type Holders = Vec<(u32, Counts)>;

/// BM25's inverse document frequency of a unit held by `df` of `n` objects.
fn idf(n: usize, df: usize) -> f64 {
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// A unit's BM25F score in one object: the fields' counts weighed and the body's normalised by
/// its length, then saturated.
fn unit_score(idf: f64, counts: &Counts, body_len: u32, avg_body: f64) -> f64 {
    let norm = 1.0 - B + B * f64::from(body_len) / avg_body.max(1.0);
    let tf: f64 = FIELDS
        .iter()
        .zip(counts)
        .map(|(f, &c)| {
            let c = f64::from(c) * f.weight();
            if *f == Field::Body {
                c / norm
            } else {
                c
            }
        })
        .sum();
    idf * tf * (K1 + 1.0) / (tf + K1)
}

/// The objects holding each unit, found through the prepared postings; fails only when they are
/// read from a stored file that turns out damaged.
fn holders_prepared(
    objects: Corpus<'_>,
    prepared: &Prepared,
    matchers: &[Matcher],
) -> Result<Vec<Holders>, postings::StoredError> {
    matchers
        .iter()
        .map(|m| match &m.unit {
            Unit::Term(t) => Ok(prepared
                .postings(t)?
                .iter()
                .map(|p| (p.position, p.counts()))
                .collect()),
            Unit::Phrase(words) => {
                // Objects holding every word, by intersecting the postings; then counted.
                let mut lists = words
                    .iter()
                    .map(|w| prepared.postings(w))
                    .collect::<Result<Vec<_>, _>>()?;
                lists.sort_by_key(|l| l.len());
                Ok(lists[0]
                    .iter()
                    .filter(|p| {
                        lists[1..]
                            .iter()
                            .all(|l| l.binary_search_by_key(&p.position, |q| q.position).is_ok())
                    })
                    .filter_map(|p| {
                        let counts = m.counts(&Texts::of(&objects[p.position as usize]));
                        counts
                            .iter()
                            .any(|&c| c > 0)
                            .then_some((p.position, counts))
                    })
                    .collect())
            }
        })
        .collect()
}

/// How many objects before the scan reaches one its fields are asked for; its texts are asked
/// for half as many before. At 100,000 objects 4 to 32 measured alike (and none 1.5 times slower).
const AHEAD: usize = 16;

/// The objects holding each unit, found by reading them, and every object's body length: only
/// the objects a case-free substring search cannot rule out are counted word by word. Thousands
/// are split across the cores.
fn holders_scanned(objects: Corpus<'_>, matchers: &[Matcher]) -> (Vec<Holders>, Vec<u32>) {
    let positions: Vec<u32> = (0..objects.len() as u32).collect();
    let scan = |part: &[u32]| -> (Vec<Holders>, Vec<u32>) {
        let mut found: Vec<Holders> = vec![Vec::new(); matchers.len()];
        let mut lengths = Vec::with_capacity(part.len());
        // Whether any unit may be in an object, by the runs of three bytes its texts hold.
        let may_hold = |o: &Object| matchers.iter().any(|m| m.may_occur_by_runs(o));
        for (k, &position) in part.iter().enumerate() {
            if let Some(&ahead) = part.get(k + AHEAD) {
                objects.ask_ahead(ahead as usize, Ahead::Fields);
            }
            if let Some(&ahead) = part.get(k + AHEAD * 3 / 4) {
                objects.ask_ahead(ahead as usize, Ahead::Runs);
            }
            if let Some(&ahead) = part.get(k + AHEAD / 2) {
                if may_hold(&objects[ahead as usize]) {
                    objects.ask_ahead(ahead as usize, Ahead::Texts);
                }
            }
            let o = &objects[position as usize];
            let (body, body_len) = fields::scanned_body(o);
            lengths.push(body_len as u32);
            if !may_hold(o) {
                continue;
            }
            let mut texts = None;
            for (m, holders) in matchers.iter().zip(found.iter_mut()) {
                if !m.may_occur_in_object(o, body) {
                    continue;
                }
                let texts = texts.get_or_insert_with(|| Texts::of(o));
                let counts = m.counts(texts);
                if counts.iter().any(|&c| c > 0) {
                    holders.push((position, counts));
                }
            }
        }
        (found, lengths)
    };
    let threads = parallel::threads_for(objects.len(), 2048);
    let mut all: Vec<Holders> = vec![Vec::new(); matchers.len()];
    let mut lengths = Vec::with_capacity(objects.len());
    for (part, part_lengths) in parallel::in_parts(&positions, threads, scan) {
        for (into, from) in all.iter_mut().zip(part) {
            into.extend(from);
        }
        lengths.extend(part_lengths);
    }
    (all, lengths)
}

/// Objects holding at least one of the query's units, best first (score, then position). With
/// `prepared` (built from these same `objects`) only the postings of the query's terms are
/// read; the answer is the same without it.
pub fn search<'a>(
    objects: impl Into<Corpus<'a>>,
    prepared: Option<&Prepared>,
    request: Request<'_>,
) -> Result<Found, QueryError> {
    let objects: Corpus<'a> = objects.into();
    let matchers: Vec<Matcher> = terms::parse(request.query)?
        .into_iter()
        .map(Matcher::new)
        .collect();
    // Postings of another object list would answer for the wrong objects: scan instead.
    let prepared = prepared.filter(|p| p.len() == objects.len());
    // Postings read from a damaged stored file are not answered from: the objects are read.
    let found = prepared.and_then(|p| match holders_prepared(objects, p, &matchers) {
        Ok(holders) => Some((holders, p)),
        Err(e) => {
            tracing::info!(
                code = e.code(),
                "stored search postings refused ({e}); this search reads the objects"
            );
            None
        }
    });
    let (holders, body_len): (Vec<Holders>, Cow<'_, [u32]>) = match found {
        Some((holders, p)) => (holders, Cow::Borrowed(&p.body_len)),
        None => {
            let (holders, lengths) = holders_scanned(objects, &matchers);
            (holders, Cow::Owned(lengths))
        }
    };
    let n = objects.len();
    let avg_body = body_len.iter().map(|&l| f64::from(l)).sum::<f64>() / n.max(1) as f64;
    let idfs: Vec<f64> = holders.iter().map(|h| idf(n, h.len())).collect();
    // Each object's score is summed unit by unit in the query's order, the same on both paths.
    let mut score = vec![0f64; n];
    let mut matched = vec![0u8; n];
    let mut touched: Vec<u32> = Vec::new();
    for (unit, holders) in holders.iter().enumerate() {
        for (position, counts) in holders {
            let at = *position as usize;
            if matched[at] == 0 {
                touched.push(*position);
            }
            score[at] += unit_score(idfs[unit], counts, body_len[at], avg_body);
            for (i, &c) in counts.iter().enumerate() {
                if c > 0 {
                    matched[at] |= 1 << i;
                }
            }
        }
    }
    let mut ranked: Vec<(u64, u32)> = touched
        .into_iter()
        .filter(|&p| {
            let o = &objects[p as usize];
            request.kind.is_none_or(|k| corpus::of_kind(o, k))
                && request.tag.is_none_or(|t| o.tags.iter().any(|x| x == t))
        })
        .map(|p| ((score[p as usize] * 1000.0).round() as u64, p))
        .collect();
    let total = ranked.len();
    // Best first, ties by position; only the best `limit` are put in order.
    let order = |a: &(u64, u32), b: &(u64, u32)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
    if request.limit < ranked.len() {
        ranked.select_nth_unstable_by(request.limit, order);
        ranked.truncate(request.limit);
    }
    ranked.sort_unstable_by(order);
    let hits = ranked
        .into_iter()
        .map(|(score, position)| {
            let o = &objects[position as usize];
            let bits = matched[position as usize];
            Hit {
                position: position as usize,
                score,
                snippet: snippet::snippet(&Texts::of(o), &matchers, &idfs),
                matched: FIELDS
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| bits & (1 << i) != 0)
                    .map(|(_, f)| *f)
                    .collect(),
            }
        })
        .collect();
    Ok(Found { total, hits })
}

#[cfg(test)]
mod tests;
