//! What a search reads: the index's objects and, after them, the text files of its skills, each
//! searched as an object of its own (kind `skill_file`, URI `skill://<name>/<path>`). Positions
//! run on from the first list into the second, so a hit names one of either.

use crate::layer::object::{Object, ObjectFields};

/// What [`Corpus::ask_ahead`] asks for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ahead {
    /// The object's fields: where its texts are and how long.
    Fields,
    /// The runs of three bytes its texts hold, once the fields say where they are.
    Runs,
    /// The texts themselves: the body's start, the metadata, title, identity, tags.
    Texts,
}

/// The kind a skill's file is searched as; a search of the `skill` kind finds them too, since
/// every file of a skill belongs to it.
pub const SKILL_FILE_KIND: &str = "skill_file";

/// The objects a search ranks, by position.
#[derive(Clone, Copy, Debug)]
pub struct Corpus<'a> {
    objects: &'a [Object],
    more: &'a [Object],
}

impl<'a> Corpus<'a> {
    /// `objects`, then `more`.
    pub(crate) fn new(objects: &'a [Object], more: &'a [Object]) -> Corpus<'a> {
        Corpus { objects, more }
    }

    pub(crate) fn len(&self) -> usize {
        self.objects.len() + self.more.len()
    }

    /// The object at `position`, if there is one.
    pub(crate) fn get(&self, position: usize) -> Option<&'a Object> {
        match position.checked_sub(self.objects.len()) {
            None => self.objects.get(position),
            Some(at) => self.more.get(at),
        }
    }

    /// Asks the processor to bring in what a scan will read of the object at `position`, a few
    /// objects before the scan reaches it. An object's fields and each of its texts are
    /// allocations of their own, scattered over the heap; a scan that met each one cold spent
    /// most of its time waiting for memory, one object at a time (ADR 0114). The fields are
    /// asked for first; the texts they point to a few objects later, once the fields are in
    /// the cache. A hint: it changes no result, and does nothing without such an instruction.
    #[inline]
    pub(crate) fn ask_ahead(&self, position: usize, what: Ahead) {
        #[cfg(target_arch = "x86_64")]
        if let Some(o) = self.get(position) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch is a hint that reads nothing: no address, valid or not, faults.
            let ask = |p: *const u8| unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) };
            let f: &ObjectFields = o;
            match what {
                Ahead::Fields => {
                    ask(std::ptr::from_ref(&f.content).cast());
                    ask(std::ptr::from_ref(&f.metadata).cast());
                    ask(std::ptr::from_ref(&f.title).cast());
                    ask(std::ptr::from_ref(&f.identity).cast());
                    ask(std::ptr::from_ref(&f.description).cast());
                    ask(std::ptr::from_ref(&f.tags).cast());
                    ask(std::ptr::from_ref(&f.media_type).cast());
                    ask(std::ptr::from_ref(&f.trigrams).cast());
                }
                Ahead::Runs => {
                    if let Some(runs) = f.trigrams.get() {
                        for line in runs.words().chunks(8) {
                            ask(line.as_ptr().cast());
                        }
                    }
                }
                Ahead::Texts => {
                    // The body's first lines, not only its first: the processor's own
                    // read-ahead starts late on each new text (8% of a scan at 100,000 objects).
                    for line in f.content.as_bytes().chunks(64).take(64) {
                        ask(line.as_ptr());
                    }
                    ask(f.metadata.as_json().as_ptr());
                    ask(f.title.as_ptr());
                    ask(f.identity.as_ptr());
                    ask(f.description.as_deref().unwrap_or_default().as_ptr());
                    ask(f.tags.as_ptr().cast());
                    ask(f.media_type.as_ptr());
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (position, what);
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &'a Object> + 'a {
        self.objects.iter().chain(self.more.iter())
    }
}

impl<'a> std::ops::Index<usize> for Corpus<'a> {
    type Output = Object;

    fn index(&self, position: usize) -> &Object {
        match position.checked_sub(self.objects.len()) {
            None => &self.objects[position],
            Some(at) => &self.more[at],
        }
    }
}

impl<'a> From<&'a [Object]> for Corpus<'a> {
    fn from(objects: &'a [Object]) -> Corpus<'a> {
        Corpus::new(objects, &[])
    }
}

impl<'a> From<&'a Vec<Object>> for Corpus<'a> {
    fn from(objects: &'a Vec<Object>) -> Corpus<'a> {
        Corpus::new(objects, &[])
    }
}

/// Whether a search asking for `kind` keeps `o`: its own kind, or a skill's file for `skill`.
pub fn of_kind(o: &Object, kind: &str) -> bool {
    o.kind == kind || (kind == "skill" && o.kind == SKILL_FILE_KIND)
}
