//! Debug overlay benchmarks.
//!
//! - `overlay/frame_50_actors_1000_in_flight`: what the overlay's data costs a frame
//!   with 50 smart actors shown and 1,000 requests in flight: the log recording one
//!   frame's messages (a piece of a streamed answer for each of the 50 actors, 50
//!   answers completed and 50 new prompts, so 1,000 stay in flight), then the view of every actor ([`actor_view`]) and of the whole game
//!   ([`global_view`]) built as a UI would draw them. Rendering is not included.
//!   Target: ≤ 1 ms a frame.
//!
//! Run with `cargo bench --bench overlay`.

use std::hint::black_box;
use std::sync::Arc;

use bevy::prelude::*;
use bevy_loom::actors::{DecisionRequested, ThinkState};
use bevy_loom::llm::{LlmDelta, LlmStats, RequestId};
use bevy_loom::overlay::{DebugLog, DebugLogPlugin, actor_view, global_view};
use bevy_loom::prelude::*;
use bevy_loom::prompt::PromptSection;
use criterion::{Criterion, criterion_group, criterion_main};

const ACTORS: u32 = 50;
const IN_FLIGHT: u64 = 1000;

fn app() -> App {
    let mut app = App::new();
    app.add_plugins(DebugLogPlugin);
    app
}

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
    }
}

fn frame_50_actors_1000_in_flight(c: &mut Criterion) {
    let mut app = app();
    let actors: Vec<Entity> = (0..ACTORS)
        .map(|n| Entity::from_raw_u32(100 + n).expect("a valid index"))
        .collect();
    // 1,000 requests in flight, spread over the actors.
    for request in 0..IN_FLIGHT {
        let actor = actors[request as usize % actors.len()];
        app.world_mut().write_message(asked(actor, request));
    }
    app.update();
    let stats = LlmStats::default();
    let mut frame = IN_FLIGHT;
    c.bench_function("overlay/frame_50_actors_1000_in_flight", |b| {
        b.iter(|| {
            for &actor in &actors {
                let world = app.world_mut();
                let oldest = frame - IN_FLIGHT;
                world.write_message(LlmDelta {
                    id: RequestId(frame - 1),
                    text: "{\"type\": \"COLOR\", ".to_owned(),
                });
                world.write_message(bevy_loom::llm::LlmResponse {
                    id: RequestId(oldest),
                    result: Ok(bevy_loom::llm::LlmReply::text("{\"type\": \"NONE\"}")),
                    latency: std::time::Duration::from_millis(900),
                    first_token: None,
                    retries: 0,
                });
                world.write_message(asked(actor, frame));
                frame += 1;
            }
            app.update();
            let log = app.world().resource::<DebugLog>();
            let views: Vec<_> = (actors.iter())
                .map(|actor| actor_view("Marta", &ThinkState::Idle, None, log.actors.get(actor)))
                .collect();
            let global = global_view("offline", &stats, &log.errors);
            black_box((views, global))
        })
    });
}

criterion_group!(benches, frame_50_actors_1000_in_flight);
criterion_main!(benches);
