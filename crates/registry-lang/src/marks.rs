//! Where each field of a registry file is written, so a violation names its line and column, and
//! what the registry refuses before a YAML parser expands anything: tabs, repeated keys, anchors
//! and aliases (an alias bomb never reaches serde_yaml). Reads the event stream of `yaml-rust2`, which reports
//! positions; the values themselves still come from `yaml.rs`. Compiled only by `build.rs` and the
//! test crate.

use std::collections::{BTreeMap, BTreeSet};

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

use super::violation::{join, Position};

/// The positions of one file's fields, and what it writes that the registry refuses.
#[derive(Debug, Default)]
pub struct Marks {
    at: BTreeMap<String, Position>,
    /// Tabs, anchors and aliases, each with where it is written.
    pub refusals: Vec<(Position, String)>,
}

impl Marks {
    /// Reads `text`. A document the parser gives up on keeps the positions read before the error.
    pub fn read(text: &str) -> Marks {
        let mut marks = Marks::default();
        for (number, line) in text.lines().enumerate() {
            if let Some(column) = line.chars().position(|c| c == '\t') {
                marks.refusals.push((
                    position(number + 1, column + 1),
                    "contains a tab; registry YAML is indented and spaced with spaces only".into(),
                ));
                break;
            }
        }
        let mut walker = Walker {
            marks: &mut marks,
            stack: Vec::new(),
        };
        let _ = Parser::new_from_str(text).load(&mut walker, false);
        marks
    }

    /// Where `field` (`expose.mcp.tool`, `examples[0].input`) is written, or else where the
    /// nearest enclosing field is: a missing key is reported at the mapping that lacks it.
    pub fn locate(&self, field: &str) -> Option<Position> {
        let mut field = field;
        loop {
            if let Some(at) = self.at.get(field) {
                return Some(*at);
            }
            if field.is_empty() {
                return None;
            }
            field = &field[..field.rfind(['.', '[']).unwrap_or(0)];
        }
    }
}

fn position(line: usize, column: usize) -> Position {
    Position {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    }
}

enum Frame {
    /// A mapping at `path`; `key` is the key whose value comes next, `None` while a key is due;
    /// `seen` the keys read so far.
    Map {
        path: String,
        key: Option<String>,
        seen: BTreeSet<String>,
    },
    /// A sequence at `path` and the index of its next item.
    Seq { path: String, next: usize },
}

struct Walker<'a> {
    marks: &'a mut Marks,
    stack: Vec<Frame>,
}

impl Walker<'_> {
    /// Takes the next node's place in its parent and returns its path, or `None` for a key.
    fn place(&mut self, scalar: Option<&str>, at: Position) -> Option<String> {
        match self.stack.last_mut() {
            None => Some(String::new()),
            Some(Frame::Seq { path, next }) => {
                let p = format!("{path}[{next}]");
                *next += 1;
                Some(p)
            }
            Some(Frame::Map { path, key, seen }) => match key.take() {
                Some(k) => Some(join(path, &k)),
                None => {
                    // A key: its field is written here, whatever its value turns out to be.
                    let k = scalar.unwrap_or("?").to_string();
                    let field = join(path, &k);
                    if !seen.insert(k.clone()) {
                        let first = self.marks.at.get(&field).copied();
                        self.marks.refusals.push((
                            at,
                            match first {
                                Some(f) => format!(
                                    "repeats the key `{k}` of line {}; a key is written once",
                                    f.line
                                ),
                                None => format!("repeats the key `{k}`; a key is written once"),
                            },
                        ));
                    }
                    self.marks.at.entry(field).or_insert(at);
                    // A mapping is where its first key is: its own start mark is not reliable.
                    self.marks.at.entry(path.clone()).or_insert(at);
                    *key = Some(k);
                    None
                }
            },
        }
    }

    fn anchored(&mut self, anchor: usize, at: Position) {
        if anchor > 0 {
            self.marks.refusals.push((
                at,
                "defines an anchor; the registry takes no anchors or aliases (write the value out)"
                    .into(),
            ));
        }
    }
}

impl MarkedEventReceiver for Walker<'_> {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let at = position(mark.line(), mark.col() + 1);
        match ev {
            Event::Scalar(value, _, anchor, _) => {
                self.anchored(anchor, at);
                // A field is located at its key; an item of a list, or the root, at itself.
                if let Some(path) = self.place(Some(&value), at) {
                    self.marks.at.entry(path).or_insert(at);
                }
            }
            Event::Alias(_) => {
                self.marks.refusals.push((
                    at,
                    "is an alias; the registry takes no anchors or aliases (write the value out)"
                        .into(),
                ));
                if let Some(path) = self.place(None, at) {
                    self.marks.at.entry(path).or_insert(at);
                }
            }
            Event::MappingStart(anchor, _) | Event::SequenceStart(anchor, _) => {
                self.anchored(anchor, at);
                let is_map = matches!(ev, Event::MappingStart(..));
                // A collection used as a key gets a path no field can name.
                let path = self
                    .place(None, at)
                    .unwrap_or_else(|| "\u{0}key".to_string());
                if !is_map {
                    self.marks.at.entry(path.clone()).or_insert(at);
                }
                self.stack.push(if is_map {
                    Frame::Map {
                        path,
                        key: None,
                        seen: BTreeSet::new(),
                    }
                } else {
                    Frame::Seq { path, next: 0 }
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
            }
            _ => {}
        }
    }
}
