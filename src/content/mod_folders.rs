//! The content files in each mod's folder, found by walking it with the asset source's
//! reader: a file its manifest does not list never loads, and nothing else would say so.

use std::path::PathBuf;

use bevy::asset::AssetServer;
use bevy::asset::io::AssetSourceId;
use futures_lite::StreamExt;

use super::AbilityDefinition;
use super::{
    ActionDefinition, ActorSpec, ContentAsset, NarrativeContext, PromptTemplate, RefinementMethod,
    TagFile, TaskDefinition,
};

/// How deep below a mod's folder files are looked for.
const MAX_DEPTH: usize = 8;
/// How many entries of a mod's folder are looked at, at most.
const MAX_ENTRIES: usize = 10_000;

/// The manifest field (`content.<field>`) that lists a file with this name, when its
/// name ends the way one content kind's files do (`wait.action.json` → `actions`).
pub(crate) fn listing_field(file_name: &str) -> Option<&'static str> {
    let kinds: [(&'static str, &[&str]); 8] = [
        ("actions", ActionDefinition::EXTENSIONS),
        ("actors", ActorSpec::EXTENSIONS),
        ("narrative", NarrativeContext::EXTENSIONS),
        ("prompts", PromptTemplate::EXTENSIONS),
        ("tags", TagFile::EXTENSIONS),
        ("tasks", TaskDefinition::EXTENSIONS),
        ("methods", RefinementMethod::EXTENSIONS),
        ("abilities", AbilityDefinition::EXTENSIONS),
    ];
    kinds.into_iter().find_map(|(field, extensions)| {
        extensions
            .iter()
            .any(|extension| {
                file_name == *extension
                    || file_name
                        .strip_suffix(extension)
                        .is_some_and(|stem| stem.ends_with('.'))
            })
            .then_some(field)
    })
}

/// The asset paths of the content files (those [`listing_field`] knows) in `folder` and
/// below, sorted. A folder that cannot be read has none.
pub(crate) async fn content_files_in(server: AssetServer, folder: String) -> Vec<String> {
    let Ok(source) = server.get_source(AssetSourceId::Default) else {
        return Vec::new();
    };
    let reader = source.reader();
    let mut found = Vec::new();
    let mut pending = vec![(PathBuf::from(folder), 0)];
    let mut seen = 0usize;
    while let Some((directory, depth)) = pending.pop() {
        let Ok(mut entries) = reader.read_directory(&directory).await else {
            continue;
        };
        while let Some(path) = entries.next().await {
            seen += 1;
            if seen > MAX_ENTRIES {
                pending.clear();
                break;
            }
            if reader.is_directory(&path).await.unwrap_or(false) {
                if depth < MAX_DEPTH {
                    pending.push((path, depth + 1));
                }
                continue;
            }
            let is_content = path
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| listing_field(name).is_some());
            if is_content {
                found.push(path.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found.sort();
    found
}

/// The manifests named `manifest_file` of the mods in `folder` (`mods`): one in each
/// folder of it that holds one, listed by the game file or not; sorted.
pub(crate) async fn mod_manifests_in(
    server: AssetServer,
    folder: String,
    manifest_file: String,
) -> Vec<String> {
    let Ok(source) = server.get_source(AssetSourceId::Default) else {
        return Vec::new();
    };
    let reader = source.reader();
    let Ok(mut entries) = reader.read_directory(&PathBuf::from(folder)).await else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut seen = 0usize;
    while let Some(path) = entries.next().await {
        seen += 1;
        if seen > MAX_ENTRIES {
            break;
        }
        let manifest = path.join(&manifest_file);
        if reader.is_directory(&path).await.unwrap_or(false) && reader.read(&manifest).await.is_ok()
        {
            found.push(manifest.to_string_lossy().replace('\\', "/"));
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::listing_field;

    #[test]
    fn a_file_name_says_which_list_it_belongs_in() {
        assert_eq!(listing_field("wait.action.json"), Some("actions"));
        assert_eq!(listing_field("flee.action.ron"), Some("actions"));
        assert_eq!(listing_field("marta.actor.json"), Some("actors"));
        assert_eq!(listing_field("lute.narrative.json"), Some("narrative"));
        assert_eq!(listing_field("terse.prompt.ron"), Some("prompts"));
        assert_eq!(listing_field("tags.json"), Some("tags"));
        assert_eq!(listing_field("more.tags.json"), Some("tags"));
        assert_eq!(listing_field("mod.json"), None);
        assert_eq!(listing_field("notes.json"), None);
        assert_eq!(listing_field("xtags.json"), None);
        assert_eq!(listing_field("tavern.scene.json"), None);
    }
}
