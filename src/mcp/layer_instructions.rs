//! The `initialize` and `server/discover` instructions, within the cut a client makes. The head
//! is derived from the registry, the index and the mode (what majordomus serves here, counted,
//! the first calls to make, the URI scheme, which tools write); the rest carries the layer
//! itself. Claude Code passes its model the first 2,048 characters of a
//! server's instructions and drops the rest, so the whole text is at most [`MAX_INSTRUCTIONS`]
//! characters as JavaScript counts them (UTF-16 units), most important first. After the head
//! (what majordomus is for here and the first call to make) come the active blocking rules, by
//! id and statement, repository-wide ones first and then the broadest scope first; then the
//! skills by name; then what was left out, counted, with the tool that lists it. An item is
//! shown whole or not at all, never cut inside a sentence. Advisory rules are a tool call away
//! and stay out.

use crate::call::Call;
use crate::layer::Index;
use crate::registry::{self, rt::Effect};

/// The `initialize` instructions: where there is no layer, first what is missing and what to
/// run, so that a client shows the reason rather than a tool's refusal only.
pub fn instructions(ctx: &Call) -> String {
    let text = derived(ctx);
    match ctx.layer() {
        Err(crate::layer::LayerError::NoLayer { .. }) => format!(
            "No AI layer here: no `.ai/manifest.yaml` in this directory or above, so every tool that reads the layer answers not_found. Run `majordomus init` at the repository's root (or ask the user to), then restart this server. {text}"
        ),
        _ => text,
    }
}

/// The instructions derived from the registry, the index and the mode on every call: what the
/// layer is, the first calls to make, the URI scheme, which tools write, which are listed; then
/// the layer's own part ([`append`]), all within the cut a client makes.
fn derived(ctx: &Call) -> String {
    let projected: Vec<_> = registry::all().iter().filter(|d| ctx.projects(d)).collect();
    let tools: Vec<&str> = projected
        .iter()
        .filter(|d| ctx.projects_tool(d))
        .filter_map(|d| d.tool)
        .collect();
    let builtin_resources = projected.iter().filter(|d| d.resource.is_some()).count();
    // Counted as `resources/list` lists them: the builtin ones, every object, every skill file.
    let (objects, skill_files, state) = match ctx.index() {
        // A one-shot build of some kinds (doctor's) counts the files it left unread as the
        // objects a server would make of them.
        Ok(index) => (
            index.objects.len() + index.left_unread,
            index.skills.iter().map(|s| s.files.len()).sum::<usize>(),
            // What `repository.info` says: a generation kept after its repository moved, or
            // after the last rebuild failed, is stale whatever its own state.
            match ctx.layer_if_open().and_then(|live| live.stale()) {
                Some(_) => "stale".to_string(),
                None => index.state().as_str().to_string(),
            },
        ),
        Err(e) => (0, 0, format!("unavailable ({})", e.message())),
    };
    let tool_of = |id: &str| {
        registry::by_id(id)
            .filter(|(_, d)| ctx.projects_tool(d))
            .and_then(|(_, d)| d.tool)
    };
    let writers: Vec<&str> = projected
        .iter()
        .filter(|d| d.effect == Effect::RepositoryMutation && ctx.projects_tool(d))
        .filter_map(|d| d.tool)
        .collect();
    let writers_sentence = if writers.is_empty() {
        "Nothing here writes to the repository.".to_string()
    } else {
        format!(
            "Only {} write to the repository; every other tool and resource reads.",
            writers.join(", ")
        )
    };
    // What the layer is and the first call to make come first: a client that cuts the text
    // (Claude Code, at 2,048 characters) still passes them.
    let mut text = format!(
        "majordomus serves this repository's AI layer (its rules, decisions, issues and skills): \
         {objects} objects (index state {state}), {} capabilities, {} tools, {} resources.",
        projected.len(),
        tools.len(),
        builtin_resources + objects + skill_files,
    );
    if let Some(applicable) = tool_of("objects.applicable") {
        text.push_str(&format!(
            " Before you edit a path, call {applicable} with it: it names the rules that govern it."
        ));
    }
    if let Some(ready) = tool_of("plan.ready") {
        text.push_str(&format!(" To find work, call {ready}."));
    }
    text.push_str(" Read a URI majordomus://<kind>/<identity> with resources/read");
    if let Some(get) = tool_of("objects.get") {
        text.push_str(&format!(" or {get}"));
    }
    text.push_str(&format!(". {writers_sentence}"));
    let selection = ctx.toolsets();
    if !selection.lists_every_tool() {
        let declared = registry::all()
            .iter()
            .filter(|d| d.tool.is_some() && ctx.projects(d))
            .count();
        text.push_str(&format!(
            " Listed: {} of {declared} tools, {}.",
            tools.len(),
            selection.why()
        ));
    }
    append(ctx, &mut text);
    text
}

/// The instructions each era carries as a client receives them (legacy: the `initialize` result,
/// modern: `server/discover`'s), eras carrying the same text grouped: `(eras, text)`.
pub fn by_era(ctx: &Call) -> Vec<(Vec<&'static str>, String)> {
    let legacy = instructions(ctx);
    let modern = match super::era::discover(instructions(ctx)).remove("instructions") {
        Some(serde_json::Value::String(text)) => text,
        _ => String::new(),
    };
    if legacy == modern {
        vec![(vec!["legacy", "modern"], legacy)]
    } else {
        vec![(vec!["legacy"], legacy), (vec!["modern"], modern)]
    }
}

/// The most characters the whole instructions text may have: what Claude Code passes its model
/// (it cuts there and appends "… [truncated]"). Not configurable: a longer text would reach no
/// model of that client whole.
pub const MAX_INSTRUCTIONS: usize = 2048;

/// A blocking rule whose statement is longer than this many characters is named by its id with
/// a pointer to it instead: one rule never takes the room of the several that follow it.
pub const MAX_STATEMENT: usize = 400;

/// `text` as Claude Code passes it to its model: its first [`MAX_INSTRUCTIONS`] characters
/// (UTF-16 units), the whole when it is no longer, as these instructions always are.
pub fn as_cut(text: &str) -> &str {
    let mut units = 0;
    for (at, c) in text.char_indices() {
        units += c.len_utf16();
        if units > MAX_INSTRUCTIONS {
            return &text[..at];
        }
    }
    text
}

/// The length of `text` as a client written in JavaScript counts it (UTF-16 code units), which is
/// how the cut is made.
pub fn length(text: &str) -> usize {
    text.encode_utf16().count()
}

/// One active blocking rule, as the instructions show it.
struct Rule {
    /// `id@version`.
    identity: String,
    /// Its `applies_to` globs; none for a rule of the whole repository.
    globs: Vec<String>,
    statement: String,
}

impl Rule {
    /// How broad the rule is, smallest first: a repository-wide rule, then a scope whose
    /// broadest glob fixes fewer leading path segments (`**/*.rs` before `src/**` before
    /// `src/mcp/**`), then the one with more globs; the caller breaks ties by identity.
    fn breadth(&self) -> (usize, usize, std::cmp::Reverse<usize>) {
        if self.globs.is_empty() {
            return (0, 0, std::cmp::Reverse(0));
        }
        let fixed = self
            .globs
            .iter()
            .map(|g| match g.find(['*', '?', '[', '{']) {
                // Each `/` before the first wildcard closes a fixed segment.
                Some(at) => g[..at].matches('/').count(),
                // No wildcard: one path, every segment fixed.
                None => g.matches('/').count() + 1,
            })
            .min()
            .unwrap_or(0);
        (1, fixed, std::cmp::Reverse(self.globs.len()))
    }

    /// The rule as one item: `[id]` or `[id, for globs]`, then its statement ending in one stop;
    /// a statement past [`MAX_STATEMENT`] is replaced by where to read it.
    fn item(&self) -> String {
        let scope = if self.globs.is_empty() {
            String::new()
        } else {
            format!(", for {}", self.globs.join(", "))
        };
        let statement = self.statement.trim();
        let statement = if statement.chars().count() > MAX_STATEMENT {
            format!(
                "Its statement is long: read majordomus://rule/{}.",
                self.identity
            )
        } else if statement.ends_with(['.', '!', '?']) {
            statement.to_string()
        } else {
            format!("{statement}.")
        };
        format!(" [{}{scope}] {statement}", self.identity)
    }
}

/// The blocking rules' and the skills' items of one generation, in the order they are shown.
/// They depend on the index alone and are kept for the generation (`Context::per_generation`):
/// deriving them read every rule's metadata, 41 ms at 10,000 rules on every `initialize` and
/// `server/discover`.
struct Items(Vec<String>, Vec<String>);

fn derive_items(index: &Index) -> Items {
    let mut rules = Vec::new();
    let mut skills = Vec::new();
    for o in &index.objects {
        match o.kind.as_str() {
            "rule" => {
                // In compact JSON an unescaped `"class":"blocking"` is a key and its value: a rule
                // without it is not blocking and costs no parse (10,000 advisory rules: 40 ms).
                if !o.metadata.as_json().contains("\"class\":\"blocking\"") {
                    continue;
                }
                let metadata = o.metadata.to_map();
                let text = |key: &str| metadata.get(key).and_then(|v| v.as_str());
                if text("class") != Some("blocking") || text("status") != Some("active") {
                    continue;
                }
                let globs = match metadata.get("applies_to") {
                    Some(serde_json::Value::Array(globs)) => globs
                        .iter()
                        .filter_map(|g| g.as_str().map(str::to_string))
                        .collect(),
                    _ => Vec::new(),
                };
                rules.push(Rule {
                    identity: o.identity.clone(),
                    globs,
                    statement: text("statement").unwrap_or_default().to_string(),
                });
            }
            "skill" => skills.push(format!(" {}", o.identity)),
            _ => {}
        }
    }
    rules.sort_by(|a, b| {
        a.breadth()
            .cmp(&b.breadth())
            .then_with(|| a.identity.cmp(&b.identity))
    });
    Items(rules.iter().map(Rule::item).collect(), skills)
}

/// What closes the text when something was left out: how many of each, and which tools list
/// them. Its length is what [`append`] keeps free.
fn left_out(
    rules: (usize, usize),
    skills: (usize, usize),
    list: Option<&str>,
    applicable: Option<&str>,
) -> String {
    // resources/list takes no filter: where no listing tool is served, the text names the URIs
    // the left-out objects carry among its resources instead of a filter it does not have.
    let how = match list {
        Some(tool) => format!("{tool} with kind rule or skill lists them"),
        None => "resources/list lists them as majordomus://rule/ and majordomus://skill/ URIs"
            .to_owned(),
    };
    let mut text = format!(
        " Left out for length: {} of {} blocking rules and {} of {} skills; {how}",
        rules.1 - rules.0,
        rules.1,
        skills.1 - skills.0,
        skills.1
    );
    if let Some(applicable) = applicable {
        text.push_str(&format!(", {applicable} the rules of a path"));
    }
    text.push('.');
    text
}

/// Appends the layer's part to `head` (the instructions' first sentences), keeping the whole
/// within [`MAX_INSTRUCTIONS`]: each section's items in order while they fit whole, and the
/// sentence saying what was left out when anything was.
pub fn append(ctx: &Call, head: &mut String) {
    let Ok(index) = ctx.index() else {
        return;
    };
    let tool = |id: &str| {
        registry::by_id(id)
            .filter(|(_, d)| ctx.projects_tool(d))
            .and_then(|(_, d)| d.tool)
    };
    let list = tool("objects.list");
    let applicable = tool("objects.applicable");
    let items = ctx.per_generation(index.generation, || derive_items(&index));
    let (rules, skills) = (&items.0, &items.1);
    // The longest the closing sentence can be: with every count at its total.
    let reserve = length(&left_out(
        (0, rules.len()),
        (0, skills.len()),
        list,
        applicable,
    ));
    let mut used = length(head);
    let mut body = String::new();
    let mut section = |title: &str, items: &[String], separator: &str, end: &str| -> usize {
        let mut shown = 0;
        let mut text = format!(" {title}:");
        for item in items {
            let item = if shown == 0 {
                item.clone()
            } else {
                format!("{separator}{item}")
            };
            if used + length(&text) + length(&item) + length(end) + reserve > MAX_INSTRUCTIONS {
                break;
            }
            text.push_str(&item);
            shown += 1;
        }
        if shown > 0 {
            text.push_str(end);
            used += length(&text);
            body.push_str(&text);
        }
        shown
    };
    let rules_shown = section(
        "Blocking rules, the whole repository's and the broadest first (follow them)",
        rules,
        "",
        "",
    );
    let skills_shown = section("Skills", skills, ",", ".");
    head.push_str(&body);
    if (rules_shown, skills_shown) != (rules.len(), skills.len()) {
        head.push_str(&left_out(
            (rules_shown, rules.len()),
            (skills_shown, skills.len()),
            list,
            applicable,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(identity: &str, globs: &[&str], statement: &str) -> Rule {
        Rule {
            identity: identity.into(),
            globs: globs.iter().map(|g| g.to_string()).collect(),
            statement: statement.into(),
        }
    }

    #[test]
    fn the_whole_repositorys_rules_come_first_then_the_broadest_scope() {
        let mut rules = [
            rule("d@1", &["src/mcp/**"], "D"),
            rule("c@1", &["src/**"], "C"),
            rule("b@1", &["**/*.rs"], "B"),
            rule("a@1", &[], "A"),
            rule("e@1", &["Cargo.toml"], "E"),
        ];
        rules.sort_by_key(|r| (r.breadth(), r.identity.clone()));
        let order: Vec<&str> = rules.iter().map(|r| r.identity.as_str()).collect();
        assert_eq!(order, ["a@1", "b@1", "c@1", "e@1", "d@1"]);
    }

    #[test]
    fn an_item_ends_in_one_stop_and_a_long_statement_is_a_pointer() {
        assert_eq!(rule("a@1", &[], "Do it.").item(), " [a@1] Do it.");
        assert_eq!(
            rule("a@1", &["src/**"], "Do it").item(),
            " [a@1, for src/**] Do it."
        );
        let long = rule("a@1", &[], &"word ".repeat(100)).item();
        assert_eq!(
            long,
            " [a@1] Its statement is long: read majordomus://rule/a@1."
        );
    }

    #[test]
    fn a_cut_keeps_the_first_2048_units() {
        assert_eq!(as_cut("short"), "short");
        let long = "é".repeat(3000);
        assert_eq!(length(as_cut(&long)), MAX_INSTRUCTIONS);
    }

    #[test]
    fn the_length_is_counted_as_a_javascript_client_counts_it() {
        assert_eq!(length("abc"), 3);
        assert_eq!(length("é"), 1);
        assert_eq!(length("𝄞"), 2);
    }
}
