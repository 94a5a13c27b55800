//! The classification of surface changes: what changed between two surfaces, each change with its path
//! in the surface and its class — major (removed, renamed, an input narrowed, an output widened
//! or dropped, an effect made more dangerous), minor (added, an input widened), patch (text only).
//! Knows the shape of the surface and of the schema subset; knows nothing of files or git.

use std::fmt;

use serde_json::{Map, Value};

/// How much a change can break a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Patch,
    Minor,
    Major,
}

impl Class {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Class::Patch => "patch",
            Class::Minor => "minor",
            Class::Major => "major",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change: where, how much, and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub class: Class,
    pub what: String,
}

/// Whether a schema describes what a client sends (an input) or what it receives (an output):
/// narrowing breaks the first, widening the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Input,
    Output,
}

impl Dir {
    /// The class of a change that makes the schema accept more (`wider`) or less.
    fn class(self, wider: bool) -> Class {
        match (self, wider) {
            (Dir::Input, true) | (Dir::Output, false) => Class::Minor,
            (Dir::Input, false) | (Dir::Output, true) => Class::Major,
        }
    }
}

/// Keys whose values are prose: a change to them is a patch.
const TEXT: &[&str] = &["title", "description", "about", "help"];

/// The sections of the surface holding named entries, and how an entry is compared.
const SECTIONS: &[(&[&str], Entry)] = &[
    (&["tools"], Entry::Tool),
    (&["resources", "builtin"], Entry::Resource),
    (&["resources", "templates"], Entry::Generic),
    (&["routes"], Entry::Route),
    (&["cli"], Entry::Command),
    (&["errors"], Entry::Generic),
];

#[derive(Clone, Copy)]
enum Entry {
    Tool,
    Resource,
    Route,
    Command,
    Generic,
}

/// The toolsets: one removed breaks a start that names it (major); one added, or a tool moved
/// into or out of one, changes what a selection lists, never what a tool answers (minor). A tool
/// removed altogether is the tools section's change.
fn toolsets(old: &Value, new: &Value, out: &mut Vec<Change>) {
    let sets = |v: &Value| {
        v.pointer("/mcp/toolsets")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (old_sets, new_sets) = (sets(old), sets(new));
    let base = vec!["mcp".to_string(), "toolsets".to_string()];
    for (name, o) in &old_sets {
        let path = child(&base, name);
        match new_sets.get(name) {
            None => push(out, &path, Class::Major, "toolset removed".into()),
            Some(n) => words(Some(o), Some(n), &path, [Class::Minor, Class::Minor], out),
        }
    }
    for name in new_sets.keys().filter(|k| !old_sets.contains_key(*k)) {
        push(
            out,
            &child(&base, name),
            Class::Minor,
            "toolset added".into(),
        );
    }
}

/// Every change from `old` to `new`, in path order.
pub fn diff(old: &Value, new: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    for (section, entry) in SECTIONS {
        let pick = |v: &Value| {
            section
                .iter()
                .try_fold(v, |v, k| v.get(*k))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let path: Vec<String> = section.iter().map(|s| (*s).to_string()).collect();
        entries(&pick(old), &pick(new), &path, *entry, &mut out);
    }
    let eras = |v: &Value| {
        v.pointer("/mcp/eras")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (old_eras, new_eras) = (eras(old), eras(new));
    let base = vec!["mcp".to_string(), "eras".to_string()];
    for (name, o) in &old_eras {
        let path = child(&base, name);
        match new_eras.get(name) {
            None => push(&mut out, &path, Class::Major, "era removed".into()),
            Some(n) => {
                for key in ["versions", "methods", "notifications", "extensions"] {
                    words(
                        o.get(key),
                        n.get(key),
                        &child(&path, key),
                        [Class::Major, Class::Minor],
                        &mut out,
                    );
                }
            }
        }
    }
    for name in new_eras.keys().filter(|k| !old_eras.contains_key(*k)) {
        push(
            &mut out,
            &child(&base, name),
            Class::Minor,
            "era added".into(),
        );
    }
    toolsets(old, new, &mut out);
    out.sort_by(|a, b| a.path.cmp(&b.path).then(a.what.cmp(&b.what)));
    out
}

/// The largest class among `changes`, `None` when there are none.
pub fn class_of(changes: &[Change]) -> Option<Class> {
    changes.iter().map(|c| c.class).max()
}

fn child(path: &[String], key: &str) -> Vec<String> {
    let mut p = path.to_vec();
    p.push(key.to_string());
    p
}

/// `tools.majordomus_get.input`; a segment that is not a plain word is quoted:
/// `routes."GET /api/v1/object"`.
fn render(path: &[String]) -> String {
    path.iter()
        .map(|s| {
            let plain = !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if plain {
                s.clone()
            } else {
                serde_json::to_string(s).unwrap_or_default()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

fn push(out: &mut Vec<Change>, path: &[String], class: Class, what: String) {
    out.push(Change {
        path: render(path),
        class,
        what,
    });
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

/// A section's entries: removed (or renamed: the same capability under another key), added,
/// and changed.
fn entries(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    path: &[String],
    entry: Entry,
    out: &mut Vec<Change>,
) {
    let capability = |v: &Value| {
        v.get("capability")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut renamed_to = Vec::new();
    for (key, o) in old {
        match new.get(key) {
            Some(n) => compare_entry(o, n, &child(path, key), entry, out),
            None => {
                let successor = capability(o).and_then(|id| {
                    new.iter()
                        .find(|(k, n)| {
                            !old.contains_key(*k) && capability(n).as_deref() == Some(&id)
                        })
                        .map(|(k, _)| k.clone())
                });
                match successor {
                    Some(to) => {
                        push(
                            out,
                            &child(path, key),
                            Class::Major,
                            format!("renamed to `{to}`"),
                        );
                        renamed_to.push(to);
                    }
                    None => push(out, &child(path, key), Class::Major, "removed".into()),
                }
            }
        }
    }
    for key in new.keys() {
        if !old.contains_key(key) && !renamed_to.contains(key) {
            push(out, &child(path, key), Class::Minor, "added".into());
        }
    }
}

fn compare_entry(o: &Value, n: &Value, path: &[String], entry: Entry, out: &mut Vec<Change>) {
    by_key(o, n, path, out, |key, p, ov, nv, out| {
        match (entry, key, ov, nv) {
            (_, _, Some(a), Some(b)) if a == b => {}
            (Entry::Tool, "effect", Some(a), Some(b)) => effect(a, b, p, out),
            (Entry::Tool, "annotations", Some(a), Some(b)) => annotations(a, b, p, out),
            (Entry::Tool, "input", Some(a), Some(b)) => schema(a, b, p, Dir::Input, out),
            (Entry::Tool | Entry::Resource, "output", Some(a), Some(b)) => {
                schema(a, b, p, Dir::Output, out)
            }
            (Entry::Route, "parameters", Some(a), Some(b)) => {
                generic_except(a, b, p, &["schema"], out);
                if let (Some(x), Some(y)) = (a.get("schema"), b.get("schema")) {
                    schema(x, y, &child(p, "schema"), Dir::Input, out);
                }
            }
            (Entry::Route, "responses", Some(a), Some(b)) => responses(a, b, p, out),
            (Entry::Command, "args", Some(a), Some(b)) => args(a, b, p, out),
            _ => generic_or_null(ov, nv, p, out),
        }
    });
}

/// Two values key by key when both are objects, otherwise as `generic` compares them: `visit`
/// gets every key of either, in key order, with its path and the value on each side.
fn by_key(
    o: &Value,
    n: &Value,
    path: &[String],
    out: &mut Vec<Change>,
    mut visit: impl FnMut(&str, &[String], Option<&Value>, Option<&Value>, &mut Vec<Change>),
) {
    let (Some(a), Some(b)) = (o.as_object(), n.as_object()) else {
        return generic(o, n, path, out);
    };
    each_key(a, b, path, |key, p, x, y| visit(key, p, x, y, out));
}

/// Every key of `a` or `b`, in key order, with its path and the value on each side.
fn each_key(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    path: &[String],
    mut visit: impl FnMut(&str, &[String], Option<&Value>, Option<&Value>),
) {
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        visit(
            key,
            &child(path, key),
            a.get(key.as_str()),
            b.get(key.as_str()),
        );
    }
}

/// `generic` where either side may be missing, which it reads as null (added or removed).
fn generic_or_null(o: Option<&Value>, n: Option<&Value>, path: &[String], out: &mut Vec<Change>) {
    generic(
        o.unwrap_or(&Value::Null),
        n.unwrap_or(&Value::Null),
        path,
        out,
    );
}

/// Any value without rules of its own: prose is a patch, a key added is minor, a key removed or
/// a value changed is major.
fn generic(o: &Value, n: &Value, path: &[String], out: &mut Vec<Change>) {
    if o == n {
        return;
    }
    let last = path.last().map(String::as_str).unwrap_or_default();
    if TEXT.contains(&last) {
        return push(out, path, Class::Patch, "text changed".into());
    }
    match (o, n) {
        (Value::Object(a), Value::Object(b)) => each_key(a, b, path, |_, p, x, y| match (x, y) {
            (Some(x), Some(y)) => generic(x, y, p, out),
            (Some(_), None) => push(out, p, Class::Major, "removed".into()),
            (None, Some(_)) => push(out, p, Class::Minor, "added".into()),
            (None, None) => {}
        }),
        (Value::Null, _) => push(out, path, Class::Minor, "added".into()),
        (_, Value::Null) => push(out, path, Class::Major, "removed".into()),
        _ => push(
            out,
            path,
            Class::Major,
            format!("changed from {} to {}", short(o), short(n)),
        ),
    }
}

fn generic_except(o: &Value, n: &Value, path: &[String], skip: &[&str], out: &mut Vec<Change>) {
    let strip = |v: &Value| {
        let mut m = v.as_object().cloned().unwrap_or_default();
        for k in skip {
            m.remove(*k);
        }
        Value::Object(m)
    };
    generic(&strip(o), &strip(n), path, out);
}

/// A set of words (versions, methods, enum values): `[removed, added]` give the classes.
fn words(
    o: Option<&Value>,
    n: Option<&Value>,
    path: &[String],
    class: [Class; 2],
    out: &mut Vec<Change>,
) {
    let list = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (list(o), list(n));
    for w in a.iter().filter(|w| !b.contains(w)) {
        push(out, path, class[0], format!("`{w}` removed"));
    }
    for w in b.iter().filter(|w| !a.contains(w)) {
        push(out, path, class[1], format!("`{w}` added"));
    }
}

fn rank(effect: &Value) -> u8 {
    match effect.as_str() {
        Some("read") => 0,
        Some("process_state") => 1,
        _ => 2,
    }
}

fn effect(o: &Value, n: &Value, path: &[String], out: &mut Vec<Change>) {
    let what = format!("effect {} → {}", short(o), short(n));
    let class = if rank(n) > rank(o) {
        Class::Major
    } else {
        Class::Minor
    };
    push(out, path, class, what);
}

/// Hints: a promise withdrawn (read-only, idempotent, closed world) or a new warning
/// (destructive) is major; the reverse is minor.
fn annotations(o: &Value, n: &Value, path: &[String], out: &mut Vec<Change>) {
    by_key(o, n, path, out, |key, p, x, y, out| {
        if x == y {
            return;
        }
        let safe_when_true = matches!(key, "readOnlyHint" | "idempotentHint");
        let unsafe_when_true = matches!(key, "destructiveHint" | "openWorldHint");
        match (x.and_then(Value::as_bool), y.and_then(Value::as_bool)) {
            (Some(was), Some(now)) if safe_when_true || unsafe_when_true => {
                let worse = if safe_when_true {
                    was && !now
                } else {
                    !was && now
                };
                let class = if worse { Class::Major } else { Class::Minor };
                push(out, p, class, format!("{key} {was} → {now}"));
            }
            _ => generic_or_null(x, y, p, out),
        }
    });
}

fn responses(o: &Value, n: &Value, path: &[String], out: &mut Vec<Change>) {
    by_key(o, n, path, out, |_, p, x, y, out| match (x, y) {
        (Some(x), Some(y)) => match (x.get("schema"), y.get("schema")) {
            (Some(s), Some(t)) => schema(s, t, &child(p, "schema"), Dir::Output, out),
            _ => generic(x, y, p, out),
        },
        // A status no longer answered removes nothing a client relies on; a new one is a new
        // outcome to handle.
        (Some(_), None) => push(out, p, Class::Minor, "response removed".into()),
        (None, Some(_)) => push(out, p, Class::Major, "response added".into()),
        (None, None) => {}
    });
}

/// A command's arguments: what a script types.
fn args(o: &Value, n: &Value, path: &[String], out: &mut Vec<Change>) {
    by_key(o, n, path, out, |_, p, x, y, out| match (x, y) {
        (Some(_), None) => push(out, p, Class::Major, "argument removed".into()),
        (None, Some(y)) => {
            if y.get("required") == Some(&Value::Bool(true)) {
                push(out, p, Class::Major, "required argument added".into());
            } else {
                push(out, p, Class::Minor, "optional argument added".into());
            }
        }
        (Some(x), Some(y)) => {
            if let (Some(was), Some(now)) = (
                x.get("required").and_then(Value::as_bool),
                y.get("required").and_then(Value::as_bool),
            ) {
                if was != now {
                    let class = if now { Class::Major } else { Class::Minor };
                    let what = if now {
                        "made required"
                    } else {
                        "made optional"
                    };
                    push(out, &child(p, "required"), class, what.into());
                }
            }
            generic_except(x, y, p, &["required", "value"], out);
            if let (Some(s), Some(t)) = (x.get("value"), y.get("value")) {
                schema(s, t, &child(p, "value"), Dir::Input, out);
            }
        }
        (None, None) => {}
    });
}

/// Two schemas of the subset, for a client that sends (`Input`) or receives (`Output`) them.
fn schema(o: &Value, n: &Value, path: &[String], dir: Dir, out: &mut Vec<Change>) {
    let (Some(a), Some(b)) = (o.as_object(), n.as_object()) else {
        return generic(o, n, path, out);
    };
    let props = |m: &Map<String, Value>| {
        m.get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let required = |m: &Map<String, Value>| -> Vec<String> {
        m.get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (pa, pb) = (props(a), props(b));
    let (ra, rb) = (required(a), required(b));
    let pp = child(path, "properties");
    for (name, s) in &pa {
        let p = child(&pp, name);
        match pb.get(name) {
            Some(t) => schema(s, t, &p, dir, out),
            None => {
                let what = match dir {
                    Dir::Input => "input property removed",
                    Dir::Output => "output property dropped",
                };
                push(out, &p, Class::Major, what.into());
            }
        }
    }
    for name in pb.keys().filter(|k| !pa.contains_key(*k)) {
        let p = child(&pp, name);
        match dir {
            Dir::Input if rb.contains(name) => {
                push(out, &p, Class::Major, "new required input property".into())
            }
            Dir::Input => push(
                out,
                &p,
                Class::Minor,
                "optional input property added".into(),
            ),
            Dir::Output => push(out, &p, Class::Minor, "output property added".into()),
        }
    }
    for name in pa.keys().filter(|k| pb.contains_key(*k)) {
        let p = child(&pp, name);
        match (ra.contains(name), rb.contains(name)) {
            (false, true) => push(out, &p, dir.class(false), "made required".into()),
            (true, false) => push(out, &p, dir.class(true), "made optional".into()),
            _ => {}
        }
    }
    each_key(a, b, path, |key, p, x, y| {
        if x == y {
            return;
        }
        match key {
            "properties" | "required" => {}
            "enum" => words(x, y, p, [dir.class(false), dir.class(true)], out),
            "minimum" | "minLength" | "maximum" | "maxLength" => {
                let lower = matches!(key, "minimum" | "minLength");
                let (x, y) = (x.and_then(Value::as_f64), y.and_then(Value::as_f64));
                let tighter = match (x, y) {
                    (None, Some(_)) => true,
                    (Some(_), None) => false,
                    (Some(x), Some(y)) => (y > x) == lower,
                    (None, None) => return,
                };
                let what = format!("{key} {} (tighter: {tighter})", bound(x, y));
                push(out, p, dir.class(!tighter), what);
            }
            "pattern" => {
                let class = match (x, y) {
                    (Some(_), None) => dir.class(true),
                    _ => dir.class(false),
                };
                push(out, p, class, "pattern changed".into());
            }
            "items" | "additionalProperties"
                if x.is_some_and(Value::is_object) && y.is_some_and(Value::is_object) =>
            {
                schema(
                    x.unwrap_or(&Value::Null),
                    y.unwrap_or(&Value::Null),
                    p,
                    dir,
                    out,
                )
            }
            "oneOf" => one_of(x, y, p, dir, out),
            "default" if dir == Dir::Output => push(out, p, Class::Patch, "default changed".into()),
            _ => generic_or_null(x, y, p, out),
        }
    });
}

fn bound(x: Option<f64>, y: Option<f64>) -> String {
    let show = |v: Option<f64>| v.map_or_else(|| "none".to_string(), |v| v.to_string());
    format!("{} → {}", show(x), show(y))
}

fn one_of(o: Option<&Value>, n: Option<&Value>, path: &[String], dir: Dir, out: &mut Vec<Change>) {
    let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    let (a, b) = (list(o), list(n));
    for (i, x) in a.iter().enumerate() {
        let p = child(path, &i.to_string());
        match b.get(i) {
            Some(y) => schema(x, y, &p, dir, out),
            None => push(out, &p, dir.class(false), "variant removed".into()),
        }
    }
    for i in a.len()..b.len() {
        push(
            out,
            &child(path, &i.to_string()),
            dir.class(true),
            "variant added".into(),
        );
    }
}
