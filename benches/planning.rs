//! Planning benchmarks.
//!
//! - `planning/validate_1000_methods`: what loading 1,000 refinement methods costs
//!   beyond reading their files: each method file (JSON text, 3 steps: a conditional
//!   with a JSON Logic condition around a primitive action, then two primitive
//!   actions) parsed and checked on its own ([`parse_content`]: its JSON Logic
//!   compiled, its ids and bindings checked), then the registry built with them (the
//!   rules across files: actions, placeholders, bindings, task parameters, cycles and
//!   nesting) for 100 tasks of 10 methods each over 3 actions. Target: ≤ 50 ms.
//!
//! - `planning/choose_method_and_bind_first_step`: starting a task with 3 methods, each
//!   with a JSON Logic applicability over the actor, the world and the task's
//!   parameters (the first two do not apply now, the third does), and handing out its
//!   first action: the conditional step it starts with decided by the world now and the
//!   action's targets bound to the task's entities. The world is described the way a
//!   game describes it to conditions (names, tags, place, what is carried). Target:
//!   ≤ 10 µs.
//!
//! - `planning/1000_actors_one_step_one_core`: the main thread's CPU time of the one
//!   `app.update()` in which 1,000 actors each take one step of a running plan: the
//!   step handed out as an `ActionRequest` (its targets bound, its command rendered),
//!   the game's `ActionReport` for it, and the report heard by the plan. The app runs
//!   the content, world and planning plugins only (no model, no narration: what
//!   planning itself costs a frame), every schedule on Bevy's single-threaded executor,
//!   on a content folder written for the benchmark: a task `bench:serve` (a customer,
//!   a drink) whose one method has six primitive steps (nod to the customer, wait, give
//!   the drink, and again). The world: 100 places, in each 10 innkeepers, each with a
//!   mug; each serves the next one in its place its own mug. The game's rules report
//!   every step done without changing the world. Each iteration starts the 1,000 plans
//!   and runs their first three steps untimed (the frames that start plans, and the
//!   two after, which drop the start's messages); the timed frame is the fourth step,
//!   a frame like every frame of running plans (it also drops the step messages of two
//!   frames before, as Bevy does). The plans then complete untimed. Target: ≤ 1 ms.
//!
//! Run with `cargo bench --bench planning`.

use std::hint::black_box;
use std::time::Duration;

use bevy::app::PluginsState;
use bevy::ecs::schedule::SingleThreadedExecutor;
use bevy::prelude::*;
use bevy_loom::content::ContentPlugin;
use bevy_loom::content::{
    ActionDefinition, ContentRegistry, ContentSources, GameManifest, RefinementMethod,
    TaskDefinition, parse_content,
};
use bevy_loom::planning::{
    BoundTask, ParamValue, Plan, PlanCompleted, PlanFacts, PlanStep, PlanStepIssued,
    PlanningPlugin, Refinement, StartPlan,
};
use bevy_loom::testing::{CONTENT_TIMEOUT, content_folder, wait_for_content};
use bevy_loom::world::{
    ActionReport, ActionRequest, Character, DisplayName, InPlace, LoomSystems, Place, Tags,
    WorldPlugin,
};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const TASKS: usize = 100;
const METHODS_PER_TASK: usize = 10;

fn parsed<T: bevy_loom::content::ContentAsset>(value: Value, file: &str) -> T {
    match parse_content(value.to_string().as_bytes(), file) {
        Ok(parsed) => parsed,
        Err(problems) => panic!("{file} is valid: {problems:?}"),
    }
}

/// The `items` mod's manifest, listing every task and method file.
fn manifest() -> Value {
    let tasks: Vec<String> = (0..TASKS)
        .map(|t| format!("tasks/t{t}.task.json"))
        .collect();
    let methods: Vec<String> = (0..TASKS * METHODS_PER_TASK)
        .map(|m| format!("methods/m{m}.method.json"))
        .collect();
    json!({
        "id": "items", "version": "1.0.0", "name": "Items",
        "content": {
            "actions": ["actions/pick_up.action.json", "actions/give.action.json", "actions/wait.action.json"],
            "tasks": tasks,
            "methods": methods
        }
    })
}

fn actions() -> Vec<(String, ActionDefinition)> {
    [
        json!({ "id": "items:pick_up", "name": "Pick up", "description": "take it", "template": "pick up {item}",
                "targets": { "primary": { "scope": "things_here", "placeholder": "item" } } }),
        json!({ "id": "items:give", "name": "Give", "description": "hand it over", "template": "give {item} to {recipient}",
                "targets": { "primary": { "scope": "inventory", "placeholder": "item" },
                             "secondary": { "scope": "characters_here", "placeholder": "recipient" } },
                "parameters": { "quietly": { "default": false } } }),
        json!({ "id": "items:wait", "name": "Wait", "description": "let time pass", "template": "wait" }),
    ]
    .into_iter()
    .map(|action| {
        let name = action["id"].as_str().unwrap_or_default().trim_start_matches("items:");
        let file = format!("mods/items/actions/{name}.action.json");
        let parsed = parsed(action, &file);
        (file, parsed)
    })
    .collect()
}

fn task(t: usize) -> (String, TaskDefinition) {
    let file = format!("mods/items/tasks/t{t}.task.json");
    let task = json!({
        "id": format!("items:t{t}"), "name": "Serve", "description": "bring a drink",
        "template": "serve {customer} {drink}",
        "parameters": [
            { "name": "customer", "entity": { "scope": "characters_here" } },
            { "name": "drink", "entity": { "scope": "things_here", "requiredTags": ["drink"] } },
            { "name": "rounds", "value": { "type": "integer", "default": 1 } }
        ]
    });
    let parsed = parsed(task, &file);
    (file, parsed)
}

/// The text of method `m`, of task `m / METHODS_PER_TASK`.
fn method_text(m: usize) -> (String, String) {
    let method = json!({
        "refinementMethodId": format!("items:m{m}"),
        "taskId": format!("items:t{}", m / METHODS_PER_TASK),
        "applicability": { ">=": [{ "var": "task.params.rounds" }, 1] },
        "steps": [
            { "stepType": "conditional",
              "condition": { "!": { "in": [{ "var": "task.params.drink.id" }, { "var": "actor.carriedIds" }] } },
              "thenSteps": [{ "stepType": "primitive_action", "actionId": "items:pick_up",
                              "targetBindings": { "item": "task.params.drink" } }],
              "onFailure": "replan" },
            { "stepType": "primitive_action", "actionId": "items:give",
              "targetBindings": { "item": "task.params.drink", "recipient": "task.params.customer" },
              "parameters": { "quietly": true } },
            { "stepType": "primitive_action", "actionId": "items:wait" }
        ]
    });
    (
        format!("mods/items/methods/m{m}.method.json"),
        method.to_string(),
    )
}

fn validate_1000_methods(c: &mut Criterion) {
    let game: GameManifest = parsed(json!({ "mods": ["items"] }), "game.loom.json");
    let manifest = parsed(manifest(), "mods/items/mod.json");
    let actions = actions();
    let tasks: Vec<(String, TaskDefinition)> = (0..TASKS).map(task).collect();
    let texts: Vec<(String, String)> = (0..TASKS * METHODS_PER_TASK).map(method_text).collect();
    let mut group = c.benchmark_group("planning");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("validate_1000_methods", |b| {
        b.iter(|| {
            let methods: Vec<(String, RefinementMethod)> = texts
                .iter()
                .map(|(file, text)| {
                    let method = parse_content::<RefinementMethod>(text.as_bytes(), file)
                        .unwrap_or_else(|problems| panic!("{problems:?}"));
                    (file.clone(), method)
                })
                .collect();
            let method_refs: Vec<(&str, &RefinementMethod)> =
                methods.iter().map(|(f, m)| (f.as_str(), m)).collect();
            let task_refs: Vec<(&str, &TaskDefinition)> =
                tasks.iter().map(|(f, t)| (f.as_str(), t)).collect();
            let action_refs: Vec<(&str, &ActionDefinition)> =
                actions.iter().map(|(f, a)| (f.as_str(), a)).collect();
            let mods = [("mods/items/mod.json", &manifest)];
            let registry = ContentRegistry::build(ContentSources {
                game: Some(("game.loom.json", &game)),
                mods: &mods,
                actions: &action_refs,
                tasks: &task_refs,
                methods: &method_refs,
                ..ContentSources::default()
            });
            assert!(registry.problems().is_empty(), "{:?}", registry.problems());
            assert_eq!(registry.methods().count(), TASKS * METHODS_PER_TASK);
            black_box(registry)
        });
    });
    group.finish();
}

/// The tavern as conditions see it.
struct Tavern;

impl PlanFacts for Tavern {
    fn actor(&self) -> Value {
        json!({ "name": "Marta", "tags": ["person", "innkeeper"], "place": "the common room",
                "carries": ["cellar key"], "carriedTags": ["key", "portable"] })
    }
    fn world(&self) -> Value {
        json!({ "turn": 12, "open": false })
    }
    fn entity(&self, entity: Entity) -> Option<Value> {
        Some(match entity.index_u32() {
            1 => {
                json!({ "name": "Traveler", "tags": ["person"], "place": "the common room", "carries": [] })
            }
            _ => {
                json!({ "name": "mug of ale", "tags": ["drink", "portable"], "place": "the common room" })
            }
        })
    }
}

fn choose_method_and_bind_first_step(c: &mut Criterion) {
    let game: GameManifest = parsed(json!({ "mods": ["items"] }), "game.loom.json");
    let mut listing = manifest();
    listing["content"]["tasks"] = json!(["tasks/t0.task.json"]);
    listing["content"]["methods"] = json!([
        "methods/a.method.json",
        "methods/b.method.json",
        "methods/c.method.json"
    ]);
    let manifest = parsed(listing, "mods/items/mod.json");
    let actions = actions();
    let (task_file, task) = task(0);
    let (_, third) = method_text(0);
    let mut third: Value = serde_json::from_str(&third).expect("JSON");
    third["refinementMethodId"] = json!("items:c");
    let methods: Vec<(String, RefinementMethod)> = [
        json!({ "refinementMethodId": "items:a", "taskId": "items:t0",
                "applicability": { "var": "world.open" },
                "steps": [{ "stepType": "primitive_action", "actionId": "items:wait" }] }),
        json!({ "refinementMethodId": "items:b", "taskId": "items:t0",
                "applicability": { "and": [{ "in": ["bard", { "var": "actor.tags" }] }, { "==": [{ "var": "task.params.customer.place" }, { "var": "actor.place" }] }] },
                "steps": [{ "stepType": "primitive_action", "actionId": "items:wait" }] }),
        third,
    ]
    .into_iter()
    .zip(["a", "b", "c"])
    .map(|(method, name)| {
        let file = format!("mods/items/methods/{name}.method.json");
        let parsed = parsed(method, &file);
        (file, parsed)
    })
    .collect();
    let mods = [("mods/items/mod.json", &manifest)];
    let action_refs: Vec<(&str, &ActionDefinition)> =
        actions.iter().map(|(f, a)| (f.as_str(), a)).collect();
    let method_refs: Vec<(&str, &RefinementMethod)> =
        methods.iter().map(|(f, m)| (f.as_str(), m)).collect();
    let registry = ContentRegistry::build(ContentSources {
        game: Some(("game.loom.json", &game)),
        mods: &mods,
        actions: &action_refs,
        tasks: &[(task_file.as_str(), &task)],
        methods: &method_refs,
        ..ContentSources::default()
    });
    assert!(registry.problems().is_empty(), "{:?}", registry.problems());
    let entity = |n| Entity::from_raw_u32(n).expect("a valid index");
    let bound = BoundTask::new(
        &task,
        [
            ("customer".to_owned(), ParamValue::Entity(entity(1))),
            ("drink".to_owned(), ParamValue::Entity(entity(2))),
        ],
    )
    .expect("bound");
    c.bench_function("planning/choose_method_and_bind_first_step", |b| {
        b.iter(|| {
            let mut plan = Refinement::start(bound.clone(), &registry, &Tavern).expect("c applies");
            let step = plan.next_step(&registry, &Tavern);
            assert!(
                matches!(step, PlanStep::Act(ref action) if &*action.action_id == "items:pick_up")
            );
            black_box((plan, step))
        });
    });
}

const PLACES: usize = 100;
const PER_PLACE: usize = 10;
const ACTORS: usize = PLACES * PER_PLACE;

/// The game's rules in the benchmark: every plan step is done, and nothing changes.
fn report_done(
    mut requests: MessageReader<ActionRequest>,
    mut reports: MessageWriter<ActionReport>,
) {
    for request in requests.read() {
        reports.write(ActionReport::new(request.actor, "act").for_step(request.plan.clone()));
    }
}

/// How many steps were issued and plans completed in the last frame.
#[derive(Resource, Default)]
struct Counted {
    issued: usize,
    completed: usize,
}

fn count(
    mut counted: ResMut<Counted>,
    mut issued: MessageReader<PlanStepIssued>,
    mut completed: MessageReader<PlanCompleted>,
) {
    counted.issued = issued.read().count();
    counted.completed = completed.read().count();
}

/// The benchmark's content: the `bench` mod's three actions, its task and its method
/// of six steps.
fn bench_content() -> Vec<(&'static str, String)> {
    let nod = json!({ "stepType": "primitive_action", "actionId": "bench:nod",
                      "targetBindings": { "target": "task.params.customer" } });
    let wait = json!({ "stepType": "primitive_action", "actionId": "bench:wait" });
    let give = json!({ "stepType": "primitive_action", "actionId": "bench:give",
                       "targetBindings": { "item": "task.params.drink", "recipient": "task.params.customer" } });
    vec![
        ("game.loom.json", json!({ "mods": ["bench"] }).to_string()),
        ("mods/bench/mod.json", json!({
            "id": "bench", "version": "1.0.0", "name": "Bench",
            "content": {
                "actions": ["actions/nod.action.json", "actions/wait.action.json", "actions/give.action.json"],
                "tasks": ["tasks/serve.task.json"],
                "methods": ["methods/serve.method.json"]
            }
        }).to_string()),
        ("mods/bench/actions/nod.action.json", json!({
            "id": "bench:nod", "name": "Nod", "description": "nod to someone", "template": "nod to {target}",
            "targets": { "primary": { "scope": "characters_here", "placeholder": "target" } }
        }).to_string()),
        ("mods/bench/actions/wait.action.json", json!({
            "id": "bench:wait", "name": "Wait", "description": "let time pass", "template": "wait"
        }).to_string()),
        ("mods/bench/actions/give.action.json", json!({
            "id": "bench:give", "name": "Give", "description": "hand it over", "template": "give {item} to {recipient}",
            "targets": { "primary": { "scope": "things_here", "placeholder": "item" },
                         "secondary": { "scope": "characters_here", "placeholder": "recipient" } }
        }).to_string()),
        ("mods/bench/tasks/serve.task.json", json!({
            "id": "bench:serve", "name": "Serve", "description": "serve a drink",
            "template": "serve {customer} {drink}",
            "parameters": [
                { "name": "customer", "entity": { "scope": "characters_here" } },
                { "name": "drink", "entity": { "scope": "things_here" } }
            ]
        }).to_string()),
        ("mods/bench/methods/serve.method.json", json!({
            "refinementMethodId": "bench:serve_twice", "taskId": "bench:serve",
            "steps": [nod, wait, give, nod, wait, give]
        }).to_string()),
    ]
}

/// The planning app on the benchmark's content (in `folder`), every schedule on one
/// thread, and the innkeepers with what each serves and to whom.
fn planning_app(folder: &std::path::Path) -> (App, Vec<StartPlan>) {
    let root = folder;
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: root.to_string_lossy().into_owned(),
            ..default()
        },
        ContentPlugin::default(),
        WorldPlugin,
        PlanningPlugin::default(),
    ))
    .init_resource::<Counted>()
    .add_systems(
        Update,
        (
            report_done
                .after(LoomSystems::Decide)
                .before(LoomSystems::Narrate),
            count.after(LoomSystems::Remember),
        ),
    );
    wait_for_content(&mut app, CONTENT_TIMEOUT).expect("the repository's content loads");
    assert_eq!(app.plugins_state(), PluginsState::Cleaned);
    let mut schedules = app.world_mut().resource_mut::<Schedules>();
    for (_, schedule) in schedules.iter_mut() {
        schedule.set_executor(SingleThreadedExecutor::new());
    }
    let world = app.world_mut();
    let mut starts = Vec::with_capacity(ACTORS);
    for p in 0..PLACES {
        let place = world.spawn((Place, DisplayName(format!("room {p}")))).id();
        let keepers: Vec<(Entity, Entity)> = (0..PER_PLACE)
            .map(|k| {
                let keeper = world
                    .spawn((
                        DisplayName(format!("Keeper {p}-{k}")),
                        Tags::new(["person", "innkeeper"]),
                        Character,
                        InPlace(place),
                    ))
                    .id();
                let mug = world
                    .spawn((
                        DisplayName(format!("mug {p}-{k}")),
                        Tags::new(["drink", "portable"]),
                        InPlace(place),
                    ))
                    .id();
                (keeper, mug)
            })
            .collect();
        for (k, &(keeper, mug)) in keepers.iter().enumerate() {
            let customer = keepers[(k + 1) % PER_PLACE].0;
            starts.push(
                StartPlan::new(keeper, "bench:serve")
                    .entity("customer", customer)
                    .entity("drink", mug),
            );
        }
    }
    (app, starts)
}

fn actors_one_step(c: &mut Criterion) {
    let folder = content_folder(&bench_content()).expect("a content folder");
    let (mut app, starts) = planning_app(folder.path());
    let mut plans = app.world_mut().query::<&Plan>();
    let mut group = c.benchmark_group("planning");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.bench_function("1000_actors_one_step_one_core", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                app.world_mut().write_message_batch(starts.iter().cloned());
                app.update();
                assert_eq!(
                    app.world().resource::<Counted>().issued,
                    ACTORS,
                    "every plan starts"
                );
                app.update();
                app.update();
                let cpu = cpu_time::ThreadTime::now();
                app.update();
                total += cpu.elapsed();
                assert_eq!(
                    app.world().resource::<Counted>().issued,
                    ACTORS,
                    "every plan takes a step"
                );
                // Steps five and six: the sixth's report ends each plan.
                for _ in 0..2 {
                    app.update();
                }
                assert_eq!(app.world().resource::<Counted>().completed, ACTORS);
                assert_eq!(plans.iter(app.world()).count(), 0, "every plan completed");
            }
            total
        });
    });
    group.finish();
}

criterion_group!(
    benches,
    validate_1000_methods,
    choose_method_and_bind_first_step,
    actors_one_step
);
criterion_main!(benches);
