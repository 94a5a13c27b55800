//! Credential shapes, and the one redaction every error message, log line and HTTP error body
//! passes through (SPEC §10). The first defence is not reading secrets at all; this is the
//! second line.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Regex, RegexSet};

/// A recognisable credential shape: its name (said when refusing), its pattern, whether a match
/// must also hold a digit (prose says "bearer authentication"; a token has digits), and its
/// anchors: words one of which every match holds (ASCII case aside). Text holding no anchor of
/// any shape is answered by one pass of a multi-word search, without running the patterns.
struct Shape {
    name: &'static str,
    pattern: &'static str,
    needs_digit: bool,
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

/// The one table (SPEC §10). Word boundaries are ASCII (`(?-u:\b)`), so the whole set runs in
/// one pass of a DFA over an object's bytes.
const SHAPES: &[Shape] = &[
    shape(
        "a private key block",
        &["PRIVATE KEY-----"],
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
    ),
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
    shape(
        "an environment secret (NAME_PASSWORD=…)",
        &[
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
        r#"(?m)^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)[A-Z0-9_]*[ \t]*[=:][ \t]*["']?[^\s"'$<{\[(*%#…][^\s"']{3,}"#,
    ),
    // `password=…`, `aws_secret_access_key = …`, `"api_key": "…"` anywhere; the value must
    // hold a digit, so prose ("the password: required") is left alone.
    Shape {
        name: "a secret assignment (password=…)",
        pattern: r#"(?i)(?-u:\b)[a-z0-9_.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret|private[_\-]?key)(?-u:\b)["']?[ \t]*[=:][ \t]*["']?[^\s"'&,;$<{\[(*%…][^\s"'&,;]{3,}"#,
        needs_digit: true,
        anchors: SECRET_NAMES,
    },
];

/// What replaces a credential.
pub const REDACTED: &str = "[redacted]";

struct Compiled {
    shapes: Vec<(&'static Shape, Regex)>,
    /// Every shape's anchors at once, for the common answer: nothing here.
    anchors: Option<aho_corasick::AhoCorasick>,
    /// Every pattern at once, for text that holds an anchor.
    any: Option<RegexSet>,
}

impl Compiled {
    /// Whether `text` may hold a credential: it holds some shape's anchor.
    fn may_hold(&self, text: &str) -> bool {
        self.anchors.as_ref().is_none_or(|a| a.is_match(text))
    }
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| Compiled {
        shapes: SHAPES
            .iter()
            .filter_map(|s| Regex::new(s.pattern).ok().map(|re| (s, re)))
            .collect(),
        anchors: aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(SHAPES.iter().flat_map(|s| s.anchors.iter()))
            .ok(),
        any: RegexSet::new(SHAPES.iter().map(|s| s.pattern)).ok(),
    })
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

/// The first credential shape in `text` (by position), if any.
pub fn find(text: &str) -> Option<Found> {
    let compiled = compiled();
    if !compiled.may_hold(text) {
        return None;
    }
    let candidates: Vec<usize> = match &compiled.any {
        Some(set) => {
            let hits = set.matches(text);
            if !hits.matched_any() {
                return None;
            }
            hits.into_iter().collect()
        }
        None => (0..compiled.shapes.len()).collect(),
    };
    candidates
        .into_iter()
        .filter_map(|i| compiled.shapes.get(i).map(|c| (i, c)))
        .filter_map(|(i, (shape, re))| {
            re.find_iter(text)
                .find(|m| holds(shape, m.as_str()))
                .map(|m| (m.start(), i, shape.name))
        })
        // The earliest match; at one place, the shape first in the table (the narrower one).
        .min()
        .map(|(at, _, shape)| Found {
            shape,
            line: 1 + text.as_bytes()[..at]
                .iter()
                .filter(|&&b| b == b'\n')
                .count(),
        })
}

/// The name of the first credential shape found in `text`, if any. Never the value.
pub fn find_shape(text: &str) -> Option<&'static str> {
    find(text).map(|f| f.shape)
}

/// `text` with every credential shape replaced by `[redacted]`.
pub fn redact(text: &str) -> Cow<'_, str> {
    let compiled = compiled();
    if !compiled.may_hold(text) || compiled.any.as_ref().is_some_and(|set| !set.is_match(text)) {
        return Cow::Borrowed(text);
    }
    let mut out = Cow::Borrowed(text);
    for (shape, re) in &compiled.shapes {
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
            let shape = SHAPES.iter().find(|s| s.name == *name).expect("a shape");
            let lowered = secret.to_ascii_lowercase();
            assert!(
                shape
                    .anchors
                    .iter()
                    .any(|a| lowered.contains(&a.to_ascii_lowercase())),
                "{secret} holds none of its shape's anchors"
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
    fn every_pattern_compiles_alone_and_in_the_set() {
        let compiled = compiled();
        assert_eq!(compiled.shapes.len(), SHAPES.len());
        assert!(compiled.any.is_some());
        assert!(compiled.anchors.is_some());
    }
}
