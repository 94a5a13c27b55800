//! Reading one claimed file safely: opening it by its root-relative path without following a link
//! (`directories`), the refusals of a file that may not become an object and the front-matter and
//! YAML readers (`file`, with the shortcut for plain front matter in `plain_yaml`), and the bound
//! every YAML document passes before a parser sees it (`yaml_bound`). It knows nothing of kinds,
//! sources or objects.

pub(super) mod directories;
pub(super) mod file;
pub(super) mod plain_yaml;
pub(super) mod yaml_bound;
