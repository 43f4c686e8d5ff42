//! Rules across files, checked when the registry is built: an action's scopes and verb,
//! an actor's allowed verbs and prompt template, and a tag file's keys must name what
//! some loaded file or the game defines; a content file in a mod's folder must be listed.

use std::collections::{BTreeSet, HashSet};

use super::validate::pointer_token;
use super::{
    ActionDefinition, ActorSpec, ContentCatalog, ContentError, NarrativeVocabulary, PromptTemplate,
    TagFile,
};

/// An action's target slots whose scope nobody registered.
pub(super) fn unknown_scopes(
    file: &str,
    action: &ActionDefinition,
    scopes: Option<&BTreeSet<String>>,
) -> Vec<ContentError> {
    let Some(scopes) = scopes else {
        return Vec::new();
    };
    action
        .target_slots()
        .filter(|(_, slot)| !scopes.contains(&slot.scope))
        .map(|(role, slot)| {
            let known = scopes.iter().map(String::as_str).collect::<Vec<_>>().join(", ");
            ContentError::new(
                file,
                format!("/targets/{}/scope", role.field()),
                format!("unknown scope `{}`: use one of {known}, or register it with `add_target_scope`", slot.scope),
            )
        })
        .collect()
}

/// An action's `verb` when no vocabulary knows it.
pub(super) fn unknown_verb(
    file: &str,
    action: &ActionDefinition,
    vocabulary: &NarrativeVocabulary,
) -> Option<ContentError> {
    let verb = action.verb.as_ref()?;
    (!vocabulary.verbs.contains(verb)).then(|| {
        ContentError::new(
            file,
            "/verb",
            format!("unknown verb `{verb}`: use a canonical verb, or add it to a manifest's `vocabulary.verbs`"),
        )
    })
}

/// Verbs an actor's `policy.allowedVerbs` names that no vocabulary knows.
pub(super) fn unknown_allowed_verbs(
    file: &str,
    actor: &ActorSpec,
    vocabulary: &NarrativeVocabulary,
) -> Vec<ContentError> {
    actor
        .policy
        .allowed_verbs
        .iter()
        .enumerate()
        .filter(|(_, verb)| !vocabulary.verbs.contains(*verb))
        .map(|(index, verb)| {
            ContentError::new(
                file,
                format!("/policy/allowedVerbs/{index}"),
                format!("unknown verb `{verb}`: use a canonical verb, or add it to a manifest's `vocabulary.verbs`"),
            )
        })
        .collect()
}

/// An actor's `promptId` when no loaded template has that id.
pub(super) fn unknown_prompt(
    file: &str,
    actor: &ActorSpec,
    prompts: &ContentCatalog<PromptTemplate>,
) -> Option<ContentError> {
    let id = actor.prompt_id.as_ref()?;
    (!prompts.contains(id)).then(|| {
        let mut known: Vec<&str> = prompts.iter().map(|t| t.id.as_str()).collect();
        known.sort_unstable();
        let known = if known.is_empty() {
            "none is loaded".to_owned()
        } else {
            format!("loaded: {}", known.join(", "))
        };
        ContentError::new(
            file,
            "/promptId",
            format!("no prompt template has the id `{id}` ({known}): fix the id, list the template's file in its mod's `content.prompts`, or remove `promptId` to use the built-in template"),
        )
    })
}

/// Warnings for a tag file's keys that `is_defined` does not know: their tags only help
/// an entity with that `NarrativeKey`, and no narrative file defines one.
pub(super) fn unknown_tag_keys(
    file: &str,
    tags: &TagFile,
    is_defined: impl Fn(&str) -> bool,
) -> Vec<ContentError> {
    let mut warnings = Vec::new();
    for (field, list) in tags.lists() {
        for key in list.keys().filter(|key| !is_defined(key)) {
            warnings.push(ContentError::new(
                file,
                format!("/{field}/{}", pointer_token(key)),
                format!("no narrative file defines `{key}`: check the key's spelling; its tags only help an entity with that `NarrativeKey`"),
            ));
        }
    }
    warnings
}

/// Warnings for the content files `on_disk` inside a loaded mod's folder that its
/// manifest (at `manifest`) does not list: they never load, and the author most likely
/// meant them to.
pub(super) fn unlisted_files(
    manifest: &str,
    on_disk: &[String],
    listed: &HashSet<String>,
) -> Vec<ContentError> {
    let Some((folder, _)) = manifest.rsplit_once('/') else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    for file in on_disk.iter().filter(|file| !listed.contains(*file)) {
        let Some(inside) = file
            .strip_prefix(folder)
            .and_then(|rest| rest.strip_prefix('/'))
        else {
            continue;
        };
        let name = inside.rsplit('/').next().unwrap_or(inside);
        let Some(field) = super::mod_folders::listing_field(name) else {
            continue;
        };
        warnings.push(ContentError::new(
            file,
            "",
            format!(
                "no manifest lists this file, so it is not loaded: add \"{inside}\" to `content.{field}` in {manifest}, or remove the file"
            ),
        ));
    }
    warnings
}
