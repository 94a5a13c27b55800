//! `CapabilityError`: the one error every handler returns and every transport reads, with one
//! stable code word per variant. Transports map the word, never the message.

use majordomus_registry_lang::ERROR_CODES;
use rustix::io::Errno;

/// The storage failures a retry can get past: a full disk, a spent quota, a read-only mount.
const ENOSPC: i32 = Errno::NOSPC.raw_os_error();
const EDQUOT: i32 = Errno::DQUOT.raw_os_error();
const EROFS: i32 = Errno::ROFS.raw_os_error();

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CapabilityError {
    /// The input does not fit the schema or the domain.
    #[error("{message}")]
    InvalidInput { message: String },
    /// The thing named does not exist.
    #[error("{message}")]
    NotFound { message: String },
    /// A command declines: an illegal transition, an overwrite, no session.
    #[error("{message}")]
    Refused { message: String },
    /// The caller may not do this.
    #[error("{message}")]
    Forbidden { message: String },
    /// A bug or an I/O failure.
    #[error("{message}")]
    Internal { message: String },
    /// The storage refuses the write for now (full disk, quota, read-only file system, a board
    /// that cannot be written): a retry after freeing space, or remounting, works.
    #[error("{message}")]
    Unavailable { message: String },
    /// Another writer holds what this one needs (the checkout's write lock) past the request's
    /// deadline; nothing was written, and a retry once it is done works.
    #[error("{message}")]
    Busy { message: String },
}

impl CapabilityError {
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::InvalidInput {
            message: bounded(message.into()),
        }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound {
            message: bounded(message.into()),
        }
    }
    pub fn refused(message: impl Into<String>) -> Self {
        Self::Refused {
            message: bounded(message.into()),
        }
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::Forbidden {
            message: bounded(message.into()),
        }
    }
    pub(crate) fn unavailable(message: impl Into<String>) -> Self {
        Self::Unavailable {
            message: bounded(message.into()),
        }
    }
    pub(crate) fn busy(message: impl Into<String>) -> Self {
        Self::Busy {
            message: bounded(message.into()),
        }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::Internal {
            message: bounded(message.into()),
        }
    }

    /// An I/O failure while `doing` (`read`, `write`) the repository file `relative`: named by
    /// that file and the failure's kind (`permission denied`) only. What every surface shows
    /// carries no absolute path and none of the operating system's wording or error number. A
    /// full or read-only file system is `unavailable`, so the caller knows a retry can work.
    pub(crate) fn io(doing: &str, relative: &str, e: &std::io::Error) -> Self {
        let message = format!("cannot {doing} `{relative}`: {}", e.kind());
        let storage = matches!(e.raw_os_error(), Some(ENOSPC | EDQUOT | EROFS));
        if storage {
            Self::Unavailable {
                message: format!(
                    "{message}; free space (or make the file system writable) and retry"
                ),
            }
        } else {
            Self::internal(message)
        }
    }

    /// The stable code word every transport reads.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidInput { .. } => "invalid_input",
            Self::NotFound { .. } => "not_found",
            Self::Refused { .. } => "refused",
            Self::Forbidden { .. } => "forbidden",
            Self::Internal { .. } => "internal",
            Self::Unavailable { .. } => "unavailable",
            Self::Busy { .. } => "busy",
        }
    }

    /// The message, the same text on every surface.
    pub fn message(&self) -> &str {
        match self {
            Self::InvalidInput { message }
            | Self::NotFound { message }
            | Self::Refused { message }
            | Self::Forbidden { message }
            | Self::Internal { message }
            | Self::Unavailable { message }
            | Self::Busy { message } => message,
        }
    }

    /// The HTTP status of the code, from the one table build.rs also publishes in OpenAPI.
    pub fn http_status(&self) -> u16 {
        ERROR_CODES
            .iter()
            .find(|(code, _)| *code == self.code())
            .map(|(_, status)| *status)
            .unwrap_or(500)
    }

    /// The CLI exit code.
    pub fn exit_code(&self) -> u8 {
        majordomus_registry_lang::words::EXIT_CODES
            .iter()
            .find(|(code, _)| *code == self.code())
            .map(|(_, exit)| *exit)
            .unwrap_or(13)
    }
}

/// The most bytes of one quoted value (between backticks or double quotes) an error repeats: an
/// input of 500 KB is named by its start and its length, not echoed whole.
const MAX_ECHO: usize = 200;

/// The most bytes a whole message keeps.
const MAX_MESSAGE: usize = 2048;

/// `message` with every quoted value past [`MAX_ECHO`] bytes cut to its start, an ellipsis and
/// its length, and the whole cut at [`MAX_MESSAGE`] bytes the same way.
pub fn bounded(message: String) -> String {
    if message.len() <= MAX_ECHO {
        return message;
    }
    let mut out = String::with_capacity(message.len().min(MAX_MESSAGE + 64));
    let mut rest = message.as_str();
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest.as_bytes()[open];
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let Some(close) = rest.find(quote as char) else {
            break;
        };
        out.push_str(&cut(&rest[..close], MAX_ECHO));
        out.push(quote as char);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    cut(&out, MAX_MESSAGE)
}

/// One value an error echoes: whole within [`MAX_ECHO`] bytes, else its start and its length.
pub fn cut_echo(text: &str) -> String {
    cut(text, MAX_ECHO)
}

/// `text` whole within `max` bytes, else its first `max / 2` bytes, an ellipsis and its length.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max / 2;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::{CapabilityError, Errno, EDQUOT, ENOSPC, EROFS};

    #[test]
    fn a_long_value_is_echoed_by_its_start_and_length_and_a_long_message_is_cut() {
        let id = "a".repeat(500_000);
        let e = CapabilityError::not_found(format!("no issue `{id}` in the plan"));
        assert!(e.message().len() < 300, "{}", e.message().len());
        assert!(e.message().starts_with("no issue `aaaa"), "{e}");
        assert!(
            e.message().ends_with("… (500000 bytes)` in the plan"),
            "{e}"
        );
        let short = CapabilityError::refused("`x` is \"y\"");
        assert_eq!(short.message(), "`x` is \"y\"");
        let long = CapabilityError::invalid_input("word ".repeat(100_000));
        assert!(long.message().len() <= 2048, "{}", long.message().len());
        assert!(long.message().ends_with("(500000 bytes)"), "{long}");
    }

    #[test]
    fn a_full_or_read_only_storage_is_unavailable_and_other_io_is_internal() {
        for errno in [ENOSPC, EDQUOT, EROFS] {
            let e = CapabilityError::io("write", "x", &std::io::Error::from_raw_os_error(errno));
            assert_eq!(e.code(), "unavailable", "{e}");
            assert_eq!(e.http_status(), 503);
            assert!(e.message().starts_with("cannot write `x`: "), "{e}");
            assert!(e.message().ends_with("and retry"), "{e}");
        }
        for errno in [Errno::ACCESS.raw_os_error(), Errno::IO.raw_os_error()] {
            let e = CapabilityError::io("write", "x", &std::io::Error::from_raw_os_error(errno));
            assert_eq!(e.code(), "internal", "{e}");
        }
    }
}
