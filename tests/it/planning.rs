//! Plans carried out in the tavern: the game starts a task, each step comes out as an
//! `ActionRequest` naming its plan step, the game's `ActionReport` moves the plan on,
//! and the plan ends completed or failed with its reason.

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_loom::actors::SpawnedScene;
use bevy_loom::prelude::*;

use crate::support::{FixedBackend, tavern_app};

/// What the test game does: carry out plan requests (or refuse one action), and log
/// every planning message.
#[derive(Resource, Default)]
struct Game {
    /// An action id the game refuses, with the reason.
    refuse: Option<(&'static str, &'static str)>,
    /// Whether the game ignores requests (never reports).
    silent: bool,
    requests: Vec<ActionRequest>,
    started: Vec<PlanStarted>,
    issued: Vec<PlanStepIssued>,
    completed: Vec<PlanCompleted>,
    failed: Vec<PlanFailed>,
}

/// The tavern's rules for the actions its plans take, enough for these tests.
fn carry_out(
    mut requests: MessageReader<ActionRequest>,
    mut reports: MessageWriter<ActionReport>,
    mut game: ResMut<Game>,
    mut commands: Commands,
) {
    for request in requests.read().filter(|r| r.plan.is_some()) {
        game.requests.push(request.clone());
        if game.silent {
            continue;
        }
        let verb = request.action_id.rsplit(':').next().unwrap_or_default();
        let mut report = ActionReport::new(request.actor, verb).for_step(request.plan.clone());
        if let Some((refused, reason)) = game.refuse
            && refused == &*request.action_id
        {
            reports.write(report.failed(reason));
            continue;
        }
        match (&*request.action_id, request.targets.as_slice()) {
            ("items:pick_up", [item]) => {
                commands
                    .entity(*item)
                    .remove::<InPlace>()
                    .insert(CarriedBy(request.actor));
                report = report.object(*item);
            }
            ("items:give", [item, recipient]) => {
                commands.entity(*item).insert(CarriedBy(*recipient));
                report = report.object(*item).indirect_object(*recipient);
            }
            (_, [target, ..]) => report = report.object(*target),
            _ => {}
        }
        reports.write(report);
    }
}

fn record(
    mut game: ResMut<Game>,
    mut started: MessageReader<PlanStarted>,
    mut issued: MessageReader<PlanStepIssued>,
    mut completed: MessageReader<PlanCompleted>,
    mut failed: MessageReader<PlanFailed>,
) {
    game.started.extend(started.read().cloned());
    game.issued.extend(issued.read().cloned());
    game.completed.extend(completed.read().cloned());
    game.failed.extend(failed.read().cloned());
}

/// The tavern on the offline backend with the test game's rules, and its entities.
fn tavern() -> (App, SpawnedScene) {
    tavern_with(BackendChoice::Offline { seed: 1 })
}

/// The tavern with the test game's rules, its smart actors answered by `backend`.
fn tavern_with(backend: BackendChoice) -> (App, SpawnedScene) {
    let (mut app, scene) = tavern_app(backend);
    app.init_resource::<Game>().add_systems(
        Update,
        (
            carry_out
                .after(LoomSystems::Decide)
                .before(LoomSystems::Narrate),
            record.after(LoomSystems::Remember),
        ),
    );
    (app, scene)
}

#[test]
fn a_plan_for_an_entity_that_is_not_there_is_no_panic() {
    let (mut app, scene) = tavern();
    // An entity the world never spawned, as a game's stale or made-up handle is.
    let nobody = Entity::from_raw_u32(50_000).expect("a valid index");
    let start = StartPlan::new(nobody, "tavern:serve_drink")
        .entity("customer", scene.entities["player"])
        .entity("drink", scene.entities["ale"])
        .entity("bar", scene.entities["bar"]);
    app.world_mut().write_message(start);
    app.update();
    app.update();
    let game = app.world().resource::<Game>();
    assert!(game.started.is_empty());
    assert_eq!(game.failed.len(), 1, "the start is answered, as a failure");
    assert_eq!(game.failed[0].actor, nobody);
    assert!(
        game.failed[0].reason.contains("not in the world"),
        "{}",
        game.failed[0].reason
    );
}

/// The scene's entities a game system spawning a barmaid needs.
#[derive(Resource, Clone, Copy)]
struct Tavern {
    room: Entity,
    player: Entity,
    ale: Entity,
    bar: Entity,
    marta: Entity,
}

impl Tavern {
    /// `actor` serving the Traveler `drink` from the bar.
    fn serve(&self, actor: Entity, drink: Entity) -> StartPlan {
        StartPlan::new(actor, "tavern:serve_drink")
            .entity("customer", self.player)
            .entity("drink", drink)
            .entity("bar", self.bar)
    }
}

/// A game system that, once, spawns a barmaid and has her serve the Traveler: her
/// spawn is a command, not applied when the start is read.
fn spawn_a_barmaid(
    tavern: Res<Tavern>,
    mut commands: Commands,
    mut starts: MessageWriter<StartPlan>,
    mut done: Local<bool>,
) {
    if std::mem::replace(&mut *done, true) {
        return;
    }
    let nell = commands
        .spawn((Character, DisplayName("Nell".into()), InPlace(tavern.room)))
        .id();
    starts.write(tavern.serve(nell, tavern.ale));
}

/// An actor spawned in the same system that starts its plan is there a frame later:
/// the start waits for it rather than failing.
/// The tavern with `system` of the game's running before plans start, its commands
/// applied at the end of the frame (after plans started), three frames on.
fn tavern_run_with<M>(
    system: impl IntoScheduleConfigs<bevy::ecs::system::ScheduleSystem, M>,
) -> App {
    let (mut app, scene) = tavern();
    let tavern = Tavern {
        room: scene.entities["common_room"],
        player: scene.entities["player"],
        ale: scene.entities["ale"],
        bar: scene.entities["bar"],
        marta: scene.entities["marta"],
    };
    app.edit_schedule(Update, |schedule| {
        schedule.set_build_settings(bevy::ecs::schedule::ScheduleBuildSettings {
            auto_insert_apply_deferred: false,
            ..default()
        });
    });
    app.insert_resource(tavern)
        .add_systems(Update, system.before(LoomSystems::Decide));
    for _ in 0..3 {
        app.update();
    }
    app
}

#[test]
fn a_plan_for_an_actor_spawned_with_it_waits_for_the_spawn() {
    let app = tavern_run_with(spawn_a_barmaid);
    let game = app.world().resource::<Game>();
    assert_eq!(game.failed, [], "not refused");
    assert_eq!(game.started.len(), 1, "started once she is there");
    let nell = game.started[0].actor;
    assert_eq!(
        app.world().get::<DisplayName>(nell).map(|n| n.0.as_str()),
        Some("Nell")
    );
    assert!(
        game.requests.first().is_some_and(|r| r.actor == nell),
        "her first step: {:?}",
        game.requests
    );
}

/// What a game system writes, once, about Marta: a stop, a start naming a mug of mead
/// it spawns by a command, then a start naming the ale.
fn stop_then_serve_mead_then_ale(
    tavern: Res<Tavern>,
    mut commands: Commands,
    mut writes: (MessageWriter<StopPlan>, MessageWriter<StartPlan>),
    mut done: Local<bool>,
) {
    if std::mem::replace(&mut *done, true) {
        return;
    }
    let mead = commands
        .spawn((
            DisplayName("mug of mead".into()),
            Tags::new(["drink", "portable"]),
            InPlace(tavern.room),
        ))
        .id();
    writes.0.write(StopPlan {
        actor: tavern.marta,
        reason: "the game changed its mind".to_owned(),
    });
    writes.1.write(tavern.serve(tavern.marta, mead));
    writes.1.write(tavern.serve(tavern.marta, tavern.ale));
}

/// A start held for a spawn keeps its place: a stop written before it does not call
/// it off a frame later, and a later start for the same actor still replaces it.
#[test]
fn a_start_held_for_a_spawn_keeps_its_place_among_stops_and_starts() {
    let app = tavern_run_with(stop_then_serve_mead_then_ale);
    let game = app.world().resource::<Game>();
    let reasons: Vec<&str> = game.failed.iter().map(|f| f.reason.as_str()).collect();
    assert_eq!(reasons, ["replaced by a new plan: `tavern:serve_drink`"]);
    assert_eq!(game.started.len(), 2, "the mead's, then the ale's");
    let commands = commands(game);
    assert_eq!(
        commands.first(),
        Some(&"pick up mug of ale"),
        "{commands:?}"
    );
    assert!(!commands.contains(&"pick up mug of mead"), "{commands:?}");
}

/// A parameter naming an entity that is not there fails the start at once, naming
/// it: no step is handed out first.
#[test]
fn a_plan_for_a_customer_who_is_not_there_fails_at_once() {
    let (mut app, scene) = tavern();
    let gone = app.world_mut().spawn(DisplayName("ghost".into())).id();
    app.world_mut().despawn(gone);
    let start = StartPlan::new(scene.entities["marta"], "tavern:serve_drink")
        .entity("customer", gone)
        .entity("drink", scene.entities["ale"])
        .entity("bar", scene.entities["bar"]);
    app.world_mut().write_message(start);
    app.update();
    app.update();
    let game = app.world().resource::<Game>();
    assert!(game.started.is_empty(), "{:#?}", game.started);
    assert!(game.issued.is_empty(), "no step: {:#?}", game.issued);
    assert_eq!(game.failed.len(), 1);
    let reason = &game.failed[0].reason;
    assert!(
        reason.contains("`customer`") && reason.contains("not in the world"),
        "{reason}"
    );
}

/// The repository's content, still loading, and the game recording what plans do.
fn loading_app() -> App {
    let mut app = bevy_loom::testing::HeadlessApp::new(crate::support::repo_assets())
        .llm(LlmPlugin {
            backend: BackendChoice::Offline { seed: 1 },
            ..default()
        })
        .build();
    app.init_resource::<Game>()
        .add_systems(Update, record.after(LoomSystems::Remember));
    app
}

#[test]
fn a_plan_started_before_content_loaded_starts_once_it_has() {
    let mut app = loading_app();
    // A game's Startup system gives its guard a patrol, before anything loaded.
    let guard = app.world_mut().spawn(DisplayName("guard".into())).id();
    app.world_mut()
        .write_message(StartPlan::new(guard, "tavern:serve_drink"));
    crate::support::wait_for_content(&mut app);
    for _ in 0..3 {
        app.update();
    }
    let game = app.world().resource::<Game>();
    assert_eq!(
        game.failed.len(),
        1,
        "the start is answered: {:#?}",
        game.failed
    );
    assert!(
        game.failed[0].reason.contains("customer"),
        "read against the content loaded: {}",
        game.failed[0].reason
    );
}

#[test]
fn a_plan_stopped_before_content_loaded_never_starts() {
    let mut app = loading_app();
    // A game gives the guard a patrol and the cook one, then, a frame later, calls
    // off the guard's and gives the cook another: all before anything loaded.
    let guard = app.world_mut().spawn(DisplayName("guard".into())).id();
    let cook = app.world_mut().spawn(DisplayName("cook".into())).id();
    app.world_mut()
        .write_message(StartPlan::new(guard, "tavern:serve_drink"));
    app.world_mut()
        .write_message(StartPlan::new(cook, "tavern:serve_drink"));
    app.update();
    assert_eq!(
        app.world().resource::<ContentRegistry>().generation(),
        0,
        "nothing loaded in the first frame"
    );
    app.world_mut().write_message(StopPlan {
        actor: guard,
        reason: "the alarm was called off".into(),
    });
    app.world_mut()
        .write_message(StartPlan::new(cook, "tavern:no_such_task"));
    crate::support::wait_for_content(&mut app);
    for _ in 0..3 {
        app.update();
    }
    let game = app.world().resource::<Game>();
    let failed: Vec<(Entity, &str)> = (game.failed.iter())
        .map(|failed| (failed.actor, failed.reason.as_str()))
        .collect();
    assert_eq!(failed.len(), 3, "every start is answered once: {failed:#?}");
    assert_eq!(
        failed[0],
        (guard, "the alarm was called off"),
        "the guard's start ends as the stop says, and is never read against content"
    );
    assert!(
        failed.iter().skip(1).all(|(actor, _)| *actor == cook),
        "the cook's starts are not stopped: {failed:#?}"
    );
    assert!(game.started.is_empty());
}

/// Marta serves the Traveler the mug of ale.
fn serve(app: &mut App, scene: &SpawnedScene) {
    let start = StartPlan::new(scene.entities["marta"], "tavern:serve_drink")
        .entity("customer", scene.entities["player"])
        .entity("drink", scene.entities["ale"])
        .entity("bar", scene.entities["bar"]);
    app.world_mut().write_message(start);
}

/// The tavern with Marta serving the Traveler, her first step handed to a game that
/// never reports on it.
fn serving_unanswered() -> (App, Entity) {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    app.world_mut().resource_mut::<Game>().silent = true;
    serve(&mut app, &scene);
    app.update();
    (app, marta)
}

#[test]
fn only_a_report_of_the_step_out_is_its_outcome() {
    let (mut app, marta) = serving_unanswered();
    let step = |app: &App| {
        app.world()
            .get::<Plan>(marta)
            .and_then(|p| p.awaiting().cloned())
    };
    let out = step(&app).expect("her first step is out");
    // She rents the player a room in a conversation meanwhile, and the game reports it;
    // then a report naming a step of another plan.
    let mut other = out.clone();
    other.number += 1;
    for report in [
        ActionReport::new(marta, "rent_room").failed("no_rooms"),
        ActionReport::new(marta, "take").for_step(Some(other)),
    ] {
        app.world_mut().write_message(report);
        app.update();
        app.update();
    }
    assert_eq!(app.world().resource::<Game>().failed, []);
    assert_eq!(step(&app).as_ref(), Some(&out), "still out");
    // The step's own report, by its verb or naming it, is its outcome.
    app.world_mut()
        .write_message(ActionReport::new(marta, "take").failed("not_here"));
    run(&mut app, 3);
    let game = app.world().resource::<Game>();
    assert_eq!(game.failed.len(), 1, "{:#?}", game.failed);
    assert_eq!(game.failed[0].reason, "not_here");
}

#[test]
fn a_report_naming_the_step_is_its_outcome_before_one_with_its_verb_alone() {
    let (mut app, marta) = serving_unanswered();
    let out = (app.world().get::<Plan>(marta))
        .and_then(|plan| plan.awaiting().cloned())
        .expect("her first step is out");
    // In one frame: another "take" of hers (no step named), refused, then the step's
    // own report, carried out.
    app.world_mut()
        .write_message(ActionReport::new(marta, "take").failed("not_here"));
    app.world_mut()
        .write_message(ActionReport::new(marta, "take").for_step(Some(out.clone())));
    app.update();
    app.update();
    let game = app.world().resource::<Game>();
    assert_eq!(game.failed, [], "the step was carried out");
    let now = app
        .world()
        .get::<Plan>(marta)
        .and_then(|plan| plan.awaiting().cloned());
    assert_ne!(now.as_ref(), Some(&out), "and the plan went on");
}

#[test]
fn a_late_report_of_a_replaced_plan_is_not_the_new_plan_s() {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    app.world_mut().resource_mut::<Game>().silent = true;
    serve(&mut app, &scene);
    app.update();
    let old = app.world().resource::<Game>().issued[0].step.clone();
    serve(&mut app, &scene);
    app.update();
    app.update();
    let game = app.world().resource::<Game>();
    let new = game
        .issued
        .last()
        .expect("the new plan's step")
        .step
        .clone();
    assert_eq!(
        (&*new.step, new.number),
        (&*old.step, old.number),
        "the same step"
    );
    // The game finishes the first plan's request late, and reports it refused.
    let late = ActionReport::new(marta, "take")
        .failed("not_here")
        .for_step(Some(old));
    app.world_mut().write_message(late);
    for _ in 0..3 {
        app.update();
    }
    let game = app.world().resource::<Game>();
    assert_eq!(
        game.failed.len(),
        1,
        "only the replaced plan: {:#?}",
        game.failed
    );
    let out = app
        .world()
        .get::<Plan>(marta)
        .and_then(|plan| plan.awaiting().cloned());
    assert_eq!(out, Some(new), "the new plan's step is still out");
}

#[test]
fn a_plan_started_over_a_running_one_ends_it_first() {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    app.world_mut().resource_mut::<Game>().silent = true;
    serve(&mut app, &scene);
    app.update();
    // Started again while her first step is out, and twice in one frame.
    serve(&mut app, &scene);
    serve(&mut app, &scene);
    app.update();
    let game = app.world().resource::<Game>();
    let failed = &game.failed;
    assert_eq!(game.started.len(), 3);
    assert_eq!(
        failed.len(),
        2,
        "each plan replaced ends, as failed: {failed:#?}"
    );
    assert!(failed.iter().all(|f| f.actor == marta), "{failed:#?}");
    assert!(
        failed.iter().all(|f| f.reason.contains("replaced")),
        "{failed:#?}"
    );
    let step = |f: &PlanFailed| f.step.as_ref().map(|(_, step)| step.clone());
    let out = game.issued[0].step.step.to_string();
    assert_eq!(step(&failed[0]), Some(out), "the step out");
    assert_eq!(step(&failed[1]), None, "none was out yet");
    assert!(app.world().get::<Plan>(marta).is_some(), "the newest runs");
}

/// A task the model chose, read in the frame the game put a plan on its actor (the
/// answer came as the plan was put on), does not replace the game's plan: it fails,
/// saying so, and the game's plan runs.
#[test]
fn a_task_the_model_chose_does_not_replace_the_plan_the_game_put_on() {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    app.world_mut().resource_mut::<Game>().silent = true;
    serve(&mut app, &scene);
    let mut chosen = StartPlan::new(marta, "tavern:serve_drink")
        .entity("customer", scene.entities["silas"])
        .entity("drink", scene.entities["ale"])
        .entity("bar", scene.entities["bar"]);
    chosen.chosen_by = PlanOrigin::Model;
    app.world_mut().write_message(chosen.clone());
    app.update();
    // And once the game's plan runs.
    app.world_mut().write_message(chosen);
    app.update();
    let game = app.world().resource::<Game>();
    assert_eq!(game.started.len(), 1, "{:#?}", game.failed);
    let failed = &game.failed;
    assert_eq!(failed.len(), 2, "{failed:#?}");
    for failed in failed {
        assert_eq!(failed.chosen_by, PlanOrigin::Model);
        assert!(failed.reason.contains("does not replace"), "{failed:#?}");
    }
    let plan = app
        .world()
        .get::<Plan>(marta)
        .expect("the game's plan runs");
    assert_eq!(plan.chosen_by(), PlanOrigin::Game);
}

/// Updates until a plan ended, at most `frames` times.
fn run(app: &mut App, frames: usize) {
    for _ in 0..frames {
        app.update();
        let game = app.world().resource::<Game>();
        if !game.completed.is_empty() || !game.failed.is_empty() {
            return;
        }
    }
}

fn commands(game: &Game) -> Vec<&str> {
    game.requests.iter().map(|r| r.command.as_str()).collect()
}

#[test]
fn a_plan_hands_out_its_steps_one_report_at_a_time_and_completes() {
    let (mut app, scene) = tavern();
    serve(&mut app, &scene);
    run(&mut app, 20);
    let game = app.world().resource::<Game>();
    assert_eq!(game.failed, [], "the plan does not fail");
    assert_eq!(game.started.len(), 1);
    assert_eq!(game.started[0].method_id, "tavern:serve_by_hand");
    assert_eq!(
        commands(game),
        [
            "pick up mug of ale",
            "get close to Traveler",
            "give mug of ale to Traveler"
        ]
    );
    let numbers: Vec<usize> = game
        .requests
        .iter()
        .filter_map(|r| r.plan.as_ref().map(|p| p.number))
        .collect();
    assert_eq!(numbers, [1, 2, 3], "each request names its plan step");
    assert_eq!(
        game.requests[0].plan.as_ref().map(|p| &*p.step),
        Some("/steps/1/thenSteps/0")
    );
    assert_eq!(game.completed.len(), 1);
    assert_eq!(game.completed[0].actions, 3);
    let ale = scene.entities["ale"];
    let carried = app.world().get::<CarriedBy>(ale).map(|c| c.0);
    assert_eq!(
        carried,
        Some(scene.entities["player"]),
        "the game carried it out"
    );
    assert!(
        app.world().get::<Plan>(scene.entities["marta"]).is_none(),
        "the plan is removed"
    );
}

#[test]
fn a_conditional_step_reads_the_world_when_it_is_reached() {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    app.world_mut()
        .entity_mut(scene.entities["ale"])
        .remove::<InPlace>()
        .insert(CarriedBy(marta));
    serve(&mut app, &scene);
    run(&mut app, 20);
    let game = app.world().resource::<Game>();
    assert_eq!(
        commands(game),
        ["get close to Traveler", "give mug of ale to Traveler"],
        "she already carries the mug: no pick-up"
    );
    assert_eq!(game.completed.len(), 1);
}

/// She carries a mug of ale of her own: the one the Traveler is served is still the
/// one on the bar, and she picks it up. A condition tells entities apart by `id`, not
/// by a name two of them share.
#[test]
fn a_namesake_carried_is_not_the_drink_served() {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    let own = app
        .world_mut()
        .spawn((DisplayName("mug of ale".into()), CarriedBy(marta)))
        .id();
    serve(&mut app, &scene);
    run(&mut app, 20);
    let game = app.world().resource::<Game>();
    assert_eq!(game.failed, [], "the plan does not fail");
    assert_eq!(
        commands(game),
        [
            "pick up mug of ale",
            "get close to Traveler",
            "give mug of ale to Traveler"
        ]
    );
    let given = &game.requests[2].targets[0];
    assert_eq!(*given, scene.entities["ale"], "the drink asked for");
    assert_eq!(app.world().get::<CarriedBy>(own).map(|c| c.0), Some(marta));
}

/// A step refused inside a conditional step names itself, not the conditional: the
/// step the game refused, as a stop while it is out names it.
#[test]
fn a_step_refused_in_a_branch_is_the_step_that_failed() {
    let (mut app, scene) = tavern();
    app.world_mut().resource_mut::<Game>().refuse = Some(("items:pick_up", "her hands are full"));
    serve(&mut app, &scene);
    run(&mut app, 20);
    let game = app.world().resource::<Game>();
    assert_eq!(game.failed.len(), 1, "{:#?}", game.failed);
    assert_eq!(
        game.failed[0].step,
        Some((
            "tavern:serve_by_hand".to_owned(),
            "/steps/1/thenSteps/0".to_owned()
        ))
    );
}

#[test]
fn a_step_the_game_refuses_fails_the_plan_with_its_reason_and_step() {
    let (mut app, scene) = tavern();
    app.world_mut().resource_mut::<Game>().refuse = Some(("positioning:get_close", "blocked"));
    serve(&mut app, &scene);
    run(&mut app, 20);
    let game = app.world().resource::<Game>();
    assert_eq!(game.completed, []);
    assert_eq!(game.failed.len(), 1);
    let failed = &game.failed[0];
    assert_eq!(failed.reason, "blocked");
    assert_eq!(
        failed.step,
        Some(("tavern:serve_by_hand".to_owned(), "/steps/2".to_owned()))
    );
    assert_eq!(failed.chosen_by, PlanOrigin::Game);
    assert!(app.world().get::<Plan>(scene.entities["marta"]).is_none());
}

#[test]
fn a_target_despawned_mid_plan_fails_the_step_that_needs_it() {
    let (mut app, scene) = tavern();
    serve(&mut app, &scene);
    // The first frame issues the pick-up; the Traveler then leaves the world.
    app.update();
    assert_eq!(app.world().resource::<Game>().issued.len(), 1);
    app.world_mut().despawn(scene.entities["player"]);
    run(&mut app, 20);
    let game = app.world().resource::<Game>();
    assert_eq!(game.failed.len(), 1, "{:?}", game.issued);
    assert_eq!(game.failed[0].reason, "`customer` is gone");
}

#[test]
fn despawning_the_actor_ends_its_plan() {
    let (mut app, scene) = tavern();
    serve(&mut app, &scene);
    app.update();
    app.world_mut().despawn(scene.entities["marta"]);
    run(&mut app, 5);
    let game = app.world().resource::<Game>();
    assert_eq!(game.issued.len(), 1, "no step after the actor is gone");
    assert_eq!((game.completed.len(), game.failed.len()), (0, 0));
}

#[test]
fn a_step_the_game_never_reports_on_times_out() {
    let (mut app, scene) = tavern();
    // Each frame advances the game's clock by 100 ms, whatever the machine's speed.
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
        100,
    )));
    app.world_mut()
        .resource_mut::<PlanningSettings>()
        .step_timeout = Duration::from_secs(1);
    app.world_mut().resource_mut::<Game>().silent = true;
    serve(&mut app, &scene);
    run(&mut app, 5);
    assert_eq!(app.world().resource::<Game>().failed, [], "not yet");
    run(&mut app, 20);
    let game = app.world().resource::<Game>();
    assert_eq!(game.issued.len(), 1, "the step is not handed out again");
    assert_eq!(game.failed.len(), 1);
    assert!(
        game.failed[0].reason.contains("did not report on the step"),
        "{}",
        game.failed[0].reason
    );
}

#[test]
fn a_task_that_is_not_loaded_or_misses_a_parameter_fails_at_once() {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    app.world_mut()
        .write_message(StartPlan::new(marta, "tavern:juggle"));
    app.world_mut().write_message(
        StartPlan::new(marta, "tavern:serve_drink").entity("customer", scene.entities["player"]),
    );
    app.update();
    let game = app.world().resource::<Game>();
    let reasons: Vec<&str> = game.failed.iter().map(|f| f.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "task `tavern:juggle` is not loaded",
            "`tavern:serve_drink` needs an entity for its parameter `drink`"
        ]
    );
    assert!(game.issued.is_empty());
}

#[test]
fn plans_that_move_by_turns_take_one_step_a_turn() {
    let (mut app, scene) = tavern();
    app.world_mut().resource_mut::<PlanningSettings>().cadence = PlanCadence::EveryTurn;
    serve(&mut app, &scene);
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(
        app.world().resource::<Game>().issued.len(),
        0,
        "no turn ended yet"
    );
    for turn in 1..=2 {
        app.world_mut().write_message(TurnEnded);
        app.update();
        app.update();
        assert_eq!(app.world().resource::<Game>().issued.len(), turn);
    }
}

/// A game whose turns start by the smart actors' real-time cadence, with no
/// `TurnEnded`: plans that move by turns step on those turns too.
#[test]
fn plans_that_move_by_turns_step_on_the_actors_real_time_cadence() {
    let (mut app, scene) = tavern();
    app.world_mut().resource_mut::<PlanningSettings>().cadence = PlanCadence::EveryTurn;
    app.world_mut().resource_mut::<SmartActorSettings>().cadence = Some(Duration::from_secs(2));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
        500,
    )));
    serve(&mut app, &scene);
    let turn = |app: &App| app.world().resource::<TurnClock>().turn;
    crate::support::update_until(&mut app, "two cadence turns", |app| turn(app) >= 2);
    app.update();
    assert_eq!(turn(&app), 2);
    assert_eq!(
        app.world().resource::<Game>().issued.len(),
        2,
        "a step each turn"
    );
}

/// By turns, a plan started in a later frame of a turn takes its first step in that
/// turn, as one started in the frame the turn began does: which frame a smart actor's
/// answer came in does not decide when its plan starts acting. Its next step waits for
/// the next turn, though the first was reported at once.
#[test]
fn a_plan_started_during_a_turn_takes_its_first_step_in_it() {
    let (mut app, scene) = tavern();
    app.world_mut().resource_mut::<PlanningSettings>().cadence = PlanCadence::EveryTurn;
    let issued = |app: &App| app.world().resource::<Game>().issued.len();
    app.world_mut().write_message(TurnEnded);
    app.update();
    app.update();
    serve(&mut app, &scene);
    app.update();
    assert_eq!(
        issued(&app),
        1,
        "the first step, in the turn the plan started in"
    );
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(issued(&app), 1, "one step a turn");
    app.world_mut().write_message(TurnEnded);
    app.update();
    assert_eq!(issued(&app), 2, "the next turn's");
}

#[test]
fn a_plan_ends_in_the_frame_its_last_step_is_reported() {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    app.world_mut().resource_mut::<PlanningSettings>().cadence = PlanCadence::EveryTurn;
    serve(&mut app, &scene);
    // A step a turn, each reported in the frame it is handed out.
    for _ in 0..3 {
        crate::support::run_turn(&mut app);
    }
    let game = app.world().resource::<Game>();
    assert_eq!(game.issued.len(), 3, "every step was handed out");
    assert_eq!(game.failed, [], "the plan does not fail");
    assert_eq!(
        game.completed.len(),
        1,
        "the last report ends the plan: it does not wait for another turn"
    );
    assert!(app.world().get::<Plan>(marta).is_none());
    assert!(app.world().get::<FollowingPlan>(marta).is_none());
    // The game starts another plan: the first one, done, is not ended as replaced.
    serve(&mut app, &scene);
    app.update();
    app.update();
    let game = app.world().resource::<Game>();
    assert_eq!(game.failed, [], "a completed plan is not replaced");
    assert_eq!(game.started.len(), 2);
}

#[test]
fn a_step_tells_its_place_in_the_method_as_loaded_now() {
    let (mut app, scene) = tavern();
    app.world_mut().resource_mut::<Game>().silent = true;
    serve(&mut app, &scene);
    app.update();
    let first = app.world().resource::<Game>().requests[0].clone();
    let step = first.plan.clone().expect("a plan step");
    assert_eq!(step.progress.1, 4, "serve_by_hand has 4 steps");
    // The method's file is edited while the plan runs: a step more at its end.
    let mut methods =
        (app.world_mut()).resource_mut::<Assets<bevy_loom::content::RefinementMethod>>();
    let (_, method) = (methods.iter_mut())
        .find(|(_, method)| method.refinement_method_id == "tavern:serve_by_hand")
        .expect("the method loaded");
    let last = method.steps.last().cloned().expect("a step");
    method.steps.push(last);
    crate::support::update_until(&mut app, "the edit to load", |app| {
        let registry = app.world().resource::<ContentRegistry>();
        registry
            .method("tavern:serve_by_hand")
            .map(|m| m.steps.len())
            == Some(5)
    });
    let report = ActionReport::new(first.actor, "pick_up").for_step(first.plan.clone());
    app.world_mut().write_message(report);
    update_until_requested(&mut app, 2);
    let second = app.world().resource::<Game>().requests[1].clone();
    assert_eq!(
        second.plan.map(|step| step.progress.1),
        Some(5),
        "step {} of the 5 the method has now",
        second.command
    );
}

/// Updates until the game was asked for `count` plan steps.
fn update_until_requested(app: &mut App, count: usize) {
    crate::support::update_until(app, "the next plan step", |app| {
        app.world().resource::<Game>().requests.len() >= count
    });
}

/// Who was asked to decide in a turn.
fn asked(log: &crate::support::TurnLog) -> Vec<Entity> {
    log.prompts.iter().map(|p| p.actor).collect()
}

/// The prompt `actor` was asked to decide with in a turn, and its last message.
fn prompt_of(log: &crate::support::TurnLog, actor: Entity) -> (&DecisionRequested, &str) {
    let prompt = (log.prompts.iter())
        .find(|p| p.actor == actor)
        .expect("the actor was asked");
    let last = prompt.messages.last().map_or("", |m| &*m.content);
    (prompt, last)
}

#[test]
fn an_actor_following_a_plan_is_not_asked_to_decide_until_the_plan_ends() {
    let (mut app, marta) = serving_unanswered();
    assert!(app.world().get::<FollowingPlan>(marta).is_some());
    let turn = crate::support::run_turn(&mut app);
    assert_eq!(asked(&turn).len(), 2, "Silas and Brom think");
    assert!(!asked(&turn).contains(&marta), "the plan decides for Marta");

    // The game refuses her step: the plan fails, and she decides again.
    app.world_mut()
        .write_message(ActionReport::new(marta, "take").failed("not_here"));
    run(&mut app, 5);
    assert_eq!(app.world().resource::<Game>().failed.len(), 1);
    assert!(app.world().get::<FollowingPlan>(marta).is_none());
    let turn = crate::support::run_turn(&mut app);
    assert!(asked(&turn).contains(&marta));
    let (_, user) = prompt_of(&turn, marta);
    assert!(
        user.contains("Your plan \"Serve a drink\" failed: not_here."),
        "her next prompt says how the plan ended:\n{user}"
    );
}

#[test]
fn a_plan_ending_leaves_the_game_s_own_hold_on_an_actor() {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    // The game holds Marta's decisions itself (a cutscene), and gives her a plan.
    app.world_mut().entity_mut(marta).insert(FollowingPlan);
    serve(&mut app, &scene);
    run(&mut app, 20);
    assert_eq!(app.world().resource::<Game>().completed.len(), 1);
    assert!(app.world().get::<Plan>(marta).is_none());
    assert!(
        app.world().get::<FollowingPlan>(marta).is_some(),
        "the game's hold outlives the plan"
    );
}

#[test]
fn a_hold_the_game_took_back_mid_plan_goes_with_the_plan_that_replaced_it() {
    let (mut app, scene) = tavern();
    let marta = scene.entities["marta"];
    app.world_mut().resource_mut::<Game>().silent = true;
    // The game holds Marta (a cutscene) as a plan starts, and lets go while it runs.
    app.world_mut().entity_mut(marta).insert(FollowingPlan);
    serve(&mut app, &scene);
    app.update();
    app.world_mut().entity_mut(marta).remove::<FollowingPlan>();
    // Another plan takes its place: it holds her again, and so lets go as it ends.
    serve(&mut app, &scene);
    app.update();
    assert!(app.world().get::<FollowingPlan>(marta).is_some());
    app.world_mut().write_message(StopPlan {
        actor: marta,
        reason: "the inn is closing".to_owned(),
    });
    app.update();
    app.update();
    assert!(app.world().get::<Plan>(marta).is_none());
    assert!(
        app.world().get::<FollowingPlan>(marta).is_none(),
        "no hold is left that nobody holds"
    );
}

#[test]
fn a_fight_interrupts_a_plan_for_the_decision() {
    let (mut app, marta) = serving_unanswered();
    app.world_mut().entity_mut(marta).insert(InCombat);
    let turn = crate::support::run_turn(&mut app);
    assert!(asked(&turn).contains(&marta), "in combat she is asked");
    let game = app.world().resource::<Game>();
    let reasons: Vec<&str> = game.failed.iter().map(|f| f.reason.as_str()).collect();
    assert_eq!(reasons, ["a fight broke out"], "the fight stops her plan");
    assert_eq!(
        game.failed[0].step,
        Some((
            "tavern:serve_by_hand".to_owned(),
            "/steps/1/thenSteps/0".to_owned()
        )),
        "the step it was on"
    );
    assert!(app.world().get::<Plan>(marta).is_none());
    assert!(app.world().get::<FollowingPlan>(marta).is_none());
}

#[test]
fn the_game_stops_a_plan_with_its_reason() {
    let (mut app, marta) = serving_unanswered();
    let stop = StopPlan {
        actor: marta,
        reason: "the inn is closing".to_owned(),
    };
    // Twice in one frame (the game's own stop, and a fight's): it ends once.
    app.world_mut().write_message(stop.clone());
    app.world_mut().write_message(StopPlan {
        reason: "a fight broke out".to_owned(),
        ..stop
    });
    run(&mut app, 5);
    let game = app.world().resource::<Game>();
    assert_eq!(game.failed.len(), 1);
    assert_eq!(game.failed[0].reason, "the inn is closing");
    assert_eq!(game.failed[0].chosen_by, PlanOrigin::Game);
    assert_eq!(game.issued.len(), 1, "no step after it stopped");
    assert!(app.world().get::<Plan>(marta).is_none());
}

#[test]
fn a_plan_the_game_starts_takes_the_place_of_the_decision_the_actor_is_queued_for() {
    let (mut app, scene) = tavern();
    app.world_mut().resource_mut::<Game>().silent = true;
    let marta = scene.entities["marta"];
    let thinkers = |app: &mut App, n: usize| {
        app.world_mut()
            .resource_mut::<SmartActorSettings>()
            .max_new_thinkers_per_frame = n;
    };
    // Nobody is sent yet: the turn leaves every actor queued.
    thinkers(&mut app, 0);
    app.world_mut().write_message(TurnEnded);
    app.update();
    let queued = |app: &App| {
        let mind = app.world().get::<ActorMind>(marta).expect("a mind");
        matches!(mind.state(), bevy_loom::actors::ThinkState::Queued { .. })
    };
    assert!(queued(&app));
    serve(&mut app, &scene);
    app.update();
    app.update();
    assert!(!queued(&app), "withdrawn");
    thinkers(&mut app, 8);
    for _ in 0..5 {
        app.update();
    }
    let log = app.world().resource::<crate::support::TurnLog>();
    let asked: Vec<Entity> = log.prompts.iter().map(|p| p.actor).collect();
    assert_eq!(asked.len(), 2, "Silas and Brom are asked");
    assert!(!asked.contains(&marta), "the plan decides for Marta");
}

#[test]
fn a_plan_the_game_starts_takes_the_place_of_the_decision_the_actor_waits_on() {
    let first_action = |_: &str| r#"{"action": 1}"#.to_owned();
    let (backend, gate) = crate::support::GatedBackend::choice(first_action);
    let (mut app, scene) = tavern_with(backend);
    app.world_mut().resource_mut::<Game>().silent = true;
    let marta = scene.entities["marta"];
    app.world_mut().write_message(TurnEnded);
    app.update();
    let thinking = |app: &App| {
        app.world()
            .get::<ActorMind>(marta)
            .is_some_and(ActorMind::is_thinking)
    };
    assert!(thinking(&app), "she waits on the model");
    serve(&mut app, &scene);
    app.update();
    assert_eq!(app.world().resource::<Game>().started.len(), 1);
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    crate::support::update_until(&mut app, "the others' answers", |app| {
        let log = app.world().resource::<crate::support::TurnLog>();
        log.requests.iter().filter(|r| r.plan.is_none()).count() >= 2
    });
    for _ in 0..5 {
        app.update();
    }
    let log = app.world().resource::<crate::support::TurnLog>();
    let hers: Vec<_> = (log.requests.iter())
        .filter(|r| r.actor == marta && r.plan.is_none())
        .collect();
    assert!(hers.is_empty(), "the plan decides for her: {hers:?}");
    assert!(!thinking(&app), "and she is not left waiting");
    assert!(app.world().get::<Plan>(marta).is_some(), "her plan goes on");
    assert_eq!(
        app.world().resource::<Game>().requests.len(),
        1,
        "its first step"
    );
}

/// A model that fails the first prompt telling of a finished plan (and that prompt
/// each time it is sent), and otherwise lets the moment pass.
#[derive(Default)]
struct FailsOnceToldOfAPlan(std::sync::Mutex<Option<String>>);

impl bevy_loom::llm::LlmBackend for FailsOnceToldOfAPlan {
    fn describe(&self) -> String {
        "fails once told of a plan".to_owned()
    }

    fn complete(
        &self,
        request: &bevy_loom::llm::LlmRequest,
        _deltas: bevy_loom::llm::DeltaSink,
    ) -> bevy_loom::llm::LlmFuture {
        let user = request.messages.last().map_or("", |m| &*m.content);
        let mut failing = self.0.lock().expect("the failing prompt");
        if failing.is_none() && user.contains("Your plan \"Serve a drink\" is done.") {
            *failing = Some(user.to_owned());
        }
        if failing.as_deref() == Some(user) {
            let broke_off = "the answer broke off".to_owned();
            return Box::pin(async { Err(bevy_loom::llm::LlmError::InvalidResponse(broke_off)) });
        }
        Box::pin(async { Ok(bevy_loom::llm::LlmReply::text(r#"{"do": 0}"#)) })
    }
}

#[test]
fn how_a_plan_ended_is_told_again_when_the_prompt_telling_it_got_no_answer() {
    let backend = BackendChoice::Custom(std::sync::Arc::new(FailsOnceToldOfAPlan::default()));
    let (mut app, scene) = tavern_with(backend);
    let marta = scene.entities["marta"];
    serve(&mut app, &scene);
    run(&mut app, 20);
    assert_eq!(app.world().resource::<Game>().completed.len(), 1);
    let note = "Your plan \"Serve a drink\" is done.";
    let first = crate::support::run_turn(&mut app);
    assert!(prompt_of(&first, marta).1.contains(note), "told");
    assert!(
        (first.rejected.iter()).any(|r| r.actor == marta),
        "and got no answer"
    );
    app.world_mut()
        .get_mut::<ActorMind>(marta)
        .expect("a mind")
        .end_cooldown();
    let second = crate::support::run_turn(&mut app);
    let (_, user) = prompt_of(&second, marta);
    assert!(user.contains(note), "told again:\n{user}");
}

/// A model that takes on serving the Traveler whenever it is offered, by the index the
/// prompt gives the task, and otherwise names a task that was never offered.
struct ServesTheTraveler;

impl bevy_loom::llm::LlmBackend for ServesTheTraveler {
    fn describe(&self) -> String {
        "serves the Traveler".to_owned()
    }

    fn complete(
        &self,
        request: &bevy_loom::llm::LlmRequest,
        _deltas: bevy_loom::llm::DeltaSink,
    ) -> bevy_loom::llm::LlmFuture {
        let user = request.messages.last().map_or("", |m| &*m.content);
        let index = user
            .lines()
            .find(|line| line.contains("Command: \"serve Traveler mug of ale from long bar\""))
            .and_then(|line| line.strip_prefix("[Index: "))
            .and_then(|rest| rest.split(']').next())
            .map_or(99, |n| n.parse::<usize>().expect("an index"));
        let text =
            format!(r#"{{"type": "TASK", "task": {index}, "speech": "Coming up, dearie."}}"#);
        Box::pin(async move { Ok(bevy_loom::llm::LlmReply::text(text)) })
    }
}

#[test]
fn a_task_named_by_its_command_is_taken_on() {
    let answer = r#"{"do": "serve Traveler mug of ale from long bar", "say": "Coming up."}"#;
    let (mut app, scene) = tavern_with(FixedBackend::choice(answer));
    let marta = scene.entities["marta"];
    let turn = crate::support::run_turn(&mut app);
    assert!(
        !turn.rejected.iter().any(|r| r.actor == marta),
        "{:#?}",
        turn.rejected
    );
    assert!(
        (turn.spoke.iter()).any(|s| s.actor == marta && s.text == "Coming up."),
        "{:#?}",
        turn.spoke
    );
    let started = &app.world().resource::<Game>().started;
    assert!(
        started
            .iter()
            .any(|s| s.actor == marta && s.task_id == "tavern:serve_drink"),
        "{started:#?}"
    );
}

#[test]
fn a_task_the_model_chooses_is_carried_out_as_a_plan_and_ends_in_its_next_prompt() {
    let backend = BackendChoice::Custom(std::sync::Arc::new(ServesTheTraveler));
    let (mut app, scene) = tavern_with(backend);
    let (marta, player, ale) = (
        scene.entities["marta"],
        scene.entities["player"],
        scene.entities["ale"],
    );
    let turn = crate::support::run_turn(&mut app);
    let (prompt, _) = prompt_of(&turn, marta);
    let serve = prompt
        .tasks
        .iter()
        .find(|task| task.command == "serve Traveler mug of ale from long bar")
        .expect("the task is offered");
    assert_eq!(
        serve.targets,
        [player, ale, scene.entities["bar"]],
        "customer, drink, bar"
    );
    assert!(
        (turn.spoke.iter()).any(|s| s.actor == marta && s.text == "Coming up, dearie."),
        "she says her line as she sets about it"
    );
    // Silas and Brom were offered no task: naming one is refused, saying so.
    assert_eq!(turn.rejected.len(), 2, "{:#?}", turn.rejected);
    for rejected in &turn.rejected {
        assert_eq!(
            rejected.reason.to_string(),
            "task 99 was not offered: no task was offered, so answer with an offered action's Index"
        );
    }
    run(&mut app, 20);
    let game = app.world().resource::<Game>();
    assert_eq!(game.started.len(), 1, "{:?}", game.failed);
    assert_eq!(game.started[0].task_id, "tavern:serve_drink");
    assert_eq!(game.completed.len(), 1, "{:?}", game.failed);
    assert_eq!(game.completed[0].chosen_by, PlanOrigin::Model);
    assert_eq!(game.completed[0].task_id, "tavern:serve_drink");
    assert_eq!(
        app.world().get::<CarriedBy>(ale).map(|c| c.0),
        Some(player),
        "the game carried out every step"
    );
    let next = crate::support::run_turn(&mut app);
    let (prompt, user) = prompt_of(&next, marta);
    assert!(
        user.contains("Your plan \"Serve a drink\" is done."),
        "her next prompt says how the plan ended:\n{user}"
    );
    let commands: Vec<&str> = prompt.tasks.iter().map(|task| task.command).collect();
    assert!(
        !commands.iter().any(|c| c.contains("mug of ale"))
            && commands.iter().any(|c| c.contains("mug of stout")),
        "the ale is served, the stout still to serve: {commands:?}"
    );
}
