//! Tag files: tags for narrative keys, merged across mods, widen what an actor's
//! memories are recalled by.

use bevy::prelude::*;
use bevy_loom::actors::{HistoryStore, MemoryScope, NewMemory};
use bevy_loom::prelude::*;
use serde_json::json;

use crate::support::{
    answering_app, content_dir, core_mod, game, load, manifest, run_turn, tavern_app,
};

#[test]
fn tag_files_merge_across_mods_in_load_order_and_an_unknown_key_is_a_warning() {
    let mut files = core_mod();
    files[0].1 = manifest(
        "core",
        json!({ "content": {
            "actions": ["actions/wait.action.json"],
            "narrative": ["narrative/cellar.narrative.json"],
            "tags": ["tags.json"]
        } }),
    );
    files.extend([
        game(&["core", "extra"]),
        (
            "mods/core/narrative/cellar.narrative.json",
            json!({ "key": "core:cellar" }).to_string(),
        ),
        (
            "mods/core/tags.json",
            json!({ "places": { "core:cellar": ["cellar", "wine"] } }).to_string(),
        ),
        (
            "mods/extra/mod.json",
            manifest(
                "extra",
                json!({ "content": { "tags": ["tags/more.tags.json"] } }),
            ),
        ),
        (
            "mods/extra/tags/more.tags.json",
            json!({ "places": { "core:cellar": ["dark", "wine"] },
                    "items": { "extra:lantren": ["light"] } })
            .to_string(),
        ),
    ]);
    let (registry, errors) = load(&files);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(
        registry.tags().tags_of("core:cellar"),
        ["cellar", "wine", "dark"],
        "core's tags first, then extra's new ones"
    );
    assert_eq!(registry.tags().tags_of("extra:lantren"), ["light"]);
    let warnings: Vec<_> = registry
        .warnings()
        .iter()
        .filter(|w| w.file.ends_with("tags.json"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert_eq!(
        (warnings[0].file.as_str(), warnings[0].pointer.as_str()),
        ("mods/extra/tags/more.tags.json", "/items/extra:lantren")
    );
    assert!(
        warnings[0]
            .message
            .contains("no narrative file defines `extra:lantren`"),
        "{}",
        warnings[0].message
    );
}

/// A `core` mod with `core:wait` and the keeper's spec, and, when `tagged`, a tag file
/// giving the key `core:key` the tag `cellar`.
fn keeper_content(tagged: bool) -> Vec<(&'static str, String)> {
    let mut files = core_mod();
    let tags: &[&str] = if tagged { &["tags.json"] } else { &[] };
    files[0].1 = manifest(
        "core",
        json!({ "content": {
            "actions": ["actions/wait.action.json"],
            "actors": ["actors/keeper.actor.json"],
            "tags": tags
        } }),
    );
    files.extend([
        game(&["core"]),
        (
            "mods/core/actors/keeper.actor.json",
            json!({ "id": "core:keeper", "persona": { "name": "Ada", "role": "a keeper" } })
                .to_string(),
        ),
        (
            "mods/core/tags.json",
            json!({ "items": { "core:key": ["cellar"] } }).to_string(),
        ),
    ]);
    files
}

/// The memories in the keeper's prompt, with the key in her hand and two memories
/// in her store: one tagged `cellar`, one `garden`.
fn keeper_recalls(tagged: bool) -> String {
    let dir = content_dir(&keeper_content(tagged));
    let answer = r#"{"action": null, "speech": "", "thought": ""}"#;
    let mut app = answering_app(dir.path(), answer);
    let world = app.world_mut();
    let hall = world.spawn((Place, DisplayName("the hall".into()))).id();
    let keeper = world
        .spawn((
            SmartActor::new("core:keeper"),
            DisplayName("Ada".into()),
            InPlace(hall),
        ))
        .id();
    world.spawn((
        DisplayName("iron key".into()),
        NarrativeKey("core:key".into()),
        CarriedBy(keeper),
    ));
    let mut store = world.resource_mut::<HistoryStore>();
    for (text, tag) in [
        ("The cellar door sticks in the damp.", "cellar"),
        ("The roses need water.", "garden"),
    ] {
        store.append(NewMemory {
            text: text.to_owned(),
            tags: vec![tag.to_owned()],
            scope: Some(MemoryScope::Actor("core:keeper".into())),
            source: "test".to_owned(),
            ..NewMemory::default()
        });
    }
    let log = run_turn(&mut app);
    let prompt = log
        .prompts
        .iter()
        .find(|p| p.actor == keeper)
        .expect("the keeper thinks");
    let user = &prompt.messages[1].content;
    user.find("<memories>")
        .map_or(String::new(), |start| user[start..].to_owned())
}

#[test]
fn a_memory_is_recalled_through_a_tag_the_tag_file_gives_a_key_at_hand() {
    let recalled = keeper_recalls(true);
    assert!(
        recalled.starts_with("<memories>\n- The cellar door sticks in the damp.\n</memories>"),
        "the key is tagged `cellar`: {recalled}"
    );
    assert_eq!(
        keeper_recalls(false),
        "",
        "without the tag file nothing around the keeper is called `cellar`"
    );
}

#[test]
fn the_tavern_ships_tags_for_its_keys() {
    let (app, _) = tavern_app(BackendChoice::Offline { seed: 1 });
    let registry = app.world().resource::<ContentRegistry>();
    let tags = registry.tags();
    assert!(tags.tags_of("tavern:cellar").contains(&"cellar".to_owned()));
    assert!(tags.tags_of("tavern:key").contains(&"cellar".to_owned()));
    assert!(tags.tags_of("tavern:silas").contains(&"secret".to_owned()));
    assert!(tags.tags_of("tavern:letter").contains(&"secret".to_owned()));
    let stray: Vec<_> = registry
        .warnings()
        .iter()
        .filter(|w| w.file.ends_with("tags.json"))
        .collect();
    assert!(
        stray.is_empty(),
        "every tagged key has a narrative file: {stray:#?}"
    );
}
