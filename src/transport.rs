//! The two ways a client reaches this process, named once for the peers board, the
//! listeners and the projections that count them.

/// How a peer reached this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Transport {
    Stdio,
    Http,
}

impl Transport {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}
