//! The part of the `initialize` and `server/discover` instructions that carries the layer itself:
//! the statement of every active blocking rule and each skill with its description,
//! so a client that defers tool definitions still learns them, bounded at [`MAX_INSTRUCTIONS`]
//! bytes with a sentence saying what was left out and which tool lists it. Advisory rules are a
//! tool call away and stay out.

use crate::context::Context;
use crate::layer::Index;
use crate::registry;

/// The instructions each era carries as a client receives them (legacy: the `initialize` result,
/// modern: `server/discover`'s), eras carrying the same text grouped: `(eras, text)`.
pub fn by_era(ctx: &Context) -> Vec<(Vec<&'static str>, String)> {
    let legacy = super::server::instructions(ctx);
    let modern = match super::era::discover(super::server::instructions(ctx)).remove("instructions")
    {
        Some(serde_json::Value::String(text)) => text,
        _ => String::new(),
    };
    if legacy == modern {
        vec![(vec!["legacy", "modern"], legacy)]
    } else {
        vec![(vec!["legacy"], legacy), (vec!["modern"], modern)]
    }
}

/// The blocking rules' and the skills' items of one generation. They depend on the index alone
/// and are kept for the generation (`Context::per_generation`): deriving them read every rule's
/// metadata, 41 ms at 10,000 rules on every `initialize` and `server/discover`.
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
                let scope = match metadata.get("applies_to") {
                    Some(serde_json::Value::Array(globs)) => {
                        let globs: Vec<&str> = globs.iter().filter_map(|g| g.as_str()).collect();
                        format!(" (for {})", globs.join(", "))
                    }
                    _ => String::new(),
                };
                let statement = text("statement").unwrap_or_default();
                rules.push(format!(" {}{scope}: {}", o.identity, statement.trim()));
            }
            "skill" => skills.push(format!(
                " {}: {}",
                o.identity,
                o.description.as_deref().unwrap_or("").trim()
            )),
            _ => {}
        }
    }
    Items(rules, skills)
}

/// The most bytes the whole instructions text may have.
pub const MAX_INSTRUCTIONS: usize = 16 * 1024;

/// The sentences to append to `head` (today's instructions), keeping the whole within
/// [`MAX_INSTRUCTIONS`].
pub fn append(ctx: &Context, head: &mut String) {
    let Ok(index) = ctx.index() else {
        return;
    };
    let list = registry::by_id("objects.list")
        .and_then(|(_, d)| d.tool)
        .unwrap_or("tools/list");
    let applicable = registry::by_id("objects.applicable").and_then(|(_, d)| d.tool);
    let items = ctx.per_generation(index.generation, || derive_items(&index));
    let (rules, skills) = (&items.0, &items.1);
    let total = (rules.len(), skills.len());
    let mut shown = (0, 0);
    let reserve = 400;
    let mut body = String::new();
    let push_all = |body: &mut String, title: &str, items: &[String], count: &mut usize| {
        if items.is_empty() {
            return;
        }
        let mut section = format!(" {title}:");
        for item in items {
            if head.len() + body.len() + section.len() + item.len() + 1 + reserve > MAX_INSTRUCTIONS
            {
                break;
            }
            section.push_str(item);
            section.push(';');
            *count += 1;
        }
        if *count > 0 {
            section.pop();
            section.push('.');
            body.push_str(&section);
        }
    };
    push_all(
        &mut body,
        "Blocking rules (follow them; each names its scope when it has one)",
        rules,
        &mut shown.0,
    );
    push_all(&mut body, "Skills", skills, &mut shown.1);
    head.push_str(&body);
    if shown != total {
        head.push_str(&format!(
            " Left out for length: {} of {} blocking rules and {} of {} skills; {list} with kind rule or skill lists them all",
            total.0 - shown.0,
            total.0,
            total.1 - shown.1,
            total.1
        ));
        if let Some(applicable) = applicable {
            head.push_str(&format!(
                ", and {applicable} names the rules for the paths you edit"
            ));
        }
        head.push('.');
    }
}
