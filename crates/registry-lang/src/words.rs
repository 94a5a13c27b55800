//! The words of the declaration language: `kind`, `effect`, `determinism`, the HTTP method, the
//! hints an effect implies and the error code words every surface answers with.
//! Compiled by the crate and by `build.rs`; knows nothing of YAML, schemas or any surface.

use std::fmt;

/// Every error code word a surface can answer with, and its HTTP status. The first five,
/// `busy` and `unavailable` are `CapabilityError`'s; the rest belong to the HTTP
/// projection's own guards.
pub const ERROR_CODES: &[(&str, u16)] = &[
    ("invalid_input", 400),
    ("not_found", 404),
    ("refused", 422),
    ("forbidden", 403),
    ("internal", 500),
    ("method_not_allowed", 405),
    ("payload_too_large", 413),
    ("busy", 503),
    ("timeout", 408),
    ("unavailable", 503),
];

/// The CLI exit code of each code word a capability can fail with. The HTTP guards'
/// own words are not here: no command answers with them.
pub const EXIT_CODES: &[(&str, u8)] = &[
    ("invalid_input", 10),
    ("not_found", 12),
    ("refused", 10),
    ("forbidden", 10),
    ("internal", 13),
    ("unavailable", 13),
    ("busy", 13),
];

macro_rules! word_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word the registry and every projection use for this value.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }

            /// Parses the word; `None` for anything else.
            pub fn parse(word: &str) -> Option<Self> {
                match word { $($word => Some($name::$variant),)+ _ => None }
            }

            /// Every word, comma-separated, for messages.
            pub fn words() -> String {
                Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

word_enum!(
    /// Whether a capability answers (`query`) or changes something (`command`).
    Kind { Query = "query", Command = "command" }
);
word_enum!(
    /// What running a capability changes.
    Effect { Read = "read", ProcessState = "process_state", RepositoryMutation = "repository_mutation" }
);
word_enum!(
    /// What a capability's answer depends on besides its input.
    Determinism { Repository = "repository", Process = "process", Environment = "environment" }
);
word_enum!(
    /// The HTTP method of a route.
    Method { Get = "GET", Post = "POST" }
);

/// What a caller may assume about a capability, derived from its effect alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Effect {
    /// The hints an effect implies. Conservative in the direction a caller survives: no
    /// handler has declared that a repeat is a no-op, so only reads are idempotent; no handler
    /// reaches beyond the machine, so nothing is open-world.
    pub fn hints(self) -> Hints {
        let reaches_beyond_machine = false;
        match self {
            Effect::Read => Hints {
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: reaches_beyond_machine,
            },
            Effect::ProcessState => Hints {
                read_only: false,
                destructive: false,
                idempotent: false,
                open_world: reaches_beyond_machine,
            },
            Effect::RepositoryMutation => Hints {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: reaches_beyond_machine,
            },
        }
    }
}
