//! Any query string, against each capability's input schema: the HTTP binding of a GET
//! (`http::binding::from_query`). It binds an object of declared properties, which the
//! executor's validator then judges, or it is `invalid_input` — never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use majordomus::registry::{self, lang};

fuzz_target!(|data: &[u8]| {
    let Some((selector, rest)) = data.split_first() else {
        return;
    };
    // A request target is text; hyper hands axum nothing else.
    let Ok(query) = std::str::from_utf8(rest) else {
        return;
    };
    let all = registry::all();
    let d = &all[*selector as usize % all.len()];
    match majordomus::http::binding::from_query(d.input(), Some(query)) {
        Ok(input) => {
            let object = input.as_object().expect("a binding is an object");
            for name in object.keys() {
                assert!(
                    d.input().properties.iter().any(|(p, _)| p == name),
                    "{}: bound the undeclared `{name}`",
                    d.id
                );
            }
            let mut problems = Vec::new();
            lang::validate(d.input(), &input, "", &Default::default(), &mut problems);
        }
        Err(e) => assert_eq!(e.code(), "invalid_input", "{}", e.message()),
    }
});
