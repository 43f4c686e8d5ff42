//! Editing content while the game runs updates what the plugin uses; a file that
//! becomes invalid keeps its last valid version and reports why.

use bevy_loom::prelude::*;
use serde_json::json;

use crate::support::{
    SeenErrors, action, content_app, content_dir, core_mod, game, manifest, update_until, write,
};

fn template(app: &bevy::prelude::App) -> Option<String> {
    app.world()
        .resource::<ContentRegistry>()
        .action("core:wait")
        .map(|a| a.template.clone())
}

#[test]
fn edits_apply_and_broken_edits_keep_the_last_valid_version() {
    let mut files = core_mod();
    files.push(game(&["core"]));
    let dir = content_dir(&files);
    let mut app = content_app(dir.path(), true);
    update_until(&mut app, "content to load", |app| template(app).is_some());
    assert_eq!(template(&app).as_deref(), Some("wait"));

    write(
        dir.path(),
        "mods/core/actions/wait.action.json",
        &action("core:wait", json!({ "template": "wait patiently" })),
    );
    update_until(&mut app, "the edit to apply", |app| {
        template(app).as_deref() == Some("wait patiently")
    });

    write(
        dir.path(),
        "mods/core/actions/wait.action.json",
        "{ \"id\": \"core:wait\", ",
    );
    update_until(&mut app, "the broken file to be reported", |app| {
        app.world()
            .resource::<SeenErrors>()
            .0
            .iter()
            .any(|e| e.file == "mods/core/actions/wait.action.json")
    });
    for _ in 0..5 {
        app.update();
    }
    assert_eq!(
        template(&app).as_deref(),
        Some("wait patiently"),
        "the last valid version stays in use"
    );

    write(
        dir.path(),
        "mods/core/mod.json",
        &manifest(
            "core",
            json!({ "actionPurpose": "A purpose changed at run time.", "content": { "actions": ["actions/wait.action.json"] } }),
        ),
    );
    update_until(&mut app, "the manifest edit to apply", |app| {
        app.world()
            .resource::<ContentRegistry>()
            .action_metadata("core")
            .and_then(|m| m.purpose.clone())
            .as_deref()
            == Some("A purpose changed at run time.")
    });
    assert_eq!(template(&app).as_deref(), Some("wait patiently"));
}

/// Loads `core` (with `core:wait`) in a watched folder and returns the app and folder.
fn watched_core() -> (bevy::prelude::App, tempfile::TempDir) {
    let mut files = core_mod();
    files.push(game(&["core"]));
    let dir = content_dir(&files);
    let mut app = content_app(dir.path(), true);
    update_until(&mut app, "content to load", |app| template(app).is_some());
    (app, dir)
}

fn reported(app: &bevy::prelude::App, file: &str, words: &str) -> bool {
    app.world()
        .resource::<SeenErrors>()
        .0
        .iter()
        .any(|e| e.file == file && e.message.contains(words))
}

#[test]
fn an_edit_naming_an_unknown_scope_keeps_the_last_valid_version() {
    let (mut app, dir) = watched_core();
    let file = "mods/core/actions/wait.action.json";
    let broken = action(
        "core:wait",
        json!({ "template": "wait for {friend}",
                "targets": { "primary": { "scope": "friends_nearby", "placeholder": "friend" } } }),
    );
    write(dir.path(), file, &broken);
    update_until(&mut app, "the unknown scope to be reported", |app| {
        reported(app, file, "unknown scope `friends_nearby`")
    });
    assert!(reported(&app, file, "kept the last valid version"));
    assert_eq!(
        template(&app).as_deref(),
        Some("wait"),
        "the last valid version stays in use"
    );
}

#[test]
fn a_file_removed_from_the_listing_is_no_longer_used() {
    let (mut app, dir) = watched_core();
    write(
        dir.path(),
        "mods/core/mod.json",
        &manifest("core", json!({ "content": { "actions": [] } })),
    );
    update_until(&mut app, "the unlisted action to go", |app| {
        template(app).is_none()
    });
}

#[test]
fn a_manifest_edit_with_a_missing_dependency_keeps_the_last_valid_manifest() {
    let (mut app, dir) = watched_core();
    let edited = manifest(
        "core",
        json!({ "actionPurpose": "A purpose from the broken edit.",
                "dependencies": [{ "id": "magic" }],
                "content": { "actions": ["actions/wait.action.json"] } }),
    );
    write(dir.path(), "mods/core/mod.json", &edited);
    update_until(&mut app, "the missing dependency to be reported", |app| {
        reported(app, "mods/core/mod.json", "depends on `magic`")
    });
    let registry = app.world().resource::<ContentRegistry>();
    assert!(
        registry.is_mod_loaded("core"),
        "the last valid manifest stays in use"
    );
    assert_eq!(
        registry
            .action_metadata("core")
            .and_then(|m| m.purpose.clone())
            .as_deref(),
        Some("Actions of the core mod, for tests.")
    );
    assert_eq!(template(&app).as_deref(), Some("wait"));
}

#[test]
fn loaded_content_is_not_built_again_until_a_file_changes() {
    let (mut app, _) = crate::support::tavern_app_with(
        BackendChoice::Offline { seed: 1 },
        SmartActorSettings::default(),
    );
    let generation = app.world().resource::<ContentRegistry>().generation();
    // The frames in which Bevy tells of the files the first build already holds.
    for _ in 0..50 {
        app.update();
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(
        app.world().resource::<ContentRegistry>().generation(),
        generation,
        "nothing changed, so the registry (and what is built from it) stays"
    );
}

#[test]
fn a_file_added_beside_an_edited_manifest_is_warned_of() {
    let (mut app, dir) = watched_core();
    let unlisted = |app: &bevy::prelude::App| {
        app.world()
            .resource::<ContentRegistry>()
            .warnings()
            .iter()
            .any(|w| w.file == "mods/core/actions/hop.action.json")
    };
    assert!(!unlisted(&app));
    write(
        dir.path(),
        "mods/core/actions/hop.action.json",
        &action("core:hop", json!({ "template": "hop" })),
    );
    write(
        dir.path(),
        "mods/core/mod.json",
        &manifest(
            "core",
            json!({ "actionPurpose": "A purpose changed at run time.", "content": { "actions": ["actions/wait.action.json"] } }),
        ),
    );
    update_until(&mut app, "the new file to be warned of", |app| {
        unlisted(app)
    });
}
