//! A synthetic layer for measuring search: `knowledge` objects of about 1.5 KB whose titles,
//! descriptions, tags and bodies are drawn from a vocabulary of a few hundred words with a skew
//! (a few words common, most rare), so postings have realistic lengths; and questions of one to
//! six terms drawn the same way. Deterministic: object `i` is always the same text. Shared by
//! `benches/search.rs` and `scripts/bench/search-tantivy` (through `#[path]`), so both measure
//! the same layer.

/// One synthetic object's parts.
pub struct Doc {
    pub id: String,
    pub title: String,
    pub description: String,
    pub tags: Vec<String>,
    pub body: String,
}

const WORDS: &[&str] = &[
    "layer",
    "rule",
    "prompt",
    "skill",
    "decision",
    "registry",
    "capability",
    "schema",
    "index",
    "search",
    "query",
    "object",
    "kind",
    "identity",
    "title",
    "description",
    "statement",
    "body",
    "test",
    "suite",
    "commit",
    "branch",
    "merge",
    "review",
    "change",
    "release",
    "version",
    "tag",
    "build",
    "cache",
    "server",
    "client",
    "session",
    "request",
    "answer",
    "error",
    "code",
    "word",
    "message",
    "token",
    "secret",
    "credential",
    "debug",
    "output",
    "log",
    "trace",
    "level",
    "database",
    "backup",
    "restore",
    "migration",
    "rollback",
    "table",
    "column",
    "row",
    "key",
    "value",
    "store",
    "file",
    "directory",
    "path",
    "root",
    "repository",
    "worktree",
    "git",
    "watcher",
    "event",
    "poll",
    "thread",
    "core",
    "process",
    "signal",
    "socket",
    "pipe",
    "frame",
    "protocol",
    "transport",
    "stdio",
    "http",
    "route",
    "header",
    "origin",
    "host",
    "body",
    "limit",
    "timeout",
    "deadline",
    "retry",
    "queue",
    "worker",
    "job",
    "task",
    "plan",
    "issue",
    "status",
    "owner",
    "team",
    "agent",
    "editor",
    "shell",
    "command",
    "flag",
    "argument",
    "option",
    "default",
    "config",
    "manifest",
    "source",
    "section",
    "front",
    "matter",
    "markdown",
    "yaml",
    "json",
    "field",
    "type",
    "enum",
    "string",
    "integer",
    "array",
    "map",
    "list",
    "set",
    "order",
    "sort",
    "page",
    "cursor",
    "offset",
    "count",
    "total",
    "hit",
    "snippet",
    "score",
    "rank",
    "term",
    "phrase",
    "stem",
    "filter",
    "parity",
    "surface",
    "cockpit",
    "theme",
    "style",
    "script",
    "browser",
    "form",
    "button",
    "link",
    "image",
    "font",
    "color",
    "width",
    "height",
    "mobile",
    "deploy",
    "rollout",
    "canary",
    "metric",
    "alert",
    "dashboard",
    "incident",
    "postmortem",
    "runbook",
    "oncall",
    "paging",
    "escalation",
    "latency",
    "throughput",
    "memory",
    "disk",
    "cpu",
    "network",
    "dns",
    "certificate",
    "tls",
    "proxy",
    "firewall",
    "permission",
    "role",
    "user",
    "account",
    "password",
    "login",
    "audit",
    "compliance",
    "privacy",
    "license",
    "vendor",
    "dependency",
    "crate",
    "package",
    "lockfile",
    "toolchain",
    "compiler",
    "linter",
    "formatter",
    "warning",
    "panic",
    "unwrap",
    "result",
    "option",
    "trait",
    "module",
    "function",
    "struct",
    "lifetime",
    "borrow",
    "async",
    "tokio",
    "future",
    "stream",
    "channel",
    "mutex",
    "atomic",
    "lock",
    "deadlock",
    "race",
    "benchmark",
    "profile",
    "flamegraph",
    "allocation",
    "heap",
    "stack",
    "vector",
    "slice",
    "byte",
    "utf",
    "unicode",
    "locale",
    "timezone",
    "clock",
    "date",
    "calendar",
    "schedule",
    "cron",
    "backfill",
    "pipeline",
    "stage",
    "artifact",
    "container",
    "image",
    "volume",
    "cluster",
    "node",
    "pod",
    "replica",
    "shard",
    "partition",
    "snapshot",
    "checkpoint",
    "lease",
    "quorum",
    "consensus",
    "leader",
    "follower",
    "election",
    "heartbeat",
];

const GLUE: &[&str] = &[
    "the", "a", "an", "of", "to", "in", "for", "with", "on", "is", "are", "be", "when", "before",
    "after", "every", "each", "and", "or", "not", "never", "always", "should", "must",
];

const VERBS: &[&str] = &[
    "keeps", "checks", "writes", "reads", "restores", "rolls", "prints", "hides", "refuses",
    "answers", "builds", "watches", "merges", "reviews", "deploys", "rotates", "caches", "logs",
    "names", "sorts", "filters", "measures", "retries", "locks", "signs", "tests", "migrates",
];

/// A small deterministic generator (xorshift), seeded per object.
struct Draw(u64);

impl Draw {
    fn new(seed: u64) -> Draw {
        Draw(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// An index below `n`, skewed towards the start: the square of a uniform draw.
    fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next() % 10_000) as f64 / 10_000.0;
        ((u * u) * n as f64) as usize
    }

    fn word(&mut self) -> &'static str {
        WORDS[self.skewed(WORDS.len())]
    }

    fn any<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[(self.next() % of.len() as u64) as usize]
    }

    fn sentence(&mut self) -> String {
        let mut s = String::new();
        let words = 8 + (self.next() % 10) as usize;
        for i in 0..words {
            let w = match i % 4 {
                1 => self.any(GLUE),
                2 if i == 2 => self.any(VERBS),
                _ => self.word(),
            };
            if i == 0 {
                let mut c = w.chars();
                if let Some(first) = c.next() {
                    s.extend(first.to_uppercase());
                    s.push_str(c.as_str());
                }
            } else {
                s.push(' ');
                s.push_str(w);
            }
        }
        s.push('.');
        s
    }
}

/// Object `i` of the synthetic layer.
pub fn doc(i: usize) -> Doc {
    let mut d = Draw::new(i as u64 + 1);
    let title = format!("{} {} {}", d.any(VERBS), d.word(), d.word());
    let description = d.sentence();
    let tags = vec![d.word().to_string(), d.word().to_string()];
    let mut body = String::new();
    while body.len() < 1_100 {
        if body.len() % 3 == 0 {
            body.push_str(&format!("\n## {} {}\n\n", d.word(), d.word()));
        }
        body.push_str(&d.sentence());
        body.push(' ');
    }
    Doc {
        id: format!("note-{i:05}"),
        title,
        description,
        tags,
        body,
    }
}

/// Object `i` as a `knowledge` file: front matter, a heading and the body.
pub fn markdown(d: &Doc) -> String {
    format!(
        "---\nid: {}\ntitle: {}\ndescription: {}\ntags: [{}]\n---\n\n# {}\n\n{}\n",
        d.id,
        d.title,
        d.description.trim_end_matches('.'),
        d.tags.join(", "),
        d.title,
        d.body
    )
}

/// Questions of `terms` words (1 to 6), `count` of them, drawn as the objects' words are; a few
/// glue words are mixed in, as a person asking would.
pub fn questions(terms: usize, count: usize) -> Vec<String> {
    (0..count)
        .map(|q| {
            let mut d = Draw::new(1_000_003 + (terms * 1_000 + q) as u64);
            let mut words: Vec<&str> = Vec::new();
            if q % 2 == 0 {
                words.push("how");
                words.push("do");
            }
            for _ in 0..terms {
                words.push(d.word());
            }
            words.join(" ")
        })
        .collect()
}
