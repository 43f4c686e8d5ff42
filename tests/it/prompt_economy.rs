//! Prompts that stay small: budgets per section, an append-only transcript per actor,
//! and a fresh start when it outgrows its budget.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bevy::prelude::*;

use bevy_loom::actors::{HistoryStore, MemoryScope, NewMemory, SpawnedScene};
use bevy_loom::llm::ChatMessage;
use bevy_loom::prelude::*;
use bevy_loom::prompt::PromptBudgets;
use bevy_loom::prompt::estimate_tokens;
use bevy_loom::world::TargetScopes;
use serde_json::json;

use crate::support::{
    FixedBackend, TurnLog, action, content_dir, game, loom_app, manifest, run_turn, tavern_app_with,
};

/// The tavern with every actor answering `answer`, with these budgets, and Marta.
fn tavern(answer: &str, budgets: PromptBudgets) -> (App, Entity) {
    let (app, scene) = tavern_scene(answer, budgets);
    (app, scene.entities["marta"])
}

/// The tavern with every actor answering `answer`, with these budgets, and its scene.
fn tavern_scene(answer: &str, budgets: PromptBudgets) -> (App, SpawnedScene) {
    tavern_app_with(
        FixedBackend::choice(answer),
        SmartActorSettings {
            budgets,
            ..SmartActorSettings::default()
        },
    )
}

fn asked(log: &TurnLog, actor: Entity) -> DecisionRequested {
    log.prompts
        .iter()
        .find(|p| p.actor == actor)
        .cloned()
        .expect("the actor was asked")
}

fn tokens(messages: &[ChatMessage]) -> usize {
    messages.iter().map(|m| estimate_tokens(&m.content)).sum()
}

/// The estimated tokens of the available-tasks block of a prompt's last message, and
/// of the prompt without it.
fn tasks_and_rest(messages: &[ChatMessage]) -> (usize, usize) {
    let user = &messages.last().expect("a message").content;
    let tasks = match (
        user.find("<available_tasks>"),
        user.find("</available_tasks>"),
    ) {
        (Some(start), Some(end)) => estimate_tokens(&user[start..end + "</available_tasks>".len()]),
        _ => 0,
    };
    (tasks, tokens(messages).saturating_sub(tasks))
}

#[test]
fn the_innkeepers_first_prompt_is_within_the_default_budget() {
    let budgets = PromptBudgets::default();
    let (mut app, marta) = tavern(r#"{"do": 0, "say": ""}"#, budgets.clone());
    let first = asked(&run_turn(&mut app), marta);
    assert_eq!(first.messages.len(), 2, "system and user");
    let total = tokens(&first.messages);
    let (tasks, rest) = tasks_and_rest(&first.messages);
    assert!(
        rest <= budgets.total,
        "{rest} estimated tokens but the tasks"
    );
    assert!(
        (1..=budgets.tasks).contains(&tasks),
        "the innkeeper's tasks, within their own budget: {tasks}"
    );
    let counted: usize = first.sections.iter().map(|s| s.tokens).sum();
    assert!(counted.abs_diff(total) <= first.sections.len());
    // The offer cut to the budget still lets her wait, leave, act on the stranger
    // and talk to him: each mod keeps its best line longest.
    let commands: Vec<&str> = first.offered.iter().map(|a| a.command).collect();
    assert!(commands.len() >= 5, "a real choice: {commands:?}");
    assert!(commands.contains(&"look around"), "{commands:?}");
    assert!(commands.contains(&"go to the cellar"), "{commands:?}");
    assert!(
        commands.contains(&"ask Traveler about the rumours"),
        "a word with the stranger: {commands:?}"
    );
    assert!(!first.tasks.is_empty(), "and a task beside the actions");
}

#[test]
fn a_warm_turn_appends_only_what_changed() {
    let (mut app, marta) = tavern(r#"{"do": 0, "say": ""}"#, PromptBudgets::default());
    let first = asked(&run_turn(&mut app), marta);
    let second = asked(&run_turn(&mut app), marta);
    assert_eq!(
        second.messages[..2],
        first.messages[..],
        "earlier turns stay as they were sent"
    );
    assert_eq!(second.messages[2].role, "assistant");
    assert_eq!(&*second.messages[2].content, r#"{"do": 0, "say": ""}"#);
    let update = &second.messages[3];
    assert_eq!(update.role, "user");
    assert!(
        !update.content.contains("[Index: "),
        "nothing changed, so the offer is not repeated: {}",
        update.content
    );
    assert!(
        second.reused_prefix >= 0.85,
        "a warm turn is mostly the last prompt: {}",
        second.reused_prefix
    );
    assert!(
        second.offered.shares(&first.offered),
        "the same offer stands, made again without a copy"
    );
}

#[test]
fn a_transcript_past_its_budget_starts_again_from_a_fresh_prompt() {
    let budgets = PromptBudgets::default();
    let (mut app, marta) = tavern(r#"{"do": 0, "say": ""}"#, budgets.clone());
    let first = asked(&run_turn(&mut app), marta);
    let tight = PromptBudgets {
        transcript: tokens(&first.messages) + 10,
        ..budgets
    };
    let (mut app, marta) = tavern(r#"{"do": 0, "say": ""}"#, tight);
    let first = asked(&run_turn(&mut app), marta);
    let second = asked(&run_turn(&mut app), marta);
    assert_eq!(second.messages.len(), 2, "started again");
    assert_eq!(second.messages[0], first.messages[0]);
}

#[test]
fn a_transcript_started_again_fits_its_fresh_prompt_to_what_it_now_recalls() {
    let budgets = PromptBudgets::default();
    let (mut app, marta) = tavern(r#"{"do": 0, "say": ""}"#, budgets.clone());
    let first = asked(&run_turn(&mut app), marta);
    let tight = PromptBudgets {
        transcript: tokens(&first.messages) + 10,
        ..budgets.clone()
    };
    let (mut app, marta) = tavern(r#"{"do": 0, "say": ""}"#, tight);
    let first = asked(&run_turn(&mut app), marta);
    let (_, rest) = tasks_and_rest(&first.messages);
    assert!(
        rest <= budgets.total,
        "{rest} estimated tokens but the tasks"
    );
    // What she heard since: her next fresh prompt recalls it, and must still fit.
    for (n, heard) in [
        "the cellar door",
        "the hearth",
        "the stranger's coin",
        "the well",
    ]
    .iter()
    .enumerate()
    {
        app.world_mut()
            .resource_mut::<HistoryStore>()
            .append(NewMemory {
                text: format!(
                    "Brom talked for an hour about {heard}, and of little else {}.",
                    "again and again ".repeat(8)
                ),
                tags: vec!["tavern:hearth".into()],
                scope: Some(MemoryScope::Actor("tavern:marta".into())),
                turn: n as u64,
                source: "test".into(),
                pinned: true,
            });
    }
    let second = asked(&run_turn(&mut app), marta);
    assert_eq!(second.messages.len(), 2, "started again");
    assert!(
        second.messages[1]
            .content
            .contains("Brom talked for an hour")
    );
    let (_, rest) = tasks_and_rest(&second.messages);
    assert!(
        rest <= budgets.total,
        "{rest} estimated tokens but the tasks"
    );
    assert!(
        second.offered.len() < first.offered.len(),
        "the offer makes room for what she recalls"
    );
}

#[test]
fn a_tight_budget_trims_the_offer_and_numbers_it_again() {
    let budgets = PromptBudgets {
        total: 700,
        ..PromptBudgets::default()
    };
    let (mut app, marta) = tavern(r#"{"do": 1, "say": ""}"#, budgets);
    let log = run_turn(&mut app);
    let first = asked(&log, marta);
    let (_, rest) = tasks_and_rest(&first.messages);
    assert!(rest <= 700, "{rest} estimated tokens but the tasks");
    assert!(!first.offered.is_empty(), "{:#?}", first.sections);
    let indices: Vec<usize> = first.offered.iter().map(|a| a.index).collect();
    assert_eq!(indices, (1..=first.offered.len()).collect::<Vec<_>>());
    let user = &first.messages[1].content;
    for action in first.offered.iter() {
        assert!(
            user.contains(&format!(
                "[Index: {}] Command: \"{}\"",
                action.index, action.command
            )),
            "{} is offered as numbered",
            action.command
        );
    }
    let request = log
        .requests
        .iter()
        .find(|r| r.actor == marta)
        .expect("Marta acts on her first offered action");
    assert_eq!(
        request.command,
        first.offered.get(1).expect("an offer").command
    );
}

#[test]
fn a_rejected_answer_is_explained_on_the_next_turn() {
    let (mut app, marta) = tavern("Marta wipes the bar.", PromptBudgets::default());
    run_turn(&mut app);
    let second = asked(&run_turn(&mut app), marta);
    assert_eq!(&*second.messages[2].content, "Marta wipes the bar.");
    let update = &second.messages[3].content;
    assert!(
        update.contains("Your last answer was not used: the answer is not a JSON object"),
        "{update}"
    );
}

#[test]
fn a_long_player_line_is_cut_to_its_budget() {
    let budgets = PromptBudgets {
        player_says: 10,
        ..PromptBudgets::default()
    };
    let (mut app, marta) = tavern(r#"{"do": 0, "say": "Hm."}"#, budgets);
    let long = format!(
        "@Marta {}",
        "tell me everything about the cellar ".repeat(20)
    );
    app.world_mut()
        .write_message(PlayerSaid { text: long.clone() });
    let log = run_turn(&mut app);
    let reply = asked(&log, marta);
    let user = &reply.messages.last().expect("a user message").content;
    let said = user
        .split("<player_says>\n")
        .nth(1)
        .and_then(|rest| rest.split("\n</player_says>").next())
        .expect("the player's words");
    assert!(said.ends_with('…') && estimate_tokens(said) <= 10, "{said}");
    assert!(said.starts_with("tell me everything"), "{said}");
}

#[test]
fn trimming_keeps_what_concerns_the_player_and_what_the_actor_remembers() {
    let budgets = PromptBudgets {
        total: 851,
        ..PromptBudgets::default()
    };
    let (mut app, marta) = tavern(r#"{"do": 0, "say": ""}"#, budgets);
    app.world_mut()
        .resource_mut::<HistoryStore>()
        .append(NewMemory {
            text: "The hearth smoked all winter.".into(),
            tags: vec!["tavern:hearth".into()],
            scope: Some(MemoryScope::Actor("tavern:marta".into())),
            turn: 0,
            source: "test".into(),
            pinned: false,
        });
    let first = asked(&run_turn(&mut app), marta);
    let commands: Vec<&str> = first.offered.iter().map(|a| a.command).collect();
    let examined: Vec<&&str> = commands
        .iter()
        .filter(|c| c.starts_with("examine "))
        .collect();
    assert_eq!(
        examined,
        [&"examine stone hearth"],
        "of what Marta may examine, what she remembers: {commands:?}"
    );
    // Of the actions that concern nobody, which go before it, only one way to wait
    // and one way to leave stay.
    assert!(
        !commands.contains(&"wait") && commands.contains(&"look around"),
        "{commands:?}"
    );
    assert!(
        !commands.contains(&"go to Lantern Street") && commands.contains(&"go to the cellar"),
        "{commands:?}"
    );
    for name in ["Brom", "Silas"] {
        assert!(
            commands.iter().all(|c| !c.contains(name)),
            "of whom to greet or ask, the player: {commands:?}"
        );
    }
    assert!(commands.contains(&"greet Traveler"), "{commands:?}");
}

#[test]
fn a_budget_too_small_for_any_action_still_asks_and_replies() {
    let budgets = PromptBudgets {
        total: 10,
        ..PromptBudgets::default()
    };
    let (mut app, marta) = tavern(r#"{"do": 0, "say": "Hm."}"#, budgets);
    app.world_mut().write_message(PlayerSaid {
        text: "@Marta any rooms free?".into(),
    });
    let reply = asked(&run_turn(&mut app), marta);
    assert!(reply.offered.is_empty(), "a reply offers no action");
    let next = asked(&run_turn(&mut app), marta);
    let commands: Vec<&str> = next.offered.iter().map(|a| a.command).collect();
    assert_eq!(
        commands,
        ["go to the cellar", "look around"],
        "no action fits a budget of 10 tokens, but Marta keeps a way to leave and one to wait"
    );
}

#[test]
fn an_offer_is_made_again_when_what_is_around_the_actor_or_the_scopes_change() {
    // Room for every action and task, so what is offered is what the world allows.
    let roomy = PromptBudgets {
        total: 5000,
        tasks: 5000,
        transcript: 100_000,
        ..PromptBudgets::default()
    };
    let (mut app, scene) = tavern_app_with(
        FixedBackend::choice(r#"{"do": 0, "say": ""}"#),
        SmartActorSettings {
            budgets: roomy,
            ..SmartActorSettings::default()
        },
    );
    let marta = scene.entities["marta"];
    let [ale, key, barrel, cellar, wine] =
        ["ale", "key", "barrel", "cellar", "wine"].map(|id| scene.entities[id]);
    // Marta's next prompt after `change`, and frames in which nobody thinks: a
    // change is seen even so.
    let mut after = |change: &dyn Fn(&mut World)| {
        change(app.world_mut());
        for _ in 0..3 {
            app.update();
        }
        asked(&run_turn(&mut app), marta)
    };
    let rename = |entity: Entity, name: &'static str| {
        move |world: &mut World| {
            world.entity_mut(entity).insert(DisplayName(name.into()));
        }
    };
    let offers = |asked: &DecisionRequested, name: &str| {
        asked.offered.iter().any(|a| a.command.contains(name))
    };
    let offers_task = |asked: &DecisionRequested, name: &str| {
        asked.tasks.iter().any(|task| task.command.contains(name))
    };
    // What the appended turn says: what changed.
    let says = |asked: &DecisionRequested, text: &str| {
        asked
            .messages
            .last()
            .is_some_and(|m| m.content.contains(text))
    };

    let first = after(&|_| {});
    assert!(offers(&first, "mug of ale"), "{:?}", first.offered);
    assert!(offers(&first, "Silas"), "{:?}", first.offered);

    let renamed = after(&rename(ale, "tankard of ale"));
    assert!(offers(&renamed, "tankard of ale"), "{:?}", renamed.offered);
    assert!(!offers(&renamed, "mug of ale"));
    assert!(says(&renamed, "tankard of ale"), "perceived again");

    let removed = after(&|world| {
        world.entity_mut(ale).remove::<InPlace>();
    });
    assert!(!offers(&removed, "tankard of ale"), "{:?}", removed.offered);
    assert!(!says(&removed, "tankard of ale"));

    assert!(offers(&removed, "cellar key"), "{:?}", removed.offered);
    let despawned = after(&|world| {
        world.despawn(key);
    });
    assert!(!offers(&despawned, "cellar key"), "{:?}", despawned.offered);

    let unchanged = after(&|_| {});
    assert!(
        unchanged.offered.shares(&despawned.offered),
        "the same offer stands"
    );

    // Out of sight: the same offer stands, and nothing new is perceived.
    let elsewhere = after(&rename(barrel, "empty barrel"));
    assert!(elsewhere.offered.shares(&unchanged.offered));
    assert!(!says(&elsewhere, "You are in"));

    // Next door: the exit to it shows its new name.
    let next_door = after(&rename(cellar, "the wine cellar"));
    assert!(says(&next_door, "the wine cellar"));
    // What is in the place next door is out of sight, but a task fetching from there
    // names it.
    assert!(
        offers_task(&next_door, "bottle of wine"),
        "{:?}",
        next_door.tasks
    );
    let restocked = after(&rename(wine, "bottle of red wine"));
    assert!(
        restocked.offered.shares(&next_door.offered),
        "no action reads it"
    );
    assert!(
        offers_task(&restocked, "bottle of red wine"),
        "{:?}",
        restocked.tasks
    );

    // A scope of the game's own may read the whole world: a change anywhere counts.
    let anywhere = after(&|world| {
        world
            .resource_mut::<TargetScopes>()
            .insert("things_here", |view: &WorldView, _| {
                let mut things: Vec<Entity> = view
                    .iter()
                    .filter(|(_, thing)| !thing.character && !thing.is_place)
                    .map(|(entity, _)| entity)
                    .collect();
                things.sort_unstable_by_key(|&thing| (view.name(thing).to_owned(), thing));
                things
            });
    });
    assert!(offers(&anywhere, "empty barrel"), "{:?}", anywhere.offered);
    let refilled = after(&rename(barrel, "full barrel"));
    assert!(offers(&refilled, "full barrel"), "{:?}", refilled.offered);

    // A scope of the game's own that says it reads only the actor's place is asked
    // again for Marta when something changes there, not elsewhere. (Without her tasks,
    // one of which reads next door.)
    let asked_for_marta = Arc::new(AtomicUsize::new(0));
    let things_around_her = |world: &mut World| {
        let asked = Arc::clone(&asked_for_marta);
        let scope = move |view: &WorldView, actor: Entity| {
            if actor == marta {
                asked.fetch_add(1, Ordering::Relaxed);
            }
            let Some(place) = view.place_of(actor) else {
                return Vec::new();
            };
            let thing = |e: &Entity| view.get(*e).is_some_and(|v| !v.character);
            view.occupants(place)
                .iter()
                .copied()
                .filter(thing)
                .collect()
        };
        let mut scopes = world.resource_mut::<TargetScopes>();
        scopes.insert_within("things_here", ScopeReach::Place, scope);
        world.resource_mut::<SmartActorSettings>().offer_tasks = false;
    };
    let around_her = after(&things_around_her);
    assert!(
        !offers(&around_her, "full barrel"),
        "{:?}",
        around_her.offered
    );
    let asked_once = asked_for_marta.load(Ordering::Relaxed);
    assert!(asked_once > 0, "the scope is asked for her new offer");
    let emptied = after(&rename(barrel, "empty barrel"));
    assert!(emptied.offered.shares(&around_her.offered));
    assert_eq!(
        asked_for_marta.load(Ordering::Relaxed),
        asked_once,
        "nothing in her place changed"
    );
    let bench = scene.entities["bench"];
    let moved = after(&rename(bench, "long bench"));
    assert!(offers(&moved, "long bench"), "{:?}", moved.offered);
    assert!(asked_for_marta.load(Ordering::Relaxed) > asked_once);

    // A scope replaced: nobody is here to act on any more.
    let scoped = after(&|world| {
        world
            .resource_mut::<TargetScopes>()
            .insert("characters_here", |_: &WorldView, _| Vec::new());
    });
    assert!(!offers(&scoped, "Silas"), "{:?}", scoped.offered);
    assert!(!scoped.offered.is_empty(), "other actions stand");
}

/// Every `OfferTrimmed` written.
#[derive(Resource, Default)]
struct Trimmed(Vec<OfferTrimmed>);

fn record_trimmed(mut seen: ResMut<Trimmed>, mut trimmed: MessageReader<OfferTrimmed>) {
    seen.0.extend(trimmed.read().cloned());
}

/// A scholar in a reading room with an exit, the player with her, and six things to
/// say to the player besides waiting and leaving; her backstory is one sentence
/// (16 estimated tokens) `backstory` times, which leaves her offer the less of a
/// budget of 1,000 (not the default, which may change).
fn reading_room(backstory: usize) -> (tempfile::TempDir, App, Entity) {
    let talk = ["greet", "thank", "praise", "warn", "question", "scold"];
    let mut actions: Vec<String> = vec![
        "actions/wait.action.json".into(),
        "actions/go.action.json".into(),
    ];
    actions.extend(
        talk.iter()
            .map(|verb| format!("actions/{verb}.action.json")),
    );
    let mut files = vec![
        game(&["core"]),
        (
            "mods/core/mod.json",
            manifest(
                "core",
                json!({ "content": {
                    "actions": actions,
                    "actors": ["actors/scholar.actor.json"]
                } }),
            ),
        ),
        (
            "mods/core/actions/wait.action.json",
            action("core:wait", json!({})),
        ),
        (
            "mods/core/actions/go.action.json",
            action(
                "core:go",
                json!({ "name": "Go", "description": "walk to a neighbouring place",
                        "template": "go to {destination}",
                        "targets": { "primary": { "scope": "exits", "placeholder": "destination" } } }),
            ),
        ),
        (
            "mods/core/actors/scholar.actor.json",
            json!({
                "id": "core:scholar",
                "persona": { "name": "Ines", "role": "a scholar of old maps" },
                "backstory": "She has catalogued every map in the reading room, one by one. ".repeat(backstory)
            })
            .to_string(),
        ),
    ];
    for verb in talk {
        files.push((
            Box::leak(format!("mods/core/actions/{verb}.action.json").into_boxed_str()),
            action(
                &format!("core:{verb}"),
                json!({ "name": verb, "description": format!("{verb} someone, in a few well-chosen words"),
                        "template": format!("{verb} {{person}}"),
                        "targets": { "primary": { "scope": "characters_here", "placeholder": "person" } } }),
            ),
        ));
    }
    let dir = content_dir(&files);
    let mut app = loom_app(
        dir.path(),
        false,
        LlmPlugin {
            backend: FixedBackend::choice(r#"{"do": 0, "say": ""}"#),
            ..default()
        },
        SmartActorSettings {
            budgets: PromptBudgets {
                total: 1000,
                ..default()
            },
            ..default()
        },
    );
    app.init_resource::<Trimmed>()
        .add_systems(Update, record_trimmed.after(LoomSystems::Think));
    let world = app.world_mut();
    let hall = world.spawn((Place, DisplayName("the hall".into()))).id();
    let room = world
        .spawn((
            Place,
            DisplayName("the reading room".into()),
            Exits(vec![hall]),
        ))
        .id();
    world.spawn((
        Player,
        Character,
        DisplayName("Traveler".into()),
        InPlace(room),
    ));
    let ines = world
        .spawn((
            SmartActor::new("core:scholar"),
            DisplayName("Ines".into()),
            InPlace(room),
        ))
        .id();
    (dir, app, ines)
}

#[test]
fn trimming_keeps_a_way_to_wait_and_a_way_to_leave() {
    // Room for a few lines: those naming the player are the most relevant.
    let (_dir, mut app, ines) = reading_room(45);
    let first = asked(&run_turn(&mut app), ines);
    let commands: Vec<&str> = first.offered.iter().map(|a| a.command).collect();
    assert!(commands.len() < 8, "the offer is trimmed: {commands:?}");
    assert!(commands.contains(&"wait"), "{commands:?}");
    assert!(commands.contains(&"go to the hall"), "{commands:?}");
    assert!(
        commands
            .iter()
            .filter(|c| !["wait", "go to the hall"].contains(c))
            .all(|c| c.ends_with(" Traveler")),
        "{commands:?}"
    );
    assert!(
        app.world().resource::<Trimmed>().0.is_empty(),
        "no more than half was left out"
    );
}

#[test]
fn an_offer_trimmed_by_more_than_half_is_reported_once() {
    // Room for no line at all: a way to wait and a way to leave stay all the same.
    let (_dir, mut app, ines) = reading_room(53);
    let first = asked(&run_turn(&mut app), ines);
    let commands: Vec<&str> = first.offered.iter().map(|a| a.command).collect();
    assert_eq!(commands, ["go to the hall", "wait"]);
    let trimmed: Vec<(Entity, usize, usize)> = app
        .world()
        .resource::<Trimmed>()
        .0
        .iter()
        .map(|t| (t.actor, t.offered, t.left_out))
        .collect();
    assert_eq!(trimmed, [(ines, 8, 6)]);

    // Someone else comes in: the offer is made and trimmed again (Brom's lines are the
    // least relevant), and not reported again.
    let world = app.world_mut();
    let room = world.get::<InPlace>(ines).expect("in a place").0;
    world.spawn((Character, DisplayName("Brom".into()), InPlace(room)));
    let second = asked(&run_turn(&mut app), ines);
    let commands: Vec<&str> = second.offered.iter().map(|a| a.command).collect();
    assert_eq!(commands, ["go to the hall", "wait"]);
    assert_eq!(
        app.world().resource::<Trimmed>().0.len(),
        1,
        "once per actor"
    );
}

#[test]
fn a_warm_turn_says_only_what_changed_in_the_perception() {
    let (mut app, scene) = tavern_scene(r#"{"do": 0, "say": ""}"#, PromptBudgets::default());
    let (marta, brom, cellar) = (
        scene.entities["marta"],
        scene.entities["brom"],
        scene.entities["cellar"],
    );
    let first = asked(&run_turn(&mut app), marta);
    assert!(
        first.messages[1]
            .content
            .contains("Brom carries: oak cudgel.")
    );
    // Brom goes down to the cellar.
    app.world_mut().entity_mut(brom).insert(InPlace(cellar));
    let second = asked(&run_turn(&mut app), marta);
    assert_eq!(second.messages.len(), 4, "appended");
    let update = &second.messages[3].content;
    let perception = update
        .split_once("<perception>\n")
        .and_then(|(_, rest)| rest.split_once("\n</perception>"))
        .map(|(perception, _)| perception)
        .unwrap_or_else(|| panic!("the perception changed: {update}"));
    assert_eq!(
        perception,
        "(Only what changed; the rest is as before.)\nHere with you: Silas, Traveler."
    );
}

#[test]
fn a_perception_cut_to_its_budget_is_said_whole() {
    // Room for Marta's whole perception (264 characters), and no more.
    let budgets = PromptBudgets {
        perception: 66,
        ..PromptBudgets::default()
    };
    let (mut app, scene) = tavern_scene(r#"{"do": 0, "say": ""}"#, budgets);
    let (marta, silas) = (scene.entities["marta"], scene.entities["silas"]);
    let first = asked(&run_turn(&mut app), marta);
    assert!(first.messages[1].content.contains("Exits: the cellar"));
    // A longer name pushes the last line, the exits, past the budget: a line cut
    // off is not one gone.
    let longer = DisplayName("Silas of the Seven Hills".into());
    app.world_mut().entity_mut(silas).insert(longer);
    let second = asked(&run_turn(&mut app), marta);
    let update = &second.messages[3].content;
    assert!(
        update.contains("<perception>\nYou are in the common room.\nHere with you: Brom, Silas of"),
        "said whole: {update}"
    );
    assert!(!update.contains("Exits"), "{update}");
}
