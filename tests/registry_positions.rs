//! Build errors name the line: every violation of a registry YAML file carries the line and
//! column of its field (`registry/<path>.yaml:LINE:COL: <field> <message>`), with a caret under
//! it, and bad input (a tab, a duplicate key, a byte that is not UTF-8, an anchor/alias bomb, a
//! file of megabytes) is a located violation, never a panic. The cases are data: a YAML text and
//! the exact first line the build prints.

use crate::lang::load::{self, SourceFile, MAX_FILE_BYTES};
use crate::lang::violation::Position;
use crate::lang::Violation;

const GET: &str = "registry/objects/get.yaml";

/// A valid `objects.get`, block style, with a line to replace: `{field}` marks where.
const BASE: &str = "\
id: objects.get
title: Read one object
description: Returns the object a URI names.
kind: query
effect: read
determinism: repository
expose:
  mcp:
    tool: majordomus_get
  cli: objects get
input:
  type: object
  additionalProperties: false
  properties:
    uri:
      type: string
  required: [uri]
output:
  type: object
examples:
  - name: the repository
    input: { uri: majordomus://repository }
";

fn source(text: &str) -> SourceFile {
    SourceFile {
        path: GET.to_string(),
        text: text.to_string(),
    }
}

/// The violations of `text` as `objects.get`, rendered as the build prints their first lines.
fn refused(text: &str) -> Vec<String> {
    match load::load(&[source(text)]) {
        Ok(_) => panic!("the registry should be refused:\n{text}"),
        Err(v) => v.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn the_base_declaration_loads() {
    load::load(&[source(BASE)]).expect("the base declaration is valid");
}

#[test]
fn each_violation_names_the_line_and_column_of_its_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "    tool: majordomus_get",
            "    tool: Majordomus-Get",
            "registry/objects/get.yaml:9:5: expose.mcp.tool \"Majordomus-Get\" is a malformed tool name",
        ),
        (
            "      type: string",
            "      type: strng",
            "registry/objects/get.yaml:16:7: input.properties.uri.type must be one of object",
        ),
        (
            "  cli: objects get",
            "  cli: objects get\n  grpc: Get",
            "registry/objects/get.yaml:11:3: expose.grpc is not a known key",
        ),
        (
            "    input: { uri: majordomus://repository }",
            "    input: { uri: 7 }",
            "registry/objects/get.yaml:22:5: examples[0].input (\"the repository\") does not fit the input schema",
        ),
        // A missing key is reported where the mapping that lacks it begins.
        (
            "title: Read one object\n",
            "",
            "registry/objects/get.yaml:1:1: title is required",
        ),
    ];
    for (from, to, expected) in cases {
        assert!(BASE.contains(from), "the base has {from:?}");
        let text = BASE.replacen(from, to, 1);
        let found = refused(&text);
        assert!(
            found.iter().any(|line| line.starts_with(expected)),
            "expected a line starting {expected:?}, found:\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn a_violation_renders_with_its_source_line_and_a_caret_under_the_column() {
    let text = BASE.replacen("tool: majordomus_get", "tool: Bad", 1);
    let v = load::load(&[source(&text)]).expect_err("a malformed tool name is refused");

    let rendered = v[0].render(Some(&text));

    let expected_tail = "\n  |\n9 |     tool: Bad\n  |     ^";
    assert!(
        rendered.starts_with("registry/objects/get.yaml:9:5: expose.mcp.tool \"Bad\"")
            && rendered.ends_with(expected_tail),
        "rendered as:\n{rendered}"
    );
}

#[test]
fn bad_input_is_a_located_violation_never_a_panic() {
    let bomb = "\
a: &a [x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
";
    let cases: &[(&str, String, &str)] = &[
        (
            "a tab",
            BASE.replacen("  mcp:\n", "\tmcp:\n", 1),
            "registry/objects/get.yaml:8:1: contains a tab",
        ),
        (
            "a tab inside a value",
            BASE.replacen("Read one object", "Read one\tobject", 1),
            "registry/objects/get.yaml:2:16: contains a tab",
        ),
        (
            "a duplicate key",
            BASE.replacen("kind: query\n", "kind: query\nkind: command\n", 1),
            "registry/objects/get.yaml:5:1: repeats the key `kind` of line 4; a key is written once",
        ),
        (
            "an anchor/alias bomb",
            bomb.to_string(),
            "registry/objects/get.yaml:1:7: defines an anchor",
        ),
        (
            "an alias of no anchor",
            BASE.replacen("kind: query", "kind: *query", 1),
            "registry/objects/get.yaml:4:7: is not valid YAML: unknown anchor",
        ),
    ];
    for (what, text, expected) in cases {
        let found = refused(text);
        assert!(
            found.first().is_some_and(|line| line.starts_with(expected)),
            "{what}: expected a first line starting {expected:?}, found:\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn a_byte_that_is_not_utf8_is_refused_where_it_stands() {
    let bytes = BASE.replacen("Read one object", "Read one obj\u{e9}ct", 1);
    let mut bytes = bytes.into_bytes();
    // Latin-1's é, not UTF-8's two bytes.
    let at = bytes
        .windows(2)
        .position(|w| w == "\u{e9}".as_bytes())
        .expect("the é is there");
    bytes.splice(at..at + 2, [0xe9]);

    let v = SourceFile::from_bytes(GET.to_string(), bytes).expect_err("not UTF-8 is refused");

    assert_eq!(
        v.to_string(),
        "registry/objects/get.yaml:2:20: is not UTF-8: the byte 0xe9 here starts no character"
    );
}

#[test]
fn a_file_of_megabytes_is_refused_where_the_limit_falls() {
    // Sixteen bytes a line: the limit falls at the start of line 65,537.
    let line = "# fifteen bytes\n";
    let bytes = line.repeat(10 * MAX_FILE_BYTES / line.len()).into_bytes();
    assert_eq!(bytes.len(), 10 * MAX_FILE_BYTES, "a 10 MiB file");

    let v: Violation =
        SourceFile::from_bytes(GET.to_string(), bytes).expect_err("a huge file is refused");

    assert_eq!(
        v.at,
        Some(Position {
            line: 65_537,
            column: 1
        })
    );
    assert!(
        v.to_string()
            .starts_with("registry/objects/get.yaml:65537:1: is larger than 1048576 bytes"),
        "{v}"
    );
}
