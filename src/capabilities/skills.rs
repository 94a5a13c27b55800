//! Handlers of the `skills` namespace: the layer's skills as the MCP skills extension serves
//! them — every skill's entry, and one skill's files — so the extension, HTTP and the CLI read
//! them through the one executor, and the extension never reads the index itself.

use crate::call::Call;
use crate::error::{cut_echo, CapabilityError};
use crate::registry::types::skills::{FilesInput, FilesOutput, ListInput, ListOutput};
use crate::registry::types::{
    SkillsFilesOutputFilesItem as File, SkillsListOutputSkillsItem as Entry,
};

pub fn list(ctx: &Call, _input: ListInput) -> Result<ListOutput, CapabilityError> {
    let index = ctx.index()?;
    let skills = index
        .skills
        .iter()
        .map(|skill| Entry {
            uri: skill.uri(),
            frontmatter: index
                .get(&skill.object_uri)
                .map(|o| o.metadata.to_map())
                .unwrap_or_default(),
            resources: super::objects::skill_resources(skill),
        })
        .collect();
    Ok(ListOutput { skills })
}

pub fn files(ctx: &Call, input: FilesInput) -> Result<FilesOutput, CapabilityError> {
    let index = ctx.index()?;
    let skills: Vec<&crate::layer::Skill> = match &input.name {
        Some(name) => vec![index.skill(name).ok_or_else(|| {
            CapabilityError::not_found(format!(
                "no skill `{}` here (see skills.list)",
                cut_echo(name)
            ))
        })?],
        None => index.skills.iter().collect(),
    };
    let files = skills
        .iter()
        .flat_map(|skill| &skill.files)
        .map(|f| File {
            path: f.path.clone(),
            uri: f.uri.clone(),
            media_type: f.media_type.to_string(),
            size: f.bytes.len() as i64,
        })
        .collect();
    Ok(FilesOutput { files })
}
