//! A JSON-RPC message read once, the way the dispatcher uses it: the envelope's members kept as
//! the text the client wrote (the id is echoed byte for byte from it), `params` made a map, and
//! `params._meta` left as text for `era` to read the two keys it checks. A modern request's
//! `_meta` is most of its bytes and no part of its answer: built as values and dropped again it
//! cost a modern request more than the era's own checks.
//!
//! Only the common shape is read here: one object, each member once, `params` an object.
//! Anything else (no object, a member given twice, `params` of another type, a key that is not
//! plain text) is `None`, and the dispatcher reads it the general way, as `serde_json::Value`,
//! with the same answers. It knows nothing of methods, eras or transports.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A message's members, as written.
#[derive(Deserialize)]
pub struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    pub jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub params: Option<Params<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub error: Option<&'a RawValue>,
}

/// `params` (an object): every member but `_meta` as a value, `_meta` as its text.
pub struct Params<'a> {
    pub members: Map<String, Value>,
    pub meta: Option<&'a RawValue>,
}

/// A member that is present, whatever its value (`null` included: `"id": null` is an id).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

impl<'de: 'a, 'a> Deserialize<'de> for Params<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = Params<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Params<'a>, A::Error> {
                let mut members = Map::new();
                let mut meta = None;
                while let Some(key) = access.next_key::<String>()? {
                    if key == "_meta" {
                        // A later `_meta` replaces an earlier one, as in a `Value` map.
                        meta = Some(access.next_value::<&'de RawValue>()?);
                    } else {
                        members.insert(key, access.next_value::<Value>()?);
                    }
                }
                Ok(Params { members, meta })
            }
        }
        d.deserialize_map(Members(std::marker::PhantomData))
    }
}

/// `line` read the common way, or `None` for the dispatcher's general reading.
pub fn read(line: &[u8]) -> Option<Envelope<'_>> {
    // A struct also reads from a JSON array (by position): only an object is taken here.
    if line.first() != Some(&b'{') {
        return None;
    }
    serde_json::from_slice(line).ok()
}

/// Whether `raw` is the JSON string `"2.0"`, however it is escaped.
pub fn is_version_2(raw: &RawValue) -> bool {
    raw.get() == "\"2.0\"" || serde_json::from_str::<String>(raw.get()).is_ok_and(|v| v == "2.0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_shape_is_read_with_meta_as_text() {
        let line = br#"{"jsonrpc":"2.0","id":1e2,"method":"tools/call","params":{"name":"x","_meta":{"a":[1]},"arguments":{}}}"#;
        let envelope = read(line).expect("read");
        assert_eq!(envelope.id.map(RawValue::get), Some("1e2"));
        assert!(envelope.jsonrpc.is_some_and(is_version_2));
        let params = envelope.params.expect("params");
        assert_eq!(params.meta.map(RawValue::get), Some(r#"{"a":[1]}"#));
        let keys: Vec<&str> = params.members.keys().map(String::as_str).collect();
        assert_eq!(keys, ["name", "arguments"]);
    }

    #[test]
    fn a_null_id_is_an_id_and_what_is_uncommon_is_left_to_the_general_reading() {
        let null = read(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).expect("read");
        assert_eq!(null.id.map(RawValue::get), Some("null"));
        // `params: null` is no params, as the dispatcher treats it either way.
        let no_params = read(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#);
        assert!(no_params.is_some_and(|e| e.params.is_none()));
        for uncommon in [
            &br#"["2.0",1,"ping"]"#[..],
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
        ] {
            assert!(
                read(uncommon).is_none(),
                "{}",
                String::from_utf8_lossy(uncommon)
            );
        }
    }
}
