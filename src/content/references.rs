//! Rules across files, checked when the registry is built: the scopes of an action's
//! targets, a task's and an ability's entities, an action's verb,
//! an actor's allowed verbs and prompt template, and a tag file's keys must name what
//! some loaded file or the game defines; a content file in a mod's folder must be listed.

use std::collections::BTreeSet;

use super::error::did_you_mean;
use super::validate::pointer_token;
use super::{
    AbilityDefinition, ActionDefinition, ActorSpec, ContentCatalog, ContentError,
    NarrativeVocabulary, PromptTemplate, TagFile,
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
    (action.target_slots())
        .filter_map(|(role, slot)| {
            let pointer = || format!("/targets/{}/scope", role.field());
            unknown_scope(file, pointer, &slot.scope, scopes)
        })
        .collect()
}

/// An ability's entity inputs whose scope nobody registered.
pub(super) fn unknown_input_scopes(
    file: &str,
    ability: &AbilityDefinition,
    scopes: Option<&BTreeSet<String>>,
) -> Vec<ContentError> {
    let Some(scopes) = scopes else {
        return Vec::new();
    };
    let lists = [
        ("required", &ability.inputs.required),
        ("optional", &ability.inputs.optional),
    ];
    let inputs = lists.into_iter().flat_map(|(list, inputs)| {
        let scoped = inputs.iter().enumerate();
        scoped.filter_map(move |(index, input)| Some((list, index, input.scope.as_ref()?)))
    });
    inputs
        .filter_map(|(list, index, scope)| {
            let pointer = || format!("/inputs/{list}/{index}/scope");
            unknown_scope(file, pointer, scope, scopes)
        })
        .collect()
}

/// A problem at `pointer` when `scope` is none of the registered `scopes`.
pub(super) fn unknown_scope(
    file: &str,
    pointer: impl FnOnce() -> String,
    scope: &str,
    scopes: &BTreeSet<String>,
) -> Option<ContentError> {
    if scopes.contains(scope) {
        return None;
    }
    let known = scopes
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    Some(ContentError::new(
        file,
        pointer(),
        format!(
            "unknown scope `{scope}`: use one of {known}, or register it with `add_target_scope`"
        ),
    ))
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

/// What is loaded, for a policy's ids: for actions, tasks and abilities in turn,
/// whether one is, and every id (for a misspelling's closest); and the mods' ids.
pub(super) struct Loaded<'a> {
    pub is_loaded: [&'a dyn Fn(&str) -> bool; 3],
    pub ids: [&'a [&'a str]; 3],
    pub mods: &'a [&'a str],
}

/// Warnings for the exact ids an actor's policy allows (`allowedActions`,
/// `allowedTasks`, `allowedAbilities`) that name nothing `loaded`, and for its `mod:*`
/// patterns whose mod is not loaded (as written): a misspelt id allows nothing. Each
/// names the loaded id it most likely misspells.
pub(super) fn unknown_allowed_ids(
    file: &str,
    actor: &ActorSpec,
    loaded: &Loaded<'_>,
) -> Vec<ContentError> {
    let hint = |id: &str, known: &[&str]| did_you_mean(id, known.iter().copied());
    let policy = &actor.policy;
    let lists = [
        ("allowedActions", "action", &policy.allowed_actions),
        ("allowedTasks", "task", &policy.allowed_tasks),
        ("allowedAbilities", "ability", &policy.allowed_abilities),
    ];
    let mut warnings = Vec::new();
    let kinds = lists.into_iter().zip(loaded.is_loaded).zip(loaded.ids);
    for (((field, kind, ids), is_loaded), known) in kinds {
        for (index, id) in ids.iter().enumerate() {
            let pointer = || format!("/policy/{field}/{index}");
            if let Some(namespace) = id.strip_suffix(":*") {
                if !loaded.mods.contains(&namespace) {
                    let hint = hint(namespace, loaded.mods);
                    warnings.push(ContentError::new(
                        file,
                        pointer(),
                        format!("no loaded mod has the id `{namespace}`{hint}, so `{id}` allows nothing: check the mod's id, as written in its manifest, or that the game loads it"),
                    ));
                }
            } else if !id.contains('*') && !is_loaded(id) {
                let hint = hint(id, known);
                warnings.push(ContentError::new(
                    file,
                    pointer(),
                    format!("no loaded {kind} has the id `{id}`{hint}, so it allows nothing: check the id, that its mod is loaded, and fix the errors reported for its file"),
                ));
            }
        }
    }
    warnings
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

/// Warnings for the paths a manifest (at `manifest`) lists twice, and under another
/// kind than their names say (`actions/go.action.json` under `content.actors`): each
/// is read as what its list holds, and its errors then name fields of the wrong kind.
pub(super) fn misfiled(manifest: &str, content: &super::ModContent) -> Vec<ContentError> {
    let mut warnings = Vec::new();
    // Every path listed: in which lists, and where first in each.
    let mut listed: bevy::platform::collections::HashMap<&str, Vec<(&str, String)>> =
        Default::default();
    for (list, paths) in content.lists() {
        for (index, path) in paths.iter().enumerate() {
            let at = format!("/content/{list}/{index}");
            let before = listed.entry(path.as_str()).or_default();
            let in_list = |wanted: &str| {
                (before.iter()).find_map(|(list, at)| (*list == wanted).then_some(at.as_str()))
            };
            let message = match (in_list(list), listed_elsewhere(list, path), before.first()) {
                (Some(first), ..) => Some(format!(
                    "`{path}` is listed already, at {first}: it loads once; list it once"
                )),
                (None, Some((kind, field)), _) => Some(match in_list(field) {
                    Some(there) => format!(
                        "`{path}` is {kind}, listed under `content.{field}` already, at \
                         {there}: remove it from `content.{list}`, which loads it again as \
                         what that list holds"
                    ),
                    None => format!(
                        "`{path}` is {kind}, read as what `content.{list}` holds: list it \
                         under `content.{field}`"
                    ),
                }),
                // Listed in two lists, it loads as each kind: one at least fails.
                (None, None, Some((first_list, first))) => Some(format!(
                    "`{path}` is listed under `content.{first_list}` too, at {first}: it \
                     loads as what each list holds; list it once, where its kind goes"
                )),
                (None, None, None) => None,
            };
            warnings.extend(message.map(|message| ContentError::new(manifest, &at, message)));
            if in_list(list).is_none() {
                before.push((list, at));
            }
        }
    }
    warnings
}

/// The kind of file a path's name says it is (`an action file`) and the list that
/// holds that kind, when that is another list than `list`.
fn listed_elsewhere(list: &str, path: &str) -> Option<(&'static str, &'static str)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    // `actor.json` may be any kind's: only `name.actor.json` says it is a spec.
    let field = (super::mod_folders::listing_field(name))
        .filter(|field| *field != list && name.matches('.').count() >= 2)?;
    let kind = match field {
        "actions" => "an action file",
        "actors" => "an actor spec file",
        "narrative" => "a narrative file",
        "prompts" => "a prompt template file",
        "tags" => "a tag file",
        "tasks" => "a task file",
        "methods" => "a method file",
        _ => "an ability file",
    };
    Some((kind, field))
}

/// Warnings for the content files `on_disk` inside a loaded mod's folder that its
/// manifest (at `manifest`) does not list: they never load, and the author most likely
/// meant them to.
pub(super) fn unlisted_files(
    manifest: &str,
    on_disk: &[String],
    listed: &super::registry::Listed,
) -> Vec<ContentError> {
    let Some((folder, _)) = manifest.rsplit_once('/') else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    for file in on_disk.iter().filter(|file| !listed.contains_key(*file)) {
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

/// Warnings for the mods whose manifests are `on_disk` (`mods/smithy/mod.json`) that
/// the game file (at `game_file`) does not list in `listed`: they never load, and a
/// scene or spec naming their content would only say it is missing.
pub(super) fn unlisted_mods(
    game_file: &str,
    listed: &[String],
    on_disk: &[String],
) -> Vec<ContentError> {
    (on_disk.iter())
        .filter_map(|manifest| {
            let id = manifest.strip_prefix("mods/")?.split('/').next()?;
            Some((manifest, id))
        })
        .filter(|(_, id)| !listed.iter().any(|listed| listed == id))
        .map(|(manifest, id)| {
            ContentError::new(
                game_file,
                "/mods",
                format!(
                    "{manifest} is a mod the game file does not list, so none of it loads: add \"{id}\" to `mods` to load it, or remove its folder"
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::fixtures::{action, actor, parsed, pointers};

    const ACTION: &str = "mods/items/actions/give.action.json";
    const ACTOR: &str = "mods/tavern/actors/marta.actor.json";

    #[test]
    fn a_target_scope_must_be_registered_unless_no_world_names_scopes() {
        let slot = |scope: &str| json!({ "scope": scope, "placeholder": "x", "description": "d" });
        let give = action(
            "items:give",
            "give {x}",
            json!({ "targets": { "primary": slot("carried"), "secondary": slot("nowhere") } }),
        );
        assert_eq!(unknown_scopes(ACTION, &give, None), []);
        let scopes: BTreeSet<String> = ["carried".to_owned(), "nearby".to_owned()].into();
        let problems = unknown_scopes(ACTION, &give, Some(&scopes));
        assert_eq!(pointers(&problems), ["/targets/secondary/scope"]);
        assert!(problems[0].message.contains("use one of carried, nearby"));
    }

    #[test]
    fn an_actions_verb_is_in_the_vocabulary() {
        let mut vocabulary = NarrativeVocabulary::default();
        let verb = |verb: &str| action("items:give", "give", json!({ "verb": verb }));
        assert_eq!(unknown_verb(ACTION, &verb("give"), &vocabulary), None);
        assert_eq!(
            unknown_verb(
                ACTION,
                &action("items:give", "give", json!({})),
                &vocabulary
            ),
            None
        );
        let juggle = verb("juggle");
        let problem = unknown_verb(ACTION, &juggle, &vocabulary).expect("an unknown verb");
        assert_eq!(problem.pointer, "/verb");
        vocabulary.extend(&parsed(json!({ "verbs": ["juggle"] }), json!({})));
        assert_eq!(
            unknown_verb(ACTION, &juggle, &vocabulary),
            None,
            "a mod adds it"
        );
    }

    #[test]
    fn an_actors_allowed_verbs_are_in_the_vocabulary() {
        let spec = actor(
            "tavern:marta",
            json!({ "policy": { "allowedVerbs": ["give", "juggle"] } }),
        );
        let problems = unknown_allowed_verbs(ACTOR, &spec, &NarrativeVocabulary::default());
        assert_eq!(pointers(&problems), ["/policy/allowedVerbs/1"]);
    }

    #[test]
    fn an_id_a_policy_allows_that_names_nothing_loaded_is_a_warning() {
        let spec = actor(
            "tavern:brom",
            json!({ "policy": {
                "allowedActions": ["core:*", "core:wait", "core:fly", "tavrn:*"],
                "allowedTasks": ["*", "tavern:serve", "Tavern:*"],
                "allowedAbilities": ["tavern:rent_room"]
            } }),
        );
        let ids = ["core:wait", "tavern:serve"];
        let is_loaded = |id: &str| ids.contains(&id);
        let loaded = Loaded {
            is_loaded: [&is_loaded, &is_loaded, &is_loaded],
            ids: [&ids, &ids, &ids],
            mods: &["core", "tavern"],
        };
        let warnings = unknown_allowed_ids(ACTOR, &spec, &loaded);
        assert_eq!(
            pointers(&warnings),
            [
                "/policy/allowedActions/2",
                "/policy/allowedActions/3",
                "/policy/allowedTasks/2",
                "/policy/allowedAbilities/0"
            ]
        );
        assert!(
            warnings[0].message.contains("`core:fly`"),
            "{}",
            warnings[0]
        );
        assert!(
            warnings[1]
                .message
                .contains("no loaded mod has the id `tavrn` (did you mean `tavern`?)"),
            "{}",
            warnings[1]
        );
        // A misspelt id is told the loaded one it most likely means.
        let spec = actor(
            "tavern:brom",
            json!({ "policy": { "allowedTasks": ["tavern:serv"] } }),
        );
        let warnings = unknown_allowed_ids(ACTOR, &spec, &loaded);
        assert!(
            warnings[0]
                .message
                .contains("`tavern:serv` (did you mean `tavern:serve`?)"),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn a_path_listed_under_another_kind_is_a_warning() {
        let content: super::super::ModContent = serde_json::from_value(json!({
            "actions": ["actions/wait.action.json", "actions/old.json"],
            "actors": ["actions/hop.action.ron", "actors/brom.actor.json"],
            "tags": ["marta.actor.json"],
            "prompts": ["prompts/actor.json"]
        }))
        .expect("a listing");
        let warnings = misfiled("mods/items/mod.json", &content);
        assert_eq!(
            pointers(&warnings),
            ["/content/actors/0", "/content/tags/0"]
        );
        assert!(
            warnings[0]
                .message
                .contains("`actions/hop.action.ron` is an action file, read as what `content.actors` holds: list it under `content.actions`"),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn a_path_listed_twice_is_a_warning() {
        let content: super::super::ModContent = serde_json::from_value(json!({
            "actions": ["actions/wait.action.json", "actions/go.action.json", "actions/wait.action.json", "stock.json"],
            "narrative": ["actions/go.action.json", "narrative/bar.narrative.json"],
            "tags": ["stock.json", "stock.json", "narrative/inn.narrative.json"]
        }))
        .expect("a listing");
        let warnings = misfiled("mods/items/mod.json", &content);
        assert_eq!(
            pointers(&warnings),
            [
                "/content/actions/2",
                "/content/narrative/0",
                "/content/tags/0",
                "/content/tags/1",
                "/content/tags/2"
            ]
        );
        let said = |i: usize, words: &str| {
            let message = &warnings[i].message;
            assert!(message.contains(words), "{words:?} not in {message}");
        };
        // Under two lists, it loads as both: where the name tells its kind, the list
        // it goes in is told, or that it is there already.
        said(
            1,
            "listed under `content.actions` already, at /content/actions/1: remove it",
        );
        said(
            2,
            "listed under `content.actions` too, at /content/actions/3",
        );
        said(3, "listed already, at /content/tags/0");
        said(4, "list it under `content.narrative`");
        assert!(
            warnings[0]
                .message
                .starts_with("`actions/wait.action.json` is listed already, at /content/actions/0"),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn a_prompt_id_names_a_loaded_template() {
        let mut prompts = ContentCatalog::default();
        let spec = actor("tavern:marta", json!({ "promptId": "core:plain" }));
        let none = unknown_prompt(ACTOR, &spec, &prompts).expect("no template is loaded");
        assert!(none.message.contains("none is loaded"), "{none}");
        let template = |id: &str| -> PromptTemplate {
            parsed(
                json!({ "id": id, "rules": "r", "question": "q", "reply": "a" }),
                json!({}),
            )
        };
        prompts
            .insert("b.json", template("core:terse"))
            .expect("a new id");
        let other = unknown_prompt(ACTOR, &spec, &prompts).expect("another template");
        assert_eq!(other.pointer, "/promptId");
        assert!(other.message.contains("loaded: core:terse"), "{other}");
        prompts
            .insert("a.json", template("core:plain"))
            .expect("a new id");
        assert_eq!(unknown_prompt(ACTOR, &spec, &prompts), None);
        let built_in = actor("tavern:marta", json!({}));
        assert_eq!(
            unknown_prompt(ACTOR, &built_in, &ContentCatalog::default()),
            None
        );
    }

    #[test]
    fn a_tag_key_no_narrative_file_defines_is_a_warning() {
        let tags: TagFile = parsed(
            json!({ "places": { "tavern:hall": ["warm"] }, "items": { "tavern:lu/te": ["music"] } }),
            json!({}),
        );
        let warnings = unknown_tag_keys("mods/tavern/tags.json", &tags, |key| key == "tavern:hall");
        assert_eq!(pointers(&warnings), ["/items/tavern:lu~1te"]);
    }

    #[test]
    fn a_content_file_the_manifest_does_not_list_is_a_warning() {
        let on_disk = [
            "mods/items/actions/give.action.json",
            "mods/items/actions/take.action.json",
            "mods/items/notes.txt",
            "mods/itemsmore/actions/x.action.json",
            "mods/other/actions/y.action.json",
        ]
        .map(String::from);
        let listed = [("mods/items/actions/give.action.json".to_owned(), 0)].into();
        let warnings = unlisted_files("mods/items/mod.json", &on_disk, &listed);
        let files: Vec<&str> = warnings.iter().map(|w| w.file.as_str()).collect();
        assert_eq!(files, ["mods/items/actions/take.action.json"]);
        assert!(
            warnings[0].message.contains(
                "add \"actions/take.action.json\" to `content.actions` in mods/items/mod.json"
            ),
            "{}",
            warnings[0]
        );
    }
}
