//! The credential table's cases, both ways, and the one pass against matching every pattern.

use std::sync::OnceLock;

use regex::Regex;

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
        // The query, the fragment, a user that is a token.
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
    // The shapes added since the table's first version are spelled in pieces, so this file
    // holds none of them whole.
    (
        "a PGP private key block",
        concat!("-----BEGIN PGP PRIVATE", " KEY BLOCK-----\nlQOYBGX\n=ab12\n-----END PGP PRIVATE KEY BLOCK-----"),
        "-----BEGIN PGP PUBLIC KEY BLOCK-----",
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
        "a SendGrid API key (SG.…)",
        concat!("SG", ".aB3dE5gH7jK9mN1pQ3sT5v.", "wX7yZ9aB1cD3eF5gH7iJ9kL1mN3oP5qR7sT9uV1wX3y"),
        "SG.short.key and SSG.x",
    ),
    (
        "a PyPI token (pypi-…)",
        concat!("pypi", "-AgEIcHlwaS5vcmcCJDk2ZDFjYTQ0LTg2ZmItNDVlNy1hMzBhLTcyZGE0ZjBkNmVmMQ"),
        "pip install pypi-simple and pypi-AgShort",
    ),
    (
        "a Hugging Face token (hf_…)",
        concat!("hf", "_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH"),
        "hf_hub_download and hf_token_from_the_environment_variable",
    ),
    (
        "a Twilio key or account id",
        concat!("S", "K0123456789abcdef0123456789abcdef"),
        "ACME and SKU 1234 and ACabcdefabcdefabcdefabcdefabcdefab",
    ),
    (
        "a Twilio key or account id",
        concat!("A", "C9f8e7d6c5b4a39f8e7d6c5b4a39f8e7d"),
        "an AC adapter",
    ),
    (
        "a Slack webhook URL",
        concat!("https://hooks.slack", ".com/services/T01ABCDEF/B02GHIJKL/", "aBcDeFgHiJkLmNoPqRsTuVwX"),
        "post to https://hooks.slack.com/services/ (your webhook)",
    ),
    (
        "an Azure account key (AccountKey=…)",
        concat!("DefaultEndpointsProtocol=https;AccountName=x;Account", "Key=Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG8="),
        "AccountKey=<your storage key>",
    ),
    (
        "a basic authorization header",
        concat!("curl -H \"Authorization", ": Basic dXNlcjpwYXNzd29yZA==\" https://host/"),
        "the Authorization header uses Basic authentication",
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
    // Where in a name an assignment's anchor is: at its end, or in its last run of `[A-Z0-9_]`.
    (
        "a secret assignment (password=…)",
        "client_secret: 9f8e7d6c5b",
        "password_file=/etc/app9",
    ),
    (
        "an environment secret (NAME_PASSWORD=…)",
        "DB_PASSWORD_FILE=/run/db1",
        "db.DB_PASSWORD=supersecret",
    ),
    // What the one pass reads beside an anchor: a word start, a token, `user:password@`.
    (
        "an API secret key (sk-…)",
        "(sk-abcdefghijklmnopqrstu)",
        "a risk-free-and-well-tested-migration",
    ),
    (
        "a bearer token",
        "bearer\tabc123defg",
        "the bearer-of-bad-news 12345678",
    ),
    (
        "a password in a URL",
        "postgres://app:s3cretpw@db/x",
        "see https://example.com/a:b@c and ftp://host/x:y@z",
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

/// Prose of the kind a layer is made of costs no pattern: the one pass cues none of it.
#[test]
fn ordinary_prose_is_cued_for_nothing() {
    let prose =
        "---\nid: doc-1\ntitle: \"Tokens\"\ndescription: The key cache and the password policy\n\
        tags: [a, b]\n---\n# Tokens\n\nThe bearer of a lease keeps its token; a risk-free change \
        (its SKILL.md says how, its ACCESS log says when) \
        to the disk-backed cache. See https://example.com/docs/a:b for the policy. The secret is \
        patience.\n";
    assert_eq!(compiled().cued(prose.as_bytes()), ShapeSet::NONE);
}

/// Anchors that start at one place are all found there, each by its own case rule and in its
/// own searcher: `sk-ant-` holds `sk-`; a Twilio `SK` is found as written, and not in a
/// lowercase `sk`, in prose, or before anything but the hexadecimal digits of an id
/// (`ACCESS_KEY`, `SKILL.md`).
#[test]
fn every_anchor_at_one_place_is_found_in_its_own_case() {
    let shape = |name: &str| SHAPES.iter().position(|s| s.name == name).expect("a shape");
    let cued = compiled().cued(b"x sk-ant-abcdefghijklmnopqrst y");
    assert!(cued.contains(shape("an Anthropic API key")));
    assert!(cued.contains(shape("an API secret key (sk-\u{2026})")));
    let twilio = shape("a Twilio key or account id");
    assert!(compiled()
        .cued(b"SK0123456789abcdef0123456789abcdef")
        .contains(twilio));
    assert!(!compiled()
        .cued(b"sk0123456789abcdef0123456789abcdef")
        .contains(twilio));
    assert!(!compiled().cued(b"ask each back").contains(twilio));
    let named = compiled().cued(b"ACCESS_KEY=0123456789abcdef0123456789abcdef");
    assert!(!named.contains(twilio));
    assert!(named.contains(shape("an environment secret (NAME_PASSWORD=\u{2026})")));
    assert!(!compiled().cued(b"see SKILL.md").contains(twilio));
}

#[test]
fn every_pattern_compiles() {
    let compiled = compiled();
    for (i, shape) in SHAPES.iter().enumerate() {
        assert!(compiled.pattern(i).is_some(), "{}", shape.name);
    }
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
                "risk",
                "host/",
                "a:b",
                "(",
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
