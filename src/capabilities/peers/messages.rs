//! The messages of the `peers` namespace: `peers.send` files a message in each recipient's inbox
//! on the board (`crate::board::inbox`), `peers.inbox` reads the caller's, `peers.mark_read`
//! marks it read, `peers.messages` reads every inbox for the people overseeing the agents, and
//! [`unread`] is the one count every `peers.*` answer carries.

use super::{everyone, refuse_credential, refuse_credentials, shared_board};
use crate::board::across::{Faraway, Outgoing};
use crate::board::inbox::{self, Addressed, MessageRecord, Recipient as To, Sender};
use crate::board::process::Identity;
use crate::board::BoardView;
use crate::call::Call;
use crate::error::CapabilityError;
use crate::registry::types::peers::{
    InboxInput, InboxOutput, MarkReadInput, MarkReadOutput, MessagesInput, MessagesOutput,
    SendInput, SendOutput,
};
use crate::registry::types::{
    Message, MessageAddressed, MessageClientSupplied, MessageFrom, Peer,
    PeersInboxOutputIgnoredItem, PeersSendOutputUndeliveredItem as Undelivered, Recipient,
    RecipientClientSupplied,
};
use crate::registry::types::{
    PeersMessagesOutputMessagesItem as Sent,
    PeersMessagesOutputMessagesItemAddressed as SentAddressed,
    PeersMessagesOutputMessagesItemClientSupplied as SentText,
    PeersMessagesOutputMessagesItemFrom as SentFrom,
    PeersMessagesOutputMessagesItemRecipientsItem as SentTo,
};

/// What the process itself is called as a sender (plain HTTP, the CLI, the Cockpit).
const THE_PROCESS: &str = crate::board::claims::PROCESS_CLIENT;

/// The caller's unread messages: what every `peers.*` answer carries, so an agent learns of mail
/// in the answers it already reads. 0 off the board, and for a caller that named no agent.
pub(super) fn unread(ctx: &Call) -> i64 {
    let Ok(agent) = ctx.agent() else {
        return 0;
    };
    shared_board(ctx).map_or(0, |b| b.unread(agent) as i64)
}

/// Fills in each peer's unread count: one listing of each process's inbox.
pub(super) fn unread_of_peers(board: &crate::board::Board, view: &BoardView, peers: &mut [Peer]) {
    let mut counts = std::collections::BTreeMap::new();
    counts.insert(board.me().pid, board.unread_counts(board.me()));
    for record in &view.reading.others {
        counts.insert(record.pid, board.unread_counts(&record.identity()));
    }
    for p in peers {
        let of_process = counts.get(&(p.pid as u32));
        p.unread = Some(
            of_process
                .and_then(|c| c.get(&(p.id as u64)))
                .map_or(0, |n| *n as i64),
        );
    }
}

/// A session to send to, with what the answer shows of it.
struct Addressee {
    to: To,
    handle: String,
    worktree: String,
    this_process: bool,
    client: String,
}

/// The body of a message that names exactly one kind of addressee, fits an inbox and carries no
/// credential.
fn checked_message(input: &SendInput) -> Result<String, CapabilityError> {
    let all = input.all == Some(true);
    let named =
        usize::from(input.to.is_some()) + usize::from(input.globs.is_some()) + usize::from(all);
    if named != 1 {
        return Err(CapabilityError::invalid_input(format!(
            "name exactly one of `to` (a peer), `globs` (the holders of claims overlapping them) or `all: true`; {named} were given"
        )));
    }
    let body = input.body.clone().unwrap_or_default();
    if body.len() > inbox::MAX_BODY_BYTES {
        return Err(CapabilityError::invalid_input(format!(
            "`body` is {} bytes; a message's body holds at most {}",
            body.len(),
            inbox::MAX_BODY_BYTES
        )));
    }
    refuse_credential("subject", &input.subject)?;
    refuse_credential("body", &body)?;
    Ok(body)
}

/// The agent of another clone holding a claim, where `held` came through the shared board.
fn faraway_holder(held: &crate::board::claims::Held) -> Option<Faraway> {
    let holder = &held.holder;
    let origin = holder.origin.as_ref()?;
    Some(Faraway {
        clone: origin.clone.clone(),
        machine: origin.machine.clone(),
        pid: holder.pid,
        session: holder.claim.session,
        handle: held.handle.clone(),
        client: holder.client.clone(),
        worktree: holder.worktree.clone(),
        attached_at: 0,
        branch: origin.branch.clone(),
        about: None,
        paths: Vec::new(),
    })
}

/// Files the message in each addressee's inbox on this machine: who has it, and who could not.
fn deliver(
    board: &crate::board::Board,
    from: &Sender,
    addressees: Vec<Addressee>,
    addressed: &Addressed,
    subject: &str,
    body: &str,
) -> (Vec<Recipient>, Vec<Undelivered>) {
    let mut recipients = Vec::new();
    let mut undelivered = Vec::new();
    for a in addressees {
        let message = MessageRecord::new(
            from.clone(),
            a.to.session,
            addressed.clone(),
            subject.to_string(),
            body.to_string(),
        );
        match board.deliver(&a.to, &message) {
            Ok((number, dropped)) => recipients.push(Recipient {
                pid: i64::from(a.to.process.pid),
                id: a.to.session as i64,
                handle: a.handle,
                worktree: a.worktree,
                this_process: a.this_process,
                message: Some(number as i64),
                key: message.key.clone().unwrap_or_default(),
                dropped: dropped as i64,
                client_supplied: RecipientClientSupplied { client: a.client },
            }),
            Err(e) => undelivered.push(Undelivered {
                pid: i64::from(a.to.process.pid),
                id: a.to.session as i64,
                code: e.code().to_string(),
                reason: e.to_string(),
            }),
        }
    }
    (recipients, undelivered)
}

pub(super) fn send(ctx: &Call, input: SendInput) -> Result<SendOutput, CapabilityError> {
    let body = checked_message(&input)?;
    let me = ctx.agent()?;
    let board = shared_board(ctx)?;
    // The holders are found, and the message addressed, by the globs' one spelling.
    let globs = match &input.globs {
        Some(globs) => {
            refuse_credentials("globs", globs)?;
            Some(
                crate::board::claims::check_globs(globs, board.case())
                    .map_err(|e| CapabilityError::invalid_input(e.to_string()))?,
            )
        }
        None => None,
    };
    let view = everyone(ctx)?;
    let identity_of = |pid: u32| -> Option<Identity> {
        if pid == board.me().pid {
            return Some(board.me().clone());
        }
        let record = view.reading.others.iter().find(|r| r.pid == pid)?;
        Some(record.identity())
    };
    let client_of = |pid: u32, session: u64| -> String {
        view.peers
            .iter()
            .find(|p| p.pid == pid && p.id == session)
            .map_or_else(|| THE_PROCESS.to_string(), |p| p.client_name.clone())
    };
    let mut addressees: Vec<Addressee> = Vec::new();
    // Agents of other clones, reached through the board shared on the remote.
    let mut far: Vec<Faraway> = Vec::new();
    let mut far_all = false;
    let addressed = if let Some(to) = &input.to {
        let found = view
            .peers
            .iter()
            .find(|p| i64::from(p.pid) == to.pid && p.id as i64 == to.id);
        let faraway = || {
            board
                .faraway()
                .into_iter()
                .find(|f| i64::from(f.pid) == to.pid && f.session as i64 == to.id)
        };
        let process = u32::try_from(to.pid).ok().and_then(identity_of);
        if found.is_none() || process.is_none() {
            if let Some(f) = faraway() {
                return send_far(ctx, board, me, vec![f], None, &input.subject, &body);
            }
        }
        let (Some(peer), Some(process)) = (found, process) else {
            return Err(CapabilityError::not_found(format!(
                "no peer with `pid` {} and `id` {} is on the repository's board; peers.list names every peer",
                to.pid, to.id
            )));
        };
        addressees.push(Addressee {
            handle: peer.handle.clone(),
            to: To {
                process,
                session: peer.id,
            },
            worktree: peer.worktree.clone(),
            this_process: peer.this_process,
            client: peer.client_name.clone(),
        });
        Addressed::Peer
    } else if let Some(globs) = &globs {
        for held in board.holders_of(globs) {
            let holder = &held.holder;
            let session = holder.claim.session;
            let is_me = holder.this_process && session == me;
            let already = addressees
                .iter()
                .any(|a| a.to.process.pid == holder.pid && a.to.session == session);
            if is_me || already {
                continue;
            }
            if let Some(f) = faraway_holder(&held) {
                if !far.contains(&f) {
                    far.push(f);
                }
                continue;
            }
            let Some(process) = identity_of(holder.pid) else {
                continue;
            };
            addressees.push(Addressee {
                handle: held.handle.clone(),
                to: To { process, session },
                worktree: holder.worktree.clone(),
                this_process: holder.this_process,
                client: client_of(holder.pid, session),
            });
        }
        Addressed::Holders {
            globs: globs.clone(),
        }
    } else {
        for peer in &view.peers {
            if peer.this_process && peer.id == me {
                continue;
            }
            let Some(process) = identity_of(peer.pid) else {
                continue;
            };
            addressees.push(Addressee {
                handle: peer.handle.clone(),
                to: To {
                    process,
                    session: peer.id,
                },
                worktree: peer.worktree.clone(),
                this_process: peer.this_process,
                client: peer.client_name.clone(),
            });
        }
        far = board.faraway();
        far_all = !far.is_empty();
        Addressed::All
    };
    let from = Sender {
        pid: board.me().pid,
        session: me,
        worktree: board.worktree().to_string(),
        client: ctx
            .caller()
            .and_then(|id| ctx.peers().get(id))
            .map_or_else(|| THE_PROCESS.to_string(), |p| p.client_name),
    };
    let (mut recipients, mut undelivered) =
        deliver(board, &from, addressees, &addressed, &input.subject, &body);
    if !far.is_empty() {
        let sent = send_far(ctx, board, me, far, Some(far_all), &input.subject, &body)?;
        recipients.extend(sent.recipients);
        undelivered.extend(sent.undelivered);
    }
    Ok(SendOutput {
        recipients,
        undelivered,
        unread: unread(ctx),
    })
}

/// Sends to agents of other clones through the board shared on the remote (`all`: to every
/// agent of every other clone, those known now named as recipients); each recipient's process
/// files the message when it next looks and numbers it then, so a recipient is answered with
/// the key its inbox will show, and no number.
fn send_far(
    ctx: &Call,
    board: &crate::board::Board,
    me: u64,
    far: Vec<Faraway>,
    all: Option<bool>,
    subject: &str,
    body: &str,
) -> Result<SendOutput, CapabilityError> {
    let sender = ctx.peers().get(me).filter(|_| me != 0);
    let outgoing = Outgoing {
        session: me,
        handle: sender.as_ref().map_or_else(
            || crate::board::peers::handle_of(board.me().pid, 0, 0),
            |p| p.handle.clone(),
        ),
        client: sender.map_or_else(|| THE_PROCESS.to_string(), |p| p.client_name),
        to: (all != Some(true)).then(|| far.clone()),
        subject: subject.to_string(),
        body: body.to_string(),
    };
    let mut out = SendOutput {
        recipients: Vec::new(),
        undelivered: Vec::new(),
        unread: unread(ctx),
    };
    match board.send_far(&outgoing) {
        Ok(keys) => {
            out.recipients = (far.into_iter().enumerate())
                .map(|(n, f)| {
                    let key = keys.get(n).or(keys.first()).cloned().unwrap_or_default();
                    far_recipient(f, key)
                })
                .collect()
        }
        Err(e) => {
            out.undelivered = far
                .into_iter()
                .map(|f| Undelivered {
                    pid: i64::from(f.pid),
                    id: f.session as i64,
                    code: "unavailable".into(),
                    reason: e.to_string(),
                })
                .collect()
        }
    }
    Ok(out)
}

fn far_recipient(f: Faraway, key: String) -> Recipient {
    Recipient {
        pid: i64::from(f.pid),
        id: f.session as i64,
        handle: f.handle,
        worktree: format!("{}:{}", f.machine, f.worktree),
        this_process: false,
        message: None,
        key,
        dropped: 0,
        client_supplied: RecipientClientSupplied { client: f.client },
    }
}

fn message_view(m: inbox::Message) -> Message {
    let r = m.record;
    let (addressed, globs) = match r.addressed {
        Addressed::Peer => (MessageAddressed::Peer, None),
        Addressed::Holders { globs } => (MessageAddressed::Holders, Some(globs)),
        Addressed::All => (MessageAddressed::All, None),
    };
    Message {
        id: m.id as i64,
        key: r.key,
        read: m.read,
        sent_at: crate::rfc3339::of_secs(r.sent_at),
        from: MessageFrom {
            pid: i64::from(r.from.pid),
            id: r.from.session as i64,
            handle: Some(crate::board::record::handle_of(
                r.from.pid,
                r.from.session,
                0,
            )),
            worktree: r.from.worktree,
        },
        addressed,
        globs,
        client_supplied: MessageClientSupplied {
            client: r.from.client,
            subject: r.subject,
            body: r.body,
        },
    }
}

/// The most text (subjects and bodies) one inbox page holds beyond its first message.
pub const PAGE_BODY_BYTES: usize = 12 * 1024;

pub(super) fn inbox(ctx: &Call, input: InboxInput) -> Result<InboxOutput, CapabilityError> {
    let board = shared_board(ctx)?;
    let found = board.inbox(ctx.agent()?);
    let unread_only = input.unread_only;
    let matching: Vec<_> = found
        .messages
        .into_iter()
        .filter(|m| !(unread_only && m.read))
        .collect();
    let total = matching.len() as i64;
    let offset = usize::try_from(input.offset).unwrap_or(0);
    let limit = usize::try_from(input.limit).unwrap_or(1).max(1);
    // A body may be 16 KiB: a page also stops before its bodies pass a budget, so ten long
    // messages do not fill a model's context; `total` and `offset` lead to the rest.
    let mut bodies = 0usize;
    let messages = matching
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(message_view)
        .take_while(|m| {
            let first = bodies == 0;
            bodies += m.client_supplied.body.len() + m.client_supplied.subject.len();
            first || bodies <= PAGE_BODY_BYTES
        })
        .collect();
    Ok(InboxOutput {
        unread: found.unread as i64,
        dropped: found.dropped as i64,
        bound: inbox::MAX_MESSAGES as i64,
        total,
        offset: input.offset,
        messages,
        ignored: found
            .ignored
            .into_iter()
            .map(|i| PeersInboxOutputIgnoredItem {
                file: i.file,
                code: i.code.to_string(),
                reason: i.reason,
            })
            .collect(),
    })
}

pub(super) fn mark_read(
    ctx: &Call,
    input: MarkReadInput,
) -> Result<MarkReadOutput, CapabilityError> {
    let board = shared_board(ctx)?;
    let ids: Option<Vec<u64>> = input.ids.map(|ids| {
        ids.into_iter()
            .filter_map(|i| u64::try_from(i).ok())
            .collect()
    });
    let marked = board
        .mark_read(ctx.agent()?, ids.as_deref())
        .map_err(|e| CapabilityError::refused(format!("{}: {e}", e.code())))?;
    Ok(MarkReadOutput {
        marked: marked.into_iter().map(|i| i as i64).collect(),
        unread: unread(ctx),
    })
}

/// Every message the board's inboxes hold, newest first; one entry per message however many
/// agents it was filed for.
pub(super) fn every_message(
    ctx: &Call,
    input: MessagesInput,
) -> Result<MessagesOutput, CapabilityError> {
    let board = shared_board(ctx)?;
    let view = everyone(ctx)?;
    let handle_of = |pid: u32, session: u64| -> String {
        view.peers
            .iter()
            .find(|p| p.pid == pid && p.id == session)
            .map_or_else(
                || crate::board::record::handle_of(pid, session, 0),
                |p| p.handle.clone(),
            )
    };
    let mut processes = vec![board.me().clone()];
    processes.extend(view.reading.others.iter().map(|r| r.identity()));
    // One message filed in several inboxes is the same record, but for its recipient.
    let mut found: Vec<(inbox::MessageRecord, Vec<SentTo>)> = Vec::new();
    for process in &processes {
        for (session, m) in board.messages_of(process) {
            let to = SentTo {
                handle: handle_of(process.pid, session),
                pid: i64::from(process.pid),
                id: session as i64,
                read: m.read,
            };
            let same = |r: &inbox::MessageRecord| {
                r.from == m.record.from
                    && r.sent_at == m.record.sent_at
                    && r.addressed == m.record.addressed
                    && r.subject == m.record.subject
                    && r.body == m.record.body
            };
            match found.iter_mut().find(|(r, _)| same(r)) {
                Some((_, recipients)) => recipients.push(to),
                None => found.push((m.record, vec![to])),
            }
        }
    }
    let wanted = |r: &inbox::MessageRecord, to: &[SentTo]| {
        input.handle.as_ref().is_none_or(|h| {
            *h == handle_of(r.from.pid, r.from.session) || to.iter().any(|t| t.handle == *h)
        })
    };
    found.retain(|(r, to)| wanted(r, to));
    found.sort_by_key(|(r, _)| std::cmp::Reverse(r.sent_at));
    let total = found.len() as i64;
    let limit = usize::try_from(input.limit).unwrap_or(1).max(1);
    let messages = found
        .into_iter()
        .take(limit)
        .map(|(r, recipients)| {
            let (addressed, globs) = match r.addressed {
                Addressed::Peer => (SentAddressed::Peer, None),
                Addressed::Holders { globs } => (SentAddressed::Holders, Some(globs)),
                Addressed::All => (SentAddressed::All, None),
            };
            Sent {
                sent_at: crate::rfc3339::of_secs(r.sent_at),
                from: SentFrom {
                    handle: handle_of(r.from.pid, r.from.session),
                    pid: i64::from(r.from.pid),
                    id: r.from.session as i64,
                    worktree: r.from.worktree,
                },
                addressed,
                globs,
                recipients,
                client_supplied: SentText {
                    client: r.from.client,
                    subject: r.subject,
                    body: r.body,
                },
            }
        })
        .collect();
    Ok(MessagesOutput {
        messages,
        total,
        bound: inbox::MAX_MESSAGES as i64,
    })
}
