//! Checks of one file on its own; cross-file rules live with the registry.

use std::collections::HashSet;

mod ability;
mod action;
mod actor;
mod method;
mod task;

pub use method::MAX_NESTING;

use super::{ContentAsset, ContentError, GameManifest, ModManifest, PromptTemplate, TagFile};

/// Length bounds of `actionPurpose` and `actionConsiderWhen`, in characters.
pub const METADATA_LENGTH: std::ops::RangeInclusive<usize> = 10..=200;

/// The longest each kind of content text may be, in characters. Text a prompt shows
/// the model is bounded so one field cannot crowd the rest of a prompt out of its
/// budget; a longer field is a [`ContentError`] naming the limit and the length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextLimits {
    /// An action's `name`, and a persona's `name`.
    pub name: usize,
    /// An action's `description` (the line after its command), and the `description`
    /// of a target slot or parameter.
    pub action_description: usize,
    /// An action's `template`, and a parameter's default as text: a command is one
    /// short line.
    pub action_template: usize,
    /// Each fragment of a narrative file (traits, state variants, pools, dialogue) and
    /// its `atmosphere`.
    pub fragment: usize,
    /// Each persona field other than the name (`role`, `voice`, each trait, goal,
    /// taboo and line), and each property's value.
    pub persona_line: usize,
    /// An actor's `backstory`.
    pub backstory: usize,
    /// The text of a memory seed.
    pub memory_seed: usize,
    /// A prompt template's `rules`.
    pub prompt_rules: usize,
    /// A prompt template's `question` and `reply`.
    pub prompt_line: usize,
}

/// The documented limits.
pub const TEXT_LIMITS: TextLimits = TextLimits {
    name: 60,
    action_description: 200,
    action_template: 100,
    fragment: 300,
    persona_line: 300,
    backstory: 4000,
    memory_seed: 500,
    prompt_rules: 8000,
    prompt_line: 1000,
};

/// A problem at `pointer` when `text` is longer than `limit` characters; `limit_name`
/// is the [`TextLimits`] field, for the message.
pub(crate) fn too_long(
    file: &str,
    pointer: &str,
    text: &str,
    limit: usize,
    limit_name: &str,
) -> Option<ContentError> {
    let length = text.chars().count();
    (length > limit).then(|| {
        ContentError::new(
            file,
            pointer,
            format!(
                "is {length} characters long, above the limit of {limit} (`TEXT_LIMITS.{limit_name}`): shorten it"
            ),
        )
    })
}

/// The problems of the id and the three texts of a command an actor is offered (an
/// action's or a task's): an id that is not the file's mod's
/// ([`check_namespaced_id`]), an empty `name` or `template`, and any of the three
/// texts above its limit.
pub(crate) fn command_problems(
    file: &str,
    id: &str,
    [name, description, template]: [&str; 3],
) -> Vec<ContentError> {
    let mut problems = check_namespaced_id(id, file);
    for (field, value) in [("name", name), ("template", template)] {
        if value.trim().is_empty() {
            problems.push(ContentError::new(
                file,
                format!("/{field}"),
                format!("the {field} is empty"),
            ));
        }
    }
    let limits = &TEXT_LIMITS;
    for (pointer, text, limit, limit_name) in [
        ("/name", name, limits.name, "name"),
        (
            "/description",
            description,
            limits.action_description,
            "action_description",
        ),
        (
            "/template",
            template,
            limits.action_template,
            "action_template",
        ),
    ] {
        problems.extend(too_long(file, pointer, text, limit, limit_name));
    }
    problems
}

/// Whether a mod id uses only letters, digits, `_` and `-`.
pub fn is_valid_mod_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The mod folder a file lives in: `items` for `mods/items/actions/give.action.json`.
pub fn owning_mod(file: &str) -> Option<&str> {
    let mut parts = file.split('/');
    while let Some(part) = parts.next() {
        if part == "mods" {
            return parts.next().filter(|_| parts.clone().next().is_some());
        }
    }
    None
}

impl ContentAsset for GameManifest {
    const EXTENSIONS: &'static [&'static str] = &["loom.json", "loom.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        let mut seen = HashSet::new();
        for (index, id) in self.mods.iter().enumerate() {
            let pointer = format!("/mods/{index}");
            if !is_valid_mod_id(id) {
                problems.push(ContentError::new(file, &pointer, bad_id_message(id)));
            } else if !seen.insert(id.to_ascii_lowercase()) {
                problems.push(ContentError::new(
                    file,
                    &pointer,
                    format!("duplicate mod id `{id}`: list each mod once"),
                ));
            }
        }
        problems
    }
}

impl ContentAsset for ModManifest {
    const EXTENSIONS: &'static [&'static str] = &["mod.json", "mod.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        if !is_valid_mod_id(&self.id) {
            problems.push(ContentError::new(file, "/id", bad_id_message(&self.id)));
        } else if let Some(folder) = owning_mod(file)
            && folder != self.id
        {
            let said = if folder.eq_ignore_ascii_case(&self.id) {
                // Found on a file system that ignores case: the folder was asked for as
                // the game file spells the mod, which may not be the folder's own name.
                format!(
                    "mod id `{}` must equal its folder name, which the game file's `mods` spells `{folder}`: spell the mod the same in the game file, the manifest and the folder's name (some file systems tell case apart, some do not)",
                    self.id
                )
            } else {
                format!("mod id `{}` must equal its folder name `{folder}`", self.id)
            };
            problems.push(ContentError::new(file, "/id", said));
        }
        if self.name.trim().is_empty() {
            problems.push(ContentError::new(
                file,
                "/name",
                "the name is empty: give the mod a name",
            ));
        }
        for (field, value) in [
            ("actionPurpose", &self.action_purpose),
            ("actionConsiderWhen", &self.action_consider_when),
        ] {
            if let Some(text) = value {
                let length = text.chars().count();
                if !METADATA_LENGTH.contains(&length) {
                    problems.push(ContentError::new(
                        file,
                        format!("/{field}"),
                        format!(
                            "is {length} characters long; write {} to {} characters",
                            METADATA_LENGTH.start(),
                            METADATA_LENGTH.end()
                        ),
                    ));
                }
            }
        }
        for (index, dependency) in self.dependencies.iter().enumerate() {
            if !is_valid_mod_id(&dependency.id) {
                problems.push(ContentError::new(
                    file,
                    format!("/dependencies/{index}/id"),
                    bad_id_message(&dependency.id),
                ));
            }
        }
        for (index, id) in self.conflicts.iter().enumerate() {
            if !is_valid_mod_id(id) {
                problems.push(ContentError::new(
                    file,
                    format!("/conflicts/{index}"),
                    bad_id_message(id),
                ));
            }
        }
        for (list, paths) in self.content.lists() {
            for (index, path) in paths.iter().enumerate() {
                if let Some(why) = outside_the_folder(path) {
                    problems.push(ContentError::new(
                        file,
                        format!("/content/{list}/{index}"),
                        format!("`{path}` {why}: list a path inside the mod's folder, like `{list}/name.json`"),
                    ));
                }
            }
        }
        problems
    }
}

impl ContentAsset for PromptTemplate {
    const EXTENSIONS: &'static [&'static str] = &["prompt.json", "prompt.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = check_namespaced_id(&self.id, file);
        let limits = &TEXT_LIMITS;
        let line = (limits.prompt_line, "prompt_line");
        let rules = (limits.prompt_rules, "prompt_rules");
        // Each text, its limit, and how else to do without writing it.
        let (built_in, left_out) = (
            "or leave out `promptId` in specs to use the built-in template",
            "or leave it out to use the built-in one",
        );
        let texts = [
            ("rules", &self.rules, rules, built_in),
            ("question", &self.question, line, built_in),
            ("reply", &self.reply, line, built_in),
        ];
        let in_combat =
            (self.reply_in_combat.as_ref()).map(|t| ("replyInCombat", t, line, left_out));
        for (field, value, (limit, name), fix) in texts.into_iter().chain(in_combat) {
            problems.extend(too_long(file, &format!("/{field}"), value, limit, name));
            if value.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    format!("/{field}"),
                    format!("the {field} text is empty: write it, {fix}"),
                ));
            }
        }
        problems
    }
}

impl ContentAsset for TagFile {
    const EXTENSIONS: &'static [&'static str] = &["tags.json", "tags.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = Vec::new();
        for (field, list) in self.lists() {
            for (key, tags) in list {
                let pointer = format!("/{field}/{}", pointer_token(key));
                if key.trim().is_empty() {
                    problems.push(ContentError::new(
                        file,
                        &pointer,
                        "an empty key: name the narrative key (`mod:name`) these tags belong to",
                    ));
                }
                for (index, tag) in tags.iter().enumerate() {
                    if tag.trim().is_empty() {
                        problems.push(ContentError::new(
                            file,
                            format!("{pointer}/{index}"),
                            "an empty tag: write a word, or remove it",
                        ));
                    }
                }
            }
        }
        problems
    }
}

/// Why a manifest's listed path does not name a file inside the mod's folder, if it
/// does not. Bevy's asset server refuses a path that leaves the asset folder and reads
/// `#` and `://` as a label and a source, so none of them is allowed.
fn outside_the_folder(path: &str) -> Option<&'static str> {
    if path.trim().is_empty() {
        Some("is empty")
    } else if path.starts_with('/') || path.contains(':') {
        Some("is absolute, or names a drive or an asset source")
    } else if path.contains('\\') {
        Some("uses `\\`: separate folders with `/`")
    } else if path.split('/').any(|part| part == "..") {
        Some("goes up out of the folder with `..`")
    } else if path.split('/').any(|part| part.is_empty() || part == ".") {
        Some(
            "has an empty or `.` part: write it as a plain path such as `actions/wait.action.json`",
        )
    } else if path.contains('#') {
        Some("has a `#`, which Bevy reads as a label")
    } else {
        None
    }
}

/// A map key as a JSON pointer token: `~` and `/` escaped.
pub(crate) fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Whether an id is `mod:name`: a valid mod id, a colon, and a name.
fn is_namespaced(id: &str) -> bool {
    id.split_once(':')
        .is_some_and(|(namespace, name)| !name.is_empty() && is_valid_mod_id(namespace))
}

/// `mod:name` ids whose namespace must be the owning mod.
pub(crate) fn check_namespaced_id(id: &str, file: &str) -> Vec<ContentError> {
    check_namespaced_id_at(id, file, "/id")
}

/// [`check_namespaced_id`] of an id at `pointer`.
pub(crate) fn check_namespaced_id_at(id: &str, file: &str, pointer: &str) -> Vec<ContentError> {
    let Some((namespace, name)) = id.split_once(':').filter(|_| is_namespaced(id)) else {
        return vec![ContentError::new(
            file,
            pointer,
            format!("`{id}` must be `mod:name`, with the owning mod's id before the colon"),
        )];
    };
    match owning_mod(file) {
        Some(folder) if folder != namespace => vec![ContentError::new(
            file,
            pointer,
            format!(
                "namespace `{namespace}` is not this file's mod `{folder}`: write `{folder}:{name}`"
            ),
        )],
        _ => Vec::new(),
    }
}

fn bad_id_message(id: &str) -> String {
    format!("`{id}` is not a valid mod id: use only letters, digits, `_` and `-`")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::fixtures::{game, manifest, parsed, pointers};

    const MANIFEST: &str = "mods/items/mod.json";

    #[test]
    fn a_game_file_lists_valid_mod_ids_each_once() {
        let problems = game(&["core", "it ems", "Core", "tavern"]).check("game.loom.json");
        assert_eq!(pointers(&problems), ["/mods/1", "/mods/2"]);
        assert!(problems[0].message.contains("not a valid mod id"));
        assert!(problems[1].message.contains("duplicate mod id `Core`"));
        assert!(game(&["core", "items"]).check("game.loom.json").is_empty());
    }

    #[test]
    fn a_mod_id_is_valid_and_names_its_folder() {
        assert!(manifest("items", json!({})).check(MANIFEST).is_empty());
        let bad = manifest("it/ems", json!({})).check(MANIFEST);
        assert_eq!(pointers(&bad), ["/id"]);
        assert!(bad[0].message.contains("not a valid mod id"));
        let elsewhere = manifest("shop", json!({})).check(MANIFEST);
        assert_eq!(pointers(&elsewhere), ["/id"]);
        assert!(elsewhere[0].message.contains("folder name `items`"));
        // Asked for as `mods/Items/` on a file system that ignores case.
        let spelt = manifest("items", json!({})).check("mods/Items/mod.json");
        assert_eq!(pointers(&spelt), ["/id"]);
        assert!(
            spelt[0]
                .message
                .contains("the game file's `mods` spells `Items`"),
            "{}",
            spelt[0]
        );
    }

    #[test]
    fn a_mod_has_a_name() {
        let problems = manifest("items", json!({ "name": "  " })).check(MANIFEST);
        assert_eq!(pointers(&problems), ["/name"]);
    }

    #[test]
    fn action_metadata_has_a_bounded_length() {
        let fits = "x".repeat(*METADATA_LENGTH.start());
        let over = "x".repeat(METADATA_LENGTH.end() + 1);
        let ok = json!({ "actionPurpose": fits, "actionConsiderWhen": fits });
        assert!(manifest("items", ok).check(MANIFEST).is_empty());
        let bad = json!({ "actionPurpose": "short", "actionConsiderWhen": over });
        let problems = manifest("items", bad).check(MANIFEST);
        assert_eq!(
            pointers(&problems),
            ["/actionPurpose", "/actionConsiderWhen"]
        );
        assert!(problems[0].message.contains("is 5 characters long"));
    }

    #[test]
    fn dependencies_and_conflicts_name_valid_mod_ids() {
        let overrides = json!({ "dependencies": [{ "id": "core" }, { "id": "c re" }], "conflicts": ["shop", "sh:op"] });
        let problems = manifest("items", overrides).check(MANIFEST);
        assert_eq!(pointers(&problems), ["/dependencies/1/id", "/conflicts/1"]);
    }

    #[test]
    fn listed_paths_stay_inside_the_mods_folder() {
        let paths = [
            "",
            "/etc/passwd",
            "c:/x.json",
            "embedded://a",
            "actions\\a.json",
            "../other/a.json",
            "actions//a.json",
            "./a.json",
            "a.json#label",
        ];
        for path in paths {
            assert!(outside_the_folder(path).is_some(), "{path:?}");
        }
        assert_eq!(outside_the_folder("actions/give.action.json"), None);
        let overrides = json!({ "content": { "actions": ["actions/ok.action.json"], "tags": ["../tags.json"] } });
        let problems = manifest("items", overrides).check(MANIFEST);
        assert_eq!(pointers(&problems), ["/content/tags/0"]);
        assert!(problems[0].message.contains("goes up out of the folder"));
    }

    #[test]
    fn ids_are_namespaced_by_the_owning_mod() {
        let file = "mods/items/actions/give.action.json";
        assert!(check_namespaced_id("items:give", file).is_empty());
        assert!(check_namespaced_id("shop:give", "loose/give.action.json").is_empty());
        for id in ["give", "items:", "it ems:give"] {
            assert_eq!(pointers(&check_namespaced_id(id, file)), ["/id"], "{id}");
        }
        let other = check_namespaced_id("shop:give", file);
        assert!(
            other[0].message.contains("write `items:give`"),
            "{}",
            other[0]
        );
    }

    #[test]
    fn the_owning_mod_is_the_folder_under_mods() {
        assert_eq!(
            owning_mod("mods/items/actions/give.action.json"),
            Some("items")
        );
        assert_eq!(owning_mod("game/mods/items/mod.json"), Some("items"));
        assert_eq!(owning_mod("mods/items"), None);
        assert_eq!(owning_mod("scenes/tavern.scene.json"), None);
    }

    #[test]
    fn a_prompt_template_has_every_text_within_its_limit() {
        let template = |rules: String, question: &str| -> PromptTemplate {
            parsed(
                json!({ "id": "core:plain", "rules": rules, "question": question, "reply": "Answer." }),
                json!({}),
            )
        };
        let file = "mods/core/prompts/plain.prompt.json";
        assert!(template("Play.".into(), "Which?").check(file).is_empty());
        let long = "x".repeat(TEXT_LIMITS.prompt_rules + 1);
        let problems = template(long, " ").check(file);
        assert_eq!(pointers(&problems), ["/rules", "/question"]);
        assert!(problems[0].message.contains("TEXT_LIMITS.prompt_rules"));
        assert!(problems[1].message.contains("empty"));
    }

    #[test]
    fn a_prompt_template_may_leave_out_its_reply_in_combat_but_not_write_it_empty() {
        let template = |in_combat: serde_json::Value| -> PromptTemplate {
            parsed(
                json!({ "id": "core:plain", "rules": "Play.", "question": "Which?", "reply": "Answer." }),
                json!({ "replyInCombat": in_combat }),
            )
        };
        let file = "mods/core/prompts/plain.prompt.json";
        let left_out: PromptTemplate = parsed(
            json!({ "id": "core:plain", "rules": "Play.", "question": "Which?", "reply": "Answer." }),
            json!({}),
        );
        assert_eq!(left_out.reply_in_combat, None);
        assert!(left_out.check(file).is_empty());
        assert!(template(json!("Answer, and fight.")).check(file).is_empty());
        let empty = template(json!("  ")).check(file);
        assert_eq!(pointers(&empty), ["/replyInCombat"]);
        assert!(
            empty[0].message.contains("leave it out"),
            "{}",
            empty[0].message
        );
        let long = template(json!("x".repeat(TEXT_LIMITS.prompt_line + 1))).check(file);
        assert_eq!(pointers(&long), ["/replyInCombat"]);
        assert!(long[0].message.contains("TEXT_LIMITS.prompt_line"));
    }

    #[test]
    fn a_tag_file_has_no_empty_key_or_tag() {
        let tags: TagFile = parsed(
            json!({ "places": { "tavern:hall": ["warm"], " ": ["x"] }, "items": { "a/b": ["", "ok"] } }),
            json!({}),
        );
        let problems = tags.check("mods/tavern/tags.json");
        assert_eq!(pointers(&problems), ["/places/ ", "/items/a~1b/0"]);
    }
}
