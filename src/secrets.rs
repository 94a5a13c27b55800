//! Credential shapes, and the one redaction every error message, log line and HTTP error body
//! passes through (SPEC §10). The first defence is not reading secrets at all; this is the
//! second line.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

/// A recognisable credential shape: its name (said when refusing), its pattern, whether a match
/// must also hold a digit (prose says "bearer authentication"; a token has digits), and its
/// anchors: words one of which every match holds on the line it starts on (ASCII case aside
/// when the pattern is case-insensitive). An assignment (`named`) holds one in the name before
/// its `=` or `:`, ASCII case aside.
struct Shape {
    name: &'static str,
    pattern: &'static str,
    needs_digit: bool,
    named: bool,
    anchors: &'static [&'static str],
}

const fn shape(
    name: &'static str,
    anchors: &'static [&'static str],
    pattern: &'static str,
) -> Shape {
    Shape {
        name,
        pattern,
        needs_digit: false,
        named: false,
        anchors,
    }
}

/// The names an assignment's key ends in, as anchors.
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "api-key",
    "apikey",
    "access_key",
    "access-key",
    "accesskey",
    "private_key",
    "private-key",
    "privatekey",
    "credential",
];

/// The one table (SPEC §10). Word boundaries are ASCII (`(?-u:\b)`).
const SHAPES: &[Shape] = &[
    Shape {
        name: "a private key block",
        pattern: r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
        needs_digit: false,
        named: false,
        anchors: &["PRIVATE KEY-----"],
    },
    shape(
        "a GitHub token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{16,}",
    ),
    shape(
        "a GitHub fine-grained token",
        &["github_pat_"],
        r"(?-u:\b)github_pat_[A-Za-z0-9_]{16,}",
    ),
    shape(
        "an Anthropic API key",
        &["sk-ant-"],
        r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{16,}",
    ),
    shape(
        "an API secret key (sk-…)",
        &["sk-"],
        r"(?-u:\b)sk-[A-Za-z0-9_\-]{16,}",
    ),
    shape(
        "a Stripe secret key (sk_live_…)",
        &["k_live_", "k_test_"],
        r"(?-u:\b)[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    shape(
        "a GitLab token (glpat-…)",
        &["glpat-"],
        r"(?-u:\b)glpat-[A-Za-z0-9_\-]{20,}",
    ),
    shape(
        "a Google API key (AIza…)",
        &["AIza"],
        r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}",
    ),
    shape(
        "an npm token (npm_…)",
        &["npm_"],
        r"(?-u:\b)npm_[A-Za-z0-9]{36}",
    ),
    shape(
        "an AWS access key id",
        &["AKIA", "ASIA"],
        r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)",
    ),
    shape(
        "a Slack token",
        &["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"],
        r"(?-u:\b)xox[abprs]-[A-Za-z0-9\-]{10,}",
    ),
    shape(
        "a JSON web token",
        &["eyJ"],
        r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    Shape {
        name: "a bearer token",
        pattern: r"(?i)(?-u:\b)bearer[ \t]+[A-Za-z0-9._~+/=\-]{8,}",
        needs_digit: true,
        named: false,
        anchors: &["bearer"],
    },
    shape(
        "a password in a URL",
        &["://"],
        r"(?i)(?-u:\b)[a-z][a-z0-9+.\-]*://[^/\s:@]*:[^/\s@]{4,}@",
    ),
    // `DB_PASSWORD=…`, `export GITHUB_TOKEN=…`, `MY_API_KEY: …` at the start of a line, as an
    // environment file or a YAML document has them; a reference (`$X`, `${{ … }}`, `<…>`) is
    // no value.
    Shape {
        name: "an environment secret (NAME_PASSWORD=…)",
        pattern: r#"(?m)^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)[A-Z0-9_]*[ \t]*[=:][ \t]*["']?[^\s"'$<{\[(*%#…][^\s"']{3,}"#,
        needs_digit: false,
        named: true,
        anchors: &[
            "PASSWORD",
            "PASSWD",
            "SECRET",
            "TOKEN",
            "API_KEY",
            "APIKEY",
            "ACCESS_KEY",
            "PRIVATE_KEY",
            "CREDENTIAL",
        ],
    },
    // `password=…`, `aws_secret_access_key = …`, `"api_key": "…"` anywhere; the value must
    // hold a digit, so prose ("the password: required") is left alone.
    Shape {
        name: "a secret assignment (password=…)",
        pattern: r#"(?i)(?-u:\b)[a-z0-9_.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret|private[_\-]?key)(?-u:\b)["']?[ \t]*[=:][ \t]*["']?[^\s"'&,;$<{\[(*%…][^\s"'&,;]{3,}"#,
        needs_digit: true,
        named: true,
        anchors: SECRET_NAMES,
    },
];

/// What replaces a credential.
pub const REDACTED: &str = "[redacted]";

/// The table compiled for the one pass over a text: for each byte, the anchors a match may be
/// found by there; the anchors of the shapes that are assignments, for the name before each `=`
/// and `:`; and each shape's pattern, compiled the first time a line is cued for it (most text
/// needs few of the patterns or none, and compiling all of them would cost every process
/// milliseconds at start).
struct Compiled {
    by_byte: Vec<Vec<Cue>>,
    /// Every byte something is cued by, `=` and `:` among them, three to a search.
    cue_bytes: Vec<[u8; 3]>,
    names: Option<AhoCorasick>,
    /// The shape each of `names` belongs to, by its pattern id.
    name_shape: Vec<usize>,
    patterns: Vec<OnceLock<Option<Regex>>>,
}

/// An anchor found by one of its bytes: the byte's place in the anchor, and whether the anchor
/// is compared ASCII case aside (its shape's pattern is case-insensitive).
struct Cue {
    shape: usize,
    anchor: &'static [u8],
    at: usize,
    any_case: bool,
}

/// The byte an anchor is looked for by: its first that is not a lowercase letter (rarer in
/// prose), else its first.
fn cue_byte(anchor: &[u8]) -> usize {
    anchor
        .iter()
        .position(|b| !b.is_ascii_lowercase())
        .unwrap_or(0)
}

/// Shapes of the table, by their place in it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct ShapeSet(u32);

const _: () = assert!(SHAPES.len() <= 32, "a `ShapeSet` holds 32 shapes");

impl ShapeSet {
    const NONE: ShapeSet = ShapeSet(0);

    fn insert(&mut self, shape: usize) {
        self.0 |= 1 << shape;
    }

    fn union(self, other: ShapeSet) -> ShapeSet {
        ShapeSet(self.0 | other.0)
    }

    /// The shapes in table order.
    fn iter(self) -> impl Iterator<Item = usize> {
        (0..SHAPES.len()).filter(move |i| self.0 & (1 << i) != 0)
    }
}

/// The bytes of an assignment's name (`[a-z0-9_.\-]` ASCII case aside).
fn in_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

impl Compiled {
    fn pattern(&self, shape: usize) -> Option<&Regex> {
        self.patterns
            .get(shape)?
            .get_or_init(|| Regex::new(SHAPES[shape].pattern).ok())
            .as_ref()
    }

    /// The shapes `text` is cued for: an anchor anywhere, or for an assignment an anchor in the
    /// name before a `=` or `:` (and the blanks and the quote a pattern allows between them).
    /// The cue bytes are found three at a time by `memchr3`; a shape `text` is not cued for has
    /// no match in it.
    fn cued(&self, text: &[u8]) -> ShapeSet {
        let mut shapes = ShapeSet::NONE;
        for &[a, b, c] in &self.cue_bytes {
            for i in memchr::memchr3_iter(a, b, c, text) {
                shapes = shapes.union(self.cued_at(text, i));
            }
        }
        shapes
    }

    /// The shapes cued by the byte at `i` of `text`.
    fn cued_at(&self, text: &[u8], i: usize) -> ShapeSet {
        let b = text[i];
        let mut shapes = ShapeSet::NONE;
        if b == b'=' || b == b':' {
            shapes = self.named_before(&text[..i]);
        }
        for cue in &self.by_byte[usize::from(b)] {
            let Some(start) = i.checked_sub(cue.at) else {
                continue;
            };
            let Some(seen) = text.get(start..start + cue.anchor.len()) else {
                continue;
            };
            if seen == cue.anchor || (cue.any_case && seen.eq_ignore_ascii_case(cue.anchor)) {
                shapes.insert(cue.shape);
            }
        }
        shapes
    }

    /// The assignment shapes whose anchors the name ending `before` holds.
    fn named_before(&self, before: &[u8]) -> ShapeSet {
        let mut end = before.len();
        while end > 0 && matches!(before[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if end > 0 && matches!(before[end - 1], b'"' | b'\'') {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && in_name(before[start - 1]) {
            start -= 1;
        }
        let mut shapes = ShapeSet::NONE;
        let Some(names) = &self.names else {
            // Without the names, every assignment is looked at.
            for (i, shape) in SHAPES.iter().enumerate() {
                if shape.named {
                    shapes.insert(i);
                }
            }
            return shapes;
        };
        for hit in names.find_overlapping_iter(&before[start..end]) {
            if let Some(&shape) = self.name_shape.get(hit.pattern().as_usize()) {
                shapes.insert(shape);
            }
        }
        shapes
    }

    /// The first credential on `line`, by its offset in it: at one place, the shape first in the
    /// table (the narrower one).
    fn first_on_line(&self, line: &str) -> Option<(usize, usize)> {
        self.cued(line.as_bytes())
            .iter()
            .filter_map(|i| {
                let shape = &SHAPES[i];
                self.pattern(i)?
                    .find_iter(line)
                    .find(|m| holds(shape, m.as_str()))
                    .map(|m| (m.start(), i))
            })
            .min()
    }
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let mut by_byte: Vec<Vec<Cue>> = (0..256).map(|_| Vec::new()).collect();
        let mut names = Vec::new();
        let mut name_shape = Vec::new();
        for (i, shape) in SHAPES.iter().enumerate() {
            for anchor in shape.anchors {
                if shape.named {
                    names.push(*anchor);
                    name_shape.push(i);
                    continue;
                }
                let anchor = anchor.as_bytes();
                let at = cue_byte(anchor);
                let any_case = shape.pattern.starts_with("(?i)");
                let byte = anchor[at];
                let cases = if any_case {
                    vec![byte.to_ascii_lowercase(), byte.to_ascii_uppercase()]
                } else {
                    vec![byte]
                };
                for b in dedup(cases) {
                    by_byte[usize::from(b)].push(Cue {
                        shape: i,
                        anchor,
                        at,
                        any_case,
                    });
                }
            }
        }
        let mut bytes: Vec<u8> = (0..=u8::MAX)
            .filter(|&b| !by_byte[usize::from(b)].is_empty() || b == b'=' || b == b':')
            .collect();
        // A search for fewer than three bytes repeats its last.
        while let (Some(&last), false) = (bytes.last(), bytes.len() % 3 == 0) {
            bytes.push(last);
        }
        let cue_bytes = bytes.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
        Compiled {
            by_byte,
            cue_bytes,
            names: AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(names)
                .ok(),
            name_shape,
            patterns: SHAPES.iter().map(|_| OnceLock::new()).collect(),
        }
    })
}

fn dedup(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.dedup();
    bytes
}

/// Whether a match of `shape` is a credential rather than prose about one.
fn holds(shape: &Shape, matched: &str) -> bool {
    !shape.needs_digit || matched.bytes().any(|b| b.is_ascii_digit())
}

/// Where a credential shape was found: its name and the 1-based line. Never the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    pub shape: &'static str,
    pub line: usize,
}

/// The first credential shape in `text` (by position), if any. A text cued for nothing (most
/// are) is answered by the one pass; otherwise each line is matched alone, and only against
/// the patterns it is cued for. That finds what a search of the whole text finds:
/// no pattern crosses a line end except the private key block's, which also matches a block
/// cut short by the end of the text; a line's end reads as the text's end does to `\b` and
/// `(?m)^`; and every earlier line was looked at first.
pub fn find(text: &str) -> Option<Found> {
    let compiled = compiled();
    if compiled.cued(text.as_bytes()) == ShapeSet::NONE {
        return None;
    }
    let mut start = 0;
    for (number, end) in memchr::memchr_iter(b'\n', text.as_bytes())
        .chain(std::iter::once(text.len()))
        .enumerate()
    {
        if let Some((_, shape)) = compiled.first_on_line(&text[start..end]) {
            return Some(Found {
                shape: SHAPES[shape].name,
                line: number + 1,
            });
        }
        start = end + 1;
    }
    None
}

/// The name of the first credential shape found in `text`, if any. Never the value.
pub fn find_shape(text: &str) -> Option<&'static str> {
    find(text).map(|f| f.shape)
}

/// `text` with every credential shape replaced by `[redacted]`. A shape `text` is not cued for
/// has no match in it, and `[redacted]` cues none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let compiled = compiled();
    let mut out = Cow::Borrowed(text);
    for i in compiled.cued(text.as_bytes()).iter() {
        let shape = &SHAPES[i];
        let Some(re) = compiled.pattern(i) else {
            continue;
        };
        if re.find_iter(&out).any(|m| holds(shape, m.as_str())) {
            let replaced = re.replace_all(&out, |caps: &regex::Captures<'_>| {
                let matched = &caps[0];
                if holds(shape, matched) {
                    REDACTED.to_string()
                } else {
                    matched.to_string()
                }
            });
            out = Cow::Owned(replaced.into_owned());
        }
    }
    out
}

/// An origin URL without its credential: http(s) lose the whole userinfo, other schemes the
/// password only, and a user part that is itself a token goes too; the query and the fragment,
/// where a token can also ride, are dropped. The scp form (`git@host:o/r`) is unchanged unless
/// its user is a token.
pub fn strip_url_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return match url.split_once('@') {
            Some((user, host)) if !user.contains('/') && find_shape(user).is_some() => {
                host.to_string()
            }
            _ => url.to_string(),
        };
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((userinfo, host)) => (Some(userinfo), host),
        None => (None, authority),
    };
    let located = format!("{host}{path}");
    let located = match located.find(['?', '#']) {
        Some(at) => &located[..at],
        None => located.as_str(),
    };
    let web = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    let user = userinfo
        .map(|u| u.split(':').next().unwrap_or_default())
        .filter(|user| !web && !user.is_empty() && find_shape(user).is_none());
    match user {
        Some(user) => format!("{scheme}://{user}@{located}"),
        None => format!("{scheme}://{located}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_urls_lose_their_credentials() {
        let table = [
            (
                "https://x-access-token:T0KEN@github.com/o/r.git",
                "https://github.com/o/r.git",
            ),
            ("https://user@example.com/r", "https://example.com/r"),
            ("http://a:b@h:8080/p", "http://h:8080/p"),
            ("ssh://git:pw@host/p", "ssh://git@host/p"),
            ("ssh://git@host/p", "ssh://git@host/p"),
            ("git@github.com:o/r.git", "git@github.com:o/r.git"),
            ("https://github.com/o/r", "https://github.com/o/r"),
            ("/srv/repos/r.git", "/srv/repos/r.git"),
            // See: issue 13, point 3 — the query, the fragment, a user that is a token.
            (
                "https://host/o/r.git?private_token=glpat-abcdefghij0123456789",
                "https://host/o/r.git",
            ),
            ("https://host/r#access_token=abc123def", "https://host/r"),
            ("https://host?token=abc123", "https://host"),
            (
                "ssh://ghp_abcdefghijklmnopqrstuvwxyz0123@host/r",
                "ssh://host/r",
            ),
            (
                "ssh://ghp_abcdefghijklmnopqrstuvwxyz0123:x-oauth@host/r",
                "ssh://host/r",
            ),
            (
                "ghp_abcdefghijklmnopqrstuvwxyz0123@github.com:o/r.git",
                "github.com:o/r.git",
            ),
        ];
        for (given, expected) in table {
            assert_eq!(strip_url_credentials(given), expected, "{given}");
        }
    }

    /// Every shape of the table, each with a credential it must catch and a near miss (prose
    /// about the shape, a placeholder, a value too short) it must leave alone.
    const CAUGHT_AND_MISSED: &[(&str, &str, &str)] = &[
        (
            "a private key block",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
            "-----BEGIN PUBLIC KEY-----",
        ),
        (
            "a GitHub token",
            "ghp_abcdefghijklmnopqrstuvwxyz0123",
            "a `ghp_…` token",
        ),
        (
            "a GitHub fine-grained token",
            "github_pat_11ABCDEFG0123456789_abcdef",
            "github_pat_short",
        ),
        (
            "an Anthropic API key",
            "sk-ant-api03-abcdefghijkl",
            "sk-ant-…",
        ),
        (
            "an API secret key (sk-…)",
            "sk-proj-abcdefghijklmnopqrstu",
            "the disk-partition-table-entries",
        ),
        (
            "a Stripe secret key (sk_live_…)",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "a `sk_live_` key",
        ),
        (
            "a GitLab token (glpat-…)",
            "glpat-xxxxxxxxxxxxxxxxxxxx1",
            "glpat-short",
        ),
        (
            "a Google API key (AIza…)",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
            "AIzaShortKey",
        ),
        (
            "an npm token (npm_…)",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "npm_config_cache and npm_package_version",
        ),
        (
            "an AWS access key id",
            "ASIAABCDEFGHIJKLMNOP",
            "ASIAN and AKIA1234 and ASIAABCDEFGHIJKLMNOPQRS",
        ),
        (
            "a Slack token",
            "xoxb-123456789-abcdefgh",
            "xoxo-hugs",
        ),
        (
            "a JSON web token",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "eyJhbGciOiJIUzI1NiJ9 is a header only",
        ),
        (
            "a bearer token",
            "Authorization: Bearer abc.def.ghijkl9",
            "Bearer authentication sends a token",
        ),
        (
            "a password in a URL",
            "https://u:p4ss@host/x",
            "`https://x-access-token:T@host/p` and `ssh://git:pw@host/p`",
        ),
        (
            "an environment secret (NAME_PASSWORD=…)",
            "DB_PASSWORD=supersecret",
            "DB_PASSWORD=${DB_PASSWORD}",
        ),
        (
            "an environment secret (NAME_PASSWORD=…)",
            "export GITHUB_TOKEN=abcdefghijklmnop",
            "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        ),
        (
            "an environment secret (NAME_PASSWORD=…)",
            "MY_API_KEY: hunter-two-words",
            "MY_API_KEY: <your key here>",
        ),
        (
            "a secret assignment (password=…)",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = (from your vault)",
        ),
        (
            "a secret assignment (password=…)",
            "password=hunter2hunter2",
            "the password: required, and never logged",
        ),
    ];

    #[test]
    fn every_shape_is_caught_and_its_near_miss_is_not() {
        let named: std::collections::BTreeSet<&str> =
            CAUGHT_AND_MISSED.iter().map(|(name, _, _)| *name).collect();
        assert_eq!(named.len(), SHAPES.len(), "a case for every shape");
        for (name, secret, near_miss) in CAUGHT_AND_MISSED {
            let cued = compiled().cued(secret.as_bytes());
            let at = SHAPES
                .iter()
                .position(|s| s.name == *name)
                .expect("a place");
            assert!(
                cued.iter().any(|i| i == at),
                "{secret} is not cued for {name}"
            );
            let text = format!("before\n{secret} after");
            assert_eq!(
                find(&text),
                Some(Found {
                    shape: name,
                    line: 2
                }),
                "{secret}"
            );
            let redacted = redact(&text);
            assert!(!redacted.contains(secret), "{secret} survived: {redacted}");
            assert!(redacted.contains(REDACTED));
            assert!(redacted.starts_with("before\n"), "{redacted}");
            assert_eq!(find_shape(near_miss), None, "{near_miss} was caught");
            assert!(
                matches!(redact(near_miss), Cow::Borrowed(_)),
                "{near_miss} was redacted"
            );
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let text = "`limit`: 500 is above the maximum 200; see majordomus://rule/x@1";
        assert!(matches!(redact(text), Cow::Borrowed(_)));
        assert_eq!(find_shape(text), None);
    }

    #[test]
    fn every_pattern_compiles_and_the_anchors_build() {
        let compiled = compiled();
        for (i, shape) in SHAPES.iter().enumerate() {
            assert!(compiled.pattern(i).is_some(), "{}", shape.name);
        }
        assert!(compiled.names.is_some());
    }

    /// Every pattern, compiled once for the reference searches.
    fn reference_patterns() -> &'static [Regex] {
        static PATTERNS: OnceLock<Vec<Regex>> = OnceLock::new();
        PATTERNS.get_or_init(|| {
            SHAPES
                .iter()
                .map(|s| Regex::new(s.pattern).expect("a pattern"))
                .collect()
        })
    }

    /// The search the line-by-line one stands for: every pattern over the whole text.
    fn whole_text_find(text: &str) -> Option<Found> {
        SHAPES
            .iter()
            .zip(reference_patterns())
            .enumerate()
            .filter_map(|(i, (shape, re))| {
                re.find_iter(text)
                    .find(|m| holds(shape, m.as_str()))
                    .map(|m| (m.start(), i))
            })
            .min()
            .map(|(at, i)| Found {
                shape: SHAPES[i].name,
                line: 1 + text[..at].matches('\n').count(),
            })
    }

    fn whole_text_redact(text: &str) -> String {
        let mut out = text.to_string();
        for (shape, re) in SHAPES.iter().zip(reference_patterns()) {
            out = re
                .replace_all(&out, |caps: &regex::Captures<'_>| {
                    if holds(shape, &caps[0]) {
                        REDACTED.to_string()
                    } else {
                        caps[0].to_string()
                    }
                })
                .into_owned();
        }
        out
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Pieces of text: every credential and near miss of the table, anchors alone, words,
        /// separators and line ends, so generated texts put shapes beside, inside and across
        /// each other's lines.
        fn piece() -> impl Strategy<Value = String> {
            let mut pieces: Vec<String> = CAUGHT_AND_MISSED
                .iter()
                .flat_map(|(_, secret, near_miss)| [secret.to_string(), near_miss.to_string()])
                .collect();
            pieces.extend(
                SHAPES
                    .iter()
                    .flat_map(|s| s.anchors.iter().map(|a| a.to_string())),
            );
            pieces.extend(
                [
                    "\n",
                    "\r\n",
                    " ",
                    "\t",
                    "=",
                    ": ",
                    "\"",
                    "word",
                    "Token",
                    "x9",
                    "…",
                    "@",
                    "/",
                    "-----END RSA PRIVATE KEY-----",
                    "-----BEGIN RSA PRIVATE KEY-----\n",
                    "export ",
                    "abc123",
                    "a1b2c3d4e5f6g7h8i9j0k1l2",
                    "é",
                    "'",
                    " = ",
                    "my_",
                    "Bearer ",
                    "BEARER\t",
                    "https://",
                    "u:p4ss1@",
                    "_",
                    "-",
                    "SECRET_",
                    "Api-Key",
                ]
                .map(String::from),
            );
            proptest::sample::select(pieces)
        }

        /// An assignment put together from its parts: a name holding an anchor (or not), a
        /// quote, blanks, a separator and a value, each part sometimes missing or changed.
        fn assignment() -> impl Strategy<Value = String> {
            let part = |of: &'static [&'static str]| proptest::sample::select(of.to_vec());
            (
                part(&["", "export ", " ", "db.", "MY_", "x-"]),
                part(&[
                    "password",
                    "TOKEN",
                    "Api_Key",
                    "secret",
                    "name",
                    "PRIVATE_KEY",
                    "pwd",
                ]),
                part(&["", "_FILE", "s", "\"", "'", "."]),
                part(&["", " ", "\t", "  "]),
                part(&["=", ":", "", "=>"]),
                part(&["", " ", "\""]),
                part(&["hunter22x", "abcdefgh", "${X}", "a1", "<key>", "sk9-abcdef"]),
            )
                .prop_map(|(a, b, c, d, e, f, g)| [a, b, c, d, e, f, g].concat())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(1000))]

            #[test]
            fn a_line_by_line_search_finds_what_a_search_of_the_whole_text_finds(
                pieces in proptest::collection::vec(prop_oneof![3 => piece(), 1 => assignment()], 0..24)
            ) {
                let text = pieces.concat();
                prop_assert_eq!(find(&text), whole_text_find(&text), "{:?}", text);
                prop_assert_eq!(redact(&text).into_owned(), whole_text_redact(&text), "{:?}", text);
            }
        }
    }
}
