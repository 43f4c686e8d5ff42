//! The checks of one smart-actor spec file.

use std::collections::HashSet;

use super::{TEXT_LIMITS, check_namespaced_id, is_namespaced, pointer_token, too_long};
use crate::content::{ActorSpec, ContentAsset, ContentError};

impl ContentAsset for ActorSpec {
    const EXTENSIONS: &'static [&'static str] = &["actor.json", "actor.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = check_namespaced_id(&self.id, file);
        for (field, value) in [("name", &self.persona.name), ("role", &self.persona.role)] {
            if value.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    format!("/persona/{field}"),
                    format!("the {field} is empty: give the actor a {field}"),
                ));
            }
        }
        problems.extend(self.overlong_texts(file));
        if let Some(id) = self.prompt_id.as_ref().filter(|id| !is_namespaced(id)) {
            problems.push(ContentError::new(
                file,
                "/promptId",
                format!("`{id}` is not a prompt template id: write `mod:name`, as the template's `id` says"),
            ));
        }
        for (name, value) in &self.properties {
            if name.trim().is_empty() || value.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    format!("/properties/{}", pointer_token(name)),
                    "a property needs a name and a value: fill both in, or remove it",
                ));
            }
        }
        for (field, kind, a_kind, patterns) in [
            (
                "allowedActions",
                "action",
                "an action",
                &self.policy.allowed_actions,
            ),
            ("allowedTasks", "task", "a task", &self.policy.allowed_tasks),
            (
                "allowedAbilities",
                "ability",
                "an ability",
                &self.policy.allowed_abilities,
            ),
        ] {
            for (index, pattern) in patterns.iter().enumerate() {
                if !is_id_pattern(pattern) {
                    problems.push(ContentError::new(
                        file,
                        format!("/policy/{field}/{index}"),
                        format!(
                            "`{pattern}` is not {a_kind} id: write `mod:{kind}`, `mod:*` or `*`"
                        ),
                    ));
                }
            }
        }
        if self.policy.max_utterance_length == Some(0) {
            problems.push(ContentError::new(
                file,
                "/policy/maxUtteranceLength",
                "0 characters leave no room for any answer, so every one would be refused: raise it, or remove it for the default",
            ));
        }
        if let Some(key) = self.history.as_ref().and_then(|h| h.store_key.as_ref())
            && key.trim().is_empty()
        {
            problems.push(ContentError::new(
                file,
                "/history/storeKey",
                "the store key is empty: name the key the actor's memories are kept under, or remove it to use the spec's id",
            ));
        }
        let history_seeds = self.history.iter().flat_map(|h| &h.seeds);
        let lists = self
            .memory_seeds
            .iter()
            .enumerate()
            .map(|(index, seed)| (format!("/memorySeeds/{index}"), seed))
            .chain(
                history_seeds
                    .enumerate()
                    .map(|(index, seed)| (format!("/history/seeds/{index}"), seed)),
            );
        let mut seeds = HashSet::new();
        for (pointer, seed) in lists {
            if !seeds.insert(seed.id.as_str()) {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/id"),
                    format!(
                        "duplicate seed id `{}`: give each seed its own id, across `memorySeeds` and `history.seeds`",
                        seed.id
                    ),
                ));
            }
            if seed.text.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/text"),
                    "an empty memory: write what the character remembers, or remove the seed",
                ));
            }
        }
        problems
    }

    fn parse_hint(pointer: &str, detail: &str) -> Option<&'static str> {
        const FLAT: [&str; 6] = ["name", "role", "voice", "traits", "goals", "taboos"];
        // A field of the spec itself, not of a seed or the policy.
        let top_level = pointer.rfind('/') == Some(0);
        let moved = top_level
            && FLAT
                .iter()
                .any(|field| detail.starts_with(&format!("unknown field `{field}`")));
        let old_persona = pointer == "/persona" && detail.starts_with("invalid type: sequence");
        (moved || old_persona).then_some(
            "specs keep `name`, `role`, `voice`, `traits`, `goals` and `taboos` in the `persona` object, and the old `persona` list as `persona.lines`: \"persona\": {\"name\": .., \"role\": .., \"lines\": [..]}",
        )
    }
}

impl ActorSpec {
    /// The fields longer than [`TEXT_LIMITS`] allows.
    fn overlong_texts(&self, file: &str) -> Vec<ContentError> {
        let limits = &TEXT_LIMITS;
        let persona = &self.persona;
        let mut texts: Vec<(String, &str, usize, &str)> = vec![
            ("/persona/name".into(), &persona.name, limits.name, "name"),
            (
                "/persona/role".into(),
                &persona.role,
                limits.persona_line,
                "persona_line",
            ),
        ];
        if let Some(voice) = &persona.voice {
            texts.push((
                "/persona/voice".into(),
                voice,
                limits.persona_line,
                "persona_line",
            ));
        }
        for (field, list) in [
            ("traits", &persona.traits),
            ("goals", &persona.goals),
            ("taboos", &persona.taboos),
            ("lines", &persona.lines),
        ] {
            for (index, text) in list.iter().enumerate() {
                texts.push((
                    format!("/persona/{field}/{index}"),
                    text,
                    limits.persona_line,
                    "persona_line",
                ));
            }
        }
        for (name, value) in &self.properties {
            texts.push((
                format!("/properties/{}", pointer_token(name)),
                value,
                limits.persona_line,
                "persona_line",
            ));
        }
        if let Some(backstory) = &self.backstory {
            texts.push((
                "/backstory".into(),
                backstory,
                limits.backstory,
                "backstory",
            ));
        }
        let history_seeds = self.history.iter().flat_map(|h| &h.seeds);
        for (index, seed) in self.memory_seeds.iter().enumerate() {
            texts.push((
                format!("/memorySeeds/{index}/text"),
                &seed.text,
                limits.memory_seed,
                "memory_seed",
            ));
        }
        for (index, seed) in history_seeds.enumerate() {
            texts.push((
                format!("/history/seeds/{index}/text"),
                &seed.text,
                limits.memory_seed,
                "memory_seed",
            ));
        }
        texts
            .into_iter()
            .filter_map(|(pointer, text, limit, name)| too_long(file, &pointer, text, limit, name))
            .collect()
    }
}

/// Whether a policy's entry is one the policy matches by: `*`, `mod:*` or an id
/// (`mod:name`); a star anywhere else would match nothing.
fn is_id_pattern(pattern: &str) -> bool {
    // A mod's id has no colon; an action's name may (`tavern:rooms:rent`).
    let namespace = |part: &str| !part.is_empty() && !part.contains(['*', ':']);
    let name = |part: &str| part == "*" || (!part.is_empty() && !part.contains('*'));
    pattern == "*"
        || (pattern.split_once(':')).is_some_and(|(mod_id, rest)| namespace(mod_id) && name(rest))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::fixtures::{actor, pointers};

    const FILE: &str = "mods/tavern/actors/marta.actor.json";

    #[test]
    fn a_valid_spec_has_no_problem() {
        let marta = actor(
            "tavern:marta",
            json!({ "promptId": "core:plain", "properties": { "mood": "calm" } }),
        );
        assert_eq!(marta.check(FILE), []);
    }

    #[test]
    fn a_persona_field_at_the_top_is_pointed_to_the_persona_and_none_elsewhere() {
        let error = |spec: serde_json::Value| {
            let bytes = serde_json::to_vec(&spec).expect("JSON");
            let problems = crate::content::parse_content::<ActorSpec>(&bytes, FILE)
                .expect_err("an unknown field");
            problems[0].message.clone()
        };
        let base = json!({ "id": "tavern:marta", "persona": { "name": "Marta", "role": "r" } });
        let mut flat = base.clone();
        flat["name"] = json!("Marta");
        assert!(error(flat).contains("`persona` object"));
        let mut seed = base;
        seed["memorySeeds"] = json!([{ "id": "oath", "name": "oath", "text": "An oath." }]);
        let message = error(seed);
        assert!(message.contains("unknown field `name`"), "{message}");
        assert!(!message.contains("persona"), "{message}");
    }

    #[test]
    fn a_persona_has_a_name_and_a_role() {
        let spec = actor(
            "tavern:marta",
            json!({ "persona": { "name": " ", "role": "" } }),
        );
        assert_eq!(
            pointers(&spec.check(FILE)),
            ["/persona/name", "/persona/role"]
        );
    }

    #[test]
    fn the_id_and_the_prompt_id_are_namespaced() {
        let spec = actor("items:marta", json!({ "promptId": "plain" }));
        assert_eq!(pointers(&spec.check(FILE)), ["/id", "/promptId"]);
    }

    #[test]
    fn a_property_has_a_name_and_a_value() {
        let spec = actor(
            "tavern:marta",
            json!({ "properties": { "mood": " ", "": "x" } }),
        );
        assert_eq!(
            pointers(&spec.check(FILE)),
            ["/properties/", "/properties/mood"]
        );
    }

    #[test]
    fn an_utterance_of_no_characters_is_refused() {
        let limit = |max: usize| {
            let spec = actor(
                "tavern:marta",
                json!({ "policy": { "maxUtteranceLength": max } }),
            );
            let problems = spec.check(FILE);
            problems.into_iter().map(|p| p.pointer).collect::<Vec<_>>()
        };
        assert_eq!(limit(0), ["/policy/maxUtteranceLength"]);
        assert_eq!(limit(1), Vec::<String>::new());
    }

    #[test]
    fn allowed_actions_are_action_ids_or_wildcards() {
        let policy =
            json!({ "policy": { "allowedActions": ["*", "items:*", "items:give", "give"] } });
        let spec = actor("tavern:marta", policy);
        assert_eq!(pointers(&spec.check(FILE)), ["/policy/allowedActions/3"]);
        // A star anywhere else matches nothing: only `*` and `mod:*` are patterns.
        let stars = json!({ "policy": { "allowedActions":
            ["items:give*", "*:wait", ":*", "it*:*", "items:*:*", "**", "tavern:rooms:rent"] } });
        let problems = actor("tavern:marta", stars).check(FILE);
        assert_eq!(problems.len(), 6, "a name may hold a colon: {problems:#?}");
        assert!(
            problems[0]
                .message
                .contains("`items:give*` is not an action id"),
            "{}",
            problems[0]
        );
        let tasks = json!({ "policy": { "allowedTasks": ["tavern:*", "serve"] } });
        let problems = actor("tavern:marta", tasks).check(FILE);
        assert_eq!(pointers(&problems), ["/policy/allowedTasks/1"]);
        assert!(
            problems[0]
                .message
                .contains("is not a task id: write `mod:task`")
        );
        let policy = crate::content::ActorPolicy {
            allowed_tasks: vec!["tavern:*".to_owned()],
            ..Default::default()
        };
        assert!(policy.allows_task("tavern:serve_drink"));
        assert!(!policy.allows_task("items:fetch"));
        assert!(
            !crate::content::ActorPolicy::default().allows_task("tavern:serve_drink"),
            "none unless listed"
        );
        let abilities = json!({ "policy": { "allowedAbilities": ["tavern:rent_room", "rent"] } });
        let problems = actor("tavern:marta", abilities).check(FILE);
        assert_eq!(pointers(&problems), ["/policy/allowedAbilities/1"]);
        assert!(problems[0].message.contains("is not an ability id"));
        let policy = crate::content::ActorPolicy {
            allowed_abilities: vec!["tavern:*".to_owned()],
            ..Default::default()
        };
        assert!(policy.allows_ability("tavern:rent_room"));
        assert!(!policy.allows_ability("items:sell"));
        assert!(!crate::content::ActorPolicy::default().allows_ability("tavern:rent_room"));
    }

    #[test]
    fn a_store_key_is_not_empty() {
        let spec = actor("tavern:marta", json!({ "history": { "storeKey": " " } }));
        assert_eq!(pointers(&spec.check(FILE)), ["/history/storeKey"]);
    }

    #[test]
    fn texts_above_their_limits_name_the_limit() {
        let long = |limit: usize| "x".repeat(limit + 1);
        let overrides = json!({
            "persona": { "name": "Marta", "role": "innkeeper", "traits": ["kind", long(TEXT_LIMITS.persona_line)] },
            "backstory": long(TEXT_LIMITS.backstory),
            "memorySeeds": [{ "id": "a", "text": long(TEXT_LIMITS.memory_seed) }]
        });
        let problems = actor("tavern:marta", overrides).check(FILE);
        assert_eq!(
            pointers(&problems),
            ["/persona/traits/1", "/backstory", "/memorySeeds/0/text"]
        );
        assert!(problems[1].message.contains("`TEXT_LIMITS.backstory`"));
    }
}
