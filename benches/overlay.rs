//! Debug overlay benchmarks, with 50 smart actors and 1,000 requests in flight; each
//! frame the log records a piece of a streamed answer for each actor, 50 answers
//! completed and 50 new prompts (so 1,000 stay in flight).
//!
//! - `overlay/view_model_50_actors_1000_in_flight`: that frame's recording, then the
//!   overlay's whole view ([`overlay_view`]: every actor's row, the picked actor's
//!   details, the model's traffic), as the overlay builds it each frame it shows.
//! - With `--features overlay`, `overlay/frame_hidden` and `overlay/frame_shown`: the
//!   same frame in an app with `LoomDebugOverlayPlugin` (headless, no rendering), the
//!   overlay hidden, then shown: the view built and the panel's texts and rows updated.
//!   What showing it adds is the difference. Target: ≤ 1 ms a frame.
//!
//! Run with `cargo bench --bench overlay [--features overlay]`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use bevy::prelude::*;
use bevy_loom::actors::{DecisionRequested, ThinkState};
use bevy_loom::llm::{LlmDelta, LlmReply, LlmResponse, LlmStats, RequestId};
use bevy_loom::overlay::{ActorSnapshot, DebugLog, DebugLogPlugin, OverlaySnapshot, overlay_view};
use bevy_loom::prelude::*;
use bevy_loom::prompt::PromptSection;
use criterion::{Criterion, criterion_group, criterion_main};

const ACTORS: u32 = 50;
const IN_FLIGHT: u64 = 1000;

fn asked(actor: Entity, request: u64) -> DecisionRequested {
    let section = |name, tokens| PromptSection { name, tokens };
    DecisionRequested {
        actor,
        request: RequestId(request),
        messages: Arc::default(),
        offered: OfferedActions::default(),
        tasks: OfferedActions::default(),
        abilities: Default::default(),
        sections: vec![
            section("rules", 130),
            section("character", 113),
            section("actions", 400),
            section("perception", 74),
            section("memories", 41),
        ],
        reused_prefix: 0.9,
        memories: Default::default(),
    }
}

/// Puts 1,000 requests in flight, spread over `actors`.
fn start_requests(app: &mut App, actors: &[Entity]) {
    for request in 0..IN_FLIGHT {
        let actor = actors[request as usize % actors.len()];
        app.world_mut().write_message(asked(actor, request));
    }
    app.update();
}

/// Writes one frame's traffic: for each actor a piece of an answer, an answer to the
/// oldest request in flight, and a new prompt. `frame` is the next request's id.
fn write_traffic(app: &mut App, actors: &[Entity], frame: &mut u64) {
    let world = app.world_mut();
    for &actor in actors {
        let oldest = *frame - IN_FLIGHT;
        world.write_message(LlmDelta {
            id: RequestId(*frame - 1),
            text: "{\"type\": \"COLOR\", ".to_owned(),
        });
        world.write_message(LlmResponse {
            id: RequestId(oldest),
            result: Ok(LlmReply::text("{\"type\": \"NONE\"}")),
            latency: Duration::from_millis(900),
            first_token: None,
            retries: 0,
        });
        world.write_message(asked(actor, *frame));
        *frame += 1;
    }
}

fn view_model(c: &mut Criterion) {
    let mut app = App::new();
    app.add_plugins(DebugLogPlugin);
    let actors: Vec<Entity> = (0..ACTORS)
        .map(|n| Entity::from_raw_u32(100 + n).expect("a valid index"))
        .collect();
    start_requests(&mut app, &actors);
    let stats = LlmStats::default();
    let names: Vec<String> = (0..ACTORS).map(|n| format!("Actor {n}")).collect();
    let idle = ThinkState::Idle;
    let mut frame = IN_FLIGHT;
    c.bench_function("overlay/view_model_50_actors_1000_in_flight", |b| {
        b.iter(|| {
            write_traffic(&mut app, &actors, &mut frame);
            app.update();
            let log = app.world().resource::<DebugLog>();
            let snapshots: Vec<ActorSnapshot<'_>> = (actors.iter().zip(&names))
                .map(|(&entity, name)| ActorSnapshot {
                    entity,
                    name,
                    state: &idle,
                    plan: None,
                })
                .collect();
            let view = overlay_view(&OverlaySnapshot {
                actors: &snapshots,
                selected: actors.get(7).copied(),
                backend: "offline",
                stats: &stats,
                endpoints: &[],
                log,
                history: None,
            });
            assert_eq!(view.rows.len(), ACTORS as usize);
            black_box(view)
        })
    });
}

#[cfg(feature = "overlay")]
fn drawn_frame(c: &mut Criterion) {
    use bevy_loom::overlay::{DebugOverlay, LoomDebugOverlayPlugin};
    use bevy_loom::world::DisplayName;

    let mut app = App::new();
    app.add_plugins((MinimalPlugins, LoomDebugOverlayPlugin::default()));
    let actors: Vec<Entity> = (0..ACTORS)
        .map(|n| {
            let actor = (
                SmartActor::new("tavern:marta"),
                DisplayName(format!("Actor {n}")),
            );
            app.world_mut().spawn(actor).id()
        })
        .collect();
    start_requests(&mut app, &actors);
    let mut frame = IN_FLIGHT;
    let mut group = c.benchmark_group("overlay");
    for (name, visible) in [("frame_hidden", false), ("frame_shown", true)] {
        app.world_mut().resource_mut::<DebugOverlay>().visible = visible;
        app.update();
        group.bench_function(name, |b| {
            b.iter(|| {
                write_traffic(&mut app, &actors, &mut frame);
                app.update();
            })
        });
        let mut rows = app.world_mut().query::<&Button>();
        let drawn = rows.iter(app.world()).count();
        assert_eq!(drawn, if visible { ACTORS as usize } else { 0 }, "{name}");
    }
    group.finish();
}

#[cfg(feature = "overlay")]
criterion_group!(benches, view_model, drawn_frame);
#[cfg(not(feature = "overlay"))]
criterion_group!(benches, view_model);
criterion_main!(benches);
