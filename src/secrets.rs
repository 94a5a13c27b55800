//! Credential shapes, and the one redaction every error message, log line and HTTP error body
//! passes through (SPEC §10). The first defence is not reading secrets at all; this is the
//! second line.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

/// A recognisable credential shape: its name (said when refusing) and its pattern.
struct Shape {
    name: &'static str,
    pattern: &'static str,
}

const SHAPES: &[Shape] = &[
    Shape {
        name: "a private key block",
        pattern: r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
    },
    Shape {
        name: "a GitHub token",
        pattern: r"\bgh[pousr]_[A-Za-z0-9]{16,}",
    },
    Shape {
        name: "a GitHub fine-grained token",
        pattern: r"\bgithub_pat_[A-Za-z0-9_]{16,}",
    },
    Shape {
        name: "an Anthropic API key",
        pattern: r"\bsk-ant-[A-Za-z0-9_\-]{8,}",
    },
    Shape {
        name: "an API secret key (sk-…)",
        pattern: r"\bsk-[A-Za-z0-9_\-]{16,}",
    },
    Shape {
        name: "an AWS access key id",
        pattern: r"\bAKIA[0-9A-Z]{16}\b",
    },
    Shape {
        name: "a Slack token",
        pattern: r"\bxox[abprs]-[A-Za-z0-9\-]{8,}",
    },
    Shape {
        name: "a bearer token",
        pattern: r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}",
    },
    Shape {
        name: "a password in a URL",
        pattern: r"(?i)\b[a-z][a-z0-9+.\-]*://[^/\s:@]*:[^/\s@]+@",
    },
    Shape {
        name: "a secret assignment (password=…)",
        pattern: r#"(?i)\b(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret)\b["']?\s*[=:]\s*["']?[^\s"'&,;]{4,}"#,
    },
];

/// What replaces a credential.
pub const REDACTED: &str = "[redacted]";

fn compiled() -> &'static [(&'static str, Regex)] {
    static COMPILED: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        SHAPES
            .iter()
            .filter_map(|s| Regex::new(s.pattern).ok().map(|re| (s.name, re)))
            .collect()
    })
}

/// The name of the first credential shape found in `text`, if any. Never the value.
pub fn find_shape(text: &str) -> Option<&'static str> {
    compiled()
        .iter()
        .find(|(_, re)| re.is_match(text))
        .map(|(name, _)| *name)
}

/// `text` with every credential shape replaced by `[redacted]`.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for (_, re) in compiled() {
        if re.is_match(&out) {
            out = Cow::Owned(re.replace_all(&out, REDACTED).into_owned());
        }
    }
    out
}

/// An origin URL without its credential: http(s) lose the whole userinfo, other schemes the
/// password only; the scp form (`git@host:o/r`) has none and is unchanged.
pub fn strip_url_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_string();
    };
    let web = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    if web {
        format!("{scheme}://{host}{path}")
    } else {
        let user = userinfo.split(':').next().unwrap_or_default();
        if user.is_empty() {
            format!("{scheme}://{host}{path}")
        } else {
            format!("{scheme}://{user}@{host}{path}")
        }
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
        ];
        for (given, expected) in table {
            assert_eq!(strip_url_credentials(given), expected, "{given}");
        }
    }

    #[test]
    fn every_shape_is_redacted_and_named() {
        let table = [
            ("ghp_abcdefghijklmnopqrstuvwxyz0123", "a GitHub token"),
            (
                "github_pat_11ABCDEFG0123456789_abcdef",
                "a GitHub fine-grained token",
            ),
            ("sk-ant-api03-abcdefghijkl", "an Anthropic API key"),
            ("sk-proj-abcdefghijklmnopqrstu", "an API secret key (sk-…)"),
            ("AKIAABCDEFGHIJKLMNOP", "an AWS access key id"),
            ("xoxb-123456789-abcdefgh", "a Slack token"),
            ("Authorization: Bearer abc.def.ghijkl", "a bearer token"),
            (
                "password=hunter2hunter2",
                "a secret assignment (password=…)",
            ),
            ("https://u:p4ss@host/x", "a password in a URL"),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
                "a private key block",
            ),
        ];
        for (secret, name) in table {
            let text = format!("before {secret} after");
            assert_eq!(find_shape(&text), Some(name), "{secret}");
            let redacted = redact(&text);
            assert!(!redacted.contains(secret), "{secret} survived: {redacted}");
            assert!(redacted.contains(REDACTED));
            assert!(redacted.starts_with("before "), "{redacted}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let text = "`limit`: 500 is above the maximum 200; see majordomus://rule/x@1";
        assert!(matches!(redact(text), Cow::Borrowed(_)));
        assert_eq!(find_shape(text), None);
    }
}
