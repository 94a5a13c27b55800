//! What a search reads: the index's objects and, after them, the text files of its skills, each
//! searched as an object of its own (kind `skill_file`, URI `skill://<name>/<path>`). Positions
//! run on from the first list into the second, so a hit names one of either.

use crate::layer::object::Object;

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
