//! `recover.orphans` on hostile layouts: it never follows or unlinks a symlink, and refuses a
//! layer that is itself a symlink.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::support::Fixture;

use super::surfaces::Recorded;
use super::tool_of;
use crate::support::refusal;

#[cfg(unix)]
#[test]
fn recover_orphans_never_follows_or_unlinks_a_symlink() {
    use std::os::unix::fs::symlink;
    let fixture = Fixture::new();
    let outside = tempfile::TempDir::new().expect("a directory outside");
    let old = SystemTime::now() - Duration::from_secs(7200);
    let age = |path: &Path| {
        std::fs::File::options()
            .write(true)
            .open(path)
            .and_then(|f| f.set_modified(old))
            .expect("an old mtime");
    };
    let victim = outside.path().join("victim.mj-tmp");
    let stale = outside.path().join("stale.mj-tmp");
    for file in [&victim, &stale] {
        std::fs::write(file, "outside").expect("an outside file");
        age(file);
    }
    let root = fixture.root();
    std::fs::create_dir_all(root.join(".ai/repo")).expect(".ai/repo");
    symlink(&victim, root.join(".ai/repo/link.mj-tmp")).expect("a link to a file");
    symlink(outside.path(), root.join(".ai/repo/linked-dir")).expect("a link to a directory");
    symlink(outside.path(), root.join(".ai/repo/dir-link.mj-tmp")).expect("a link named like one");
    fixture.write(".ai/repo/real.md.1.mj-tmp", "interrupted");
    age(&root.join(".ai/repo/real.md.1.mj-tmp"));

    let mut session = Recorded::start(root, &[], &[]);
    session.initialize();
    let removed = session.call_ok(
        tool_of("recover.orphans"),
        json!({ "older_than_seconds": 60, "check": false }),
    );
    assert_eq!(
        removed["removed"],
        json!([".ai/repo/real.md.1.mj-tmp"]),
        "{removed}"
    );
    assert!(
        victim.exists() && stale.exists(),
        "nothing outside was unlinked"
    );
    for link in ["link.mj-tmp", "linked-dir", "dir-link.mj-tmp"] {
        assert!(
            std::fs::symlink_metadata(root.join(".ai/repo").join(link)).is_ok(),
            "{link} is left alone"
        );
    }
}

#[cfg(unix)]
#[test]
fn recover_orphans_refuses_a_layer_that_is_itself_a_symlink() {
    let fixture = Fixture::new();
    let root = fixture.root();
    std::fs::rename(root.join(".ai"), root.join("layer")).expect("the layer moves");
    std::os::unix::fs::symlink("layer", root.join(".ai")).expect("`.ai` becomes a link");
    fixture.write("layer/repo/old.mj-tmp", "interrupted");
    let mut session = Recorded::start(root, &["--discovery", "filesystem"], &[]);
    session.initialize();
    let (code, text) = refusal(&session.call(
        tool_of("recover.orphans"),
        json!({ "older_than_seconds": 1, "check": false }),
    ));
    assert_eq!(code, "refused", "{text}");
    assert!(text.contains("`.ai` is a symlink"), "{text}");
    assert!(root.join("layer/repo/old.mj-tmp").exists());
}
