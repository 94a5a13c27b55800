//! Full-text search over one index generation: every object's identity and text, matched
//! ASCII-case-insensitively where they lie, with `aho-corasick`'s prefiltered finder. A one-shot
//! search copies nothing; snippets are cut from the file as read.
//!
//! A long-running process also gives each generation [`Signatures`]: per object, a 4096-bit set
//! (512 bytes) of the hashed byte trigrams of its ASCII-lowercased text and identity. A query word
//! of three bytes or more can only occur in an object whose set holds every one of the word's
//! trigrams, so most objects are ruled out by a few word tests and only the rest are read. The
//! sets cost 512 bytes per object (5 MB at 10,000 objects) whatever the files' size; a large file
//! fills its set and is simply always read. With them come ASCII-lowercased copies of every text,
//! identity and title (the layer's bytes once more), in which the rest are read with a plain
//! substring search: a case-insensitive one is several times slower on text where the word's
//! letters are common. Neither changes an answer, only how much is read to reach it.
//!
//! When thousands of objects remain to be read, they are split across the cores.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use memchr::memmem;

use super::object::Object;
use super::parallel;

/// One object that matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The object's position in `Index::objects`.
    pub position: usize,
    pub score: u64,
    pub snippet: String,
}

/// The hits of one query: how many objects matched, and the best `limit` of them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub total: usize,
    pub hits: Vec<Hit>,
}

const SNIPPET_BEFORE: usize = 60;
const SNIPPET_AFTER: usize = 100;

/// 4096 bits: few enough to stay at 512 bytes an object, enough that a note of a few kilobytes
/// (a few hundred distinct trigrams) leaves most bits clear.
const SIGNATURE_WORDS: usize = 64;
const SIGNATURE_BITS: u32 = 12;

/// One object's trigram set.
type Signature = [u64; SIGNATURE_WORDS];

/// The trigram sets of one generation's objects, in `Index::objects` order, and their texts,
/// identities and titles ASCII-lowercased, so that a word is found with a plain substring search.
#[derive(Clone)]
pub struct Signatures {
    of: Box<[Signature]>,
    content: Lowered,
    identity: Lowered,
    title: Lowered,
}

/// One field of every object, ASCII-lowercased (the same length, so offsets agree), end to end.
#[derive(Clone)]
struct Lowered {
    bytes: Box<[u8]>,
    /// Where each object's field starts in `bytes`, and one past the last.
    starts: Box<[usize]>,
}

impl Lowered {
    fn of<'a>(fields: impl Iterator<Item = &'a str> + Clone) -> Lowered {
        let mut bytes = Vec::with_capacity(fields.clone().map(str::len).sum());
        let mut starts = Vec::new();
        for field in fields {
            starts.push(bytes.len());
            bytes.extend(field.bytes().map(|b| b.to_ascii_lowercase()));
        }
        starts.push(bytes.len());
        Lowered {
            bytes: bytes.into_boxed_slice(),
            starts: starts.into_boxed_slice(),
        }
    }

    fn get(&self, position: usize) -> &[u8] {
        &self.bytes[self.starts[position]..self.starts[position + 1]]
    }
}

impl std::fmt::Debug for Signatures {
    // 512 bytes of bits per object say nothing to a reader of a debug dump.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signatures")
            .field("objects", &self.of.len())
            .finish()
    }
}

impl Signatures {
    /// The sets of `objects`: content and identity each contribute their own trigrams, so no
    /// trigram spans the two (a match never does either).
    pub fn build(objects: &[Object]) -> Signatures {
        let of = objects
            .iter()
            .map(|o| {
                let mut signature = [0u64; SIGNATURE_WORDS];
                add_trigrams(&mut signature, o.content.as_bytes());
                add_trigrams(&mut signature, o.identity.as_bytes());
                signature
            })
            .collect();
        Signatures {
            of,
            content: Lowered::of(objects.iter().map(|o| o.content.as_str())),
            identity: Lowered::of(objects.iter().map(|o| o.identity.as_str())),
            title: Lowered::of(objects.iter().map(|o| o.title.as_str())),
        }
    }
}

/// The bit of one trigram (three bytes in the low 24 bits): a multiplicative hash, top bits.
fn bit_of(trigram: u32) -> u32 {
    trigram.wrapping_mul(0x9E37_79B1) >> (32 - SIGNATURE_BITS)
}

/// Sets the bit of every trigram of `text`, ASCII-lowercased byte by byte as the window rolls,
/// so no lowercase copy of the text is made. Bytes outside ASCII are taken as they are, as the
/// matcher compares them.
fn add_trigrams(signature: &mut Signature, text: &[u8]) {
    let mut window = 0u32;
    for (i, &byte) in text.iter().enumerate() {
        window = ((window << 8) | u32::from(byte.to_ascii_lowercase())) & 0x00FF_FFFF;
        if i >= 2 {
            let bit = bit_of(window);
            signature[(bit / 64) as usize] |= 1 << (bit % 64);
        }
    }
}

/// The bits every query word needs, as the few non-zero 64-bit words of the set.
struct Mask {
    words: Vec<(usize, u64)>,
}

impl Mask {
    /// Words shorter than three bytes have no trigram and rule nothing out.
    fn of_words<'a>(words: impl Iterator<Item = &'a str>) -> Mask {
        let mut all = [0u64; SIGNATURE_WORDS];
        for word in words {
            add_trigrams(&mut all, word.as_bytes());
        }
        Mask {
            words: all
                .iter()
                .enumerate()
                .filter(|(_, bits)| **bits != 0)
                .map(|(i, bits)| (i, *bits))
                .collect(),
        }
    }

    /// Whether an object with `signature` may hold every word.
    fn admits(&self, signature: &Signature) -> bool {
        self.words
            .iter()
            .all(|&(i, bits)| signature[i] & bits == bits)
    }
}

fn finder(word: &str) -> Option<AhoCorasick> {
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostFirst)
        .build([word])
        .ok()
}

/// Objects holding every word of `query`, best first: a word in the title counts 10, in the
/// identity 5, and each occurrence in the text 1 (capped at 20 per word). With `signatures`
/// (built from these same `objects`), only the objects they cannot rule out are read; the answer
/// is the same with or without them.
pub fn search(
    objects: &[Object],
    signatures: Option<&Signatures>,
    query: &str,
    kind: Option<&str>,
    limit: usize,
) -> Found {
    let words: Vec<(&str, AhoCorasick)> = query
        .split_whitespace()
        .filter_map(|w| finder(w).map(|f| (w, f)))
        .collect();
    let finders: Vec<&AhoCorasick> = words.iter().map(|(_, f)| f).collect();
    if finders.is_empty() {
        return Found::default();
    }
    // Signatures of another object list would rule out the wrong objects: scan instead.
    let filter = signatures
        .filter(|s| s.of.len() == objects.len())
        .map(|s| (s, Mask::of_words(words.iter().map(|(w, _)| *w))));
    // With the lowered texts, a word is found by a substring search of its lowered bytes, which
    // is several times faster than a case-insensitive one over text where its letters are common.
    let lowered: Option<(&Signatures, Vec<memmem::Finder<'static>>)> =
        filter.as_ref().map(|(signatures, _)| {
            let finders = words
                .iter()
                .map(|(w, _)| memmem::Finder::new(w.to_ascii_lowercase().as_bytes()).into_owned())
                .collect();
            (*signatures, finders)
        });
    let fields = Fields {
        objects,
        case_insensitive: &finders,
        lowered: lowered.as_ref().map(|(s, f)| (*s, f.as_slice())),
    };
    let candidates: Vec<usize> = (0..objects.len())
        .filter(|&position| {
            kind.is_none_or(|k| objects[position].kind == k)
                && filter
                    .as_ref()
                    .is_none_or(|(signatures, mask)| mask.admits(&signatures.of[position]))
        })
        .collect();
    // Every word must be in the text or the identity; the snippet is cut at the first word's
    // first occurrence in the text.
    let score_of = |&position: &usize| -> Option<(u64, usize, Option<usize>)> {
        let mut score = 0;
        let mut at = None;
        for word in 0..finders.len() {
            let (first, occurrences) = fields.occurrences(word, position, 20);
            let in_identity = fields.find(Field::Identity, word, position).is_some();
            if first.is_none() && !in_identity {
                return None;
            }
            if word == 0 {
                at = first;
            }
            let in_title = fields.find(Field::Title, word, position).is_some();
            score += u64::from(in_title) * 10 + u64::from(in_identity) * 5 + occurrences;
        }
        Some((score, position, at))
    };
    let score_all = |positions: &[usize]| -> Vec<(u64, usize, Option<usize>)> {
        positions.iter().filter_map(score_of).collect()
    };
    let threads = parallel::threads_for(candidates.len(), 2048);
    let mut scored: Vec<(u64, usize, Option<usize>)> =
        parallel::in_parts(&candidates, threads, score_all).concat();
    let total = scored.len();
    scored.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    let hits = scored
        .into_iter()
        .map(|(score, position, at)| Hit {
            position,
            score,
            snippet: snippet(&objects[position].content, at.unwrap_or(0)),
        })
        .collect();
    Found { total, hits }
}

/// The short fields of an object a word is looked for in (the text is counted, see
/// [`Fields::occurrences`]).
#[derive(Clone, Copy)]
enum Field {
    Identity,
    Title,
}

/// Where the query's words are looked for: each object's fields as they are, case-insensitively,
/// or (with signatures) their lowered copies with a plain substring search. Both answer alike.
struct Fields<'a> {
    objects: &'a [Object],
    case_insensitive: &'a [&'a AhoCorasick],
    lowered: Option<(&'a Signatures, &'a [memmem::Finder<'static>])>,
}

impl Fields<'_> {
    /// Whether query word `word` occurs in `field` of object `position`, and where first.
    fn find(&self, field: Field, word: usize, position: usize) -> Option<usize> {
        match self.lowered {
            Some((signatures, finders)) => {
                let lowered = match field {
                    Field::Identity => &signatures.identity,
                    Field::Title => &signatures.title,
                };
                finders[word].find(lowered.get(position))
            }
            None => {
                let o = &self.objects[position];
                let text = match field {
                    Field::Identity => &o.identity,
                    Field::Title => &o.title,
                };
                self.case_insensitive[word]
                    .find(text.as_str())
                    .map(|m| m.start())
            }
        }
    }

    /// Where query word `word` first occurs in object `position`'s text, and how many times it
    /// does, counting to `cap`: one pass over the text.
    fn occurrences(&self, word: usize, position: usize, cap: usize) -> (Option<usize>, u64) {
        fn first_and_count(
            mut starts: impl Iterator<Item = usize>,
            cap: usize,
        ) -> (Option<usize>, u64) {
            let first = starts.next();
            let more = starts.take(cap.saturating_sub(1)).count() as u64;
            (first, first.map_or(0, |_| 1 + more))
        }
        match self.lowered {
            Some((signatures, finders)) => first_and_count(
                finders[word].find_iter(signatures.content.get(position)),
                cap,
            ),
            None => first_and_count(
                self.case_insensitive[word]
                    .find_iter(self.objects[position].content.as_str())
                    .map(|m| m.start()),
                cap,
            ),
        }
    }
}

/// Text around byte `at` of `content`, whitespace collapsed.
fn snippet(content: &str, at: usize) -> String {
    let at = at.min(content.len());
    let mut start = at.saturating_sub(SNIPPET_BEFORE);
    while !content.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + SNIPPET_AFTER).min(content.len());
    while !content.is_char_boundary(end) {
        end += 1;
    }
    let mut text = content[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if start > 0 {
        text.insert(0, '…');
    }
    if end < content.len() {
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::kinds::Kinds;
    use crate::layer::object::make_object;

    /// An object of kind `kind` with this identity, title and text; the rest is a document's.
    fn object(kind: &str, identity: &str, title: &str, content: &str) -> Object {
        let kinds = Kinds::builtin().expect("the builtin kinds");
        let document = kinds.get("document").expect("the document kind");
        let mut o = make_object(document, &kinds, "doc.md", "docs", "root", String::new())
            .expect("an empty document is an object");
        o.kind = kind.to_string();
        o.identity = identity.to_string();
        o.title = title.to_string();
        o.content = content.to_string();
        o
    }

    #[test]
    fn the_filter_rules_out_objects_without_the_trigrams() {
        let objects: Vec<Object> = (0..200)
            .map(|i| {
                let extra = if i == 7 { " a Zebra crossing" } else { "" };
                object(
                    "note",
                    &format!("note-{i}"),
                    "Note",
                    &format!("object number {i} says little{extra}"),
                )
            })
            .collect();
        let signatures = Signatures::build(&objects);
        assert_eq!(signatures.of.len(), 200);
        let admitted = |query: &str| {
            let mask = Mask::of_words(query.split_whitespace());
            signatures.of.iter().filter(|s| mask.admits(s)).count()
        };
        // A collision may let an odd object through; a filter that lets most through is broken.
        assert!(admitted("ZEBRA") <= 3, "{}", admitted("ZEBRA"));
        assert!(admitted("zebra crossing") <= 2);
        assert_eq!(admitted("object"), 200);
        assert_eq!(
            admitted("ze a"),
            200,
            "words under three bytes rule nothing out"
        );
        // In the identities of note-19 and note-190 to note-199 only.
        let in_identity = admitted("NOTE-19");
        assert!((11..=14).contains(&in_identity), "{in_identity}");
        assert_eq!(
            format!("{signatures:?}"),
            "Signatures { objects: 200 }",
            "the debug form says how many, not the bits"
        );
    }

    #[test]
    fn a_word_only_in_the_identity_is_found_through_the_signatures() {
        let objects = vec![
            object("rule", "quokka@2", "Rule", "says nothing of the animal"),
            object("rule", "wombat@1", "Rule", "says nothing either"),
        ];
        let signatures = Signatures::build(&objects);
        for query in ["QUOKKA@2", "quokka", "ka@2 nothing"] {
            let found = search(&objects, Some(&signatures), query, None, 10);
            assert_eq!(found.total, 1, "{query}");
            assert_eq!(found.hits[0].position, 0, "{query}");
            assert_eq!(found, search(&objects, None, query, None, 10), "{query}");
        }
    }

    /// Enough objects that the candidates are scored on several threads: the answer, with and
    /// without signatures, is the one a plain lowercase scan gives.
    #[test]
    fn a_large_layer_scored_on_several_threads_answers_as_a_plain_scan() {
        let words = ["Alpha", "beta", "GAMMA", "delta", "rule", "Rules", "note"];
        let objects: Vec<Object> = (0..6000usize)
            .map(|i| {
                let text: Vec<&str> = (0..(i % 40))
                    .map(|j| words[(i * 7 + j * j) % words.len()])
                    .collect();
                object(
                    if i % 3 == 0 { "rule" } else { "note" },
                    &format!("{}-{i}", words[i % words.len()]),
                    words[(i / 7) % words.len()],
                    &text.join(" "),
                )
            })
            .collect();
        let signatures = Signatures::build(&objects);
        for (query, kind) in [
            ("alpha", None),
            ("RULE beta", None),
            ("gamma note", Some("rule")),
            ("delta-12", None),
        ] {
            let expected = plain_scan(&objects, query, kind, 25);
            for found in [
                search(&objects, None, query, kind, 25),
                search(&objects, Some(&signatures), query, kind, 25),
            ] {
                let hits: Vec<(usize, u64)> =
                    found.hits.iter().map(|h| (h.position, h.score)).collect();
                assert_eq!((found.total, hits), expected, "{query} {kind:?}");
            }
        }
    }

    /// The scoring of `search`, written out plainly over lowercase copies.
    fn plain_scan(
        objects: &[Object],
        query: &str,
        kind: Option<&str>,
        limit: usize,
    ) -> (usize, Vec<(usize, u64)>) {
        let words: Vec<String> = query
            .split_whitespace()
            .map(str::to_ascii_lowercase)
            .collect();
        let mut scored: Vec<(usize, u64)> = objects
            .iter()
            .enumerate()
            .filter(|(_, o)| kind.is_none_or(|k| o.kind == k))
            .filter_map(|(position, o)| {
                let content = o.content.to_ascii_lowercase();
                let identity = o.identity.to_ascii_lowercase();
                let title = o.title.to_ascii_lowercase();
                let mut score = 0;
                for w in &words {
                    if !content.contains(w.as_str()) && !identity.contains(w.as_str()) {
                        return None;
                    }
                    score += u64::from(title.contains(w.as_str())) * 10
                        + u64::from(identity.contains(w.as_str())) * 5
                        + content.matches(w.as_str()).count().min(20) as u64;
                }
                Some((position, score))
            })
            .collect();
        let total = scored.len();
        scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        (total, scored)
    }

    #[test]
    fn signatures_of_another_object_list_are_not_used() {
        let objects = vec![object("note", "a", "A", "alpha beta")];
        let other = Signatures::build(&[]);
        assert_eq!(
            search(&objects, Some(&other), "alpha", None, 10),
            search(&objects, None, "alpha", None, 10)
        );
    }

    mod properties {
        //! The signature path answers exactly as the full scan, for any query over any texts.

        use proptest::prelude::*;

        use super::super::{search, Object, Signatures};
        use super::object;

        /// Words of text: ASCII in both cases, punctuation, and bytes outside ASCII (accents,
        /// a letter whose uppercase is another length, CJK), so trigrams straddle every kind.
        const VOCABULARY: &[&str] = &[
            "Alpha",
            "beta",
            "GAMMA",
            "delta-epsilon",
            "zeta@3",
            "eta_theta",
            "Iota",
            "kappa.rs",
            "lambda",
            "MU",
            "nu",
            "xi",
            "omicron",
            "Größe",
            "GRÖSSE",
            "naïve",
            "ÉCOLE",
            "école",
            "東京",
            "ſtraße",
            "K",
            "İstanbul",
            "the",
            "The",
            "THE",
            "a",
            "an",
            "and",
            "ånd",
            "x-y",
        ];

        fn text(words: usize) -> impl Strategy<Value = String> {
            prop::collection::vec(
                (
                    prop::sample::select(VOCABULARY),
                    prop::sample::select(&[" ", "\n", "", "-", "  "][..]),
                ),
                0..words,
            )
            .prop_map(|parts| {
                parts
                    .into_iter()
                    .map(|(w, sep)| format!("{w}{sep}"))
                    .collect()
            })
        }

        fn objects() -> impl Strategy<Value = Vec<Object>> {
            prop::collection::vec((prop::bool::ANY, text(4), text(3), text(60)), 1..40).prop_map(
                |specs| {
                    specs
                        .into_iter()
                        .map(|(is_note, identity, title, content)| {
                            object(
                                if is_note { "note" } else { "rule" },
                                &identity,
                                &title,
                                &content,
                            )
                        })
                        .collect()
                },
            )
        }

        /// How a query word is changed from the text it was cut from.
        #[derive(Clone, Copy, Debug)]
        enum Case {
            Same,
            AsciiUpper,
            AsciiLower,
            /// Unicode uppercase: changes bytes outside ASCII, which the matcher compares as is.
            Upper,
            Alternating,
        }

        fn recase(word: &str, case: Case) -> String {
            match case {
                Case::Same => word.to_string(),
                Case::AsciiUpper => word.to_ascii_uppercase(),
                Case::AsciiLower => word.to_ascii_lowercase(),
                Case::Upper => word.to_uppercase(),
                Case::Alternating => word
                    .chars()
                    .enumerate()
                    .map(|(i, c)| {
                        if i % 2 == 0 {
                            c.to_ascii_uppercase()
                        } else {
                            c.to_ascii_lowercase()
                        }
                    })
                    .collect(),
            }
        }

        /// A query word: 1 to 6 characters cut from an object's text or identity (recased), or
        /// a word from nowhere.
        #[derive(Clone, Debug)]
        enum Word {
            Cut {
                object: prop::sample::Index,
                from_identity: bool,
                at: prop::sample::Index,
                chars: usize,
                case: Case,
            },
            Free(String),
        }

        fn word() -> impl Strategy<Value = Word> {
            let case = prop_oneof![
                Just(Case::Same),
                Just(Case::AsciiUpper),
                Just(Case::AsciiLower),
                Just(Case::Upper),
                Just(Case::Alternating),
            ];
            prop_oneof![
                4 => (any::<prop::sample::Index>(), prop::bool::weighted(0.3),
                      any::<prop::sample::Index>(), 1..=6usize, case)
                    .prop_map(|(object, from_identity, at, chars, case)| Word::Cut {
                        object, from_identity, at, chars, case,
                    }),
                1 => prop_oneof![
                    Just("absent".to_string()),
                    Just("qqqzzz".to_string()),
                    Just("Größer".to_string()),
                    Just("京東".to_string()),
                    "[a-zA-Z0-9é東@.-]{1,6}",
                ].prop_map(Word::Free),
            ]
        }

        fn cut(objects: &[Object], word: &Word) -> String {
            match word {
                Word::Free(w) => w.clone(),
                Word::Cut {
                    object,
                    from_identity,
                    at,
                    chars,
                    case,
                } => {
                    let o = &objects[object.index(objects.len())];
                    let source = if *from_identity {
                        &o.identity
                    } else {
                        &o.content
                    };
                    let all: Vec<char> = source.chars().collect();
                    if all.is_empty() {
                        return "empty".to_string();
                    }
                    let start = at.index(all.len());
                    let end = (start + chars).min(all.len());
                    recase(&all[start..end].iter().collect::<String>(), *case)
                }
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn the_signature_path_finds_exactly_what_the_scan_finds(
                objects in objects(),
                words in prop::collection::vec(word(), 1..4),
                kind in prop_oneof![Just(None), Just(Some("note")), Just(Some("absent"))],
                limit in 1..20usize,
            ) {
                let signatures = Signatures::build(&objects);
                let query = words.iter().map(|w| cut(&objects, w)).collect::<Vec<_>>().join(" ");
                prop_assert_eq!(
                    search(&objects, Some(&signatures), &query, kind, limit),
                    search(&objects, None, &query, kind, limit),
                    "query {:?}", query
                );
            }
        }
    }
}
