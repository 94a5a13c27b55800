//! The prepared search of one generation: for every term, the objects holding it and how many
//! times in each field (an inverted index), with each object's body length. Built once per
//! generation off the request path; a search with it reads only the postings of its terms.
//!
//! Layout: the terms sorted and laid end to end in one string, found by binary search; the
//! postings of all terms in one array, each an object's position and its six counts packed in
//! 32 bits (four bits for each short field, twelve for the body: [`Field::cap`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use super::corpus::Corpus;
use super::fields::{Counts, Field, Texts, FIELDS};
use super::terms;
use crate::layer::object::Object;
use crate::layer::parallel;

pub mod stored;
mod update;

pub use stored::StoredError;

/// One object holding one term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    pub position: u32,
    packed: u32,
}

impl Posting {
    fn new(position: usize, counts: &Counts) -> Posting {
        let mut packed = 0;
        for (i, f) in FIELDS.iter().enumerate().take(5) {
            packed |= counts[i].min(f.cap()) << (4 * i);
        }
        packed |= counts[5].min(Field::Body.cap()) << 20;
        Posting {
            position: position as u32,
            packed,
        }
    }

    pub(crate) fn counts(&self) -> Counts {
        let mut counts = [0; 6];
        for (i, c) in counts.iter_mut().enumerate().take(5) {
            *c = (self.packed >> (4 * i)) & 0xF;
        }
        counts[5] = self.packed >> 20;
        counts
    }
}

/// Every term's postings, end to end: held, or read a term at a time from the file a server
/// kept them in (`stored`).
#[derive(Clone, Debug)]
enum Lists {
    Held(Box<[Posting]>),
    Stored(Arc<stored::OnDisk>),
}

impl Lists {
    fn len(&self) -> usize {
        match self {
            Lists::Held(all) => all.len(),
            Lists::Stored(disk) => disk.len(),
        }
    }

    fn range(&self, from: usize, to: usize) -> Result<Cow<'_, [Posting]>, StoredError> {
        match self {
            Lists::Held(all) => Ok(Cow::Borrowed(&all[from..to])),
            Lists::Stored(disk) => disk.read(from, to).map(Cow::Owned),
        }
    }
}

/// The inverted index of one generation's searched objects, in [`Corpus`] order.
#[derive(Clone)]
pub struct Prepared {
    /// Every term, sorted, end to end.
    terms: Box<str>,
    /// Where each term ends in `terms`.
    ends: Box<[u32]>,
    /// Where each term's postings start in `postings`, and one past the last.
    starts: Box<[u32]>,
    postings: Lists,
    pub body_len: Box<[u32]>,
}

/// Equal when they give the same postings for every term, wherever those are kept.
impl PartialEq for Prepared {
    fn eq(&self, other: &Prepared) -> bool {
        self.terms == other.terms
            && self.ends == other.ends
            && self.starts == other.starts
            && self.body_len == other.body_len
            && match (self.all_postings(), other.all_postings()) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            }
    }
}

impl Eq for Prepared {}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("objects", &self.body_len.len())
            .field("terms", &self.ends.len())
            .field("postings", &self.postings.len())
            .finish()
    }
}

/// Calls `each` with every term of `o`'s fields and the field's place in [`FIELDS`], in order;
/// `word` is the scratch the terms are made in.
fn each_term(o: &Object, word: &mut String, mut each: impl FnMut(&str, usize)) {
    let texts = Texts::of(o);
    for (i, f) in FIELDS.iter().enumerate() {
        for token in terms::tokens(texts.get(*f)) {
            if terms::term_into(token.raw, word) {
                each(word, i);
            }
        }
    }
}

/// Each term of one object's fields with its counts.
fn object_terms(o: &Object) -> Vec<(String, Counts)> {
    let mut counts: HashMap<String, Counts> = HashMap::new();
    let mut word = String::new();
    each_term(o, &mut word, |term, i| {
        // Most tokens repeat a term already seen: look it up before copying it.
        let all = match counts.get_mut(term) {
            Some(all) => all,
            None => counts.entry(term.to_string()).or_insert([0; 6]),
        };
        all[i] = (all[i] + 1).min(FIELDS[i].cap());
    });
    counts.into_iter().collect()
}

/// Terms looked up once per word of every object: a fast hash, seeded per process so that a
/// layer's words cannot be chosen to collide.
type Terms<V> = HashMap<Box<str>, V, foldhash::fast::RandomState>;

/// One part of the corpus read by one thread: its terms, numbered as first met, and each term's
/// postings in position order.
struct Part {
    ids: Terms<u32>,
    lists: Vec<Vec<Posting>>,
}

/// Reads the objects at `positions` (ascending) into a [`Part`]. Each word costs one lookup of
/// its term's number; an object's counts are kept by number and cleared after it, so nothing is
/// allocated for a term already met.
fn read_part(objects: Corpus<'_>, positions: &[usize]) -> Part {
    let mut ids: Terms<u32> = Terms::default();
    let mut lists: Vec<Vec<Posting>> = Vec::new();
    let mut counts: Vec<Counts> = Vec::new();
    let mut held: Vec<u32> = Vec::new();
    let mut word = String::new();
    for &position in positions {
        each_term(&objects[position], &mut word, |term, i| {
            let id = match ids.get(term) {
                Some(&id) => id,
                None => {
                    let id = lists.len() as u32;
                    ids.insert(term.into(), id);
                    lists.push(Vec::new());
                    counts.push([0; 6]);
                    id
                }
            };
            let c = &mut counts[id as usize];
            if *c == [0; 6] {
                held.push(id);
            }
            c[i] = (c[i] + 1).min(FIELDS[i].cap());
        });
        for &id in &held {
            let c = std::mem::take(&mut counts[id as usize]);
            lists[id as usize].push(Posting::new(position, &c));
        }
        held.clear();
    }
    Part { ids, lists }
}

impl Prepared {
    pub(crate) fn build<'a>(objects: impl Into<Corpus<'a>>) -> Prepared {
        let objects: Corpus<'a> = objects.into();
        let positions: Vec<usize> = (0..objects.len()).collect();
        let threads = parallel::threads_for(objects.len(), 512);
        // Parts are contiguous runs of positions, in order: a term's postings are its parts'
        // lists laid end to end.
        let parts = parallel::in_parts(&positions, threads, |part| read_part(objects, part));
        let mut every: Vec<(&str, usize, u32)> = parts
            .iter()
            .enumerate()
            .flat_map(|(p, part)| part.ids.iter().map(move |(t, &id)| (&**t, p, id)))
            .collect();
        every.sort_unstable();
        let total = parts
            .iter()
            .map(|p| p.lists.iter().map(Vec::len).sum::<usize>())
            .sum();
        let mut text = String::new();
        let mut ends = Vec::new();
        let mut starts = Vec::new();
        let mut postings = Vec::with_capacity(total);
        for (k, &(term, p, id)) in every.iter().enumerate() {
            if k == 0 || every[k - 1].0 != term {
                text.push_str(term);
                ends.push(text.len() as u32);
                starts.push(postings.len() as u32);
            }
            postings.extend_from_slice(&parts[p].lists[id as usize]);
        }
        starts.push(postings.len() as u32);
        Prepared {
            terms: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
            starts: starts.into_boxed_slice(),
            postings: Lists::Held(postings.into_boxed_slice()),
            body_len: objects
                .iter()
                .map(|o| super::fields::body_len(o) as u32)
                .collect(),
        }
    }

    fn term(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.terms[start..self.ends[i] as usize]
    }

    /// The postings of `term`, by position; empty when no object holds it. Fails only when
    /// they are read from a stored file that turns out damaged.
    pub(crate) fn postings(&self, term: &str) -> Result<Cow<'_, [Posting]>, StoredError> {
        let mut lo = 0;
        let mut hi = self.ends.len();
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.term(mid).cmp(term) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    return self
                        .postings
                        .range(self.starts[mid] as usize, self.starts[mid + 1] as usize)
                }
            }
        }
        Ok(Cow::Borrowed(&[]))
    }

    /// Every term's postings end to end, read whole when they are kept in a file.
    pub(crate) fn all_postings(&self) -> Result<Cow<'_, [Posting]>, StoredError> {
        self.postings.range(0, self.postings.len())
    }

    /// The objects this was built from.
    pub(crate) fn len(&self) -> usize {
        self.body_len.len()
    }

    /// Bytes held on the heap, for the memory figures.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.terms.len()
            + self.ends.len() * 4
            + self.starts.len() * 4
            + match &self.postings {
                Lists::Held(all) => all.len() * std::mem::size_of::<Posting>(),
                Lists::Stored(_) => 0,
            }
            + self.body_len.len() * 4
    }
}
