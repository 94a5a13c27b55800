//! Reading one claimed file safely: opening it by its root-relative path without following a link
//! (`directories`), the refusals of a file that may not become an object and the front-matter and
//! YAML readers (`file`, with the shortcut for plain front matter in `plain_yaml`), and the bound
//! every YAML document passes before a parser sees it (`yaml_bound`). It knows nothing of kinds,
//! sources or objects.

mod directories;
mod file;
mod plain_yaml;
mod yaml_bound;

pub(crate) use directories::Directories;
pub(crate) use file::{
    backticked, describe_json, first_heading, read_claimed, split_front_matter, unknown_keys,
    versioned, versioned_mapping, yaml_mapping, yaml_to_json, FrontMatterBlock, ReadOutcome,
    YamlError,
};
pub use yaml_bound::{
    check as check_yaml_bound, Refusal as YamlRefusal, MAX_BYTES as MAX_YAML_BYTES,
    MAX_DEPTH as MAX_YAML_DEPTH,
};
