//! The digests an execution's entry carries: of bytes, of a SHA-256 sum already taken, and of an
//! input — salted, with object keys sorted, so equal inputs digest alike within a repository and
//! a guessed input cannot be confirmed from the log.

use std::sync::OnceLock;

/// `sha256:<hex>` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex_digest(sha2::Sha256::digest(bytes).into())
}

/// `sha256:<hex>` of a SHA-256 sum already taken.
fn hex_digest(sum: [u8; 32]) -> String {
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in sum {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// The salt every input digest of this process is taken with: the repository's, kept under the
/// board, from the moment the journal is attached to its log; before that (or without a board),
/// one of this process's own. Unsalted, a digest confirms a guessed input (`{"query":"hunter2"}`)
/// to anyone who can read the log.
pub(super) static SALT: OnceLock<[u8; 32]> = OnceLock::new();

fn salt() -> &'static [u8; 32] {
    SALT.get_or_init(|| {
        let mut bytes = [0u8; 32];
        if getrandom::fill(&mut bytes).is_err() {
            tracing::warn!("no random salt for the input digests: they are taken unsalted");
        }
        bytes
    })
}

/// `sha256:<hex>` of the salt and the input as compact JSON with object keys sorted
/// ([`write_canonical`]), hashed as it is written: the text itself is never kept.
pub(crate) fn canonical_digest(value: &serde_json::Value) -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    hasher.update(salt());
    // Hashing cannot fail.
    let _ = write_canonical(value, &mut hasher);
    hex_digest(hasher.finalize().into())
}

/// Writes `value` compactly with every object's keys sorted: one text per value, so `{a,b}` and
/// `{b,a}` are one input.
pub(crate) fn write_canonical(
    value: &serde_json::Value,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.write_all(b"{")?;
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                write_canonical(&map[key], out)?;
            }
            out.write_all(b"}")
        }
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_canonical(item, out)?;
            }
            out.write_all(b"]")
        }
        other => Ok(serde_json::to_writer(&mut *out, other)?),
    }
}
