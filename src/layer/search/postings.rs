//! The prepared search of one generation: for every term, the objects holding it and how many
//! times in each field (an inverted index), with each object's body length. Built once per
//! generation off the request path; a search with it reads only the postings of its terms.
//!
//! Layout: the terms sorted and laid end to end in one string, found by binary search; the
//! postings of all terms in one array, each an object's position and its six counts packed in
//! 32 bits (four bits for each short field, twelve for the body: [`Field::cap`]).

use std::collections::HashMap;

use super::corpus::Corpus;
use super::fields::{Counts, Field, Texts, FIELDS};
use super::terms;
use crate::layer::object::Object;
use crate::layer::parallel;

mod update;

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

    pub fn counts(&self) -> Counts {
        let mut counts = [0; 6];
        for (i, c) in counts.iter_mut().enumerate().take(5) {
            *c = (self.packed >> (4 * i)) & 0xF;
        }
        counts[5] = self.packed >> 20;
        counts
    }
}

/// The inverted index of one generation's searched objects, in [`Corpus`] order.
#[derive(Clone, PartialEq, Eq)]
pub struct Prepared {
    /// Every term, sorted, end to end.
    terms: Box<str>,
    /// Where each term ends in `terms`.
    ends: Box<[u32]>,
    /// Where each term's postings start in `postings`, and one past the last.
    starts: Box<[u32]>,
    postings: Box<[Posting]>,
    pub body_len: Box<[u32]>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("objects", &self.body_len.len())
            .field("terms", &self.ends.len())
            .field("postings", &self.postings.len())
            .finish()
    }
}

/// Each term of one object's fields with its counts.
fn object_terms(o: &Object) -> Vec<(String, Counts)> {
    let texts = Texts::of(o);
    let mut counts: HashMap<String, Counts> = HashMap::new();
    let mut word = String::new();
    for (i, f) in FIELDS.iter().enumerate() {
        for token in terms::tokens(texts.get(*f)) {
            if !terms::term_into(token.raw, &mut word) {
                continue;
            }
            // Most tokens repeat a term already seen: look it up before copying it.
            let all = match counts.get_mut(word.as_str()) {
                Some(all) => all,
                None => counts.entry(word.clone()).or_insert([0; 6]),
            };
            all[i] = (all[i] + 1).min(f.cap());
        }
    }
    counts.into_iter().collect()
}

impl Prepared {
    pub fn build<'a>(objects: impl Into<Corpus<'a>>) -> Prepared {
        let objects: Corpus<'a> = objects.into();
        let positions: Vec<usize> = (0..objects.len()).collect();
        let threads = parallel::threads_for(objects.len(), 512);
        // Each part: its terms, with the postings of its objects in order.
        let parts = parallel::in_parts(&positions, threads, |part| {
            let mut by_term: HashMap<String, Vec<Posting>> = HashMap::new();
            for &position in part {
                for (term, counts) in object_terms(&objects[position]) {
                    by_term
                        .entry(term)
                        .or_default()
                        .push(Posting::new(position, &counts));
                }
            }
            by_term
        });
        let mut all: HashMap<String, Vec<Posting>> = HashMap::new();
        for part in parts {
            for (term, postings) in part {
                all.entry(term).or_default().extend(postings);
            }
        }
        let mut sorted: Vec<(String, Vec<Posting>)> = all.into_iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut text = String::with_capacity(sorted.iter().map(|(t, _)| t.len()).sum());
        let mut ends = Vec::with_capacity(sorted.len());
        let mut starts = Vec::with_capacity(sorted.len() + 1);
        let mut postings = Vec::with_capacity(sorted.iter().map(|(_, p)| p.len()).sum());
        for (term, mut list) in sorted {
            text.push_str(&term);
            ends.push(text.len() as u32);
            starts.push(postings.len() as u32);
            // Parts arrive in order, so this only sorts what is already sorted: it keeps the
            // order a property rather than an accident of merging.
            list.sort_unstable_by_key(|p| p.position);
            postings.extend(list);
        }
        starts.push(postings.len() as u32);
        Prepared {
            terms: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
            starts: starts.into_boxed_slice(),
            postings: postings.into_boxed_slice(),
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

    /// The postings of `term`, by position; empty when no object holds it.
    pub fn postings(&self, term: &str) -> &[Posting] {
        let mut lo = 0;
        let mut hi = self.ends.len();
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.term(mid).cmp(term) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    return &self.postings[self.starts[mid] as usize..self.starts[mid + 1] as usize]
                }
            }
        }
        &[]
    }

    /// The objects this was built from.
    pub fn len(&self) -> usize {
        self.body_len.len()
    }

    /// Bytes held on the heap, for the memory figures.
    pub fn heap_bytes(&self) -> usize {
        self.terms.len()
            + self.ends.len() * 4
            + self.starts.len() * 4
            + self.postings.len() * std::mem::size_of::<Posting>()
            + self.body_len.len() * 4
    }
}
