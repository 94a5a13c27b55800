//! The credential shapes: one table of names, patterns and anchors that redaction, the
//! writers' refusal and the layer's content check all read.

/// A recognisable credential shape: its name (said when refusing), its pattern, whether a match
/// must also hold a digit (prose says "bearer authentication"; a token has digits), and its
/// anchors: words one of which every match holds on the line it starts on (ASCII case aside
/// when the pattern is case-insensitive). An assignment (`named`) holds one in the name before
/// its `=` or `:`, where its pattern puts it. What every match has beside the anchor that starts it lets
/// the one pass (`cue`) pass over prose: `word_start`, that the match opens at an ASCII word
/// boundary with the anchor (the pattern begins `(?-u:\b)` and then an anchor), and `then`, what
/// follows the anchor.
pub(super) struct Shape {
    pub(super) name: &'static str,
    pub(super) pattern: &'static str,
    pub(super) needs_digit: bool,
    pub(super) named: Named,
    pub(super) anchors: &'static [&'static str],
    pub(super) word_start: bool,
    pub(super) then: Then,
}

/// Whether a shape is an assignment, and where in the name before its `=` or `:` its anchor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Named {
    /// Not an assignment: its anchors are literal.
    No,
    /// The name ends with the anchor (ASCII case aside), then at most a quote and blanks: the
    /// pattern has `\b` after the anchor and nothing of the name.
    Ends,
    /// The anchor is anywhere in the name's last run of `[A-Z0-9_]`, as exactly: the pattern's
    /// name is that class on both sides of the anchor, then blanks.
    InUpperName,
}

/// What every match has right after its anchor, before any line end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Then {
    Anything,
    /// Blanks, then eight bytes or more of a token (`[ \t]+[A-Za-z0-9._~+/=\-]{8,}`).
    Token,
    /// `user:password@`, before any `/` or ASCII blank.
    Userinfo,
    /// At least this many lowercase hexadecimal digits (`[0-9a-f]{n}`): without it every
    /// `SKILL.md` a layer names would cue a Twilio key, and its pattern would be compiled at
    /// every server's start.
    LowerHex(usize),
}

/// A shape whose matches open with one of its anchors at an ASCII word boundary.
const fn shape(
    name: &'static str,
    anchors: &'static [&'static str],
    pattern: &'static str,
) -> Shape {
    Shape {
        name,
        pattern,
        needs_digit: false,
        named: Named::No,
        anchors,
        word_start: true,
        then: Then::Anything,
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

/// The one table of credential shapes: redaction, the writers' refusal and the content check
/// all read it, so they never disagree. Word boundaries are ASCII (`(?-u:\b)`).
pub(super) const SHAPES: &[Shape] = &[
    Shape {
        name: "a private key block",
        pattern: r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
        needs_digit: false,
        named: Named::No,
        anchors: &["PRIVATE KEY-----"],
        word_start: false,
        then: Then::Anything,
    },
    // `\x20` is the space, so this table is not itself a key block.
    Shape {
        name: "a PGP private key block",
        pattern: r"-----BEGIN PGP PRIVATE\x20KEY BLOCK-----(?s:.*?)(?:-----END PGP PRIVATE\x20KEY BLOCK-----|\z)",
        needs_digit: false,
        named: Named::No,
        anchors: &["PRIVATE KEY BLOCK-----"],
        word_start: false,
        then: Then::Anything,
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
    // The anchor is the match less its first byte.
    Shape {
        word_start: false,
        ..shape(
            "a Stripe secret key (sk_live_…)",
            &["k_live_", "k_test_"],
            r"(?-u:\b)[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
        )
    },
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
    shape(
        "a SendGrid API key (SG.…)",
        &["SG."],
        r"(?-u:\b)SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
    ),
    // Every PyPI token is a macaroon, whose encoding begins `Ag`.
    shape(
        "a PyPI token (pypi-…)",
        &["pypi-Ag"],
        r"(?-u:\b)pypi-Ag[A-Za-z0-9_\-]{50,}",
    ),
    shape(
        "a Hugging Face token (hf_…)",
        &["hf_"],
        r"(?-u:\b)hf_[A-Za-z0-9]{30,}(?-u:\b)",
    ),
    Shape {
        needs_digit: true,
        then: Then::LowerHex(32),
        ..shape(
            "a Twilio key or account id",
            &["SK", "AC"],
            r"(?-u:\b)(?:SK|AC)[0-9a-f]{32}(?-u:\b)",
        )
    },
    shape(
        "a Slack webhook URL",
        &["hooks.slack.com/services/"],
        r"(?-u:\b)hooks\.slack\.com/services/T[A-Za-z0-9]{6,}/B[A-Za-z0-9]{6,}/[A-Za-z0-9]{16,}",
    ),
    shape(
        "an Azure account key (AccountKey=…)",
        &["AccountKey=", "SharedAccessKey="],
        r"(?-u:\b)(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{20,}={0,2}",
    ),
    // The header's name is the anchor: "basic" alone is prose.
    shape(
        "a basic authorization header",
        &["authorization"],
        r#"(?i)(?-u:\b)authorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+[A-Za-z0-9+/]{8,}={0,2}"#,
    ),
    Shape {
        name: "a bearer token",
        pattern: r"(?i)(?-u:\b)bearer[ \t]+[A-Za-z0-9._~+/=\-]{8,}",
        needs_digit: true,
        named: Named::No,
        anchors: &["bearer"],
        word_start: true,
        then: Then::Token,
    },
    // The anchor follows the scheme.
    Shape {
        word_start: false,
        then: Then::Userinfo,
        ..shape(
            "a password in a URL",
            &["://"],
            r"(?i)(?-u:\b)[a-z][a-z0-9+.\-]*://[^/\s:@]*:[^/\s@]{4,}@",
        )
    },
    // `DB_PASSWORD=…`, `export GITHUB_TOKEN=…`, `MY_API_KEY: …` at the start of a line, as an
    // environment file or a YAML document has them; a reference (`$X`, `${{ … }}`, `<…>`) is
    // no value.
    Shape {
        name: "an environment secret (NAME_PASSWORD=…)",
        pattern: r#"(?m)^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)[A-Z0-9_]*[ \t]*[=:][ \t]*["']?[^\s"'$<{\[(*%#…][^\s"']{3,}"#,
        needs_digit: false,
        named: Named::InUpperName,
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
        word_start: false,
        then: Then::Anything,
    },
    // `password=…`, `aws_secret_access_key = …`, `"api_key": "…"` anywhere; the value must
    // hold a digit, so prose ("the password: required") is left alone.
    Shape {
        name: "a secret assignment (password=…)",
        pattern: r#"(?i)(?-u:\b)[a-z0-9_.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret|private[_\-]?key)(?-u:\b)["']?[ \t]*[=:][ \t]*["']?[^\s"'&,;$<{\[(*%…][^\s"'&,;]{3,}"#,
        needs_digit: true,
        named: Named::Ends,
        anchors: SECRET_NAMES,
        word_start: false,
        then: Then::Anything,
    },
];
