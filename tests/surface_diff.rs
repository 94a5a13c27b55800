//! The classification of surface changes, one row per rule: a small surface, one edit, the class of the
//! change at its path and the bump the whole diff needs (the 0.x rule included).

use majordomus::surface::diff::{class_of, diff};
use majordomus::surface::{Class, Version};
use serde_json::{json, Value};

fn base() -> Value {
    let input = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "q": { "type": "string", "enum": ["a", "b"], "maxLength": 10, "description": "What" },
            "n": { "type": "integer", "minimum": 1 }
        },
        "required": ["q"]
    });
    let output = json!({
        "type": "object",
        "properties": {
            "kind": { "type": "string", "enum": ["x", "y"] },
            "v": { "type": "string" }
        },
        "required": ["kind", "v"]
    });
    json!({
        "format": "majordomus-surface/1",
        "version": "1.0.0",
        "tools": { "t": {
            "capability": "a.t", "title": "T", "description": "Does t", "effect": "read",
            "annotations": { "title": "T", "readOnlyHint": true, "destructiveHint": false,
                             "idempotentHint": true, "openWorldHint": false },
            "input": input, "output": output
        }},
        "resources": { "builtin": {}, "templates": {} },
        "routes": { "GET /api/v1/t": {
            "capability": "a.t", "method": "GET", "path": "/api/v1/t", "title": "T",
            "description": "Does t", "parameters": { "in": "query", "schema": input },
            "responses": { "200": { "schema": output }, "400": { "error": "invalid_input" } }
        }},
        "cli": { "a t": { "capability": "a.t", "about": "T", "args": {
            "q": { "flag": "--q", "positional": false, "action": "set", "required": true,
                   "help": "What", "value": { "type": "string", "enum": ["a", "b"] } }
        }}},
        "errors": { "not_found": { "http": 404, "exit": 12, "mcp": "isError result" } },
        "mcp": { "eras": { "legacy": { "versions": ["2025-11-25"], "methods": ["ping", "tools/list"],
                                       "notifications": [], "extensions": [] } },
                 "toolsets": { "all": ["t", "u"], "core": ["t"], "a": ["t", "u"] } }
    })
}

type Edit = fn(&mut Value);

/// (rule, edit, path of the change, its class).
const RULES: &[(&str, Edit, &str, Class)] = &[
    (
        "a removed toolset",
        |s| {
            s["mcp"]["toolsets"].as_object_mut().unwrap().remove("a");
        },
        "mcp.toolsets.a",
        Class::Major,
    ),
    (
        "a tool moved into a toolset",
        |s| s["mcp"]["toolsets"]["core"] = json!(["t", "u"]),
        "mcp.toolsets.core",
        Class::Minor,
    ),
    (
        "a tool moved out of a toolset",
        |s| s["mcp"]["toolsets"]["core"] = json!([]),
        "mcp.toolsets.core",
        Class::Minor,
    ),
    (
        "an added toolset",
        |s| s["mcp"]["toolsets"]["b"] = json!(["u"]),
        "mcp.toolsets.b",
        Class::Minor,
    ),
    (
        "a removed tool",
        |s| {
            s["tools"].as_object_mut().unwrap().remove("t");
        },
        "tools.t",
        Class::Major,
    ),
    (
        "a renamed tool",
        |s| {
            let t = s["tools"].as_object_mut().unwrap().remove("t").unwrap();
            s["tools"]["t2"] = t;
        },
        "tools.t",
        Class::Major,
    ),
    (
        "a removed route",
        |s| {
            s["routes"].as_object_mut().unwrap().remove("GET /api/v1/t");
        },
        "routes.\"GET /api/v1/t\"",
        Class::Major,
    ),
    (
        "a new required input property",
        |s| {
            s["tools"]["t"]["input"]["properties"]["r"] = json!({ "type": "string" });
            s["tools"]["t"]["input"]["required"] = json!(["q", "r"]);
        },
        "tools.t.input.properties.r",
        Class::Major,
    ),
    (
        "an optional property made required",
        |s| {
            s["tools"]["t"]["input"]["required"] = json!(["q", "n"]);
        },
        "tools.t.input.properties.n",
        Class::Major,
    ),
    (
        "a removed input enum value",
        |s| {
            s["tools"]["t"]["input"]["properties"]["q"]["enum"] = json!(["a"]);
        },
        "tools.t.input.properties.q.enum",
        Class::Major,
    ),
    (
        "a tighter maximum length",
        |s| {
            s["tools"]["t"]["input"]["properties"]["q"]["maxLength"] = json!(5);
        },
        "tools.t.input.properties.q.maxLength",
        Class::Major,
    ),
    (
        "a tighter minimum",
        |s| {
            s["routes"]["GET /api/v1/t"]["parameters"]["schema"]["properties"]["n"]["minimum"] =
                json!(2);
        },
        "routes.\"GET /api/v1/t\".parameters.schema.properties.n.minimum",
        Class::Major,
    ),
    (
        "a widened output enum",
        |s| {
            s["tools"]["t"]["output"]["properties"]["kind"]["enum"] = json!(["x", "y", "z"]);
        },
        "tools.t.output.properties.kind.enum",
        Class::Major,
    ),
    (
        "a dropped output property",
        |s| {
            s["tools"]["t"]["output"]["properties"]
                .as_object_mut()
                .unwrap()
                .remove("v");
        },
        "tools.t.output.properties.v",
        Class::Major,
    ),
    (
        "a dropped route output property",
        |s| {
            s["routes"]["GET /api/v1/t"]["responses"]["200"]["schema"]["properties"]
                .as_object_mut()
                .unwrap()
                .remove("v");
        },
        "routes.\"GET /api/v1/t\".responses.200.schema.properties.v",
        Class::Major,
    ),
    (
        "an effect made more dangerous",
        |s| {
            s["tools"]["t"]["effect"] = json!("repository_mutation");
        },
        "tools.t.effect",
        Class::Major,
    ),
    (
        "a hint withdrawn",
        |s| {
            s["tools"]["t"]["annotations"]["readOnlyHint"] = json!(false);
        },
        "tools.t.annotations.readOnlyHint",
        Class::Major,
    ),
    (
        "a removed CLI argument",
        |s| {
            s["cli"]["a t"]["args"].as_object_mut().unwrap().remove("q");
        },
        "cli.\"a t\".args.q",
        Class::Major,
    ),
    (
        "a removed MCP method",
        |s| {
            s["mcp"]["eras"]["legacy"]["methods"] = json!(["tools/list"]);
        },
        "mcp.eras.legacy.methods",
        Class::Major,
    ),
    (
        "an error's exit code changed",
        |s| {
            s["errors"]["not_found"]["exit"] = json!(10);
        },
        "errors.not_found.exit",
        Class::Major,
    ),
    (
        "an added tool",
        |s| {
            let t = s["tools"]["t"].clone();
            s["tools"]["u"] = t;
            s["tools"]["u"]["capability"] = json!("a.u");
        },
        "tools.u",
        Class::Minor,
    ),
    (
        "an added route",
        |s| {
            let r = s["routes"]["GET /api/v1/t"].clone();
            s["routes"]["GET /api/v1/u"] = r;
            s["routes"]["GET /api/v1/u"]["capability"] = json!("a.u");
        },
        "routes.\"GET /api/v1/u\"",
        Class::Minor,
    ),
    (
        "an added optional input property",
        |s| {
            s["tools"]["t"]["input"]["properties"]["o"] = json!({ "type": "boolean" });
        },
        "tools.t.input.properties.o",
        Class::Minor,
    ),
    (
        "an added output property",
        |s| {
            s["tools"]["t"]["output"]["properties"]["w"] = json!({ "type": "string" });
        },
        "tools.t.output.properties.w",
        Class::Minor,
    ),
    (
        "an added input enum value",
        |s| {
            s["tools"]["t"]["input"]["properties"]["q"]["enum"] = json!(["a", "b", "c"]);
        },
        "tools.t.input.properties.q.enum",
        Class::Minor,
    ),
    (
        "a looser bound",
        |s| {
            s["tools"]["t"]["input"]["properties"]["q"]["maxLength"] = json!(20);
        },
        "tools.t.input.properties.q.maxLength",
        Class::Minor,
    ),
    (
        "an added optional CLI argument",
        |s| {
            s["cli"]["a t"]["args"]["v"] = json!({ "flag": "--v", "positional": false, "action": "set_true",
            "required": false, "help": "", "value": { "type": "none" } });
        },
        "cli.\"a t\".args.v",
        Class::Minor,
    ),
    (
        "an added MCP method",
        |s| {
            s["mcp"]["eras"]["legacy"]["methods"] = json!(["ping", "tools/call", "tools/list"]);
        },
        "mcp.eras.legacy.methods",
        Class::Minor,
    ),
    (
        "an edited tool description",
        |s| {
            s["tools"]["t"]["description"] = json!("Does t, well");
        },
        "tools.t.description",
        Class::Patch,
    ),
    (
        "an edited property description",
        |s| {
            s["tools"]["t"]["input"]["properties"]["q"]["description"] = json!("Which");
        },
        "tools.t.input.properties.q.description",
        Class::Patch,
    ),
    (
        "an edited command's help",
        |s| {
            s["cli"]["a t"]["args"]["q"]["help"] = json!("Which");
        },
        "cli.\"a t\".args.q.help",
        Class::Patch,
    ),
];

#[test]
fn each_rule_of_the_classification_gives_its_class_at_its_path() {
    assert!(RULES.len() >= 25, "the table covers every rule");
    for (rule, edit, path, class) in RULES {
        let old = base();
        let mut new = base();
        edit(&mut new);
        let changes = diff(&old, &new);
        let found = changes
            .iter()
            .find(|c| c.path == *path)
            .unwrap_or_else(|| panic!("{rule}: no change at `{path}`, only {changes:?}"));
        assert_eq!(found.class, *class, "{rule}: {found:?}");
        assert_eq!(
            class_of(&changes),
            Some(*class),
            "{rule}: the whole diff is {changes:?}"
        );
    }
}

#[test]
fn a_rename_is_one_major_change_not_a_removal_and_an_addition() {
    let mut new = base();
    let t = new["tools"].as_object_mut().unwrap().remove("t").unwrap();
    new["tools"]["t2"] = t;
    let changes = diff(&base(), &new);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(changes[0].what.contains("renamed to `t2`"), "{changes:?}");
}

#[test]
fn alike_surfaces_have_no_change_and_need_no_bump() {
    assert!(diff(&base(), &base()).is_empty());
    assert_eq!(class_of(&[]), None);
}

#[test]
fn the_bump_a_class_needs_follows_cargo_under_0_x_and_semver_after() {
    let v = |s: &str| Version::parse(s).unwrap();
    assert_eq!(v("0.3.1").needs(Class::Major), Class::Minor);
    assert_eq!(v("0.3.1").needs(Class::Minor), Class::Patch);
    assert_eq!(v("0.3.1").needs(Class::Patch), Class::Patch);
    assert_eq!(v("1.3.1").needs(Class::Major), Class::Major);
    assert_eq!(v("1.3.1").needs(Class::Minor), Class::Minor);
    assert_eq!(v("1.3.1").bumped_by(v("2.0.0")), Some(Class::Major));
    assert_eq!(v("1.3.1").bumped_by(v("1.4.0")), Some(Class::Minor));
    assert_eq!(v("1.3.1").bumped_by(v("1.3.2")), Some(Class::Patch));
    assert_eq!(v("1.3.1").bumped_by(v("1.3.1")), None);
    assert_eq!(v("1.3.1").bumped_by(v("1.2.9")), None);
    assert_eq!(Version::parse("1.2"), None);
    assert_eq!(Version::parse("1.2.3-rc.1"), Some(v("1.2.3")));
}
