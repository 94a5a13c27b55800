//! Pairing declarations with handlers: each capability needs its `pub fn` in
//! `src/capabilities/<namespace>.rs`, and each `pub fn` there needs a declaration. Compiled only by
//! `build.rs` and the test crate.

use super::load::Registry;
use super::violation::Violation;

/// The public functions one handler file defines, as the build found them.
#[derive(Clone, Debug)]
pub struct HandlerFile {
    /// `src/capabilities/<namespace>.rs`.
    pub path: String,
    pub namespace: String,
    /// `pub fn` names with the number of parameters each takes.
    pub functions: Vec<(String, usize)>,
}

/// The handler module every namespace's handlers live in.
pub fn handler_path(namespace: &str) -> String {
    format!("src/capabilities/{namespace}.rs")
}

/// Pairs declarations with handlers: a declaration without its `pub fn`, a `pub fn` without a
/// declaration, and a handler of the wrong shape are each a violation naming both files.
pub fn check_handlers(registry: &Registry, handlers: &[HandlerFile]) -> Vec<Violation> {
    let mut out = Vec::new();
    for c in &registry.capabilities {
        let path = handler_path(&c.namespace);
        match handlers.iter().find(|h| h.namespace == c.namespace) {
            None => out.push(Violation::new(c.file.clone(), "id", format!(
                    "\"{}\" has no handler: {path} does not exist (write `pub fn {}(ctx: &Context, input: ...)` there)",
                    c.id, c.name
                ))),
            Some(h) => match h.functions.iter().find(|(f, _)| *f == c.name) {
                None => out.push(Violation::new(c.file.clone(), "id", format!(
                        "\"{}\" has no handler: {path} has no `pub fn {}`",
                        c.id, c.name
                    ))),
                Some((_, 2)) => {}
                Some((_, n)) => out.push(Violation::new(path.clone(), String::new(), format!(
                        "`pub fn {}` takes {n} parameters; the handler of {} takes (ctx: &Context, input)",
                        c.name, c.file
                    ))),
            },
        }
    }
    for h in handlers {
        for (f, _) in &h.functions {
            let declared = registry
                .capabilities
                .iter()
                .any(|c| c.namespace == h.namespace && c.name == *f);
            if !declared {
                out.push(Violation::new(h.path.clone(), String::new(), format!(
                        "`pub fn {f}` has no declaration: registry/{}/{f}.yaml does not exist (make it private or declare it)",
                        h.namespace
                    )));
            }
        }
    }
    out
}
