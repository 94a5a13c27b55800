//! `CapabilityError`: the one error every handler returns and every transport reads, with one
//! stable code word per variant (SPEC §6). Transports map the word, never the message.

use crate::registry::lang::ERROR_CODES;

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
}

impl CapabilityError {
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::InvalidInput {
            message: message.into(),
        }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound {
            message: message.into(),
        }
    }
    pub fn refused(message: impl Into<String>) -> Self {
        Self::Refused {
            message: message.into(),
        }
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::Forbidden {
            message: message.into(),
        }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::Internal {
            message: message.into(),
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
        }
    }

    /// The message, the same text on every surface.
    pub fn message(&self) -> &str {
        match self {
            Self::InvalidInput { message }
            | Self::NotFound { message }
            | Self::Refused { message }
            | Self::Forbidden { message }
            | Self::Internal { message } => message,
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

    /// The CLI exit code (SPEC §13).
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::InvalidInput { .. } | Self::Refused { .. } | Self::Forbidden { .. } => 10,
            Self::NotFound { .. } => 12,
            Self::Internal { .. } => 13,
        }
    }
}
