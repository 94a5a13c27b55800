//! Properties that hold for every input, checked with proptest: reading a URI answers that URI
//! or refuses it, an origin URL never keeps its password, and binding a query
//! string to any capability's input never fails but as `invalid_input`. The
//! front-matter splitter's properties are unit tests in `src/layer/read/file.rs`, where it lives.

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::support::this_checkout;
use majordomus::context::{Context, Options};
use majordomus::registry;
use majordomus::resolve::{self, Resolution};
use majordomus::secrets::strip_url_credentials;

/// One context over this checkout's layer, shared by every case (building an index per case
/// would test nothing more, slower).
fn context() -> &'static Context {
    static CONTEXT: OnceLock<Context> = OnceLock::new();
    CONTEXT.get_or_init(|| {
        Context::open(Options {
            start: this_checkout().to_path_buf(),
            ..Options::default()
        })
    })
}

/// Every URI the layer and the registry project.
fn projected_uris() -> &'static [String] {
    static URIS: OnceLock<Vec<String>> = OnceLock::new();
    URIS.get_or_init(|| {
        let listed = resolve::list(context()).expect("this checkout's layer lists");
        let uris: Vec<String> = listed
            .iter()
            .filter_map(|r| r["uri"].as_str().map(str::to_string))
            .collect();
        assert!(uris.len() >= 10, "only {} URIs", uris.len());
        uris
    })
}

/// Strings that look like URIs: projected ones with one edit, the scheme with any kind and
/// identity, and anything at all.
fn uri_like() -> impl Strategy<Value = String> {
    let projected = prop::sample::select(projected_uris().to_vec());
    let edited = (
        projected.clone(),
        any::<prop::sample::Index>(),
        any::<char>(),
        0..5u8,
    )
        .prop_map(|(uri, at, c, edit)| {
            let chars: Vec<char> = uri.chars().collect();
            let i = at.index(chars.len() + 1);
            let mut out: Vec<char> = chars.clone();
            match edit {
                0 => out.insert(i, c),
                1 if i < chars.len() => {
                    out.remove(i);
                }
                2 => return uri.to_uppercase(),
                3 => return format!("{uri}/../{}", c),
                _ => return uri.replacen('/', "%2F", 3),
            }
            out.into_iter().collect()
        });
    let kinds = prop::sample::select(vec![
        "rule",
        "prompt",
        "skill",
        "adr",
        "knowledge",
        "issue",
        "document",
        "repository",
        "mcp",
        "",
        "..",
        "RULE",
    ]);
    let schemed = (kinds, any::<String>())
        .prop_map(|(kind, identity)| format!("majordomus://{kind}/{identity}"));
    prop_oneof![
        2 => projected,
        3 => edited,
        3 => schemed,
        2 => any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// One URI, one answer: `resolve` names the URI it was given, or says nothing projects it.
    #[test]
    fn resolving_any_string_answers_that_uri_or_not_found(uri in uri_like()) {
        match resolve::resolve(context(), &uri) {
            Ok(resolution @ Resolution::Declarative { .. }) => {
                let object = resolution.object().expect("a declarative resolution has its object");
                prop_assert_eq!(&object.uri, &uri);
            }
            Ok(Resolution::Builtin { descriptor, .. }) => {
                prop_assert_eq!(descriptor.resource.map(|r| r.uri), Some(uri.as_str()));
            }
            Ok(resolution @ Resolution::SkillFile { .. }) => {
                let (_, file) = resolution.skill_file().expect("a skill file's resolution has its file");
                prop_assert_eq!(&file.uri, &uri);
            }
            Err(e) => prop_assert_eq!(e.code(), "not_found", "{}: {}", uri, e.message()),
        }
    }

    /// One URI, one answer through the executor: `objects.get` answers a view of the URI it was given, or
    /// refuses it as input or as unknown — never `internal`.
    #[test]
    fn getting_any_string_answers_that_uri_or_refuses_it(uri in uri_like()) {
        match context().execute("objects.get", json!({ "uri": uri })) {
            Ok(view) => prop_assert_eq!(&view["uri"], &Value::String(uri)),
            Err(e) => prop_assert!(
                matches!(e.code(), "not_found" | "invalid_input"),
                "{}: {}: {}", uri, e.code(), e.message()
            ),
        }
    }

    /// The projected URIs themselves always resolve: the property above is not vacuous.
    #[test]
    fn every_projected_uri_resolves(uri in prop::sample::select(projected_uris().to_vec())) {
        let view = context().execute("objects.get", json!({ "uri": uri }));
        prop_assert!(view.is_ok(), "{}: {:?}", uri, view.err());
    }
}

/// A URL scheme: the common ones, in any case, and anything RFC 3986 allows.
fn scheme() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "http", "https", "HTTPS", "Http", "ssh", "git+ssh", "ftp"
        ])
        .prop_map(str::to_string),
        "[a-z][a-z0-9+.-]{0,8}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// A credential never reaches an answer: `scheme://user:pass@host/path` loses its password (http(s) its whole userinfo).
    /// The password may hold any character but `/`, which ends the authority (RFC 3986): after
    /// one, the rest is the path, and no client reads a password there either.
    #[test]
    fn an_origin_url_never_keeps_its_password(
        scheme in scheme(),
        user in "[^:/@]{0,12}",
        pass in "[^/]{1,24}",
        host in "[a-z0-9][a-z0-9.-]{0,20}(:[0-9]{1,5})?",
        path in "(/[A-Za-z0-9._~@%-]{0,10}){0,4}",
    ) {
        let url = format!("{scheme}://{user}:{pass}@{host}{path}");
        let stripped = strip_url_credentials(&url);
        let web = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
        let expected = if web || user.is_empty() {
            format!("{scheme}://{host}{path}")
        } else {
            format!("{scheme}://{user}@{host}{path}")
        };
        prop_assert_eq!(&stripped, &expected);
        if !expected.contains(&pass) {
            prop_assert!(!stripped.contains(&pass));
        }
    }

    /// An origin without credentials, in URL or scp form, is unchanged.
    #[test]
    fn an_origin_url_without_credentials_is_unchanged(
        scheme in scheme(),
        host in "[a-z0-9][a-z0-9.-]{0,20}(:[0-9]{1,5})?",
        path in "(/[A-Za-z0-9._~-]{0,10}){0,4}",
        scp_user in "[a-z]{1,8}",
    ) {
        let url = format!("{scheme}://{host}{path}");
        prop_assert_eq!(strip_url_credentials(&url), url);
        let scp = format!("{scp_user}@{host}:o/r.git");
        prop_assert_eq!(strip_url_credentials(&scp), scp);
    }

    /// Any string at all: no panic, and nothing is ever added.
    #[test]
    fn stripping_any_string_never_lengthens_it(url in any::<String>()) {
        prop_assert!(strip_url_credentials(&url).len() <= url.len());
    }
}

/// A query string: pairs of names (often the capability's own) and values, raw or encoded.
fn query_string() -> impl Strategy<Value = String> {
    let names = prop_oneof![
        prop::sample::select(vec![
            "uri",
            "kind",
            "tag",
            "limit",
            "offset",
            "query",
            "effect",
            "exposure",
            "status",
            "id",
            "text",
            "namespace",
            "check",
            "paths",
            "older_than_seconds",
        ])
        .prop_map(str::to_string),
        "[a-z_%]{0,6}",
    ];
    let values = prop_oneof![
        "-?[0-9]{1,22}(\\.[0-9]{0,4})?",
        prop::sample::select(vec![
            "true",
            "false",
            "",
            "1",
            "0",
            "null",
            "[]",
            "{}",
            "[1,\"a\"]"
        ])
        .prop_map(str::to_string),
        "[^&=#]{0,12}",
        any::<String>(),
    ];
    prop_oneof![
        prop::collection::vec((names, values, any::<bool>()), 0..6).prop_map(|pairs| {
            pairs
                .into_iter()
                .map(|(name, value, raw)| {
                    if raw {
                        format!("{name}={value}")
                    } else {
                        serde_urlencoded::to_string([(name, value)]).unwrap_or_default()
                    }
                })
                .collect::<Vec<_>>()
                .join("&")
        }),
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A bad query is the caller's error, never the server's: any query string, against any capability's input, binds to an object or is
    /// `invalid_input` — and what binds names only declared properties.
    #[test]
    fn any_query_string_binds_or_is_invalid_input(
        at in any::<prop::sample::Index>(),
        query in query_string(),
    ) {
        let d = at.get(registry::all());
        match majordomus::http::binding::from_query(d.input(), Some(&query)) {
            Ok(Value::Object(input)) => {
                for name in input.keys() {
                    prop_assert!(
                        d.input().properties.iter().any(|(p, _)| p == name),
                        "{}: `{}` is not declared", d.id, name
                    );
                }
            }
            Ok(other) => prop_assert!(false, "{}: bound to a non-object {}", d.id, other),
            Err(e) => prop_assert_eq!(e.code(), "invalid_input", "{}", e.message()),
        }
    }
}
