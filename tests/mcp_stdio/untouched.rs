//! Reads change nothing: a whole session of reads leaves every path under the repository, `.git`
//! included, as it was.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::json;

use crate::support::{dirs_and_files_under, Fixture, McpServer};

use super::call_every_read_tool;

/// Every path under `root`, `.git` included, with directories marked by a trailing slash.
fn every_path(root: &Path) -> BTreeSet<String> {
    let relative = |path: &Path| {
        path.strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .into_owned()
    };
    let (dirs, files) = dirs_and_files_under(root, |_| false);
    let dirs = dirs.iter().map(|d| format!("{}/", relative(d)));
    dirs.chain(files.iter().map(|f| relative(f))).collect()
}

#[test]
fn a_whole_session_of_reads_changes_nothing_in_the_repository() {
    let fixture = Fixture::with_objects();
    let paths_before = every_path(fixture.root());
    let status_before = fixture.git(&["status", "--porcelain", "--ignored"]);
    let blobs_before = fixture.git(&["ls-files", "-s"]);
    assert_eq!(status_before, "", "the fixture is committed and clean");

    let mut server = McpServer::start(fixture.root());
    server.initialize();
    let calls = call_every_read_tool(&mut server);
    assert!(calls >= 15, "only {calls} calls");
    let uris = server.resource_uris();
    for uri in &uris {
        server.read_text(uri);
    }
    server.result("resources/templates/list", json!({}));
    let finished = server.close();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);

    // What a serving process leaves is its log of executions beside the board, under git's
    // own directory (listed for a day after it ended); nothing else, and nothing in the work tree.
    let log_dir = ".git/majordomus/peers/executions/";
    let paths_after: std::collections::BTreeSet<String> = every_path(fixture.root())
        .into_iter()
        .filter(|p| {
            !(p.starts_with(".git/majordomus/")
                && (log_dir.starts_with(p.as_str()) || p.starts_with(log_dir)))
        })
        .collect();
    let logs = every_path(fixture.root())
        .into_iter()
        .filter(|p| p.starts_with(log_dir) && p.ends_with(".log"))
        .count();
    assert_eq!(logs, 1, "one log of executions, the session's process's");
    assert_eq!(
        paths_after,
        paths_before.into_iter().collect(),
        "no file was created"
    );
    assert_eq!(
        fixture.git(&["status", "--porcelain", "--ignored"]),
        status_before
    );
    assert_eq!(fixture.git(&["ls-files", "-s"]), blobs_before);
}
