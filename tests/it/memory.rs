//! Smart actors remember what they witness and recall it when they think.

use std::sync::Arc;

use bevy::prelude::*;
use bevy_loom::actors::{HistoryStore, MemoryScope};
use bevy_loom::prelude::*;

use crate::support::{FixedBackend, run_turn, tavern_app, update_until};

const LINE: &str = "The cellar door sticks again.";

fn speaking_tavern() -> (App, bevy_loom::actors::SpawnedScene) {
    let answer = format!(r#"{{"action": null, "speech": "{LINE}", "thought": "Say it."}}"#);
    tavern_app(BackendChoice::Custom(Arc::new(FixedBackend(answer))))
}

fn memories_of<'a>(store: &'a HistoryStore, actor: &str) -> Vec<(&'a str, &'a str)> {
    store
        .entries()
        .iter()
        .filter(|e| e.scope == MemoryScope::Actor(actor.to_owned()) && !e.pinned)
        .map(|e| (e.text.as_str(), e.source.as_str()))
        .collect()
}

#[test]
fn actors_remember_what_others_said_and_recall_it_next_turn() {
    let (mut app, _) = speaking_tavern();
    let first = run_turn(&mut app);
    assert_eq!(first.spoke.len(), 3, "{first:#?}");
    app.update();
    let store = app.world().resource::<HistoryStore>();
    let heard = memories_of(store, "tavern:marta");
    assert_eq!(
        heard,
        [
            (format!("Silas said: \"{LINE}\"").as_str(), "heard"),
            (format!("Brom said: \"{LINE}\"").as_str(), "heard"),
        ],
        "Marta hears the others, not herself"
    );

    let second = run_turn(&mut app);
    let marta = second
        .prompts
        .iter()
        .find(|p| p.messages[0].content.contains("You are Marta"))
        .expect("Marta thinks again");
    let user = &marta.messages[1].content;
    assert!(
        user.contains(&format!(
            "\n- Brom said: \"{LINE}\"\n- Silas said: \"{LINE}\"\n</memories>"
        )),
        "{user}"
    );
}

#[test]
fn everyone_in_the_room_remembers_a_narrated_action() {
    let (mut app, scene) = speaking_tavern();
    let (brom, marta) = (scene.entities["brom"], scene.entities["marta"]);
    app.world_mut()
        .write_message(ActionReport::new(brom, "greet").object(marta));
    update_until(&mut app, "the greeting to be remembered", |app| {
        app.world()
            .resource::<HistoryStore>()
            .entries()
            .iter()
            .any(|e| e.source == "witnessed")
    });
    let store = app.world().resource::<HistoryStore>();
    for actor in ["tavern:marta", "tavern:silas", "tavern:brom"] {
        let seen: Vec<_> = store
            .entries()
            .iter()
            .filter(|e| e.scope == MemoryScope::Actor(actor.to_owned()) && !e.pinned)
            .collect();
        assert_eq!(seen.len(), 1, "{actor}: {seen:#?}");
        assert!(seen[0].text.starts_with("Brom "), "{}", seen[0].text);
        assert_eq!(seen[0].source, "witnessed");
        assert_eq!(
            seen[0].tags,
            ["tavern:brom", "tavern:common_room", "tavern:marta"]
        );
    }
}

#[test]
fn a_spec_s_backstory_and_memory_seeds_are_in_its_first_prompt() {
    let (mut app, scene) = tavern_app(BackendChoice::Offline { seed: 1 });
    let log = run_turn(&mut app);
    let marta = log
        .prompts
        .iter()
        .find(|p| p.actor == scene.entities["marta"])
        .expect("Marta thinks");
    assert!(
        marta.messages[0]
            .content
            .contains("<backstory>\nMarta took over the Gilded Tankard"),
        "{}",
        marta.messages[0].content
    );
    let user = &marta.messages[1].content;
    assert!(
        user.contains("<memories>\n- The cellar key stays on my belt; the last time it went missing, half the wine went with it.\n- Silas still owes me for a week of suppers.\n"),
        "{user}"
    );
    // Seeded once, however many turns pass.
    run_turn(&mut app);
    let store = app.world().resource::<HistoryStore>();
    assert_eq!(
        store
            .entries()
            .iter()
            .filter(|e| e.source.starts_with("seed "))
            .count(),
        2
    );
}
