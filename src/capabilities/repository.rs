//! Handlers of the `repository` namespace: the report on the layer served here, and the
//! repository's identity.

use sha2::{Digest, Sha256};

use crate::call::Call;
use crate::error::CapabilityError;
use crate::git;
use crate::layer::{Discovery, IndexState};
use crate::registry::rt::{Effect, Kind};
use crate::registry::types::repository::{IdentityInput, IdentityOutput, InfoInput, InfoOutput};
use crate::registry::types::{
    RepositoryInfoBoard as BoardView, RepositoryInfoBoardSharing as BoardSharing,
    RepositoryInfoBoardState as BoardState, RepositoryInfoCapabilities as CapabilitySummary,
    RepositoryInfoDiscovery, RepositoryInfoGit as GitView, RepositoryInfoIndex as IndexView,
    RepositoryInfoIndexState, RepositoryInfoSourcesItem as Source,
};
use crate::registry::{self};

pub fn info(ctx: &Call, _input: InfoInput) -> Result<InfoOutput, CapabilityError> {
    let index = ctx.index()?;
    let git = git::state(&index.root, index.generation);
    let stale = ctx.layer_if_open().and_then(|live| live.stale());
    let all = registry::all();
    let projected: Vec<_> = all.iter().filter(|d| ctx.projects(d)).collect();
    Ok(InfoOutput {
        root: index.root.display().to_string(),
        layer_schema: index.manifest.schema.clone(),
        sections: index
            .manifest
            .sections
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        discovery: match index.discovery {
            // An index holds the discovery `auto` resolved to.
            Discovery::Vcs | Discovery::Auto => RepositoryInfoDiscovery::Vcs,
            Discovery::Filesystem => RepositoryInfoDiscovery::Filesystem,
        },
        git: GitView {
            repository: git.is_repository(),
            branch: git.branch,
            head: git.head,
            dirty: git.dirty,
        },
        board: board_view(ctx, &index.root),
        index: IndexView {
            state: match (&stale, index.state()) {
                (Some(_), _) => RepositoryInfoIndexState::Stale,
                (None, IndexState::Ok) => RepositoryInfoIndexState::Ok,
                (None, IndexState::Degraded) => RepositoryInfoIndexState::Degraded,
            },
            reason: stale.map(|reason| crate::secrets::redact(&reason).into_owned()),
            fingerprint: index.fingerprint().to_string(),
            objects: index.objects.len() as i64,
        },
        // Counted once per generation: at 10,000 objects counting took most of a report.
        counts: ctx
            .per_generation(index.generation, || ObjectsPerKind(index.counts_by_kind()))
            .0
            .iter()
            .map(|(k, n)| (k.clone(), *n as i64))
            .collect(),
        sources: index
            .sources
            .classes
            .iter()
            .map(|c| Source {
                kind: c.kind.clone(),
                pathspec: c.pathspec.clone(),
            })
            .collect(),
        diagnostics: index
            .diagnostics
            .iter()
            .map(crate::capabilities::diagnostic_view)
            .collect(),
        capabilities: CapabilitySummary {
            total: projected.len() as i64,
            queries: projected.iter().filter(|d| d.kind == Kind::Query).count() as i64,
            commands: projected.iter().filter(|d| d.kind == Kind::Command).count() as i64,
            tools: projected.iter().filter(|d| d.tool.is_some()).count() as i64,
            resources: projected.iter().filter(|d| d.resource.is_some()).count() as i64,
            routes: projected.iter().filter(|d| d.route.is_some()).count() as i64,
            commands_on_cli: projected.iter().filter(|d| d.cli.is_some()).count() as i64,
            writers: projected
                .iter()
                .filter(|d| d.effect == Effect::RepositoryMutation)
                .filter_map(|d| d.tool.map(str::to_string))
                .collect(),
        },
    })
}

/// Where the agents' board is, and how the shared one stands (its view refreshed when older
/// than its cadence, so the age said is the age of what claims are decided against).
fn board_view(ctx: &Call, root: &std::path::Path) -> BoardView {
    let board = ctx.peers().shared_board(root);
    let Some(remote) = board.remote() else {
        return BoardView {
            sharing: BoardSharing::Local,
            remote: None,
            url: None,
            fetched_at: None,
            age_seconds: None,
            lease_seconds: None,
            state: None,
            reason: None,
        };
    };
    let view = remote.view(crate::board::remote::CADENCE);
    let status = remote.status();
    BoardView {
        sharing: BoardSharing::Shared,
        remote: Some(status.remote),
        url: status.url,
        fetched_at: status.fetched_at.map(crate::rfc3339::of_secs),
        age_seconds: view.age.map(|a| a as i64),
        lease_seconds: Some(status.lease as i64),
        state: Some(if status.error.is_some() {
            BoardState::Unavailable
        } else {
            BoardState::Ok
        }),
        reason: status.error.map(|(_, reason)| reason),
    }
}

/// The objects per kind of one generation, kept for it.
struct ObjectsPerKind(std::collections::BTreeMap<String, usize>);

pub fn identity(ctx: &Call, _input: IdentityInput) -> Result<IdentityOutput, CapabilityError> {
    let index = ctx.index()?;
    let git = git::state(&index.root, index.generation);
    // The root commit is shared by every clone and says nothing about where this one lives;
    // without history, fall back to the layer's content fingerprint.
    let basis = match &git.root_commit {
        Some(commit) => format!("git-root-commit:{commit}"),
        None => format!("layer-fingerprint:{}", index.fingerprint()),
    };
    let digest = Sha256::digest(basis.as_bytes());
    let repository_id: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    Ok(IdentityOutput {
        root: index.root.display().to_string(),
        git_toplevel: git.toplevel,
        head: git.head,
        branch: git.branch,
        origin: git.origin,
        repository_id,
    })
}
