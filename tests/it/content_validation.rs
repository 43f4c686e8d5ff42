//! One fixture per validation rule: exactly that problem gives exactly that error,
//! and the good content beside it still loads.

use bevy_loom::prelude::*;
use serde_json::json;

use crate::support::{action, core_mod, game, load, manifest};

/// Loads `core` plus `files` with the game listing `mods`, asserts the only error is
/// at `file` / `pointer` and mentions `words`, and that `core:wait` still loaded.
fn expect_one_error(
    mods: &[&str],
    files: Vec<(&str, String)>,
    file: &str,
    pointer: &str,
    words: &str,
) -> ContentRegistry {
    let mut all = core_mod();
    all.push(game(mods));
    all.extend(files);
    let (registry, errors) = load(&all);
    assert_eq!(
        errors.len(),
        1,
        "expected exactly one error, got {errors:#?}"
    );
    let error = &errors[0];
    assert_eq!(
        (error.file.as_str(), error.pointer.as_str()),
        (file, pointer),
        "{error}"
    );
    assert!(
        error.message.contains(words),
        "`{}` should mention `{words}`",
        error.message
    );
    assert!(
        registry.action("core:wait").is_some(),
        "the good mod beside it must still load"
    );
    registry
}

/// The files of a mod `extra` whose listing holds one action file, at `file`.
fn extra_mod_with_action(file: &'static str, action: String) -> Vec<(&'static str, String)> {
    extra_mod_listing("actions", file, action)
}

/// The files of a mod `extra` whose manifest lists one file, at `file`, in `field`.
fn extra_mod_listing(field: &str, file: &'static str, text: String) -> Vec<(&'static str, String)> {
    let listed = file.trim_start_matches("mods/extra/");
    vec![
        (
            "mods/extra/mod.json",
            manifest("extra", json!({ "content": { field: [listed] } })),
        ),
        (file, text),
    ]
}

#[test]
fn good_content_loads_without_errors() {
    let mut files = core_mod();
    files.push(game(&["core", "extra"]));
    files.push((
        "mods/extra/mod.json",
        manifest(
            "extra",
            json!({ "dependencies": [{ "id": "core", "version": "^1.0" }] }),
        ),
    ));
    let (registry, errors) = load(&files);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(registry.mods().len(), 2);
    assert_eq!(
        registry.get_mod("EXTRA").map(|m| m.manifest.id.as_str()),
        Some("extra"),
        "mod ids match case-insensitively"
    );
    let metadata = registry.action_metadata("core").expect("metadata");
    assert_eq!(
        metadata.purpose.as_deref(),
        Some("Actions of the core mod, for tests.")
    );
}

#[test]
fn mod_id_with_bad_characters() {
    expect_one_error(
        &["core", "extra"],
        vec![("mods/extra/mod.json", manifest("ex tra!", json!({})))],
        "mods/extra/mod.json",
        "/id",
        "letters, digits",
    );
}

#[test]
fn mod_id_not_its_folder() {
    let registry = expect_one_error(
        &["core", "extra"],
        vec![("mods/extra/mod.json", manifest("other", json!({})))],
        "mods/extra/mod.json",
        "/id",
        "folder name `extra`",
    );
    assert!(!registry.is_mod_loaded("other"));
}

#[test]
fn version_not_semver() {
    expect_one_error(
        &["core", "extra"],
        vec![(
            "mods/extra/mod.json",
            manifest("extra", json!({ "version": "one" })),
        )],
        "mods/extra/mod.json",
        "/version",
        "not what this kind of file holds",
    );
}

#[test]
fn missing_name() {
    let mut text: serde_json::Value = serde_json::from_str(&manifest("extra", json!({}))).unwrap();
    text.as_object_mut().unwrap().remove("name");
    expect_one_error(
        &["core", "extra"],
        vec![("mods/extra/mod.json", text.to_string())],
        "mods/extra/mod.json",
        "",
        "missing field `name`",
    );
}

#[test]
fn action_purpose_too_short() {
    expect_one_error(
        &["core", "extra"],
        vec![(
            "mods/extra/mod.json",
            manifest("extra", json!({ "actionPurpose": "Fight." })),
        )],
        "mods/extra/mod.json",
        "/actionPurpose",
        "6 characters",
    );
}

#[test]
fn action_consider_when_too_long() {
    expect_one_error(
        &["core", "extra"],
        vec![(
            "mods/extra/mod.json",
            manifest("extra", json!({ "actionConsiderWhen": "x".repeat(201) })),
        )],
        "mods/extra/mod.json",
        "/actionConsiderWhen",
        "201 characters",
    );
}

#[test]
fn misspelt_field() {
    expect_one_error(
        &["core", "extra"],
        vec![(
            "mods/extra/mod.json",
            manifest(
                "extra",
                json!({ "actionPurpse": "A purpose that is long enough." }),
            ),
        )],
        "mods/extra/mod.json",
        "/actionPurpse",
        "unknown field `actionPurpse`, expected one of",
    );
}

#[test]
fn missing_dependency() {
    let registry = expect_one_error(
        &["core", "extra"],
        vec![(
            "mods/extra/mod.json",
            manifest("extra", json!({ "dependencies": [{ "id": "magic" }] })),
        )],
        "mods/extra/mod.json",
        "/dependencies/0/id",
        "depends on `magic`, which is not loaded",
    );
    assert!(
        !registry.is_mod_loaded("extra"),
        "the mod with the problem is skipped"
    );
}

#[test]
fn dependency_version_range_not_met() {
    let registry = expect_one_error(
        &["core", "extra"],
        vec![(
            "mods/extra/mod.json",
            manifest(
                "extra",
                json!({ "dependencies": [{ "id": "core", "version": "^2.0" }] }),
            ),
        )],
        "mods/extra/mod.json",
        "/dependencies/0/version",
        "needs `core` ^2.0, but version 1.0.0 is loaded",
    );
    assert!(!registry.is_mod_loaded("extra"));
}

#[test]
fn declared_conflict_loaded() {
    let registry = expect_one_error(
        &["core", "extra"],
        vec![(
            "mods/extra/mod.json",
            manifest("extra", json!({ "conflicts": ["core"] })),
        )],
        "mods/extra/mod.json",
        "/conflicts/0",
        "conflicts with `core`",
    );
    assert!(
        !registry.is_mod_loaded("extra"),
        "the mod with the problem is skipped"
    );
}

#[test]
fn dependency_cycle() {
    let mut all = core_mod();
    all.push(game(&["core", "left", "right"]));
    all.push((
        "mods/left/mod.json",
        manifest("left", json!({ "dependencies": [{ "id": "right" }] })),
    ));
    all.push((
        "mods/right/mod.json",
        manifest("right", json!({ "dependencies": [{ "id": "left" }] })),
    ));
    let (registry, errors) = load(&all);
    let mut places: Vec<_> = errors
        .iter()
        .map(|e| (e.file.as_str(), e.pointer.as_str()))
        .collect();
    places.sort();
    assert_eq!(
        places,
        [
            ("mods/left/mod.json", "/dependencies/0/id"),
            ("mods/right/mod.json", "/dependencies/0/id")
        ]
    );
    assert!(
        errors
            .iter()
            .all(|e| e.message.contains("dependency cycle")),
        "{errors:#?}"
    );
    assert!(!registry.is_mod_loaded("left") && !registry.is_mod_loaded("right"));
    assert!(registry.action("core:wait").is_some());
}

#[test]
fn duplicate_mod_in_game_file() {
    let mut all = core_mod();
    all.push(game(&["core", "core"]));
    let (registry, errors) = load(&all);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(
        (errors[0].file.as_str(), errors[0].pointer.as_str()),
        ("game.loom.json", "/mods/1")
    );
    assert!(errors[0].message.contains("duplicate mod id"));
    // The game file itself is rejected, so nothing loads until it is fixed.
    assert!(registry.mods().is_empty());
}

#[test]
fn duplicate_action_id() {
    expect_one_error(
        &["core"],
        vec![
            (
                "mods/core/mod.json",
                manifest(
                    "core",
                    json!({ "content": { "actions": ["actions/wait.action.json", "actions/wait_again.action.json"] } }),
                ),
            ),
            (
                "mods/core/actions/wait_again.action.json",
                action("core:wait", json!({ "template": "wait again" })),
            ),
        ],
        "mods/core/actions/wait_again.action.json",
        "/id",
        "duplicate action id `core:wait`",
    );
}

#[test]
fn duplicate_actor_id() {
    let spec = |name: &str| {
        json!({ "id": "extra:marta", "persona": { "name": name, "role": "innkeeper" } }).to_string()
    };
    let registry = expect_one_error(
        &["core", "extra"],
        vec![
            (
                "mods/extra/mod.json",
                manifest(
                    "extra",
                    json!({ "content": { "actors": ["actors/marta.actor.json", "actors/marta_again.actor.json"] } }),
                ),
            ),
            ("mods/extra/actors/marta.actor.json", spec("Marta")),
            (
                "mods/extra/actors/marta_again.actor.json",
                spec("Other Marta"),
            ),
        ],
        "mods/extra/actors/marta_again.actor.json",
        "/id",
        "duplicate actor id `extra:marta`",
    );
    assert_eq!(
        registry
            .actor("extra:marta")
            .map(|a| a.persona.name.as_str()),
        Some("Marta")
    );
}

#[test]
fn action_namespace_not_its_mod() {
    let registry = expect_one_error(
        &["core", "extra"],
        extra_mod_with_action(
            "mods/extra/actions/hop.action.json",
            action("core:hop", json!({ "template": "hop" })),
        ),
        "mods/extra/actions/hop.action.json",
        "/id",
        "namespace `core` is not this file's mod `extra`",
    );
    assert!(registry.action("core:hop").is_none());
}

#[test]
fn template_placeholder_without_target_slot() {
    expect_one_error(
        &["core", "extra"],
        extra_mod_with_action(
            "mods/extra/actions/greet.action.json",
            action("extra:greet", json!({ "template": "greet {target}" })),
        ),
        "mods/extra/actions/greet.action.json",
        "/template",
        "placeholder `{target}` has no target slot",
    );
}

#[test]
fn target_slot_never_used_in_template() {
    expect_one_error(
        &["core", "extra"],
        extra_mod_with_action(
            "mods/extra/actions/greet.action.json",
            action(
                "extra:greet",
                json!({ "template": "wave", "targets": { "primary": { "scope": "characters_here", "placeholder": "target" } } }),
            ),
        ),
        "mods/extra/actions/greet.action.json",
        "/targets/primary/placeholder",
        "never used in the template",
    );
}

#[test]
fn unknown_scope_name() {
    let registry = expect_one_error(
        &["core", "extra"],
        extra_mod_with_action(
            "mods/extra/actions/greet.action.json",
            action(
                "extra:greet",
                json!({ "template": "greet {target}", "targets": { "primary": { "scope": "everyone_nearby", "placeholder": "target" } } }),
            ),
        ),
        "mods/extra/actions/greet.action.json",
        "/targets/primary/scope",
        "unknown scope `everyone_nearby`",
    );
    assert!(registry.action("extra:greet").is_none());
    assert!(
        registry.is_mod_loaded("extra"),
        "only the action is skipped, not its mod"
    );
}

#[test]
fn ron_files_load_too() {
    let mut all = core_mod();
    all.push(game(&["core", "extra"]));
    all.push((
        "mods/extra/mod.json",
        manifest(
            "extra",
            json!({ "content": { "actions": ["actions/hop.action.ron"] } }),
        ),
    ));
    all.push((
        "mods/extra/actions/hop.action.ron",
        r#"(id: "extra:hop", name: "Hop", description: "Hop about", template: "hop {times} times", parameters: {"times": (default: 3)})"#.to_owned(),
    ));
    let (registry, errors) = load(&all);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(
        registry.action("extra:hop").map(|a| a.template.as_str()),
        Some("hop {times} times")
    );
}

#[test]
fn a_verb_alias_must_stand_for_a_commands_first_words() {
    let mut files = extra_mod_with_action(
        "mods/extra/actions/pick_up.action.json",
        action(
            "extra:pick_up",
            json!({ "template": "pick up {item}", "parameters": { "item": { "default": "the mug" } } }),
        ),
    );
    files[0].1 = manifest(
        "extra",
        json!({
            "content": { "actions": ["actions/pick_up.action.json"] },
            "verbAliases": { "take": "pick up", "yeet": "throw" }
        }),
    );
    let registry = expect_one_error(
        &["core", "extra"],
        files,
        "mods/extra/mod.json",
        "/verbAliases/yeet",
        "no command of this mod starts with `throw`",
    );
    let aliases = registry.verb_aliases("extra:pick_up");
    assert_eq!(aliases.len(), 1, "the good alias still applies");
    assert_eq!(
        (aliases[0].alias.as_slice(), aliases[0].command.as_slice()),
        (
            &["take".to_owned()][..],
            &["pick".to_owned(), "up".to_owned()][..]
        )
    );
}

/// A mod `extra` listing these actor specs and prompt templates (paths in its folder).
fn extra_mod_with(actors: &[&str], prompts: &[&str]) -> (&'static str, String) {
    (
        "mods/extra/mod.json",
        manifest(
            "extra",
            json!({ "content": { "actors": actors, "prompts": prompts } }),
        ),
    )
}

/// A prompt template with this id and rules.
fn template(id: &str, rules: &str) -> String {
    json!({ "id": id, "rules": rules, "question": "Your move?", "reply": "Answer the player." })
        .to_string()
}

#[test]
fn prompt_id_naming_no_template() {
    let registry = expect_one_error(
        &["core", "extra"],
        vec![
            extra_mod_with(&["actors/marta.actor.json"], &["prompts/terse.prompt.json"]),
            (
                "mods/extra/prompts/terse.prompt.json",
                template("extra:terse", "Be terse."),
            ),
            (
                "mods/extra/actors/marta.actor.json",
                json!({ "id": "extra:marta", "promptId": "extra:tersse",
                        "persona": { "name": "Marta", "role": "innkeeper" } })
                .to_string(),
            ),
        ],
        "mods/extra/actors/marta.actor.json",
        "/promptId",
        "no prompt template has the id `extra:tersse` (loaded: extra:terse)",
    );
    assert!(registry.actor("extra:marta").is_none());
    assert!(registry.prompt("extra:terse").is_some());
}

#[test]
fn duplicate_prompt_template_id() {
    let registry = expect_one_error(
        &["core", "extra"],
        vec![
            extra_mod_with(&[], &["prompts/a.prompt.json", "prompts/b.prompt.json"]),
            (
                "mods/extra/prompts/a.prompt.json",
                template("extra:terse", "Be terse."),
            ),
            (
                "mods/extra/prompts/b.prompt.json",
                template("extra:terse", "Be very terse."),
            ),
        ],
        "mods/extra/prompts/b.prompt.json",
        "/id",
        "duplicate prompt template id `extra:terse`",
    );
    assert_eq!(
        registry.prompt("extra:terse").map(|t| t.rules.as_str()),
        Some("Be terse."),
        "the first file keeps the id"
    );
    assert_eq!(
        registry.prompt_file("extra:terse"),
        Some("mods/extra/prompts/a.prompt.json")
    );
}

#[test]
fn actor_spec_in_the_old_flat_form() {
    let registry = expect_one_error(
        &["core", "extra"],
        vec![
            extra_mod_with(&["actors/marta.actor.json"], &[]),
            (
                "mods/extra/actors/marta.actor.json",
                json!({ "id": "extra:marta", "name": "Marta", "role": "innkeeper",
                        "persona": ["Warm but shrewd."] })
                .to_string(),
            ),
        ],
        "mods/extra/actors/marta.actor.json",
        "/name",
        "the old `persona` list as `persona.lines`",
    );
    assert!(registry.actor("extra:marta").is_none());
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let mut all = core_mod();
    all.push(game(&["core", "extra"]));
    all.push((
        "mods/extra/mod.json",
        format!(
            "\u{FEFF}{}",
            manifest(
                "extra",
                json!({ "content": { "actions": ["actions/hop.action.ron", "actions/nap.action.json"] } }),
            )
        ),
    ));
    all.push((
        "mods/extra/actions/hop.action.ron",
        "\u{FEFF}(id: \"extra:hop\", name: \"Hop\", description: \"Hop about\", template: \"hop\")"
            .to_owned(),
    ));
    all.push((
        "mods/extra/actions/nap.action.json",
        format!(
            "\u{FEFF}{}",
            action("extra:nap", json!({ "template": "nap" }))
        ),
    ));
    let (registry, errors) = load(&all);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(registry.action("extra:hop").is_some());
    assert!(registry.action("extra:nap").is_some());
}

#[test]
fn a_ron_error_says_its_line_and_column() {
    expect_one_error(
        &["core", "extra"],
        extra_mod_with_action(
            "mods/extra/actions/hop.action.ron",
            "(\n  id: \"extra:hop\",\n  name: Hop,\n  description: \"Hop about\",\n  template: \"hop\",\n)"
                .to_owned(),
        ),
        "mods/extra/actions/hop.action.ron",
        "/name",
        "at line 3 column",
    );
}

#[test]
fn text_after_the_content_is_an_error() {
    expect_one_error(
        &["core", "extra"],
        extra_mod_with_action(
            "mods/extra/actions/hop.action.json",
            format!("{} {{}}", action("extra:hop", json!({ "template": "hop" }))),
        ),
        "mods/extra/actions/hop.action.json",
        "",
        "trailing characters at line 1",
    );
}

#[test]
fn a_nul_in_prompt_text_rejects_the_file() {
    let registry = expect_one_error(
        &["core", "extra"],
        extra_mod_with_action(
            "mods/extra/actions/hop.action.json",
            action(
                "extra:hop",
                json!({ "template": "hop", "description": "Hop\u{0}about" }),
            ),
        ),
        "mods/extra/actions/hop.action.json",
        "/description",
        "a NUL character (U+0000) at character 4",
    );
    assert!(registry.action("extra:hop").is_none());
}

#[test]
fn a_bidirectional_override_in_a_fragment_rejects_the_file() {
    let registry = expect_one_error(
        &["core", "extra"],
        extra_mod_listing(
            "narrative",
            "mods/extra/narrative/lamp.narrative.json",
            json!({ "key": "extra:lamp", "traits": ["dim", "brass \u{202E}dlog"] }).to_string(),
        ),
        "mods/extra/narrative/lamp.narrative.json",
        "/traits/1",
        "a bidirectional embedding or override (U+202E)",
    );
    assert!(registry.narrative("extra:lamp").is_none());
}

#[test]
fn a_narrative_path_out_of_the_content_folder_is_an_error() {
    let registry = expect_one_error(
        &["core", "extra"],
        vec![(
            "mods/extra/mod.json",
            manifest(
                "extra",
                json!({ "content": { "narrative": ["../../../outside.narrative.json"] } }),
            ),
        )],
        "mods/extra/mod.json",
        "/content/narrative/0",
        "goes up out of the folder",
    );
    assert!(!registry.is_mod_loaded("extra"));
}

#[test]
fn an_absolute_or_labelled_listed_path_is_an_error() {
    for (field, path, words) in [
        ("actors", "/etc/marta.actor.json", "is absolute"),
        ("actions", "C:/mods/hop.action.json", "names a drive"),
        ("tags", "tags.json#places", "`#`"),
        (
            "prompts",
            "prompts\\terse.prompt.json",
            "separate folders with `/`",
        ),
        (
            "actions",
            "./actions/hop.action.json",
            "an empty or `.` part",
        ),
        (
            "narrative",
            "narrative//inn.narrative.json",
            "an empty or `.` part",
        ),
    ] {
        expect_one_error(
            &["core", "extra"],
            vec![(
                "mods/extra/mod.json",
                manifest("extra", json!({ "content": { field: [path] } })),
            )],
            "mods/extra/mod.json",
            &format!("/content/{field}/0"),
            words,
        );
    }
}

#[test]
fn a_listed_file_that_is_missing_names_where_it_is_listed() {
    let registry = expect_one_error(
        &["core", "extra"],
        vec![(
            "mods/extra/mod.json",
            manifest(
                "extra",
                json!({ "content": { "actions": ["actions/hop.action.json"] } }),
            ),
        )],
        "mods/extra/mod.json",
        "/content/actions/0",
        "`mods/extra/actions/hop.action.json`, listed here, could not be loaded",
    );
    assert!(
        registry.is_mod_loaded("extra"),
        "the mod loads without the missing file"
    );
}

#[test]
fn a_mod_the_game_file_lists_without_a_manifest_names_the_game_file() {
    let mut all = core_mod();
    all.push(game(&["core", "ghost"]));
    let (registry, errors) = load(&all);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(
        (errors[0].file.as_str(), errors[0].pointer.as_str()),
        ("game.loom.json", "/mods/1")
    );
    assert!(
        errors[0].message.contains("`mods/ghost/mod.json`"),
        "{}",
        errors[0]
    );
    assert!(registry.is_mod_loaded("core"));
}

#[test]
fn a_path_the_asset_server_refuses_settles_loading_with_an_error() {
    use bevy::prelude::*;
    use bevy_loom::content::{ContentPlugin, ContentSettings};

    let mut all = core_mod();
    all.push(game(&["core"]));
    let dir = crate::support::content_dir(&all);
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: dir.path().to_string_lossy().into_owned(),
            ..default()
        },
        ContentPlugin {
            settings: ContentSettings {
                manifest_file: "../../../elsewhere/mod.json".to_owned(),
                ..default()
            },
        },
    ))
    .init_resource::<crate::support::SeenErrors>()
    .add_systems(Last, crate::support::record_errors);
    app.finish();
    app.cleanup();
    crate::support::update_until(&mut app, "content to load", |app| {
        app.world().resource::<ContentRegistry>().generation() > 0
    });
    app.update();
    let errors = &app.world().resource::<crate::support::SeenErrors>().0;
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(
        (errors[0].file.as_str(), errors[0].pointer.as_str()),
        ("game.loom.json", "/mods/0")
    );
    assert!(errors[0].message.contains("refused it"), "{}", errors[0]);
}

#[test]
fn an_action_description_or_template_above_its_limit() {
    use bevy_loom::content::TEXT_LIMITS;

    let description = "a".repeat(TEXT_LIMITS.action_description + 1);
    let registry = expect_one_error(
        &["core", "extra"],
        extra_mod_with_action(
            "mods/extra/actions/hop.action.json",
            action(
                "extra:hop",
                json!({ "template": "hop", "description": description }),
            ),
        ),
        "mods/extra/actions/hop.action.json",
        "/description",
        &format!(
            "is {} characters long, above the limit of {} (`TEXT_LIMITS.action_description`)",
            TEXT_LIMITS.action_description + 1,
            TEXT_LIMITS.action_description
        ),
    );
    assert!(registry.action("extra:hop").is_none());

    let template = format!(
        "hop{}",
        " and hop".repeat(TEXT_LIMITS.action_template / 8 + 1)
    );
    expect_one_error(
        &["core", "extra"],
        extra_mod_with_action(
            "mods/extra/actions/hop.action.json",
            action("extra:hop", json!({ "template": template })),
        ),
        "mods/extra/actions/hop.action.json",
        "/template",
        &format!(
            "is {} characters long, above the limit of {}",
            template.chars().count(),
            TEXT_LIMITS.action_template
        ),
    );
}

#[test]
fn a_fragment_above_its_limit() {
    use bevy_loom::content::TEXT_LIMITS;

    let long = "the lamp flickers ".repeat(TEXT_LIMITS.fragment / 17);
    expect_one_error(
        &["core", "extra"],
        extra_mod_listing(
            "narrative",
            "mods/extra/narrative/lamp.narrative.json",
            json!({ "key": "extra:lamp",
                    "action_fragments": { "take": { "core": ["you take the lamp", long.trim()] } } })
            .to_string(),
        ),
        "mods/extra/narrative/lamp.narrative.json",
        "/action_fragments/take/core/1",
        "`TEXT_LIMITS.fragment`",
    );
}

#[test]
fn a_content_file_no_manifest_lists_is_a_warning() {
    let mut all = core_mod();
    all.push(game(&["core"]));
    all.push((
        "mods/core/actions/hop.action.json",
        action("core:hop", json!({ "template": "hop" })),
    ));
    all.push((
        "mods/core/narrative/deep/lamp.narrative.json",
        json!({ "key": "core:lamp", "traits": ["dim"] }).to_string(),
    ));
    all.push(("mods/core/notes.txt", "not content".to_owned()));
    all.push((
        "mods/elsewhere/actions/jump.action.json",
        action("elsewhere:jump", json!({ "template": "jump" })),
    ));
    let (registry, errors) = load(&all);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(registry.action("core:hop").is_none(), "it is not loaded");
    let warned: Vec<(&str, &str)> = registry
        .warnings()
        .iter()
        .map(|w| (w.file.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        warned,
        [
            (
                "mods/core/actions/hop.action.json",
                "no manifest lists this file, so it is not loaded: add \"actions/hop.action.json\" to `content.actions` in mods/core/mod.json, or remove the file"
            ),
            (
                "mods/core/narrative/deep/lamp.narrative.json",
                "no manifest lists this file, so it is not loaded: add \"narrative/deep/lamp.narrative.json\" to `content.narrative` in mods/core/mod.json, or remove the file"
            ),
        ],
        "files of mods the game does not load are not looked at"
    );
}

#[test]
fn a_mod_the_game_file_does_not_list_is_a_warning() {
    let mut all = core_mod();
    all.push(game(&["core"]));
    all.push(("mods/smithy/mod.json", manifest("smithy", json!({}))));
    // A folder with no manifest is no mod, and a listed mod is no warning.
    all.push(("mods/notes/readme.txt", "not content".to_owned()));
    let (registry, errors) = load(&all);
    assert!(errors.is_empty(), "{errors:#?}");
    let warned: Vec<(&str, &str, &str)> = registry
        .warnings()
        .iter()
        .map(|w| (w.file.as_str(), w.pointer.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        warned,
        [(
            "game.loom.json",
            "/mods",
            "mods/smithy/mod.json is a mod the game file does not list, so none of it loads: add \"smithy\" to `mods` to load it, or remove its folder"
        )]
    );
}

#[test]
fn the_shipped_content_loads_without_errors_or_warnings() {
    let root = crate::support::repo_assets();
    let mut app = crate::support::content_app(&root, false);
    crate::support::update_until(&mut app, "content to load", |app| {
        app.world().resource::<ContentRegistry>().generation() > 0
    });
    app.update();
    let registry = app.world().resource::<ContentRegistry>();
    assert!(registry.warnings().is_empty(), "{:#?}", registry.warnings());
    let serve = registry
        .task("tavern:serve_drink")
        .expect("the tavern's task loads");
    let methods: Vec<&str> = (registry.methods_of(serve))
        .map(|m| m.refinement_method_id.as_str())
        .collect();
    assert_eq!(methods, ["tavern:serve_by_hand"]);
    let errors = &app.world().resource::<crate::support::SeenErrors>().0;
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn a_missing_game_file_says_which_setting_names_it() {
    let (registry, errors) = load(&core_mod());
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].file, "game.loom.json");
    assert!(
        errors[0].message.contains("`ContentSettings::game_file`"),
        "{}",
        errors[0]
    );
    assert!(registry.mods().is_empty());
}

/// The files of a mod `extra` with one task (`tasks/fetch.task.json`, which fetches a
/// `thing` for a `customer`) and two methods of it: `extra:fetch_by_hand`
/// (`methods/fetch.method.json`) whose steps are `steps`, and `extra:fetch_later`.
fn extra_mod_with_task(steps: serde_json::Value) -> Vec<(&'static str, String)> {
    let task = json!({
        "id": "extra:fetch",
        "name": "Fetch",
        "description": "bring something to someone",
        "template": "bring {thing} to {customer}",
        "parameters": [
            { "name": "thing", "entity": { "scope": "things_here" } },
            { "name": "customer", "entity": { "scope": "characters_here" } }
        ]
    });
    let method = json!({
        "refinementMethodId": "extra:fetch_by_hand",
        "taskId": "extra:fetch",
        "steps": steps
    });
    // A second method, always valid, keeps the task when the first is left out.
    let waiting = json!({
        "refinementMethodId": "extra:fetch_later",
        "taskId": "extra:fetch",
        "steps": [{ "stepType": "primitive_action", "actionId": "core:wait" }]
    });
    vec![
        (
            "mods/extra/mod.json",
            manifest(
                "extra",
                json!({ "content": {
                    "tasks": ["tasks/fetch.task.json"],
                    "methods": ["methods/fetch.method.json", "methods/later.method.json"]
                } }),
            ),
        ),
        ("mods/extra/tasks/fetch.task.json", task.to_string()),
        ("mods/extra/methods/fetch.method.json", method.to_string()),
        ("mods/extra/methods/later.method.json", waiting.to_string()),
    ]
}

#[test]
fn a_method_binding_an_unknown_placeholder_names_the_actions_placeholders() {
    let registry = expect_one_error(
        &["core", "extra"],
        extra_mod_with_task(json!([{
            "stepType": "primitive_action",
            "actionId": "core:wait",
            "targetBindings": { "item": "task.params.thing" }
        }])),
        "mods/extra/methods/fetch.method.json",
        "/steps/0/targetBindings/item",
        "`core:wait`'s placeholders are none",
    );
    assert!(registry.method("extra:fetch_by_hand").is_none());
    let task = registry
        .task("extra:fetch")
        .expect("the task keeps its other method");
    assert_eq!(registry.methods_of(task).count(), 1);
}

#[test]
fn json_logic_in_a_target_binding_is_refused_with_the_plain_form() {
    expect_one_error(
        &["core", "extra"],
        extra_mod_with_task(json!([{
            "stepType": "primitive_action",
            "actionId": "core:wait",
            "targetBindings": { "item": { "var": "task.params.thing" } }
        }])),
        "mods/extra/methods/fetch.method.json",
        "/steps/0/targetBindings/item",
        "not JSON Logic",
    );
}

#[test]
fn a_valid_task_and_method_load() {
    let mut all = core_mod();
    all.push(game(&["core", "extra"]));
    all.extend(extra_mod_with_task(json!([
        { "stepType": "primitive_action", "actionId": "core:wait" }
    ])));
    let (registry, errors) = load(&all);
    assert!(errors.is_empty(), "{errors:#?}");
    let task = registry.task("extra:fetch").expect("the task loads");
    assert_eq!(registry.methods_of(task).count(), 2);
}
