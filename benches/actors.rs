//! Smart-actor benchmarks: the frame in which many smart actors start thinking, and
//! the size and stability of a real decision prompt.
//!
//! - `actors/turn_1000_smart_actors`: the main thread's wall time of the one
//!   `app.update()` in which 1,000 smart actors all start thinking, after a
//!   `TurnEnded`: for each of them its context (the world view, its available
//!   actions), memory retrieval, prompt assembly, and submission to the offline
//!   backend. The world is built in code once the repository's `assets/` content has
//!   loaded: 100 places in a ring (each with exits to its two neighbours), in each 10
//!   smart actors (specs `tavern:marta`, `tavern:silas`, `tavern:brom` in turn) and 3
//!   portable items; `max_new_thinkers_per_frame` is 1,000, so that one frame queues
//!   and submits them all; the prompt budgets are 1,000 and 150 for tasks (the
//!   defaults when the targets were set). Between timed frames (untimed) the app
//!   updates until no actor is thinking any more and the turn's messages are dropped
//!   (as a game's frames between turns drop them), then every actor's cooldown is
//!   cleared (Brom's spec has one turn) and the memory store is put back to what it
//!   held after the first turn (each actor heard what the 9 others in its place said),
//!   so every frame does the same work and the store does not grow from one iteration
//!   to the next. Last, one large allocation lets glibc's malloc sort the chunks all
//!   this freed, as a game's frames between turns would (`settle_heap`): otherwise the
//!   timed frame's first large allocation does it, about 1.2 ms on this work's behalf.
//!   Nothing carries out the actions chosen, so the world is the same from turn to
//!   turn: nothing around any actor changed (`WorldViewChanges`), so each actor
//!   keeps what it perceived and was offered last turn, with its trimmed offer and
//!   available-actions block, and none of them is made again.
//!   Every timed frame is checked to have written 1,000 `DecisionRequested`.
//!
//!   Threads: the app runs `MinimalPlugins`, whose task pools may run other systems
//!   of the frame on other threads, and the bridge's own thread starts answering
//!   once the requests are flushed to it (in `LoomSystems::Receive`, later in the
//!   same frame); the submitting system itself (`submit_decisions`, in
//!   `LoomSystems::Think`) runs on one thread. On two cores those threads compete
//!   for the CPU with the frame.
//! - `actors/turn_1000_smart_actors_one_core`: the same turn with every schedule on
//!   Bevy's single-threaded executor, so every system runs on the main thread, timed
//!   by the main thread's CPU time (`cpu_time::ThreadTime`): the main-thread time of
//!   the turn on one core, leaving out the bridge's thread answering and the time
//!   the main thread waits for a core it took. Target: ≤ 5 ms a frame.
//! - `actors/turn_1000_smart_actors_one_core_one_place_changed`: the same, but between
//!   timed turns (untimed) one place's first item is renamed, another place each
//!   turn, as in a game where something happens somewhere: the 10 actors there
//!   perceive it and are offered something else, which is trimmed, written and
//!   appended to their transcripts; the other 990 keep what they had.
//! - `actors/turn_1000_smart_actors_one_core_world_changed`: the same, but between
//!   timed turns (untimed) each place's first item is renamed, a mug and then a cup in
//!   turn, so every actor's perception and offer differ from the last turn's: every
//!   perception and offer is made again, and every offer trimmed to its budget and
//!   written anew, and appended to the actor's transcript.
//!
//! Printed once (under `cargo bench`, not under `--profile-time` nor as a test):
//! - before the benchmark, the real tavern scene (`assets/scenes/tavern.scene.json`)
//!   runs two turns on the offline backend, and for Marta's decision prompt of each
//!   turn the estimated tokens (`bevy_loom::prompt::estimate_tokens`) of each of its
//!   messages and their total (the first, fresh prompt within the default budget; the
//!   second appends to it: the first turn's messages, the answer, what changed), and for the second turn
//!   the share of its characters (the message contents concatenated) that is an
//!   unchanged prefix of the first turn's prompt, what a server's prompt cache can
//!   reuse (target: ≥ 85 %);
//! - around the benchmarks, the first (cold) frame's time, how many actions and prompt
//!   bytes an actor gets, and the timed frames' mean and median wall time and
//!   main-thread CPU time, and their wall time split in three:
//!   before `LoomSystems::Think` (from the frame's start to just after `Sense`), in it
//!   (to just after `Think`: the part `submit_decisions` takes, also shown per actor)
//!   and after it (to the end of the frame's `Last` schedule). After `Think` the
//!   systems themselves take well under a millisecond; the rest is the frame's
//!   threads waiting for a core while the bridge's thread answers (and whatever else
//!   the machine runs).
//!
//! Run with `cargo bench --bench actors`. Tuned for a small (2-core) machine: the
//! whole run takes about 20 seconds after the build.

use std::ops::Range;
use std::time::{Duration, Instant};

use bevy::ecs::query::QueryState;
use bevy::ecs::schedule::SingleThreadedExecutor;
use bevy::prelude::*;
use bevy_loom::actors::SpawnedScene;
use bevy_loom::llm::ChatMessage;
use bevy_loom::prelude::*;
use bevy_loom::prompt::{PromptBudgets, estimate_tokens};
use bevy_loom::testing::{HeadlessApp, wait_for_content};
use criterion::{Criterion, criterion_group, criterion_main};

/// Places in the generated world.
const PLACES: usize = 100;
/// Smart actors in each place.
const ACTORS_PER_PLACE: usize = 10;
/// Smart actors in all.
const ACTORS: usize = PLACES * ACTORS_PER_PLACE;
/// The specs the generated actors take in turn, with the names they are called by.
const SPECS: [(&str, &str); 3] = [
    ("tavern:marta", "Marta"),
    ("tavern:silas", "Silas"),
    ("tavern:brom", "Brom"),
];
/// The portable items in each place.
const ITEMS: [&str; 3] = ["mug", "key", "letter"];
/// The offline backend's seed, as the integration tests use.
const SEED: u64 = 1;
/// How long loading content or finishing a turn may take before the run fails.
const GIVE_UP: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

/// What the frames since the last reset asked for, and where the last of them spent
/// its time: before `LoomSystems::Think`, in it, and after it.
#[derive(Resource, Default)]
struct Requested {
    /// `DecisionRequested` messages.
    decisions: usize,
    /// Whether to add up what they offered and asked: for the first frame's printed
    /// figures only, so that reading every prompt again is not timed with the frame.
    detailed: bool,
    /// Actions offered in them.
    offered: usize,
    /// Bytes of their prompts' messages.
    prompt_bytes: usize,
    /// When the last frame began (set by whoever runs it).
    frame_began: Option<Instant>,
    /// When the last frame's `Think` set began.
    think_began: Option<Instant>,
    /// When it ended.
    think_ended: Option<Instant>,
    /// From the frame's start to `Think`.
    before_think: Duration,
    /// How long `Think` took.
    think: Duration,
    /// From the end of `Think` to the end of the frame's `Last` schedule.
    after_think: Duration,
}

fn count_requested(
    mut requested: ResMut<Requested>,
    mut messages: MessageReader<DecisionRequested>,
) {
    if let Some(began) = requested.think_began.take() {
        let now = Instant::now();
        requested.think = now - began;
        requested.think_ended = Some(now);
    }
    if !requested.detailed {
        requested.decisions += messages.read().count();
        return;
    }
    for message in messages.read() {
        requested.decisions += 1;
        requested.offered += message.offered.len();
        requested.prompt_bytes += message
            .messages
            .iter()
            .map(|m| m.content.len())
            .sum::<usize>();
    }
}

fn think_begins(mut requested: ResMut<Requested>) {
    let now = Instant::now();
    if let Some(began) = requested.frame_began {
        requested.before_think = now - began;
    }
    requested.think_began = Some(now);
}

fn frame_ends(mut requested: ResMut<Requested>) {
    if let Some(ended) = requested.think_ended.take() {
        requested.after_think = ended.elapsed();
    }
}

/// The prompts sent so far, for the printed figures.
#[derive(Resource, Default)]
struct Prompts(Vec<DecisionRequested>);

fn record_prompts(mut prompts: ResMut<Prompts>, mut messages: MessageReader<DecisionRequested>) {
    prompts.0.extend(messages.read().cloned());
}

/// Updates until `done` holds, sleeping 1 ms between updates so the bridge's thread
/// gets a core; fails after [`GIVE_UP`] instead of hanging.
fn update_until(app: &mut App, what: &str, mut done: impl FnMut(&mut App) -> bool) {
    let started = Instant::now();
    while !done(app) {
        assert!(started.elapsed() < GIVE_UP, "gave up waiting for {what}");
        app.update();
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A headless app on the repository's `assets/` with the offline backend and these
/// smart-actor settings, updated until the content has loaded.
fn loaded_app(actors: SmartActorSettings) -> App {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut app = HeadlessApp::new(root)
        .llm(LlmPlugin {
            backend: BackendChoice::Offline { seed: SEED },
            ..default()
        })
        .actors(actors)
        .build();
    app.init_resource::<Requested>()
        .add_systems(
            Update,
            (
                think_begins
                    .after(LoomSystems::Sense)
                    .before(LoomSystems::Think),
                count_requested.after(LoomSystems::Think),
            ),
        )
        .add_systems(Last, frame_ends);
    if let Err(error) = wait_for_content(&mut app, GIVE_UP) {
        panic!("{error}");
    }
    app
}

/// Whether any smart actor is queued to think or waiting for its answer.
fn anyone_thinking(app: &mut App, minds: &mut QueryState<&ActorMind>) -> bool {
    minds.iter(app.world()).any(ActorMind::is_thinking)
}

/// Updates until no smart actor is thinking.
fn finish_turn(app: &mut App, minds: &mut QueryState<&ActorMind>) {
    update_until(app, "every actor to decide", |app| {
        !anyone_thinking(app, minds)
    });
}

/// Updates until no smart actor is thinking and every message of the turn is dropped
/// (messages live two frames), as the frames a game runs between turns drop them:
/// otherwise dropping the last turn's 1,000 prompts, answers and reports (about 2 ms)
/// falls in the next timed frame.
fn settle(app: &mut App, minds: &mut QueryState<&ActorMind>) {
    let started = Instant::now();
    loop {
        finish_turn(app, minds);
        for _ in 0..2 {
            app.update();
            std::thread::sleep(Duration::from_millis(1));
        }
        let dropped = app
            .world()
            .resource::<Messages<DecisionRequested>>()
            .is_empty();
        if dropped && !anyone_thinking(app, minds) {
            return;
        }
        assert!(
            started.elapsed() < GIVE_UP,
            "gave up waiting for the turn to settle"
        );
    }
}

/// Whether to print the figures taken once: under `cargo bench` (`--bench`), but not
/// under `--profile-time`, so a profile holds only the benchmark asked for, nor as a
/// test (`cargo test --benches`).
fn print_figures() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|arg| arg == "--bench") && !args.iter().any(|arg| arg == "--profile-time")
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

// ---------------------------------------------------------------------------
// 0. Figures printed once: Marta's prompt in the real tavern
// ---------------------------------------------------------------------------

/// The tavern app of the integration tests: its content and scene, offline backend.
fn tavern_app() -> (App, SpawnedScene) {
    let mut app = loaded_app(SmartActorSettings::default());
    app.init_resource::<Prompts>()
        .add_systems(Update, record_prompts.after(LoomSystems::Think));
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/tavern.scene.json");
    let bytes = std::fs::read(&path).expect("the tavern scene");
    let scene: SceneDefinition =
        bevy_loom::content::parse_content(&bytes, &path.to_string_lossy()).expect("a valid scene");
    let world = app.world_mut();
    let spawned = scene
        .spawn(&mut world.commands())
        .expect("the scene spawns");
    world.flush();
    (app, spawned)
}

/// The message contents of a prompt, one after the other.
fn concatenated(messages: &[ChatMessage]) -> String {
    messages.iter().map(|m| &*m.content).collect()
}

/// Characters `a` and `b` begin with alike.
fn common_prefix_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// Marta's prompt over two turns of the tavern: its messages' estimated tokens each
/// turn (the second appends to the first) and the share of the second that is an
/// unchanged prefix of the first.
fn print_prompt_figures(_: &mut Criterion) {
    if !print_figures() {
        return;
    }
    let (mut app, scene) = tavern_app();
    let marta = scene.entities["marta"];
    let mut minds = app.world_mut().query::<&ActorMind>();
    let mut prompts = Vec::new();
    for turn in 1..=2 {
        app.world_mut().write_message(TurnEnded);
        app.update();
        finish_turn(&mut app, &mut minds);
        app.update();
        let sent = std::mem::take(&mut app.world_mut().resource_mut::<Prompts>().0);
        let prompt = sent
            .into_iter()
            .find(|p| p.actor == marta)
            .unwrap_or_else(|| panic!("Marta is asked in turn {turn}"));
        prompts.push(prompt.messages);
    }
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!(
        "\nactors/tavern prompt figures (Marta's decision prompt, offline seed {SEED}, {cores} cores):"
    );
    for (turn, messages) in prompts.iter().enumerate() {
        let tokens: Vec<usize> = messages
            .iter()
            .map(|m| estimate_tokens(&m.content))
            .collect();
        let roles: Vec<&str> = messages.iter().map(|m| &*m.role).collect();
        println!(
            "  turn {}: {} messages ({}), {:?} = {:4} estimated tokens{}",
            turn + 1,
            messages.len(),
            roles.join(", "),
            tokens,
            tokens.iter().sum::<usize>(),
            if turn == 0 {
                let budgets = PromptBudgets::default();
                format!(
                    "   (the default budget: {} and {} for its tasks)",
                    budgets.total, budgets.tasks
                )
            } else {
                String::new()
            },
        );
    }
    let (first, second) = (concatenated(&prompts[0]), concatenated(&prompts[1]));
    let prefix = common_prefix_chars(&first, &second);
    let total = second.chars().count();
    println!(
        "  turn 2: unchanged prefix of turn 1's prompt {prefix} of {total} characters = {:.1} %   (target ≥ 85 %)\n",
        100.0 * prefix as f64 / total as f64
    );
}

// ---------------------------------------------------------------------------
// 1. actors/turn_1000_smart_actors
// ---------------------------------------------------------------------------

/// Spawns [`PLACES`] places in a ring, each with [`ACTORS_PER_PLACE`] smart actors
/// and the [`ITEMS`]; returns each place's first item.
fn spawn_world(world: &mut World) -> Vec<Entity> {
    let mut first_items = Vec::with_capacity(PLACES);
    let places: Vec<Entity> = (0..PLACES)
        .map(|p| world.spawn((Place, DisplayName(format!("room {p}")))).id())
        .collect();
    for (p, &place) in places.iter().enumerate() {
        let next = places[(p + 1) % PLACES];
        let previous = places[(p + PLACES - 1) % PLACES];
        world.entity_mut(place).insert(Exits(vec![previous, next]));
        for a in 0..ACTORS_PER_PLACE {
            let index = p * ACTORS_PER_PLACE + a;
            let (spec, name) = SPECS[index % SPECS.len()];
            world.spawn((
                SmartActor::new(spec),
                Character,
                DisplayName(format!("{name} {index}")),
                Tags::new(["person"]),
                InPlace(place),
            ));
        }
        for (i, item) in ITEMS.into_iter().enumerate() {
            let item = world
                .spawn((
                    DisplayName(format!("{item} {p}")),
                    Tags::new(["portable"]),
                    InPlace(place),
                ))
                .id();
            if i == 0 {
                first_items.push(item);
            }
        }
    }
    first_items
}

/// Renames the first item of each of these places, the `time`th time (a mug, then a
/// cup, then a mug again): the offer and perception of every actor there differ
/// from the last time's.
fn rename_first_items(world: &mut World, items: &[Entity], places: Range<usize>, time: usize) {
    let name = if time.is_multiple_of(2) {
        ITEMS[0]
    } else {
        "cup"
    };
    for p in places {
        world
            .entity_mut(items[p])
            .insert(DisplayName(format!("{name} {p}")));
    }
}

/// How long a frame took.
#[derive(Clone, Copy)]
struct FrameTime {
    /// From calling `app.update()` to its return.
    wall: Duration,
    /// The main thread's time on a CPU meanwhile.
    main_thread: Duration,
}

/// Writes `TurnEnded` and runs one frame; returns how long it took and what it
/// requested (what its prompts offered and hold only when `detailed`).
fn start_turn(app: &mut App, detailed: bool) -> (FrameTime, &Requested) {
    app.world_mut().write_message(TurnEnded);
    let start = Instant::now();
    *app.world_mut().resource_mut::<Requested>() = Requested {
        frame_began: Some(start),
        detailed,
        ..default()
    };
    let cpu = cpu_time::ThreadTime::now();
    app.update();
    let took = FrameTime {
        main_thread: cpu.elapsed(),
        wall: start.elapsed(),
    };
    (took, app.world().resource::<Requested>())
}

/// Makes every actor eligible again: Brom's spec rests a turn after each decision.
fn clear_cooldowns(app: &mut App) {
    let world = app.world_mut();
    let mut minds = world.query::<&mut ActorMind>();
    for mut mind in minds.iter_mut(world) {
        mind.end_cooldown();
    }
}

/// Lets the allocator settle what the untimed work between turns freed (the last
/// turn's prompts and answers, and the memory store put back), as the frames a game
/// renders between turns let it. glibc's malloc sorts the small chunks freed since
/// its last large allocation at the next one: without this, that is the timed frame's
/// first (its world view's table), which then pays about 1.2 ms on this work's behalf.
fn settle_heap() {
    drop(std::hint::black_box(Vec::<u8>::with_capacity(1 << 16)));
}

/// Runs every schedule of the app on the thread that updates it, one system after
/// another: the app on one core.
fn run_on_one_core(app: &mut App) {
    let mut schedules = app.world_mut().resource_mut::<Schedules>();
    for (_, schedule) in schedules.iter_mut() {
        schedule.set_executor(SingleThreadedExecutor::new());
    }
}

/// How a timed turn is run and what criterion is given.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Turns {
    /// Bevy's default executor, systems on the main thread and the compute pool's;
    /// criterion gets the frame's wall time.
    Default,
    /// Every system on the main thread ([`run_on_one_core`]); criterion gets the main
    /// thread's CPU time, which leaves out waiting for a core the bridge's thread took.
    OneCore,
}

/// What changes in the world between timed turns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Between {
    /// Nothing: every actor is offered what it was offered last turn.
    Nothing,
    /// Each place's first item is renamed ([`rename_first_items`]): every actor is
    /// offered something else.
    Renamed,
    /// One place's first item is renamed, another place each turn: the 10 actors
    /// there are offered something else, the rest what they were offered last turn.
    OnePlaceRenamed,
}

fn turn_1000_smart_actors(c: &mut Criterion) {
    time_turns(
        c,
        "turn_1000_smart_actors",
        Turns::Default,
        Between::Nothing,
    );
    time_turns(
        c,
        "turn_1000_smart_actors_one_core",
        Turns::OneCore,
        Between::Nothing,
    );
    time_turns(
        c,
        "turn_1000_smart_actors_one_core_one_place_changed",
        Turns::OneCore,
        Between::OnePlaceRenamed,
    );
    time_turns(
        c,
        "turn_1000_smart_actors_one_core_world_changed",
        Turns::OneCore,
        Between::Renamed,
    );
}

/// The budgets of the timed turns: the offer's as they were before the defaults were
/// cut for CPU servers, so that every actor is offered as much as when the targets
/// were set.
fn offer_budgets() -> PromptBudgets {
    PromptBudgets {
        total: 1000,
        tasks: 150,
        ..default()
    }
}

fn time_turns(c: &mut Criterion, name: &str, turns: Turns, between: Between) {
    let mut app = loaded_app(SmartActorSettings {
        max_new_thinkers_per_frame: ACTORS,
        budgets: offer_budgets(),
        ..default()
    });
    if turns == Turns::OneCore {
        run_on_one_core(&mut app);
    }
    let first_items = spawn_world(app.world_mut());
    let mut turn = 0;
    let mut minds = app.world_mut().query::<&ActorMind>();

    // One turn untimed: it checks the frame submits all 1,000 and leaves each actor
    // with memories of what the others in its place said, which later turns recall.
    let (took, requested) = start_turn(&mut app, true);
    assert_eq!(
        requested.decisions, ACTORS,
        "one frame submits every actor's decision"
    );
    if print_figures() && turns == Turns::Default {
        println!(
            "actors/{name}: the first (cold) frame took {:.2} ms, {:.2} ms of it in \
             LoomSystems::Think; it requested {} decisions, offering {:.1} actions and \
             {:.0} bytes of prompt each on average",
            millis(took.wall),
            millis(requested.think),
            requested.decisions,
            requested.offered as f64 / ACTORS as f64,
            requested.prompt_bytes as f64 / ACTORS as f64,
        );
    }
    settle(&mut app, &mut minds);
    clear_cooldowns(&mut app);
    let memories = app.world().resource::<HistoryStore>().clone();
    settle_heap();

    // Every timed frame's wall time, main-thread time, and time before, in and after
    // `LoomSystems::Think`.
    let mut timed: Vec<[Duration; 5]> = Vec::new();
    let mut group = c.benchmark_group("actors");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.bench_function(name, |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let (took, requested) = start_turn(&mut app, false);
                assert_eq!(
                    requested.decisions, ACTORS,
                    "the frame submits every decision"
                );
                total += match turns {
                    Turns::Default => took.wall,
                    Turns::OneCore => took.main_thread,
                };
                timed.push([
                    took.wall,
                    took.main_thread,
                    requested.before_think,
                    requested.think,
                    requested.after_think,
                ]);
                settle(&mut app, &mut minds);
                clear_cooldowns(&mut app);
                *app.world_mut().resource_mut::<HistoryStore>() = memories.clone();
                turn += 1;
                match between {
                    Between::Nothing => {}
                    Between::Renamed => {
                        rename_first_items(app.world_mut(), &first_items, 0..PLACES, turn);
                    }
                    Between::OnePlaceRenamed => {
                        let place = turn % PLACES;
                        let time = turn / PLACES + 1;
                        rename_first_items(app.world_mut(), &first_items, place..place + 1, time);
                    }
                }
                settle_heap();
            }
            total
        });
    });
    group.finish();
    if !timed.is_empty() && print_figures() {
        let cores = std::thread::available_parallelism().map_or(0, usize::from);
        let frames = timed.len();
        // Mean and median of each part: a frame the scheduler interrupts (the bridge's
        // thread and other programs share the cores) moves the mean, not the median.
        let part = |i: usize| -> (f64, f64) {
            let mut times: Vec<Duration> = timed.iter().map(|frame| frame[i]).collect();
            times.sort_unstable();
            let mean = times.iter().sum::<Duration>() / frames as u32;
            (millis(mean), millis(times[frames / 2]))
        };
        let [wall, main_thread, before, think, after] = [0, 1, 2, 3, 4].map(part);
        let executor = match turns {
            Turns::Default => "default executor",
            Turns::OneCore => "every system on the main thread",
        };
        println!(
            "actors/{name}: over {frames} timed frames ({cores} cores, {executor}), mean / \
             median: a frame took {:.2} / {:.2} ms of wall time and {:.2} / {:.2} ms of the \
             main thread's CPU time (target: ≤ 5 ms); {:.2} / {:.2} ms before \
             LoomSystems::Think, {:.2} / {:.2} ms in it ({:.2} / {:.2} µs an actor), {:.2} / \
             {:.2} ms after it\n",
            wall.0,
            wall.1,
            main_thread.0,
            main_thread.1,
            before.0,
            before.1,
            think.0,
            think.1,
            think.0 * 1e3 / ACTORS as f64,
            think.1 * 1e3 / ACTORS as f64,
            after.0,
            after.1,
        );
    }
}

criterion_group!(benches, print_prompt_figures, turn_1000_smart_actors);
criterion_main!(benches);
