//! The Rust the crate includes, formatted by `prettyplease` under [`HEADER`]: `registry.rs` (the
//! types from `types`, one `rt::Descriptor` per capability, the `From` bridges between enums of
//! the same words, and the constants naming the other artefacts), which the registry includes;
//! and `handlers.rs` (one handler shim per capability and the table of them, indexed like the
//! descriptors), which the capabilities include, so the declarations never name their handlers.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::naming::{pascal, type_ident};
use super::types::{doc_attr, Types};
use super::{compact, HEADER};
use crate::capability::Capability;
use crate::load::Registry;
use crate::publish::Refs;
use crate::{Effect, Kind, Method, Violation};

/// `registry.rs` and `handlers.rs`.
pub(super) fn rust_source(registry: &Registry) -> Result<(String, String), Vec<Violation>> {
    let mut types = Types {
        items: Vec::new(),
        taken: BTreeMap::new(),
        violations: Vec::new(),
        string_enums: Vec::new(),
    };
    for (name, schema) in &registry.schemas {
        let file = format!("{}/{name}.yaml", crate::naming::SCHEMA_DIR);
        let ty = types.ty(schema, name, &file, "");
        // A named schema that is not an object or enum still needs its name.
        if !types.taken.contains_key(name) {
            types.taken.insert(name.clone(), file.clone());
            let id = type_ident(name);
            let doc = doc_attr(schema.description.as_deref());
            types.items.push(quote!(#doc pub type #id = #ty;));
        }
    }

    let mut namespaces: BTreeMap<&str, Vec<TokenStream>> = BTreeMap::new();
    let mut descriptors = Vec::new();
    let mut handlers = Vec::new();
    let mut handler_idents = Vec::new();
    let mut derived = Vec::new();
    for (index, c) in registry.capabilities.iter().enumerate() {
        let base = pascal(&format!("{}_{}", c.namespace, c.name));
        let input_name = format!("{base}Input");
        let output_name = format!("{base}Output");
        published_schemas_read_back(c, registry, &mut types.violations);
        let input_ty = types.ty(&c.input, &input_name, &c.file, "input");
        let output_ty = types.ty(&c.output, &output_name, &c.file, "output");

        let local_input = format_ident!("{}Input", pascal(&c.name));
        let local_output = format_ident!("{}Output", pascal(&c.name));
        namespaces
            .entry(c.namespace.as_str())
            .or_default()
            .push(quote! {
                pub type #local_input = #input_ty;
                pub type #local_output = #output_ty;
            });

        let fn_ident = format_ident!("{}_{}", c.namespace, c.name);
        let ns = format_ident!("{}", c.namespace);
        let name = format_ident!("{}", c.name);
        handlers.push(quote! {
            fn #fn_ident(ctx: &Context, input: ::serde_json::Value) -> ::std::result::Result<Output, CapabilityError> {
                invoke::<#input_ty, #output_ty>(ctx, input, crate::capabilities::#ns::#name)
            }
        });
        handler_idents.push(fn_ident);
        derived.push(quote! {
            #index => Some((schemars::schema_for!(#input_ty), schemars::schema_for!(#output_ty))),
        });
        descriptors.push(descriptor(c, registry));
    }
    if !types.violations.is_empty() {
        return Err(types.violations);
    }
    types.items.extend(bridges(registry, &types.string_enums));
    let items = &types.items;
    let ns_mods = namespaces.iter().map(|(ns, aliases)| {
        let ns_ident = format_ident!("{}", ns);
        let doc = format!(" The input and output types of the `{ns}` capabilities.");
        quote! { #[doc = #doc] pub mod #ns_ident { use super::*; #(#aliases)* } }
    });
    let count = registry.capabilities.len();
    let tokens = quote! {
        /// Types generated from the declared schemas: named schemas under their own name,
        /// capability inputs and outputs as `<Namespace><Name>Input`/`Output`, and one module per
        /// namespace aliasing them as `<Name>Input`/`<Name>Output`.
        pub mod types {
            #(#items)*
            #(#ns_mods)*
        }

        /// Every declared capability, sorted by id.
        pub static CAPABILITIES: [rt::Descriptor; #count] = [#(#descriptors),*];

        /// The `tools/list` tool array exactly as served.
        pub const TOOLS_LIST_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/tools_list.json"));

        /// The `tools/list` tool array a read-only server serves: no tool that writes the
        /// repository.
        pub const TOOLS_LIST_READ_ONLY_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/tools_list_read_only.json"));

        /// The OpenAPI 3.1 document exactly as served.
        pub const OPENAPI_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/openapi.json"));

        /// The schemas schemars derives for the generated input and output types of the
        /// capability at `index`, so a test can hold them against their declarations.
        pub fn derived_schemas(index: usize) -> Option<(schemars::Schema, schemars::Schema)> {
            use self::types::*;
            match index {
                #(#derived)*
                _ => None,
            }
        }
    };
    let table = quote! {
        use types::*;

        #(#handlers)*

        /// Each declared capability's handler shim, at its descriptor's index.
        pub static HANDLERS: [Handler; #count] = [#(#handler_idents),*];
    };
    Ok((formatted(tokens)?, formatted(table)?))
}

fn formatted(tokens: TokenStream) -> Result<String, Vec<Violation>> {
    match syn::parse2::<syn::File>(tokens) {
        Ok(file) => Ok(format!("{HEADER}{}", prettyplease::unparse(&file))),
        Err(e) => Err(vec![Violation::new(
            "build.rs",
            String::new(),
            format!("generated code does not parse (a generator bug): {e}"),
        )]),
    }
}

fn descriptor(c: &Capability, registry: &Registry) -> TokenStream {
    let id = &c.id;
    let namespace = &c.namespace;
    let name = &c.name;
    let title = &c.title;
    let description = c.description.trim();
    let kind = format_ident!(
        "{}",
        match c.kind {
            Kind::Query => "Query",
            Kind::Command => "Command",
        }
    );
    let effect = format_ident!(
        "{}",
        match c.effect {
            Effect::Read => "Read",
            Effect::ProcessState => "ProcessState",
            Effect::RepositoryMutation => "RepositoryMutation",
        }
    );
    let determinism = format_ident!("{}", pascal(c.determinism.as_str()));
    let tool = option_str(c.expose.tool.as_deref());
    let resource = match &c.expose.resource {
        Some(r) => {
            let (uri, rname) = (&r.uri, &r.name);
            quote!(Some(rt::ResourceExposure { uri: #uri, name: #rname }))
        }
        None => quote!(None),
    };
    let route = match &c.expose.http {
        Some(r) => {
            let method = format_ident!(
                "{}",
                match r.method {
                    Method::Get => "Get",
                    Method::Post => "Post",
                }
            );
            let path = &r.path;
            quote!(Some(rt::Route { method: rt::Method::#method, path: #path }))
        }
        None => quote!(None),
    };
    let cli = match &c.expose.cli {
        Some(words) => quote!(Some(&[#(#words),*])),
        None => quote!(None),
    };
    let positionals: Vec<&String> = c
        .input
        .properties
        .iter()
        .filter(|(_, s)| s.cli_positional)
        .map(|(p, _)| p)
        .collect();
    let paths: Vec<&String> = c
        .input
        .properties
        .iter()
        .filter(|(_, s)| s.cli_path)
        .map(|(p, _)| p)
        .collect();
    let input_schema = compact(&c.input.to_json(Refs::Inline(&registry.schemas)));
    let output_schema = compact(&c.output.to_json(Refs::Inline(&registry.schemas)));
    let examples = c.examples.iter().map(|e| {
        let (n, i) = (&e.name, compact(&e.input));
        quote!(rt::Example { name: #n, input: #i })
    });
    let cache = c.cache.unwrap_or(0);
    let tags = &c.tags;
    let source = &c.file;
    quote! {
        rt::Descriptor {
            id: #id,
            namespace: #namespace,
            name: #name,
            title: #title,
            description: #description,
            kind: rt::Kind::#kind,
            effect: rt::Effect::#effect,
            determinism: rt::Determinism::#determinism,
            tool: #tool,
            resource: #resource,
            route: #route,
            cli: #cli,
            cli_positionals: &[#(#positionals),*],
            cli_paths: &[#(#paths),*],
            input_schema: #input_schema,
            output_schema: #output_schema,
            examples: &[#(#examples),*],
            cache_entries: #cache,
            tags: &[#(#tags),*],
            source: #source,
            input_parsed: rt::Parsed::new(),
            output_parsed: rt::Parsed::new(),
        }
    }
}

/// `From` between enums of the same words, so no handler matches one onto another by hand: from
/// each word enum of the run time (`rt::Kind`, `rt::Effect`, `rt::Determinism`, `rt::Method`) to
/// every generated enum of its words, and from an enum declared inline to a named schema's enum
/// of the same words. A word enum's variants are the words in Pascal case, as generated ones are.
fn bridges(registry: &Registry, enums: &[(String, Vec<String>)]) -> Vec<TokenStream> {
    use crate::{Determinism, Effect, Kind, Method};
    let set = |words: &[String]| words.iter().cloned().collect::<BTreeSet<String>>();
    let word_enums: [(&str, Vec<String>); 4] = [
        (
            "Kind",
            Kind::ALL.iter().map(|v| v.as_str().to_string()).collect(),
        ),
        (
            "Effect",
            Effect::ALL.iter().map(|v| v.as_str().to_string()).collect(),
        ),
        (
            "Determinism",
            Determinism::ALL
                .iter()
                .map(|v| v.as_str().to_string())
                .collect(),
        ),
        (
            "Method",
            Method::ALL.iter().map(|v| v.as_str().to_string()).collect(),
        ),
    ];
    let mut out = Vec::new();
    let from = |source: TokenStream, target: &str, words: &[String]| {
        let target = type_ident(target);
        let arms = words.iter().map(|w| {
            let v = type_ident(&pascal(w));
            quote!(#source::#v => Self::#v,)
        });
        quote! {
            impl From<#source> for #target {
                fn from(value: #source) -> Self {
                    match value { #(#arms)* }
                }
            }
        }
    };
    for (target, words) in enums {
        for (rt_name, rt_words) in &word_enums {
            if set(words) == set(rt_words) {
                let rt_ident = type_ident(rt_name);
                out.push(from(quote!(super::rt::#rt_ident), target, words));
            }
        }
        if !registry.schemas.contains_key(target) {
            continue;
        }
        for (source, source_words) in enums {
            if source != target
                && !registry.schemas.contains_key(source)
                && set(source_words) == set(words)
            {
                let source_ident = type_ident(source);
                out.push(from(quote!(#source_ident), target, words));
            }
        }
    }
    out
}

/// The run time parses each published schema back into the subset model (`rt::Parsed`); a
/// schema that would not read is refused here, so it never has to be guessed at there.
fn published_schemas_read_back(c: &Capability, registry: &Registry, out: &mut Vec<Violation>) {
    for (field, schema) in [("input", &c.input), ("output", &c.output)] {
        let published = schema.to_json(Refs::Inline(&registry.schemas));
        if let Err(problems) = crate::schema_from_json(&published) {
            for p in problems {
                out.push(Violation::new(
                    c.file.clone(),
                    field,
                    format!("is published as a schema that does not read back: {p}"),
                ));
            }
        }
    }
}

fn option_str(value: Option<&str>) -> TokenStream {
    match value {
        Some(v) => quote!(Some(#v)),
        None => quote!(None),
    }
}
