//! The Rust types generated from the declared schemas: structs, string enums and tagged enums,
//! with their serde attributes, doc comments and defaults; two schemas that would generate one
//! name are refused here.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use super::naming::{field_ident, pascal, type_ident};
use crate::{Additional, Schema, Type, Violation};

pub(super) struct Types {
    pub(super) items: Vec<TokenStream>,
    /// Type name → the file that made it, to refuse two schemas generating one name.
    pub(super) taken: BTreeMap<String, String>,
    pub(super) violations: Vec<Violation>,
    /// Every generated string enum with its words, for the bridges between them.
    pub(super) string_enums: Vec<(String, Vec<String>)>,
}

impl Types {
    fn claim(&mut self, name: &str, file: &str, field: &str) -> bool {
        if let Some(first) = self.taken.get(name) {
            self.violations.push(Violation::new(file.to_string(), field.to_string(), format!(
                    "generates the Rust type `{name}`, which {first} already generates; rename a property or schema"
                )));
            return false;
        }
        self.taken.insert(name.to_string(), file.to_string());
        true
    }

    /// The Rust type of `schema`, generating named items as needed. `hint` names what would be
    /// generated; `input` decides whether objects refuse unknown fields.
    pub(super) fn ty(
        &mut self,
        schema: &Schema,
        hint: &str,
        file: &str,
        field: &str,
    ) -> TokenStream {
        if let Some(r) = &schema.reference {
            let id = type_ident(r);
            return quote!(#id);
        }
        if let Some(one_of) = &schema.one_of {
            return self.tagged_enum(schema, one_of, hint, file, field);
        }
        match schema.ty {
            None => match &schema.constant {
                Some(Value::String(s)) => {
                    self.string_enum(std::slice::from_ref(s), schema, hint, file, field)
                }
                Some(Value::Bool(_)) => quote!(bool),
                Some(Value::Number(n)) if n.is_f64() => quote!(f64),
                Some(Value::Number(_)) => quote!(i64),
                _ => quote!(::serde_json::Value),
            },
            Some(Type::String) => {
                if let Some(words) = &schema.enumeration {
                    self.string_enum(words, schema, hint, file, field)
                } else if let Some(Value::String(s)) = &schema.constant {
                    self.string_enum(std::slice::from_ref(s), schema, hint, file, field)
                } else {
                    quote!(::std::string::String)
                }
            }
            Some(Type::Integer) => quote!(i64),
            Some(Type::Number) => quote!(f64),
            Some(Type::Boolean) => quote!(bool),
            Some(Type::Array) => {
                let inner = match &schema.items {
                    Some(items) => self.ty(
                        items,
                        &format!("{hint}Item"),
                        file,
                        &format!("{field}.items"),
                    ),
                    None => quote!(::serde_json::Value),
                };
                quote!(::std::vec::Vec<#inner>)
            }
            Some(Type::Object) => {
                if !schema.properties.is_empty() || schema.additional == Additional::Forbidden {
                    if let Additional::Map(_) = schema.additional {
                        self.violations.push(Violation::new(file.to_string(), field.to_string(), "declares both `properties` and an `additionalProperties` schema, which the generator cannot type"));
                    }
                    self.structure(schema, hint, file, field)
                } else if let Additional::Map(value) = &schema.additional {
                    let inner = self.ty(
                        value,
                        &format!("{hint}Value"),
                        file,
                        &format!("{field}.additionalProperties"),
                    );
                    quote!(::std::collections::BTreeMap<::std::string::String, #inner>)
                } else {
                    quote!(::serde_json::Map<::std::string::String, ::serde_json::Value>)
                }
            }
        }
    }

    fn structure(&mut self, schema: &Schema, name: &str, file: &str, field: &str) -> TokenStream {
        let ident = type_ident(name);
        if !self.claim(name, file, field) {
            return quote!(#ident);
        }
        let fields = self.fields(schema, name, file, field, None);
        let deny = (schema.additional == Additional::Forbidden)
            .then(|| quote!(#[serde(deny_unknown_fields)]));
        let doc = doc_attr(schema.description.as_deref());
        self.items.push(quote! {
            #doc
            #[derive(Clone, Debug, PartialEq, ::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema)]
            #deny
            pub struct #ident { #(#fields)* }
        });
        quote!(#ident)
    }

    /// The fields of an object schema, skipping `skip` (a oneOf discriminator).
    fn fields(
        &mut self,
        schema: &Schema,
        owner: &str,
        file: &str,
        field: &str,
        skip: Option<&str>,
    ) -> Vec<TokenStream> {
        // Fields of an enum variant take no visibility; the discriminator is the variant itself.
        let vis = if skip.is_some() {
            quote!()
        } else {
            quote!(pub)
        };
        let mut out = Vec::new();
        for (prop, sub) in &schema.properties {
            if Some(prop.as_str()) == skip {
                continue;
            }
            let fid = field_ident(prop);
            let plain = fid.to_string();
            let rename =
                (plain.trim_start_matches("r#") != prop).then(|| quote!(#[serde(rename = #prop)]));
            let sub_field = format!("{field}.properties.{prop}");
            let inner = self.ty(sub, &format!("{owner}{}", pascal(prop)), file, &sub_field);
            let doc = doc_attr(sub.description.as_deref());
            if schema.is_required(prop) {
                out.push(quote! { #doc #rename #vis #fid: #inner, });
            } else if let Some(default) = &sub.default {
                let fn_name = format!(
                    "default_{}_{}",
                    owner.to_lowercase(),
                    plain.trim_start_matches("r#")
                );
                let fn_ident = format_ident!("{}", fn_name);
                let value = default_expr(default, sub, &inner);
                self.items.push(quote! {
                    fn #fn_ident() -> #inner { #value }
                });
                out.push(quote! { #doc #rename #[serde(default = #fn_name)] #vis #fid: #inner, });
            } else {
                out.push(quote! {
                    #doc #rename
                    #[serde(default, skip_serializing_if = "::std::option::Option::is_none")]
                    #vis #fid: ::std::option::Option<#inner>,
                });
            }
        }
        out
    }

    fn string_enum(
        &mut self,
        words: &[String],
        schema: &Schema,
        name: &str,
        file: &str,
        field: &str,
    ) -> TokenStream {
        let ident = type_ident(name);
        if !self.claim(name, file, field) {
            return quote!(#ident);
        }
        let mut seen = BTreeSet::new();
        let variants: Vec<TokenStream> = words
            .iter()
            .map(|w| {
                let v = pascal(w);
                if !seen.insert(v.clone()) {
                    self.violations.push(Violation::new(
                        file.to_string(),
                        field.to_string(),
                        format!("enum value \"{w}\" generates the variant `{v}` twice"),
                    ));
                }
                let vid = type_ident(&v);
                quote!(#[serde(rename = #w)] #vid,)
            })
            .collect();
        let doc = doc_attr(schema.description.as_deref());
        let arms = words.iter().map(|w| {
            let vid = type_ident(&pascal(w));
            quote!(Self::#vid => #w,)
        });
        self.items.push(quote! {
            #doc
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema)]
            pub enum #ident { #(#variants)* }
            impl #ident {
                /// The declared word of this value.
                pub fn as_str(self) -> &'static str {
                    match self { #(#arms)* }
                }
            }
        });
        self.string_enums.push((name.to_string(), words.to_vec()));
        quote!(#ident)
    }

    fn tagged_enum(
        &mut self,
        schema: &Schema,
        one_of: &crate::OneOf,
        name: &str,
        file: &str,
        field: &str,
    ) -> TokenStream {
        let ident = type_ident(name);
        if !self.claim(name, file, field) {
            return quote!(#ident);
        }
        let tag = &one_of.tag;
        let mut variants = Vec::new();
        for (i, v) in one_of.variants.iter().enumerate() {
            let word = v
                .properties
                .iter()
                .find(|(p, _)| p == tag)
                .and_then(|(_, s)| s.constant.as_ref())
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let vname = pascal(&word);
            let vid = type_ident(&vname);
            let fields = self.fields(
                v,
                &format!("{name}{vname}"),
                file,
                &format!("{field}.oneOf[{i}]"),
                Some(tag),
            );
            let doc = doc_attr(v.description.as_deref());
            variants.push(quote! { #doc #[serde(rename = #word)] #vid { #(#fields)* }, });
        }
        // serde takes `deny_unknown_fields` on the enum, not per variant: refuse unknown fields
        // only when every variant does.
        let deny = one_of
            .variants
            .iter()
            .all(|v| v.additional == Additional::Forbidden)
            .then(|| quote!(#[serde(deny_unknown_fields)]));
        let doc = doc_attr(schema.description.as_deref());
        self.items.push(quote! {
            #doc
            #[derive(Clone, Debug, PartialEq, ::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema)]
            #[serde(tag = #tag)]
            #deny
            pub enum #ident { #(#variants)* }
        });
        quote!(#ident)
    }
}

pub(super) fn doc_attr(description: Option<&str>) -> TokenStream {
    match description {
        Some(d) => {
            let d = format!(" {}", d.trim());
            quote!(#[doc = #d])
        }
        None => quote!(),
    }
}

fn default_expr(default: &Value, schema: &Schema, ty: &TokenStream) -> TokenStream {
    match default {
        Value::Bool(b) => quote!(#b),
        Value::Number(n) if schema.ty == Some(Type::Integer) => {
            let v = n.as_i64().unwrap_or_default();
            quote!(#v)
        }
        Value::Number(n) => {
            let v = n.as_f64().unwrap_or_default();
            quote!(#v)
        }
        Value::String(s) if schema.enumeration.is_some() => {
            let v = type_ident(&pascal(s));
            quote!(#ty::#v)
        }
        Value::String(s) => quote!(::std::string::String::from(#s)),
        _ => quote!(::std::default::Default::default()),
    }
}
