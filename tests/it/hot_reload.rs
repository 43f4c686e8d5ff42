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
