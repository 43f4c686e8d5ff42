//! Checks of one file on its own; cross-file rules live with the registry.

use std::collections::HashSet;

use super::{
    ActionDefinition, ActorSpec, ContentAsset, ContentError, GameManifest, ModManifest,
    PromptTemplate, TagFile, template_placeholders,
};

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
            problems.push(ContentError::new(
                file,
                "/id",
                format!("mod id `{}` must equal its folder name `{folder}`", self.id),
            ));
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
        for (list, paths) in [
            ("actions", &self.content.actions),
            ("actors", &self.content.actors),
            ("narrative", &self.content.narrative),
            ("prompts", &self.content.prompts),
            ("tags", &self.content.tags),
        ] {
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

impl ContentAsset for ActionDefinition {
    const EXTENSIONS: &'static [&'static str] = &["action.json", "action.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = check_namespaced_id(&self.id, file);
        for (field, value) in [("name", &self.name), ("template", &self.template)] {
            if value.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    format!("/{field}"),
                    format!("the {field} is empty"),
                ));
            }
        }
        let limits = &TEXT_LIMITS;
        let texts = [
            ("/name", &self.name, limits.name, "name"),
            (
                "/description",
                &self.description,
                limits.action_description,
                "action_description",
            ),
            (
                "/template",
                &self.template,
                limits.action_template,
                "action_template",
            ),
        ];
        for (pointer, text, limit, name) in texts {
            problems.extend(too_long(file, pointer, text, limit, name));
        }
        for (role, slot) in self.target_slots() {
            problems.extend(too_long(
                file,
                &format!("/targets/{}/description", role.field()),
                &slot.description,
                limits.action_description,
                "action_description",
            ));
        }
        for (name, parameter) in &self.parameters {
            let pointer = format!("/parameters/{}", pointer_token(name));
            problems.extend(too_long(
                file,
                &format!("{pointer}/description"),
                &parameter.description,
                limits.action_description,
                "action_description",
            ));
            problems.extend(too_long(
                file,
                &format!("{pointer}/default"),
                &parameter.default_text(),
                limits.action_template,
                "action_template",
            ));
        }
        let used: Vec<&str> = template_placeholders(&self.template).collect();
        let mut slot_names = HashSet::new();
        for (role, slot) in self.target_slots() {
            let pointer = format!("/targets/{}", role.field());
            if slot.scope.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/scope"),
                    "the scope is empty: name a target scope",
                ));
            }
            if !slot_names.insert(slot.placeholder.as_str()) {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/placeholder"),
                    format!(
                        "placeholder `{}` is used by another target slot: give each slot its own",
                        slot.placeholder
                    ),
                ));
            } else if !used.contains(&slot.placeholder.as_str()) {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/placeholder"),
                    format!(
                        "target slot `{}` is never used in the template `{}`: add `{{{}}}` to the template or remove the slot",
                        slot.placeholder, self.template, slot.placeholder
                    ),
                ));
            }
            if self.parameters.contains_key(&slot.placeholder) {
                problems.push(ContentError::new(
                    file,
                    format!("{pointer}/placeholder"),
                    format!(
                        "`{}` is both a target placeholder and a parameter: rename one",
                        slot.placeholder
                    ),
                ));
            }
        }
        for name in used {
            if !slot_names.contains(name) && !self.parameters.contains_key(name) {
                problems.push(ContentError::new(
                    file,
                    "/template",
                    format!(
                        "placeholder `{{{name}}}` has no target slot or parameter: add a target with \"placeholder\": \"{name}\", or a parameter `{name}`"
                    ),
                ));
            }
        }
        for (name, parameter) in &self.parameters {
            if !(parameter.default.is_string()
                || parameter.default.is_number()
                || parameter.default.is_boolean())
            {
                problems.push(ContentError::new(
                    file,
                    format!("/parameters/{name}/default"),
                    "the default must be a string, a number or a boolean",
                ));
            }
        }
        problems
    }
}

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
        for (index, pattern) in self.policy.allowed_actions.iter().enumerate() {
            if pattern != "*" && !pattern.contains(':') {
                problems.push(ContentError::new(
                    file,
                    format!("/policy/allowedActions/{index}"),
                    format!("`{pattern}` is not an action id: write `mod:action`, `mod:*` or `*`"),
                ));
            }
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
        let moved = FLAT
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

impl ContentAsset for PromptTemplate {
    const EXTENSIONS: &'static [&'static str] = &["prompt.json", "prompt.ron"];

    fn check(&self, file: &str) -> Vec<ContentError> {
        let mut problems = check_namespaced_id(&self.id, file);
        let limits = &TEXT_LIMITS;
        for (field, value, limit, name) in [
            ("rules", &self.rules, limits.prompt_rules, "prompt_rules"),
            (
                "question",
                &self.question,
                limits.prompt_line,
                "prompt_line",
            ),
            ("reply", &self.reply, limits.prompt_line, "prompt_line"),
        ] {
            problems.extend(too_long(file, &format!("/{field}"), value, limit, name));
        }
        for (field, value) in [
            ("rules", &self.rules),
            ("question", &self.question),
            ("reply", &self.reply),
        ] {
            if value.trim().is_empty() {
                problems.push(ContentError::new(
                    file,
                    format!("/{field}"),
                    format!("the {field} text is empty: write it, or leave out `promptId` in specs to use the built-in template"),
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
    let Some((namespace, name)) = id.split_once(':').filter(|_| is_namespaced(id)) else {
        return vec![ContentError::new(
            file,
            "/id",
            format!("`{id}` must be `mod:name`, with the owning mod's id before the colon"),
        )];
    };
    match owning_mod(file) {
        Some(folder) if folder != namespace => vec![ContentError::new(
            file,
            "/id",
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
