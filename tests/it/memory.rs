//! Smart actors remember what they witness and recall it when they think.

use bevy::prelude::*;
use bevy_loom::actors::{HistoryStore, MemoryEntry, MemoryScope};
use bevy_loom::prelude::*;
use serde_json::json;

use crate::support::{
    FixedBackend, answering_app, content_dir, core_mod, game, manifest, run_turn, tavern_app,
    update_until,
};

const LINE: &str = "The cellar door sticks again.";

fn speaking_tavern() -> (App, bevy_loom::actors::SpawnedScene) {
    let answer = format!(r#"{{"action": null, "speech": "{LINE}", "thought": "Say it."}}"#);
    tavern_app(FixedBackend::choice(&answer))
}

/// What the actor with this store key remembers, seeds aside.
fn remembered_by<'a>(store: &'a HistoryStore, actor: &str) -> Vec<&'a MemoryEntry> {
    (store.entries().iter())
        .filter(|e| e.scope == MemoryScope::Actor(actor.to_owned()) && !e.pinned)
        .collect()
}

fn memories_of<'a>(store: &'a HistoryStore, actor: &str) -> Vec<(&'a str, &'a str)> {
    (remembered_by(store, actor).into_iter())
        .map(|e| (e.text.as_str(), e.source.as_str()))
        .collect()
}

/// Whether anyone remembers witnessing something.
fn someone_witnessed(app: &mut App) -> bool {
    (app.world().resource::<HistoryStore>().entries().iter()).any(|e| e.source == "witnessed")
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
    // The turn appends to Marta's conversation with the model, with what she had not
    // recalled before.
    let user = &marta.messages[marta.messages.len() - 1].content;
    assert!(
        user.contains(&format!(
            "\n- Brom said: \"{LINE}\"\n- Silas said: \"{LINE}\"\n</memories>"
        )),
        "{user}"
    );
}

/// Another store put in (a save loaded, a new game) numbers its memories from 1 too:
/// an actor's conversation, which showed the last store's, starts again with the new
/// one's instead of taking them for memories it already showed.
#[test]
fn a_store_put_in_starts_each_conversation_again_with_its_memories() {
    let (mut app, _) = speaking_tavern();
    run_turn(&mut app);
    let mut loaded = HistoryStore::new();
    for line in ["The roof leaks.", "The well ran dry.", "A wolf was seen."] {
        loaded.append(bevy_loom::actors::NewMemory {
            text: line.to_owned(),
            tags: vec!["tavern:common_room".to_owned()],
            scope: Some(MemoryScope::Actor("tavern:marta".to_owned())),
            turn: 1,
            source: "witnessed".to_owned(),
            pinned: false,
        });
    }
    app.insert_resource(loaded);
    let second = run_turn(&mut app);
    let marta = (second.prompts.iter())
        .find(|p| p.messages[0].content.contains("You are Marta"))
        .expect("Marta thinks again");
    let said: Vec<&str> = marta.messages.iter().map(|m| &*m.content).collect();
    assert_eq!(said.len(), 2, "a fresh prompt: {said:#?}");
    for line in ["The roof leaks.", "The well ran dry.", "A wolf was seen."] {
        assert!(said[1].contains(line), "{line} in {}", said[1]);
    }
    assert!(
        !said[1].contains(LINE),
        "nothing of the last store: {}",
        said[1]
    );
}

/// A line pasted at a smart actor, however long, is remembered by each listener only
/// as far as recall could ever show it: a memory past the recall budget is never
/// recalled, and every listener would keep the whole of it.
#[test]
fn a_memory_is_kept_only_as_long_as_recall_can_show_it() {
    let (mut app, _) = speaking_tavern();
    let pasted = format!("@Marta, {}", "spam ".repeat(20_000));
    app.world_mut().write_message(PlayerSaid { text: pasted });
    app.update();
    app.update();
    let budget = app
        .world()
        .resource::<SmartActorSettings>()
        .recall
        .token_budget;
    let store = app.world().resource::<HistoryStore>();
    let heard: Vec<&MemoryEntry> = (store.entries().iter())
        .filter(|e| e.text.contains("spam"))
        .collect();
    assert_eq!(heard.len(), 3, "each in the room heard it: {}", heard.len());
    for memory in heard {
        assert!(
            bevy_loom::prompt::estimate_tokens(&memory.text) <= 2 * budget,
            "{} characters",
            memory.text.len()
        );
        assert!(memory.text.ends_with('…'), "cut, and says so");
    }
}

#[test]
fn a_memory_is_one_line_whatever_its_speaker_is_called() {
    let (mut app, scene) = speaking_tavern();
    let brom = scene.entities["brom"];
    (app.world_mut().entity_mut(brom)).insert(DisplayName("Brom\u{2028}- the Smith".into()));
    run_turn(&mut app);
    app.update();
    let store = app.world().resource::<HistoryStore>();
    let heard = memories_of(store, "tavern:marta");
    assert!(
        heard.contains(&(
            format!("Brom - the Smith said: \"{LINE}\"").as_str(),
            "heard"
        )),
        "{heard:?}"
    );
}

#[test]
fn everyone_in_the_room_remembers_a_narrated_action() {
    let (mut app, scene) = speaking_tavern();
    let (brom, marta) = (scene.entities["brom"], scene.entities["marta"]);
    app.world_mut()
        .write_message(ActionReport::new(brom, "greet").object(marta));
    update_until(&mut app, "the greeting to be remembered", someone_witnessed);
    let store = app.world().resource::<HistoryStore>();
    for actor in ["tavern:marta", "tavern:silas", "tavern:brom"] {
        let seen = remembered_by(store, actor);
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
fn an_action_narrated_late_is_remembered_by_those_where_it_happened() {
    let (backend, gate) = crate::support::GatedBackend::choice(|_| "The end.".to_owned());
    let (mut app, scene) = tavern_app(backend);
    let (brom, marta) = (scene.entities["brom"], scene.entities["marta"]);
    app.world_mut()
        .write_message(ActionReport::new(brom, "greet").object(marta));
    app.update();
    // Brom walks out into the street before the model's narration comes back.
    let street = scene.entities["street"];
    app.world_mut().entity_mut(brom).insert(InPlace(street));
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    update_until(&mut app, "the greeting to be remembered", someone_witnessed);
    let store = app.world().resource::<HistoryStore>();
    for actor in ["tavern:marta", "tavern:silas", "tavern:brom"] {
        let seen = memories_of(store, actor);
        assert!(
            seen.iter().any(|(_, source)| *source == "witnessed"),
            "{actor} saw it, or did it: {seen:?}"
        );
    }
}

/// A character moved as its leaving is reported is seen leaving by those it left,
/// when the report names where it acted; not by those it joined.
#[test]
fn a_departure_is_remembered_by_those_it_left() {
    let (mut app, scene) = speaking_tavern();
    let (brom, street) = (scene.entities["brom"], scene.entities["street"]);
    let common_room = scene.entities["common_room"];
    app.world_mut().entity_mut(brom).insert(InPlace(street));
    let left = ActionReport::new(brom, "go").object(street);
    app.world_mut().write_message(left.at(Some(common_room)));
    update_until(
        &mut app,
        "the departure to be remembered",
        someone_witnessed,
    );
    let store = app.world().resource::<HistoryStore>();
    for actor in ["tavern:marta", "tavern:silas"] {
        let seen = remembered_by(store, actor);
        assert_eq!(seen.len(), 1, "{actor} saw Brom go: {seen:#?}");
        assert!(seen[0].text.starts_with("Brom "), "{}", seen[0].text);
        assert!(seen[0].tags.contains(&"tavern:common_room".to_owned()));
    }
}

/// The player who acted and then went (despawned, or no longer the player) before the
/// model's narration came is still the one who acted: told in the second person, it
/// is not what the others saw.
#[test]
fn what_a_player_gone_since_did_is_remembered_once() {
    let (mut app, scene) = speaking_tavern();
    let (player, marta) = (scene.entities["player"], scene.entities["marta"]);
    app.world_mut()
        .write_message(ActionReport::new(player, "greet").object(marta));
    app.update();
    app.world_mut().entity_mut(player).remove::<Player>();
    let mut told = false;
    update_until(&mut app, "the greeting told", |app| {
        let texts = app.world().resource::<Messages<NarrationText>>();
        told |= texts.iter_current_update_messages().any(|t| t.is_final);
        told
    });
    app.update();
    let store = app.world().resource::<HistoryStore>();
    let seen = remembered_by(store, "tavern:marta");
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(seen[0].text.starts_with("Traveler "), "{}", seen[0].text);
}

/// Actors who share a store (one spec, or specs with one `storeKey`) share what they
/// remember: what two of them saw together is remembered once, not once each.
#[test]
fn what_actors_sharing_a_store_saw_together_is_remembered_once() {
    let (mut app, scene) = speaking_tavern();
    let (player, marta) = (scene.entities["player"], scene.entities["marta"]);
    let hall = app.world().get::<InPlace>(marta).map(|p| p.0);
    let twin = (
        SmartActor::new("tavern:marta"),
        InPlace(hall.expect("in a place")),
    );
    app.world_mut()
        .spawn((twin, DisplayName("Marta's twin".to_owned())));
    let seen = "Traveler spills the ale.";
    app.world_mut()
        .write_message(Witnessed::new(player, seen).at(hall));
    app.update();
    app.world_mut().write_message(ActorSpoke {
        actor: scene.entities["silas"],
        text: "Careful.".to_owned(),
    });
    app.update();
    let store = app.world().resource::<HistoryStore>();
    let memories = memories_of(store, "tavern:marta");
    assert_eq!(
        memories,
        [(seen, "witnessed"), ("Silas said: \"Careful.\"", "heard")],
        "once each"
    );
}

#[test]
fn what_the_player_did_is_remembered_as_what_the_player_did() {
    let (mut app, scene) = speaking_tavern();
    let (player, marta) = (scene.entities["player"], scene.entities["marta"]);
    app.world_mut()
        .write_message(ActionReport::new(player, "greet").object(marta));
    let mut narrated = Vec::new();
    update_until(&mut app, "the greeting told and remembered", |app| {
        let texts = app.world().resource::<Messages<NarrationText>>();
        let finals = texts.iter_current_update_messages().filter(|t| t.is_final);
        narrated.extend(finals.map(|t| t.text.clone()));
        !narrated.is_empty() && someone_witnessed(app)
    });
    assert!(
        narrated.iter().any(|text| text.starts_with("You ")),
        "the player is told in the second person: {narrated:?}"
    );
    let store = app.world().resource::<HistoryStore>();
    for actor in ["tavern:marta", "tavern:silas", "tavern:brom"] {
        let seen = remembered_by(store, actor);
        assert_eq!(seen.len(), 1, "{actor}: {seen:#?}");
        assert!(
            seen[0].text.starts_with("Traveler "),
            "{actor} remembers what Traveler did, not what it did itself: {}",
            seen[0].text
        );
        assert_eq!(
            seen[0].tags,
            ["tavern:common_room", "tavern:marta", "tavern:player"]
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

/// A `core` mod with `core:wait` and two specs: the troop keeps its memories under the
/// store key `island:monkeys`, the parrot under its own id.
fn island() -> Vec<(&'static str, String)> {
    let mut files = core_mod();
    files[0].1 = manifest(
        "core",
        json!({ "content": {
            "actions": ["actions/wait.action.json"],
            "actors": ["actors/troop.actor.json", "actors/parrot.actor.json"]
        } }),
    );
    files.push(game(&["core"]));
    files.push((
        "mods/core/actors/troop.actor.json",
        json!({
            "id": "core:troop",
            "persona": { "name": "the troop", "role": "a band of monkeys" },
            "memorySeeds": [{ "id": "oath", "text": "The grove is sacred." }],
            "history": {
                "storeKey": "island:monkeys",
                "seeds": [{ "id": "raid", "text": "A lantern was stolen from the campfire." }]
            }
        })
        .to_string(),
    ));
    files.push((
        "mods/core/actors/parrot.actor.json",
        json!({ "id": "core:parrot", "persona": { "name": "Polly", "role": "a parrot" } })
            .to_string(),
    ));
    files
}

#[test]
fn a_spec_s_store_key_holds_its_seeds_what_it_hears_and_what_it_recalls() {
    let dir = content_dir(&island());
    let answer = r#"{"action": null, "speech": "Squawk.", "thought": ""}"#;
    let mut app = answering_app(dir.path(), answer);
    let world = app.world_mut();
    let grove = world.spawn((Place, DisplayName("the grove".into()))).id();
    let troop = world
        .spawn((
            SmartActor::new("core:troop"),
            DisplayName("the troop".into()),
            InPlace(grove),
        ))
        .id();
    world.spawn((
        SmartActor::new("core:parrot"),
        DisplayName("Polly".into()),
        InPlace(grove),
    ));
    run_turn(&mut app);
    let store = app.world().resource::<HistoryStore>();
    let under = |key: &str| -> Vec<(&str, &str)> {
        store
            .entries()
            .iter()
            .filter(|e| e.scope == MemoryScope::Actor(key.to_owned()))
            .map(|e| (e.text.as_str(), e.source.as_str()))
            .collect()
    };
    assert_eq!(
        under("island:monkeys"),
        [
            ("The grove is sacred.", "seed core:troop/oath"),
            (
                "A lantern was stolen from the campfire.",
                "seed core:troop/raid"
            ),
            ("Polly said: \"Squawk.\"", "heard"),
        ],
        "both seed lists, pinned, then what the troop heard"
    );
    assert!(under("core:troop").is_empty(), "nothing under the spec id");
    assert_eq!(
        under("core:parrot"),
        [("the troop said: \"Squawk.\"", "heard")]
    );
    assert!(store.entries().iter().take(2).all(|e| e.pinned));

    let second = run_turn(&mut app);
    let prompt = second
        .prompts
        .iter()
        .find(|p| p.actor == troop)
        .expect("the troop thinks again");
    // The seeds were recalled in the first turn; this turn adds what was heard since.
    assert!(
        prompt.messages[1].content.contains(
            "<memories>\n- The grove is sacred.\n- A lantern was stolen from the campfire.\n</memories>"
        ),
        "{}",
        prompt.messages[1].content
    );
    let last = &prompt.messages[prompt.messages.len() - 1].content;
    assert!(
        last.contains("<memories>\n- Polly said: \"Squawk.\"\n</memories>"),
        "{last}"
    );
}

/// An actor given another spec (its `SmartActor` changed in place, or put on again)
/// has that spec's seeds pinned, as an actor appearing with it has.
#[test]
fn an_actor_given_another_spec_has_its_seeds() {
    let dir = content_dir(&island());
    let answer = r#"{"do": 0, "say": ""}"#;
    let mut app = answering_app(dir.path(), answer);
    let world = app.world_mut();
    let grove = world.spawn((Place, DisplayName("the grove".into()))).id();
    let polly = (world.spawn((
        SmartActor::new("core:parrot"),
        DisplayName("Polly".into()),
        InPlace(grove),
    )))
    .id();
    run_turn(&mut app);
    let seeded = |app: &App| -> usize {
        let store = app.world().resource::<HistoryStore>();
        (store.entries().iter()).filter(|e| e.pinned).count()
    };
    assert_eq!(seeded(&app), 0, "the parrot has no seeds");
    app.world_mut()
        .get_mut::<SmartActor>(polly)
        .expect("a smart actor")
        .spec = "core:troop".to_owned();
    run_turn(&mut app);
    assert_eq!(seeded(&app), 2, "the troop's oath and raid");
}

/// The island's troop in a grove, on content in `root` watched for edits, answered
/// with a pass, after its first turn.
fn troop_in_the_grove(root: &std::path::Path) -> App {
    let mut app = crate::support::loom_app(
        root,
        true,
        LlmPlugin {
            backend: FixedBackend::choice(r#"{"do": 0, "say": ""}"#),
            ..default()
        },
        SmartActorSettings::default(),
    );
    let world = app.world_mut();
    let grove = world.spawn((Place, DisplayName("the grove".into()))).id();
    world.spawn((
        SmartActor::new("core:troop"),
        DisplayName("the troop".into()),
        InPlace(grove),
    ));
    run_turn(&mut app);
    app
}

/// A seed reworded or removed on disk is recalled as the spec has it now, under the
/// spec's store key now.
#[test]
fn a_seed_edited_or_removed_is_recalled_as_it_is_now() {
    let dir = content_dir(&island());
    let mut app = troop_in_the_grove(dir.path());
    let recalled = |app: &App, key: &str| -> Vec<String> {
        let store = app.world().resource::<HistoryStore>();
        let query = bevy_loom::actors::MemoryQuery {
            actor: key,
            plots: &[],
            tags: &[],
            k: 4,
            token_budget: 1000,
        };
        store
            .retrieve(&query)
            .iter()
            .map(|e| e.text.clone())
            .collect()
    };
    let edit = |app: &mut App, store_key: &str, oath: &str| {
        crate::support::write(
            dir.path(),
            "mods/core/actors/troop.actor.json",
            &json!({
                "id": "core:troop",
                "persona": { "name": "the troop", "role": "a band of monkeys" },
                "memorySeeds": [{ "id": "oath", "text": oath }],
                "history": { "storeKey": store_key }
            })
            .to_string(),
        );
        let (key, oath) = (store_key.to_owned(), oath.to_owned());
        update_until(app, "the edited spec's seed", |app| {
            recalled(app, &key).contains(&oath)
        });
    };
    // The oath reworded, the raid forgotten.
    edit(&mut app, "island:monkeys", "The grove is ours alone.");
    assert_eq!(
        recalled(&app, "island:monkeys"),
        ["The grove is ours alone."]
    );
    // The store key renamed: the oath is pinned there too.
    edit(&mut app, "island:apes", "The grove is ours alone.");
    assert_eq!(recalled(&app, "island:apes"), ["The grove is ours alone."]);
    // Back as it was first, and the game saved and loaded: recalled once.
    edit(&mut app, "island:monkeys", "The grove is sacred.");
    let saves = tempfile::tempdir().expect("a folder");
    let save = saves.path().join("history.json");
    app.world()
        .resource::<HistoryStore>()
        .save(&save)
        .expect("saved");
    app.insert_resource(HistoryStore::load(&save).expect("loaded"));
    app.update();
    assert_eq!(recalled(&app, "island:monkeys"), ["The grove is sacred."]);
}

/// The texts of the seeds the store pins now, sorted.
fn pinned_texts(app: &App) -> Vec<String> {
    let store = app.world().resource::<HistoryStore>();
    let mut texts: Vec<String> = store.pinned().map(|e| e.text.clone()).collect();
    texts.sort();
    texts
}

/// A seed edited on disk while none of its spec's actors is about is no longer
/// pinned: its old words are not recalled (by those of its plot, or after a save is
/// loaded) until an actor of the spec comes back.
#[test]
fn a_seed_edited_with_no_actor_of_its_spec_about_is_no_longer_pinned() {
    let dir = content_dir(&island());
    let mut app = troop_in_the_grove(dir.path());
    let mut troops = app.world_mut().query_filtered::<Entity, With<SmartActor>>();
    let troop: Vec<Entity> = troops.iter(app.world()).collect();
    for entity in troop {
        app.world_mut().despawn(entity);
    }
    crate::support::write(
        dir.path(),
        "mods/core/actors/troop.actor.json",
        &json!({
            "id": "core:troop",
            "persona": { "name": "the troop", "role": "a band of monkeys" },
            "memorySeeds": [{ "id": "oath", "text": "The grove is ours alone." }],
            "history": { "storeKey": "island:monkeys" }
        })
        .to_string(),
    );
    update_until(&mut app, "the old oath unpinned", |app| {
        !pinned_texts(app).contains(&"The grove is sacred.".to_owned())
    });
    assert_eq!(
        pinned_texts(&app),
        Vec::<String>::new(),
        "nothing is pinned anew"
    );
}

/// A spec whose id continues another's (`core:troop/elders` after `core:troop`) keeps
/// its own seeds: each spec's seeds are told apart by the whole id.
#[test]
fn a_spec_whose_id_continues_anothers_keeps_its_seeds() {
    let mut files = island();
    files[0].1 = manifest(
        "core",
        json!({ "content": {
            "actions": ["actions/wait.action.json"],
            "actors": ["actors/troop.actor.json", "actors/parrot.actor.json", "actors/elders.actor.json"]
        } }),
    );
    files.push((
        "mods/core/actors/elders.actor.json",
        json!({
            "id": "core:troop/elders",
            "persona": { "name": "the elders", "role": "old monkeys" },
            "memorySeeds": [{ "id": "rule", "text": "Elders eat first." }]
        })
        .to_string(),
    ));
    let dir = content_dir(&files);
    let mut app = answering_app(dir.path(), r#"{"do": 0, "say": ""}"#);
    let world = app.world_mut();
    let grove = world.spawn((Place, DisplayName("the grove".into()))).id();
    for (spec, name) in [
        ("core:troop/elders", "the elders"),
        ("core:troop", "the troop"),
    ] {
        world.spawn((
            SmartActor::new(spec),
            DisplayName(name.into()),
            InPlace(grove),
        ));
    }
    run_turn(&mut app);
    run_turn(&mut app);
    assert_eq!(
        pinned_texts(&app),
        [
            "A lantern was stolen from the campfire.",
            "Elders eat first.",
            "The grove is sacred."
        ]
    );
    let store = app.world().resource::<HistoryStore>();
    assert_eq!(store.len(), 3, "seeded once each: {:#?}", store.entries());
}

/// Seeds are pinned again when a spec is edited on disk (a new seed joins the store)
/// and when the game puts in another store (a new game, or a save without them).
#[test]
fn seeds_are_pinned_again_after_a_spec_edit_or_a_new_store() {
    let dir = content_dir(&island());
    let mut app = troop_in_the_grove(dir.path());
    let seeds = |app: &App| -> Vec<String> {
        let store = app.world().resource::<HistoryStore>();
        let mut seeds: Vec<String> = store
            .entries()
            .iter()
            .filter(|e| e.pinned)
            .map(|e| e.source.clone())
            .collect();
        seeds.sort();
        seeds
    };
    assert_eq!(
        seeds(&app),
        ["seed core:troop/oath", "seed core:troop/raid"]
    );

    crate::support::write(
        dir.path(),
        "mods/core/actors/troop.actor.json",
        &json!({
            "id": "core:troop",
            "persona": { "name": "the troop", "role": "a band of monkeys" },
            "memorySeeds": [
                { "id": "oath", "text": "The grove is sacred." },
                { "id": "storm", "text": "The storm took the old fig tree." }
            ],
            "history": {
                "storeKey": "island:monkeys",
                "seeds": [{ "id": "raid", "text": "A lantern was stolen from the campfire." }]
            }
        })
        .to_string(),
    );
    update_until(&mut app, "the edited spec's new seed", |app| {
        seeds(app).len() == 3
    });
    assert_eq!(
        seeds(&app),
        [
            "seed core:troop/oath",
            "seed core:troop/raid",
            "seed core:troop/storm"
        ]
    );

    app.insert_resource(HistoryStore::new());
    app.update();
    assert_eq!(seeds(&app).len(), 3, "a new store is seeded again");
    app.update();
    assert_eq!(seeds(&app).len(), 3, "once");
}
