//! What of an object is searched, field by field, and how many times a term or phrase occurs in
//! one field. Front matter is never a field's text: its values are (title, description, tags,
//! statement; for a YAML object, its string values as the body), its keys never are.

use std::borrow::Cow;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use serde_json::{Map, Value};

use super::case_free::CaseFree;
use super::terms::{self, Unit};
use crate::layer::object::Object;
use crate::layer::trigrams::{Trigrams, Wanted};

/// The fields of an object, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Identity,
    Title,
    Tags,
    Description,
    Statement,
    Body,
}

pub const FIELDS: [Field; 6] = [
    Field::Identity,
    Field::Title,
    Field::Tags,
    Field::Description,
    Field::Statement,
    Field::Body,
];

/// How many times a unit occurs in each field of one object, counted up to each field's cap.
pub type Counts = [u32; 6];

impl Field {
    /// What one occurrence weighs: identity and title above description, tags and statement,
    /// above body.
    pub(crate) fn weight(self) -> f64 {
        match self {
            Field::Identity | Field::Title => 4.0,
            Field::Tags | Field::Description | Field::Statement => 2.0,
            Field::Body => 1.0,
        }
    }

    /// Occurrences are counted up to this: the prepared postings pack the counts of a short
    /// field in four bits and the body's in twelve, and BM25 has long stopped rising by then.
    pub(crate) fn cap(self) -> u32 {
        match self {
            Field::Body => 4095,
            _ => 15,
        }
    }
}

/// Whether the object is a YAML document (its string values are its body).
fn is_yaml(o: &Object) -> bool {
    o.media_type == "application/yaml"
}

/// The markdown body after the front matter, or the whole text.
fn body_slice(o: &Object) -> &str {
    o.content.get(o.body_start..).unwrap_or(&o.content)
}

/// The length the body's BM25 normalisation uses: the body's bytes, or a YAML file's. Known
/// without parsing anything, so a scan pays little for it.
pub fn body_len(o: &Object) -> usize {
    if is_yaml(o) {
        o.content.len()
    } else {
        body_slice(o).len()
    }
}

/// What a scan reads of an object's body to rule it out, and the body's length for BM25 (see
/// [`body_len`]): the markdown body, or nothing for a YAML object, whose body is made of its
/// metadata's values (searched there).
pub fn scanned_body(o: &Object) -> (&str, usize) {
    if is_yaml(o) {
        ("", o.content.len())
    } else {
        let body = body_slice(o);
        (body, body.len())
    }
}

/// The texts a scan reads of an object to rule it out, `body` its [`scanned_body`]: the body,
/// the metadata as JSON, title, identity and description; and the tags.
fn ruled_out_in<'o>(o: &'o Object, body: &'o str) -> ([&'o str; 5], &'o [String]) {
    let texts = [
        body,
        o.metadata.as_json(),
        o.title.as_str(),
        o.identity.as_str(),
        o.description.as_deref().unwrap_or(""),
    ];
    (texts, &o.tags)
}

/// The runs of three bytes held by the texts a scan reads of `o` (see [`ruled_out_in`]), made
/// the first time they are asked for: a reader asks as it makes the object.
pub(crate) fn trigrams(o: &Object) -> &Trigrams {
    o.trigrams.get_or_init(|| {
        let (texts, tags) = ruled_out_in(o, scanned_body(o).0);
        Trigrams::of(
            texts
                .into_iter()
                .map(str::as_bytes)
                .chain(tags.iter().map(String::as_bytes)),
        )
    })
}

/// The texts of one object's fields.
pub struct Texts<'a> {
    pub identity: &'a str,
    pub title: &'a str,
    pub tags: String,
    pub description: &'a str,
    pub statement: Option<String>,
    pub body: Cow<'a, str>,
}

impl<'a> Texts<'a> {
    pub(crate) fn of(o: &'a Object) -> Texts<'a> {
        let json = o.metadata.as_json();
        let map = if is_yaml(o) || json.contains("\"statement\"") {
            o.metadata.to_map()
        } else {
            Map::new()
        };
        let statement = match map.get("statement") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        let body = if is_yaml(o) {
            Cow::Owned(yaml_values(o, &map))
        } else {
            Cow::Borrowed(body_slice(o))
        };
        Texts {
            identity: &o.identity,
            title: &o.title,
            tags: o.tags.join("\n"),
            description: o.description.as_deref().unwrap_or(""),
            statement,
            body,
        }
    }

    pub(crate) fn get(&self, field: Field) -> &str {
        match field {
            Field::Identity => self.identity,
            Field::Title => self.title,
            Field::Tags => &self.tags,
            Field::Description => self.description,
            Field::Statement => self.statement.as_deref().unwrap_or(""),
            Field::Body => &self.body,
        }
    }
}

/// A YAML object's string values, one a line, in the file's order: the title, description,
/// identity, tags and statement are fields of their own and left out here.
fn yaml_values(o: &Object, map: &Map<String, Value>) -> String {
    fn walk(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    for (key, value) in map {
        if key == "statement" || key == "tags" {
            continue;
        }
        if let Value::String(s) = value {
            if *s == o.title || *s == o.identity || Some(s.as_str()) == o.description.as_deref() {
                continue;
            }
        }
        walk(value, &mut out);
    }
    out
}

/// Whether a term can be found through the bytes of a text: every word that makes it begins
/// with it in ASCII case-insensitively (see `terms`), which holds for ASCII and for characters
/// without case.
fn findable(term: &str) -> bool {
    term.chars()
        .all(|c| c.is_ascii() || !(c.is_lowercase() || c.is_uppercase()))
}

/// One unit of a query, ready to be counted in texts.
pub struct Matcher {
    pub unit: Unit,
    /// A finder per term of the unit, when every term is [`findable`]: to count.
    finders: Option<Vec<AhoCorasick>>,
    /// The same terms, to tell whether an object may hold them at all.
    present: Option<Vec<CaseFree>>,
    /// Their runs of three bytes, to tell so from an object's [`trigrams`] first.
    wanted: Option<Vec<Wanted>>,
}

impl Matcher {
    pub(crate) fn new(unit: Unit) -> Matcher {
        let finders = unit
            .terms()
            .iter()
            .map(|t| {
                findable(t).then(|| {
                    AhoCorasickBuilder::new()
                        .ascii_case_insensitive(true)
                        .match_kind(MatchKind::LeftmostFirst)
                        .build([t.as_str()])
                        .ok()
                })?
            })
            .collect();
        let present: Option<Vec<CaseFree>> = unit
            .terms()
            .iter()
            .map(|t| if findable(t) { CaseFree::new(t) } else { None })
            .collect();
        let wanted = present.is_some().then(|| {
            unit.terms()
                .iter()
                .map(|t| Wanted::of(t.as_bytes()))
                .collect()
        });
        Matcher {
            unit,
            finders,
            present,
            wanted,
        }
    }

    /// Whether `text` may hold the unit; `false` only when it cannot.
    pub(crate) fn may_occur_in(&self, text: &str) -> bool {
        match &self.present {
            None => true,
            Some(present) => present.iter().all(|f| f.is_in(text)),
        }
    }

    /// Whether an object may hold the unit by the runs of three bytes its texts hold (see
    /// [`trigrams`]): `false` only when one of the unit's terms cannot be there. Reads the
    /// object's fields and its set, never its texts.
    pub(crate) fn may_occur_by_runs(&self, o: &Object) -> bool {
        let Some(wanted) = &self.wanted else {
            return true;
        };
        let held = trigrams(o);
        wanted.iter().all(|w| held.may_hold(w))
    }

    /// Whether an object may hold the unit anywhere: identity, title, description, tags, the
    /// metadata as JSON (every value's words are there as written) and `body`, the object's
    /// [`scanned_body`].
    pub(crate) fn may_occur_in_object(&self, o: &Object, body: &str) -> bool {
        let Some(present) = &self.present else {
            return true;
        };
        if !self.may_occur_by_runs(o) {
            return false;
        }
        let (texts, tags) = ruled_out_in(o, body);
        present
            .iter()
            .all(|f| texts.iter().any(|h| f.is_in(h)) || tags.iter().any(|t| f.is_in(t)))
    }

    /// How many times the unit occurs in `text`, up to `cap`.
    pub(crate) fn count(&self, text: &str, cap: u32) -> u32 {
        match (&self.unit, &self.finders) {
            (Unit::Term(term), Some(finders)) => {
                let mut n = 0;
                let mut word = String::new();
                for m in finders[0].find_iter(text) {
                    let Some(end) = terms::token_at(text, m.start()) else {
                        continue;
                    };
                    if terms::term_into(&text[m.start()..end], &mut word) && word == *term {
                        n += 1;
                        if n == cap {
                            break;
                        }
                    }
                }
                n
            }
            // From each place the first word is found, the terms after it: a phrase costs
            // its first word's occurrences, not a term made of every word of the text.
            (Unit::Phrase(words), Some(finders)) => {
                let mut n = 0;
                let mut word = String::new();
                for m in finders[0].find_iter(text) {
                    let Some(end) = terms::token_at(text, m.start()) else {
                        continue;
                    };
                    if !(terms::term_into(&text[m.start()..end], &mut word) && word == words[0]) {
                        continue;
                    }
                    let mut rest = words[1..].iter();
                    let mut next = rest.next();
                    for token in terms::tokens(&text[end..]) {
                        let Some(want) = next else { break };
                        if !terms::term_into(token.raw, &mut word) {
                            continue;
                        }
                        if word != *want {
                            break;
                        }
                        next = rest.next();
                    }
                    if next.is_none() {
                        n += 1;
                        if n == cap {
                            break;
                        }
                    }
                }
                n
            }
            _ if !self.may_occur_in(text) => 0,
            (Unit::Term(term), None) => {
                let n = terms::terms_of(text)
                    .filter(|t| t == term)
                    .take(cap as usize);
                n.count() as u32
            }
            (Unit::Phrase(words), _) => {
                let all: Vec<String> = terms::terms_of(text).collect();
                let n = all.windows(words.len()).filter(|w| w == words);
                n.take(cap as usize).count() as u32
            }
        }
    }

    /// The unit's counts in every field of `texts`.
    pub(crate) fn counts(&self, texts: &Texts<'_>) -> Counts {
        FIELDS.map(|f| self.count(texts.get(f), f.cap()))
    }
}
