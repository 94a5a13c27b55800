//! The postings of an edit generation, made from the previous generation's: every object carried
//! over unchanged keeps its postings (renumbered to its new position), and only the objects read
//! anew are split into terms. The result is what [`Prepared::build`] gives for the new objects:
//! the same terms in the same order, the same postings by position, the same body lengths.

use std::collections::HashMap;

use super::{object_terms, Lists, Posting, Prepared};
use crate::layer::object::Object;
use crate::layer::search::{fields, Corpus};

impl Prepared {
    /// The postings of the corpus `after` then `more`, from these postings of a corpus whose
    /// objects were `before` (both sorted by URI, as an index holds them). An object of `after`
    /// for which `fresh` is false must be one of `before`, unchanged; the others, and every
    /// one of `more` (a skill's files, few), are tokenized.
    pub(crate) fn updated(
        &self,
        before: &[Object],
        after: &[Object],
        more: &[Object],
        fresh: impl Fn(&Object) -> bool,
    ) -> Prepared {
        let mut from = Vec::with_capacity(after.len() + more.len());
        let mut i = 0;
        for object in after {
            while i < before.len() && before[i].uri < object.uri {
                i += 1;
            }
            let carried = self.len() >= before.len()
                && i < before.len()
                && before[i].uri == object.uri
                && !fresh(object);
            if carried {
                from.push(Some(i as u32));
                i += 1;
            } else {
                from.push(None);
            }
        }
        from.resize(after.len() + more.len(), None);
        self.remapped(Corpus::new(after, more), &from)
    }

    /// The postings of `corpus`, where the object at each position `p` with `from[p]` naming a
    /// position of these postings is that object, unchanged (each named once, in ascending
    /// order); the others are tokenized. When these postings cannot be read whole (a damaged
    /// stored file), every object is.
    pub(crate) fn remapped(&self, corpus: Corpus<'_>, from: &[Option<u32>]) -> Prepared {
        let all = match self.all_postings() {
            Ok(all) => all,
            Err(e) => {
                tracing::info!(
                    code = e.code(),
                    "stored search postings cannot be read ({e}); made again"
                );
                return Prepared::build(corpus);
            }
        };
        // Where each old object went, when it was carried over (u32::MAX: it was not).
        let mut moved = vec![u32::MAX; self.len()];
        let mut body_len = Vec::with_capacity(corpus.len());
        let mut added: HashMap<String, Vec<Posting>> = HashMap::new();
        for (position, object) in corpus.iter().enumerate() {
            if let Some(old) = from.get(position).copied().flatten() {
                if let Some(slot) = moved.get_mut(old as usize) {
                    *slot = position as u32;
                    body_len.push(self.body_len[old as usize]);
                    continue;
                }
            }
            body_len.push(fields::body_len(object) as u32);
            for (term, counts) in object_terms(object) {
                added
                    .entry(term)
                    .or_default()
                    .push(Posting::new(position, &counts));
            }
        }
        let mut added: Vec<(String, Vec<Posting>)> = added.into_iter().collect();
        added.sort_unstable_by(|a, b| a.0.cmp(&b.0));

        let mut text = String::with_capacity(self.terms.len());
        let mut ends = Vec::with_capacity(self.ends.len());
        let mut starts = Vec::with_capacity(self.starts.len());
        let mut postings = Vec::with_capacity(all.len());
        let mut push = |term: &str, list: &[Posting]| {
            if list.is_empty() {
                return;
            }
            text.push_str(term);
            ends.push(text.len() as u32);
            starts.push(postings.len() as u32);
            postings.extend_from_slice(list);
        };
        let carried = |list: &[Posting]| -> Vec<Posting> {
            list.iter()
                .filter_map(|p| {
                    let to = moved[p.position as usize];
                    (to != u32::MAX).then_some(Posting {
                        position: to,
                        packed: p.packed,
                    })
                })
                .collect()
        };
        let mut new_terms = added.into_iter().peekable();
        let mut merged = Vec::new();
        for k in 0..self.ends.len() {
            let term = self.term(k);
            while let Some((t, list)) = new_terms.next_if(|(t, _)| t.as_str() < term) {
                push(&t, &list);
            }
            let old = carried(&all[self.starts[k] as usize..self.starts[k + 1] as usize]);
            match new_terms.next_if(|(t, _)| t == term) {
                Some((_, list)) => {
                    merged.clear();
                    merged.extend(old);
                    merged.extend(list);
                    merged.sort_unstable_by_key(|p| p.position);
                    push(term, &merged);
                }
                None => push(term, &old),
            }
        }
        for (t, list) in new_terms {
            push(&t, &list);
        }
        starts.push(postings.len() as u32);
        Prepared {
            terms: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
            starts: starts.into_boxed_slice(),
            postings: Lists::Held(postings.into_boxed_slice()),
            body_len: body_len.into_boxed_slice(),
        }
    }
}
