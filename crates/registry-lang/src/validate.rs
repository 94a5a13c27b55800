//! The value validator: checks a JSON value against a schema of the subset and words each problem
//! with the path of the value. Compiled by the crate (every input, every layer object) and by
//! `build.rs` (examples and defaults).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Number, Value};

use super::schema::{Additional, OneOf, Schema, Type};
use super::violation::join;

/// What kind of problem a value has against its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// A required property is absent.
    Missing,
    /// A property the schema does not know, where extra properties are refused.
    Unknown,
    /// The value has the wrong JSON type.
    Type,
    /// Any other keyword is broken (enum, const, bounds, length, pattern, oneOf).
    Constraint,
}

/// One problem of a value against its schema; the message names the value's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    pub message: String,
}

impl Problem {
    pub fn new(kind: ProblemKind, message: String) -> Self {
        Self { kind, message }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Checks `value` against `schema`, appending one sentence per problem to `errors`. `path` names
/// the value (`""` for the root, `limit`, `paths[2]`); named schemas resolve through `named`.
/// The checks run in the subset's order: a reference, the type, the constant, then the keywords
/// of a string, a number, an array and an object; a wrong type or constant stops the rest.
pub fn validate(
    schema: &Schema,
    value: &Value,
    path: &str,
    named: &BTreeMap<String, Schema>,
    errors: &mut Vec<Problem>,
) {
    if let Some(r) = &schema.reference {
        validate_reference(r, value, path, named, errors);
        return;
    }
    if !type_fits(schema, value, path, errors) || !constant_fits(schema, value, path, errors) {
        return;
    }
    if let Some(s) = value.as_str() {
        check_string(schema, s, path, errors);
    }
    if let Some(n) = value.as_number() {
        check_number(schema, n, value, path, errors);
    }
    if let Some(list) = value.as_array() {
        check_array(schema, list, path, named, errors);
    }
    if schema.one_of.is_some() && !value.is_object() {
        // Every variant is an object, so nothing else is one of them.
        errors.push(Problem::new(
            ProblemKind::Type,
            format!(
                "{}: expected object, found {}",
                at(path),
                describe_value(value)
            ),
        ));
        return;
    }
    if let Some(map) = value.as_object() {
        if let Some(one_of) = &schema.one_of {
            check_one_of(one_of, map, value, path, named, errors);
            return;
        }
        check_object(schema, map, path, named, errors);
    }
}

/// How a problem names the value at `path`: the input itself at the root.
fn at(path: &str) -> String {
    if path.is_empty() {
        "the input".to_string()
    } else {
        format!("`{path}`")
    }
}

/// Follows a chain of bare references from `reference` to the schema it ends in and checks
/// `value` against that.
fn validate_reference(
    reference: &str,
    value: &Value,
    path: &str,
    named: &BTreeMap<String, Schema>,
    errors: &mut Vec<Problem>,
) {
    // A chain that comes back on itself (refused by `load`, but examples are checked in the same
    // run) would otherwise recurse without consuming any of the value.
    let mut name = reference;
    for _ in 0..=named.len() {
        match named.get(name) {
            Some(s) => match &s.reference {
                Some(next) => name = next,
                None => {
                    validate(s, value, path, named, errors);
                    return;
                }
            },
            None => {
                errors.push(Problem::new(
                    ProblemKind::Constraint,
                    format!("{}: unknown schema `{name}`", at(path)),
                ));
                return;
            }
        }
    }
    errors.push(Problem::new(
        ProblemKind::Constraint,
        format!("{}: schema `{reference}` refers back to itself", at(path)),
    ));
}

/// Whether `value` has the schema's type, if it names one; a problem where it has not.
fn type_fits(schema: &Schema, value: &Value, path: &str, errors: &mut Vec<Problem>) -> bool {
    let Some(ty) = schema.ty else {
        return true;
    };
    let fits = match ty {
        Type::Object => value.is_object(),
        Type::Array => value.is_array(),
        Type::String => value.is_string(),
        // JSON Schema's integer is a number without a fraction: `1.0` is one (`normalize`
        // turns it into `1` before a typed handler sees it).
        Type::Integer => value.as_number().is_some_and(is_integral),
        Type::Number => value.is_number(),
        Type::Boolean => value.is_boolean(),
    };
    if !fits {
        errors.push(Problem::new(
            ProblemKind::Type,
            format!(
                "{}: expected {}, found {}",
                at(path),
                ty.as_str(),
                describe_value(value)
            ),
        ));
    }
    fits
}

/// Whether `value` is the schema's constant, if it names one; a problem where it is not.
fn constant_fits(schema: &Schema, value: &Value, path: &str, errors: &mut Vec<Problem>) -> bool {
    match &schema.constant {
        Some(c) if !same_value(value, c) => {
            errors.push(Problem::new(
                ProblemKind::Constraint,
                format!("{}: must be {c}", at(path)),
            ));
            false
        }
        _ => true,
    }
}

/// A string's keywords: its enumeration, its length bounds and its pattern.
fn check_string(schema: &Schema, s: &str, path: &str, errors: &mut Vec<Problem>) {
    if let Some(words) = &schema.enumeration {
        if !words.iter().any(|w| w == s) {
            errors.push(Problem::new(
                ProblemKind::Constraint,
                format!(
                    "{}: \"{}\" is not one of {}",
                    at(path),
                    truncate(s),
                    words.join(", ")
                ),
            ));
        }
    }
    let len = s.chars().count() as u64;
    if let Some(min) = schema.min_length {
        if len < min {
            errors.push(Problem::new(
                ProblemKind::Constraint,
                format!("{}: must be at least {min} characters long", at(path)),
            ));
        }
    }
    if let Some(max) = schema.max_length {
        if len > max {
            errors.push(Problem::new(
                ProblemKind::Constraint,
                format!("{}: must be at most {max} characters long", at(path)),
            ));
        }
    }
    if let Some(p) = &schema.pattern {
        if let Some(re) = compiled_pattern(p) {
            if !re.is_match(s) {
                errors.push(Problem::new(
                    ProblemKind::Constraint,
                    format!("{}: must match the pattern {p}", at(path)),
                ));
            }
        }
    }
}

/// A number's bounds.
fn check_number(schema: &Schema, n: &Number, value: &Value, path: &str, errors: &mut Vec<Problem>) {
    if let Some(min) = &schema.minimum {
        if compare(n, min) == Ordering::Less {
            errors.push(Problem::new(
                ProblemKind::Constraint,
                format!("{}: {value} is below the minimum {min}", at(path)),
            ));
        }
    }
    if let Some(max) = &schema.maximum {
        if compare(n, max) == Ordering::Greater {
            errors.push(Problem::new(
                ProblemKind::Constraint,
                format!("{}: {value} is above the maximum {max}", at(path)),
            ));
        }
    }
}

/// An array's bounds on its count, then each item against the items' schema.
fn check_array(
    schema: &Schema,
    list: &[Value],
    path: &str,
    named: &BTreeMap<String, Schema>,
    errors: &mut Vec<Problem>,
) {
    let count = list.len() as u64;
    if let Some(min) = schema.min_items.filter(|min| count < *min) {
        errors.push(Problem::new(
            ProblemKind::Constraint,
            format!(
                "{}: must hold at least {min} items, holds {count}",
                at(path)
            ),
        ));
    }
    if let Some(max) = schema.max_items.filter(|max| count > *max) {
        errors.push(Problem::new(
            ProblemKind::Constraint,
            format!("{}: must hold at most {max} items, holds {count}", at(path)),
        ));
    }
    if let Some(items) = &schema.items {
        // One buffer for every item's name: a long array is not an allocation per item.
        let mut at_item = String::with_capacity(path.len() + 8);
        at_item.push_str(path);
        at_item.push('[');
        let base = at_item.len();
        for (i, item) in list.iter().enumerate() {
            at_item.truncate(base);
            push_decimal(&mut at_item, i);
            at_item.push(']');
            validate(items, item, &at_item, named, errors);
        }
    }
}

/// A tagged union: the variant whose constant tag the object carries, or a problem naming the
/// tags there are.
fn check_one_of(
    one_of: &OneOf,
    map: &Map<String, Value>,
    value: &Value,
    path: &str,
    named: &BTreeMap<String, Schema>,
    errors: &mut Vec<Problem>,
) {
    let tag_value = map.get(&one_of.tag);
    let variant = one_of.variants.iter().find(|v| {
        v.properties
            .iter()
            .any(|(p, s)| *p == one_of.tag && s.constant.as_ref() == tag_value)
    });
    if let Some(v) = variant {
        validate(v, value, path, named, errors);
        return;
    }
    let words: Vec<String> = one_of
        .variants
        .iter()
        .filter_map(|v| {
            v.properties
                .iter()
                .find(|(p, _)| *p == one_of.tag)
                .and_then(|(_, s)| s.constant.as_ref())
                .map(ToString::to_string)
        })
        .collect();
    errors.push(Problem::new(
        ProblemKind::Constraint,
        format!(
            "{}: `{}` must be one of {}",
            at(&join(path, &one_of.tag)),
            one_of.tag,
            words.join(", ")
        ),
    ));
}

/// An object's keywords: exactly one of the required sets, the required properties, then each
/// property against its schema or the rule for properties the schema does not name.
fn check_object(
    schema: &Schema,
    map: &Map<String, Value>,
    path: &str,
    named: &BTreeMap<String, Schema>,
    errors: &mut Vec<Problem>,
) {
    if let Some(sets) = &schema.one_required {
        check_one_required(sets, map, path, errors);
    }
    for name in &schema.required {
        if !map.contains_key(name) {
            errors.push(Problem::new(
                ProblemKind::Missing,
                format!("{}: is required", at(&join(path, name))),
            ));
        }
    }
    for (key, item) in map {
        match schema.properties.iter().find(|(p, _)| p == key) {
            // At the top the path is the key itself: no copy of it.
            Some((_, sub)) if path.is_empty() => validate(sub, item, key, named, errors),
            Some((_, sub)) => validate(sub, item, &join(path, key), named, errors),
            None => match &schema.additional {
                Additional::Forbidden => {
                    let known: Vec<&str> =
                        schema.properties.iter().map(|(p, _)| p.as_str()).collect();
                    errors.push(Problem::new(
                        ProblemKind::Unknown,
                        format!(
                            "{}: is not a known property (known: {})",
                            at(&join(path, key)),
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    ));
                }
                Additional::Map(sub) => validate(sub, item, &join(path, key), named, errors),
                Additional::Unspecified => {}
            },
        }
    }
}

/// Exactly one of the sets of properties must be given whole.
fn check_one_required(
    sets: &[Vec<String>],
    map: &Map<String, Value>,
    path: &str,
    errors: &mut Vec<Problem>,
) {
    let given = sets
        .iter()
        .filter(|s| s.iter().all(|n| map.contains_key(n)))
        .count();
    if given != 1 {
        let words: Vec<String> = sets
            .iter()
            .map(|s| format!("`{}`", s.join("` + `")))
            .collect();
        errors.push(Problem::new(
            ProblemKind::Constraint,
            format!(
                "{}: name exactly one of {}; {given} were given",
                at(path),
                words.join(", ")
            ),
        ));
    }
}

/// Appends `n` in decimal, without the formatting machinery an item's path would otherwise go
/// through once per array item.
fn push_decimal(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

/// Whether `n` has no fraction (`1`, `1.0`, `-3e2`).
fn is_integral(n: &Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// `n` as an exact integer, when it has no fraction and fits.
fn as_integer(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    let f = n.as_f64()?;
    // 2^100 is far beyond any bound a schema writes and still exact in both types.
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 1.3e30).then_some(f as i128)
}

/// Numbers compared by value, exactly when both are integers (`9007199254740993` is above
/// `9007199254740992`, which two `f64`s cannot tell).
fn compare(a: &Number, b: &Number) -> Ordering {
    match (as_integer(a), as_integer(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let (x, y) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

/// JSON equality as JSON Schema has it: `1` and `1.0` are the same number.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// Rewrites every integer a valid `value` holds as a number with a zero fraction (`1.0`) into
/// the integer it is, so a typed handler reads it; JSON Schema accepts both spellings, Rust's
/// integer types only one. Call it after `validate` found no problem. Answers where an integer
/// is beyond 64 bits (`offset`), which JSON Schema accepts and no handler can read.
pub fn normalize(
    schema: &Schema,
    value: &mut Value,
    named: &BTreeMap<String, Schema>,
) -> Vec<String> {
    let mut wide = Vec::new();
    normalize_at(schema, value, named, "", &mut wide);
    wide
}

fn normalize_at(
    schema: &Schema,
    value: &mut Value,
    named: &BTreeMap<String, Schema>,
    path: &str,
    wide: &mut Vec<String>,
) {
    let mut schema = schema;
    // Follow bare references, at most as many as there are named schemas.
    for _ in 0..=named.len() {
        match schema.reference.as_ref().and_then(|r| named.get(r)) {
            Some(s) => schema = s,
            None => break,
        }
    }
    match value {
        Value::Number(n) if schema.ty == Some(Type::Integer) && !(n.is_i64() || n.is_u64()) => {
            let fitted = as_integer(n).and_then(|i| {
                i64::try_from(i)
                    .map(Value::from)
                    .or_else(|_| u64::try_from(i).map(Value::from))
                    .ok()
            });
            match fitted {
                Some(fitted) => *value = fitted,
                None => wide.push(path.to_string()),
            }
        }
        Value::Array(items) => {
            if let Some(item) = &schema.items {
                for (i, v) in items.iter_mut().enumerate() {
                    normalize_at(item, v, named, &format!("{path}[{i}]"), wide);
                }
            }
        }
        Value::Object(map) => {
            if let Some(one_of) = &schema.one_of {
                let tag = map.get(&one_of.tag).cloned();
                let variant = one_of.variants.iter().find(|v| {
                    v.properties
                        .iter()
                        .any(|(p, s)| *p == one_of.tag && s.constant == tag)
                });
                if let Some(v) = variant {
                    normalize_at(v, value, named, path, wide);
                }
                return;
            }
            for (key, item) in map.iter_mut() {
                match schema.properties.iter().find(|(p, _)| p == key) {
                    Some((_, sub)) => normalize_at(sub, item, named, &join(path, key), wide),
                    None => {
                        if let Additional::Map(sub) = &schema.additional {
                            normalize_at(sub, item, named, &join(path, key), wide);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// A declared `pattern`, compiled once per process: validation runs on every request. The one
/// compiled value is shared (a cloned `Regex` would build its own matching caches every time),
/// and the layer's check that a kind's patterns compile fills the same cache.
pub fn compiled_pattern(pattern: &str) -> Option<std::sync::Arc<regex::Regex>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Compiled = Option<Arc<regex::Regex>>;
    static CACHE: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    // Looked up by the borrowed text first: a hit (every call but the first) allocates nothing.
    if let Some(compiled) = map.get(pattern) {
        return compiled.clone();
    }
    map.entry(pattern.to_string())
        .or_insert_with(|| regex::Regex::new(pattern).ok().map(Arc::new))
        .clone()
}

fn describe_value(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn truncate(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}…")
    }
}
