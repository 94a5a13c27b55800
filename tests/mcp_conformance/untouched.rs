//! Reads mutate nothing: a whole session of reads on every surface leaves the working
//! tree, the index and every file's size and mtime as they were.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use crate::support::Fixture;

use super::surfaces::{
    read_everything_over_http, read_everything_over_stdio, read_everything_through_the_cli,
    Recorded,
};
use crate::serve_support::Served;

/// Every path outside `.git`, with its size and mtime (a link's own, not its target's).
pub(super) fn listing(root: &Path) -> BTreeMap<String, (u64, SystemTime)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (u64, SystemTime)>) {
        for entry in std::fs::read_dir(dir).expect("the fixture can be listed") {
            let path = entry.expect("a directory entry").path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let relative = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .into_owned();
            let mtime = meta.modified().expect("an mtime");
            if meta.is_dir() {
                out.insert(format!("{relative}/"), (0, mtime));
                walk(root, &path, out);
            } else {
                out.insert(relative, (meta.len(), mtime));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn a_whole_session_of_reads_on_every_surface_changes_nothing() {
    let fixture = Fixture::with_objects();
    let root = fixture.root();
    let status = fixture.git(&["status", "--porcelain", "--ignored"]);
    let blobs = fixture.git(&["ls-files", "-s"]);
    let files = listing(root);
    assert_eq!(status, "", "the fixture is committed and clean");
    assert!(!root.join(".ai/local").exists());

    let mut session = Recorded::start(root, &[], &[]);
    let (stdio_calls, _) = read_everything_over_stdio(&mut session);
    assert_eq!(session.server.close().status.code(), Some(0));
    let mut server = Served::start(root);
    let http = read_everything_over_http(&server);
    server.stop();
    let cli = read_everything_through_the_cli(root, &[]).len();
    eprintln!(
        "reads mutate nothing: {stdio_calls} tool calls over stdio, {} route requests, {} tool calls over /mcp, {} Cockpit pages, {cli} CLI commands",
        http.routes, http.mcp_tool_calls, http.cockpit_pages
    );

    assert_eq!(fixture.git(&["status", "--porcelain", "--ignored"]), status);
    assert_eq!(fixture.git(&["ls-files", "-s"]), blobs);
    assert_eq!(
        listing(root),
        files,
        "no file was created, changed or touched"
    );
    assert!(
        !root.join(".ai/local").exists(),
        "reads create no `.ai/local/`"
    );
}
