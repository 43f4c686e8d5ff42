//! Rules across files, checked when the registry is built: an action's scopes and verb,
//! an actor's allowed verbs and prompt template must name what some loaded file or the
//! game defines.

use std::collections::{BTreeSet, HashMap};

use super::{ActionDefinition, ActorSpec, ContentError, NarrativeVocabulary, PromptTemplate};

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
    prompts: &HashMap<String, PromptTemplate>,
) -> Option<ContentError> {
    let id = actor.prompt_id.as_ref()?;
    (!prompts.contains_key(id)).then(|| {
        let mut known: Vec<&str> = prompts.keys().map(String::as_str).collect();
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
