//! A skill file's digest is taken on first use (ADR 0035), and is still of exactly the bytes the
//! generation serves: a file edited on disk after the build changes neither; every look gives
//! the one value; the fingerprint and the changes between generations still see each file.

use majordomus::layer::{Changes, Index};
use sha2::Digest;

use super::{layer_repo, Built, Fixture};

const DIR: &str = ".ai/repo/skills/pdf-tools";
const REFERENCE: &str = "# Forms\n\nA form field is flattened before merging.\n";

fn with_skill() -> Fixture {
    let repo = layer_repo();
    repo.write(
        &format!("{DIR}/SKILL.md"),
        "---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n\n# PDF tools\n",
    );
    repo.write(&format!("{DIR}/references/forms.md"), REFERENCE);
    repo.write(&format!("{DIR}/assets/logo.png"), [0x89u8, b'P', 0, 0xff]);
    repo
}

fn sha256_of(bytes: &[u8]) -> String {
    let hex: String = sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn digest_of<'a>(index: &'a Index, path: &str) -> &'a str {
    let skill = index.skill("pdf-tools").expect("the skill");
    skill.file(path).expect("the file").digest()
}

#[test]
fn a_digest_taken_after_an_edit_on_disk_is_of_the_bytes_the_generation_serves() {
    let repo = with_skill();
    let index = repo.index();
    // Edited on disk after the build, before anything has asked for a digest.
    let edited = "# Forms\n\nA form field is flattened after merging!\n";
    repo.write(&format!("{DIR}/references/forms.md"), edited);

    let skill = index.skill("pdf-tools").expect("the skill");
    let file = skill.file("references/forms.md").expect("the reference");
    assert_eq!(file.bytes.as_slice(), REFERENCE.as_bytes());
    assert_eq!(file.digest(), sha256_of(REFERENCE.as_bytes()));
    assert_ne!(file.digest(), sha256_of(edited.as_bytes()));
    // Every file, text or not, as its entry lists it: the digest and size of its bytes.
    let listed: Vec<(String, String, usize)> = skill
        .resources()
        .map(|r| (r.uri.to_string(), r.digest.to_string(), r.size))
        .collect();
    let expected: Vec<(String, String, usize)> = skill
        .files
        .iter()
        .map(|f| (f.uri.clone(), sha256_of(&f.bytes), f.bytes.len()))
        .collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert_eq!(listed, expected);

    // The next generation reads the edit: its own bytes, its own digest.
    let next = repo.index();
    assert_eq!(
        digest_of(&next, "references/forms.md"),
        sha256_of(edited.as_bytes())
    );
    assert_eq!(
        digest_of(&index, "references/forms.md"),
        sha256_of(REFERENCE.as_bytes())
    );
}

#[test]
fn a_digest_is_taken_once_and_shared_by_every_look_and_clone() {
    let repo = with_skill();
    let index = repo.index();
    let skill = index.skill("pdf-tools").expect("the skill");
    let file = skill.file("assets/logo.png").expect("the asset");
    let first = file.digest();
    assert_eq!(first, sha256_of(&[0x89, b'P', 0, 0xff]));
    // The same string, not a second hash of the bytes.
    assert!(std::ptr::eq(first, file.digest()));
    let listed = skill
        .resources()
        .find(|r| r.uri == file.uri)
        .expect("listed");
    assert!(std::ptr::eq(first, listed.digest));
    let copy = skill.clone();
    let copied = copy.file("assets/logo.png").expect("the asset");
    assert!(std::ptr::eq(first, copied.digest()));
    // A clone made before the first look shares the digest taken through the original.
    let fresh = repo.index();
    let early = fresh.skill("pdf-tools").expect("the skill").clone();
    let taken = digest_of(&fresh, "references/forms.md");
    let through_clone = early.file("references/forms.md").expect("the reference");
    assert!(std::ptr::eq(taken, through_clone.digest()));
}

#[test]
fn the_fingerprint_and_the_changes_still_see_every_skill_file() {
    let repo = with_skill();
    let before = repo.index();
    let same = repo.index();
    // Whether or not a digest was shown first, the fingerprint is the same.
    let _ = digest_of(&same, "references/forms.md");
    assert_eq!(before.fingerprint(), same.fingerprint());

    // A file of the skill that is not its `SKILL.md` (not an object) moves the fingerprint and is
    // a change, and nothing else is.
    repo.write(
        &format!("{DIR}/references/forms.md"),
        "# Forms\n\nEdited.\n",
    );
    let after = repo.index();
    assert_ne!(before.fingerprint(), after.fingerprint());
    let changes = Changes::between(&before, &after);
    assert_eq!(changes.changed, ["skill://pdf-tools/references/forms.md"]);
    assert!(changes.added.is_empty() && changes.removed.is_empty());
    assert!(Changes::between(&before, &same).is_empty());
}
