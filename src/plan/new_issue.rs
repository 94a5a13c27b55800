//! What `plan.create` writes: an id nobody else can be making at the same moment (the title's
//! slug and a random suffix, so two worktrees creating at once never collide and their branches
//! merge without a conflict: each issue is a file of its own), the globs checked to stay inside
//! the repository, and the issue's YAML text. Writes nothing itself.

use serde_json::{json, Map, Value};

/// Where the plan's issues live; the default sources index them as kind `issue`. The board
/// writes a carried issue there too, so it is defined with it.
pub use crate::board::carried::ISSUES_DIR;

/// The most characters of the title kept in an id.
const SLUG_MAX: usize = 40;

/// The random suffix: 8 characters of 32 (40 bits), so even 10,000 issues made apart have about
/// one chance in 20,000 of two equal suffixes, and equal ones also need equal slugs.
const SUFFIX_LEN: usize = 8;
const SUFFIX_ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// The title in lowercase words joined by hyphens (ASCII letters and digits only), at most
/// `SLUG_MAX` characters, never cut inside a word when a whole word fits; `issue` when the title
/// has no letter or digit.
pub fn slug(title: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        } else if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut out = String::new();
    for w in words {
        let extra = if out.is_empty() { w.len() } else { w.len() + 1 };
        if out.len() + extra > SLUG_MAX {
            if out.is_empty() {
                out = w[..SLUG_MAX].to_string();
            }
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&w);
    }
    if out.is_empty() {
        "issue".to_string()
    } else {
        out
    }
}

/// A fresh id for `title`: its slug, a hyphen, and `SUFFIX_LEN` random characters.
pub fn fresh_id(title: &str) -> std::io::Result<String> {
    let mut bytes = [0u8; SUFFIX_LEN];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let suffix: String = bytes
        .iter()
        .map(|b| SUFFIX_ALPHABET[usize::from(b % 32)] as char)
        .collect();
    Ok(format!("{}-{suffix}", slug(title)))
}

/// What a new issue says.
#[derive(Debug)]
pub struct Fields<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub description: Option<&'a str>,
    pub depends_on: &'a [String],
    pub paths: &'a [String],
    pub priority: i64,
    pub labels: &'a [String],
    pub created_at: &'a str,
}

/// The issue's YAML document, fields in a fixed order; empty lists are left out.
pub fn text(f: &Fields<'_>) -> Result<String, serde_yaml::Error> {
    let mut doc = Map::new();
    doc.insert("id".into(), json!(f.id));
    doc.insert("title".into(), json!(f.title));
    if let Some(d) = f.description.filter(|d| !d.trim().is_empty()) {
        doc.insert("description".into(), json!(d));
    }
    for (key, list) in [
        ("depends_on", f.depends_on),
        ("paths", f.paths),
        ("labels", f.labels),
    ] {
        if !list.is_empty() {
            doc.insert(key.into(), json!(list));
        }
    }
    doc.insert("priority".into(), json!(f.priority));
    doc.insert("created_at".into(), json!(f.created_at));
    serde_yaml::to_string(&Value::Object(doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slug_keeps_whole_lowercase_words_within_its_bound() {
        assert_eq!(slug("Parse the Config file!"), "parse-the-config-file");
        assert_eq!(slug("  ***  "), "issue");
        assert_eq!(slug("Ünïcode — only"), "n-code-only");
        let long = slug(&"word ".repeat(100));
        assert!(long.len() <= SLUG_MAX && long.ends_with("word"), "{long}");
        assert_eq!(slug(&"x".repeat(100)).len(), SLUG_MAX);
    }

    #[test]
    fn fresh_ids_share_the_slug_and_differ_in_the_suffix() {
        let ids: std::collections::BTreeSet<String> = (0..1000)
            .map(|_| fresh_id("Same title").expect("random"))
            .collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(
            |id| id.starts_with("same-title-") && id.len() == "same-title-".len() + SUFFIX_LEN
        ));
    }

    #[test]
    fn the_text_is_yaml_that_reads_back_as_written() {
        let deps = vec!["a".to_string()];
        let text = text(&Fields {
            id: "x-1",
            title: "Quote: \"this\" # not a comment",
            description: Some("line one\nline two"),
            depends_on: &deps,
            paths: &[],
            priority: 1,
            labels: &[],
            created_at: "2026-12-02T05:00:00Z",
        })
        .expect("yaml");
        let back: Value = serde_yaml::from_str(&text).expect("reads back");
        assert_eq!(back["title"], "Quote: \"this\" # not a comment");
        assert_eq!(back["description"], "line one\nline two");
        assert_eq!(back["depends_on"], json!(["a"]));
        assert!(back.get("paths").is_none());
    }
}
