//! Warming up: a smart actor that appears sends its system message (rules, persona,
//! backstory, goals: what stays the same turn after turn) to the model server at
//! once, the way its decisions will, so the server has read and cached it before the
//! actor's first decision, which then reads only what is new.

use std::sync::Arc;

use bevy::prelude::*;

use super::turn::decision_limits;
use crate::actors::prompt_cache::PromptCache;
use crate::actors::{SmartActor, SmartActorSettings, ThinkQueue};
use crate::content::{ContentRegistry, PromptTemplate};
use crate::llm::{ChatMessage, LlmBridge, LlmRequest, Priority, SamplingOptions};

/// The request that warms a server up for an actor whose decisions go with `affinity`
/// and start with `system`: the system message alone, answered with one token (the
/// least every server takes), in the background.
pub(in crate::actors) fn warm_up_request(system: &ChatMessage, affinity: u64) -> LlmRequest {
    LlmRequest {
        messages: Arc::new(vec![system.clone()]),
        sampling: SamplingOptions {
            max_tokens: Some(1),
            ..SamplingOptions::default()
        },
        priority: Priority::Background,
        affinity: Some(affinity),
        offline: Some(Arc::new(String::new())),
        ..LlmRequest::default()
    }
}

/// Sends each smart actor that appeared (with the content loaded) its warm-up request,
/// when [`SmartActorSettings::warm_up`] is on. Its answer is of no use and nobody
/// reads it; it is out as the actor's, so it is cancelled if the actor goes first. An
/// actor whose spec is not loaded is left for its first decision to report.
pub(in crate::actors) fn warm_up_new_actors(
    settings: Res<SmartActorSettings>,
    registry: Res<ContentRegistry>,
    appeared: Query<(Entity, &SmartActor), Added<SmartActor>>,
    (mut bridge, mut queue): (ResMut<LlmBridge>, ResMut<ThinkQueue>),
    mut cache: ResMut<PromptCache>,
    builtin: Local<PromptTemplate>,
) {
    if !settings.warm_up || appeared.is_empty() {
        return;
    }
    cache.refresh(&registry, &settings);
    for (entity, actor) in &appeared {
        let Some(spec) = registry.actor(&actor.spec) else {
            continue;
        };
        let template = registry.prompt_for(spec).unwrap_or(&builtin);
        let limits = decision_limits(spec, &settings.limits);
        let system = cache.system(spec, template, &limits);
        let id = bridge.submit(warm_up_request(&system.message, entity.to_bits()));
        queue.pending.insert(id, entity);
    }
}
