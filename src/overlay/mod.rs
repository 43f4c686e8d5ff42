//! What the debug overlay shows, built headless: for each smart actor, what it was
//! asked (the prompt's sections and their tokens, and how much of the last prompt it
//! reused), what it answered (as the answer streams in), what came of it (the action
//! or ability chosen, a line said, a pass, or the rejection and why) and how long it
//! took; for the whole game, the model's traffic and the content errors.
//!
//! **Layer:** a feature, beside actors and narration: it reads their messages and
//! the bridge's, and changes nothing. [`DebugLog`] keeps the latest of each actor,
//! recorded by [`DebugLogPlugin`]; [`actor_view`] and [`global_view`] turn it into
//! lines to draw, plain functions that any UI (or a test) can call.

use std::time::Duration;

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use crate::actors::{
    ActorPassed, ActorSpoke, DecisionRejected, DecisionRequested, PendingDecision, ThinkState,
};
use crate::content::ContentError;
use crate::llm::{LlmDelta, LlmResponse, LlmStats, RequestId};
use crate::prompt::PromptSection;
use crate::world::{AbilityInvoked, ActionRequest, InputValue, LoomSystems};

/// The most characters of an answer kept for an actor: enough to read what went
/// wrong, bounded so a rambling model cannot grow the log.
const MAX_ANSWER_CHARS: usize = 2000;

/// The most content errors kept, the latest.
const MAX_ERRORS: usize = 50;

/// Records what each smart actor was asked, answered and did, into [`DebugLog`]. It
/// registers the messages it reads, so it works beside any of the plugins that write
/// them.
#[derive(Debug, Clone, Copy, Default)]
pub struct DebugLogPlugin;

impl Plugin for DebugLogPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<DecisionRequested>()
            .add_message::<LlmDelta>()
            .add_message::<LlmResponse>()
            .add_message::<ActionRequest>()
            .add_message::<AbilityInvoked>()
            .add_message::<ActorSpoke>()
            .add_message::<ActorPassed>()
            .add_message::<DecisionRejected>()
            .add_message::<ContentError>()
            .init_resource::<DebugLog>()
            .add_systems(Update, record.after(LoomSystems::Decide));
    }
}

/// The latest of each smart actor, and the content errors since the game started.
#[derive(Resource, Debug, Default)]
pub struct DebugLog {
    /// By actor.
    pub actors: HashMap<Entity, ActorRecord>,
    /// Which actor each request in flight is for.
    requests: HashMap<RequestId, Entity>,
    /// The latest content errors, oldest first.
    pub errors: Vec<ContentError>,
}

/// An actor's latest decision, as far as it has gone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActorRecord {
    /// The prompt's sections and their tokens (the server's, once it reported some).
    pub sections: Vec<PromptSection>,
    /// The share of the prompt that was the last one's, unchanged.
    pub reused_prefix: f32,
    /// The answer, as much as has arrived; or why there was none.
    pub answer: String,
    /// What came of it, once decided.
    pub verdict: Option<Verdict>,
    /// From the request to its answer.
    pub latency: Option<Duration>,
    /// From the request to the first piece of a streamed answer.
    pub first_token: Option<Duration>,
}

/// What came of a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// An action was chosen: its command.
    Acted(String),
    /// An ability was invoked: its id and inputs.
    Invoked(String),
    /// A line was said (a reply, a question, or words without an action).
    Spoke(String),
    /// The actor let the moment pass.
    Passed,
    /// The answer was rejected: why.
    Rejected(String),
}

/// The messages [`record`] reads.
#[derive(bevy::ecs::system::SystemParam)]
struct Heard<'w, 's> {
    requested: MessageReader<'w, 's, DecisionRequested>,
    deltas: MessageReader<'w, 's, LlmDelta>,
    responses: MessageReader<'w, 's, LlmResponse>,
    actions: MessageReader<'w, 's, ActionRequest>,
    invoked: MessageReader<'w, 's, AbilityInvoked>,
    spoke: MessageReader<'w, 's, ActorSpoke>,
    passed: MessageReader<'w, 's, ActorPassed>,
    rejected: MessageReader<'w, 's, DecisionRejected>,
    errors: MessageReader<'w, 's, ContentError>,
}

/// Notes this frame's messages in the log.
fn record(mut log: ResMut<DebugLog>, mut heard: Heard) {
    let log = &mut *log;
    for asked in heard.requested.read() {
        log.requests.insert(asked.request, asked.actor);
        log.actors.insert(
            asked.actor,
            ActorRecord {
                sections: asked.sections.clone(),
                reused_prefix: asked.reused_prefix,
                ..ActorRecord::default()
            },
        );
    }
    for delta in heard.deltas.read() {
        if let Some(record) = log.record_of(delta.id) {
            push_bounded(&mut record.answer, &delta.text);
        }
    }
    for response in heard.responses.read() {
        let Some(actor) = log.requests.remove(&response.id) else {
            continue;
        };
        let Some(record) = log.actors.get_mut(&actor) else {
            continue;
        };
        record.answer.clear();
        match &response.result {
            Ok(reply) => push_bounded(&mut record.answer, &reply.text),
            Err(error) => push_bounded(&mut record.answer, &format!("(no answer: {error})")),
        }
        (record.latency, record.first_token) = (Some(response.latency), response.first_token);
    }
    // A plan's steps are not decisions: only requests that carry out none are verdicts.
    for action in heard.actions.read().filter(|action| action.plan.is_none()) {
        log.decided(action.actor, Verdict::Acted(action.command.clone()));
    }
    for invoked in heard.invoked.read() {
        log.decided(invoked.actor, Verdict::Invoked(invocation(invoked)));
    }
    for line in heard.spoke.read() {
        // Words said with an action or an ability go with it.
        let record = log.actors.entry(line.actor).or_default();
        if record.verdict.is_none() {
            record.verdict = Some(Verdict::Spoke(line.text.clone()));
        }
    }
    for pass in heard.passed.read() {
        log.decided(pass.actor, Verdict::Passed);
    }
    for rejection in heard.rejected.read() {
        log.decided(
            rejection.actor,
            Verdict::Rejected(rejection.reason.to_string()),
        );
    }
    log.errors.extend(heard.errors.read().cloned());
    let over = log.errors.len().saturating_sub(MAX_ERRORS);
    log.errors.drain(..over);
}

impl DebugLog {
    /// The record of the actor a request in flight is for.
    fn record_of(&mut self, request: RequestId) -> Option<&mut ActorRecord> {
        let actor = self.requests.get(&request)?;
        self.actors.get_mut(actor)
    }

    /// Notes what came of `actor`'s decision.
    fn decided(&mut self, actor: Entity, verdict: Verdict) {
        self.actors.entry(actor).or_default().verdict = Some(verdict);
    }
}

/// Appends `text` to `answer`, up to [`MAX_ANSWER_CHARS`] in all.
fn push_bounded(answer: &mut String, text: &str) {
    let room = MAX_ANSWER_CHARS.saturating_sub(answer.chars().count());
    answer.extend(text.chars().take(room));
}

/// An invocation as the overlay shows it: `tavern:rent_room (nights 2, guest 12v0)`.
fn invocation(invoked: &AbilityInvoked) -> String {
    let inputs: Vec<String> = (invoked.inputs.iter())
        .map(|(name, value)| {
            let value = match value {
                InputValue::Entity(entity) => entity.to_string(),
                InputValue::Integer(number) => number.to_string(),
                InputValue::Number(number) => number.to_string(),
                InputValue::Text(text) | InputValue::Choice(text) => format!("\"{text}\""),
            };
            format!("{name} {value}")
        })
        .collect();
    if inputs.is_empty() {
        invoked.ability.clone()
    } else {
        format!("{} ({})", invoked.ability, inputs.join(", "))
    }
}

/// Where an actor is in a plan: its task's command, and the step (k of n).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanProgress {
    /// The task as it started: "serve Traveler mug of stout from long bar".
    pub command: String,
    /// The step it is on, and how many its method has.
    pub step: (usize, usize),
}

/// What the overlay shows of one actor: a title and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorView {
    /// Its name.
    pub title: String,
    /// One line for each thing known: state, prompt, answer, verdict, timing.
    pub lines: Vec<String>,
}

/// The view of the actor called `name`, in `state`, following `plan` if it is, with
/// its latest `record`.
pub fn actor_view(
    name: &str,
    state: &ThinkState,
    plan: Option<&PlanProgress>,
    record: Option<&ActorRecord>,
) -> ActorView {
    let mut lines = vec![format!("State: {}", state_line(state, plan))];
    if let Some(record) = record {
        if !record.sections.is_empty() {
            let total: usize = record.sections.iter().map(|s| s.tokens).sum();
            let parts: Vec<String> = (record.sections.iter())
                .map(|section| format!("{} {}", section.name, section.tokens))
                .collect();
            lines.push(format!(
                "Prompt: {total} tokens, {:.0}% reused ({})",
                record.reused_prefix * 100.0,
                parts.join(", ")
            ));
        }
        if !record.answer.is_empty() {
            lines.push(format!("Answer: {}", record.answer));
        }
        lines.push(match &record.verdict {
            Some(Verdict::Acted(command)) => format!("Verdict: acts: {command}"),
            Some(Verdict::Invoked(ability)) => format!("Verdict: invokes {ability}"),
            Some(Verdict::Spoke(text)) => format!("Verdict: says \"{text}\""),
            Some(Verdict::Passed) => "Verdict: lets the moment pass".to_owned(),
            Some(Verdict::Rejected(reason)) => format!("Verdict: rejected: {reason}"),
            None => "Verdict: not yet".to_owned(),
        });
        if let Some(latency) = record.latency {
            let first = (record.first_token)
                .map(|first| format!(", first token {:.2} s", first.as_secs_f32()))
                .unwrap_or_default();
            lines.push(format!("Latency: {:.2} s{first}", latency.as_secs_f32()));
        }
    }
    ActorView {
        title: name.to_owned(),
        lines,
    }
}

/// An actor's state in words.
fn state_line(state: &ThinkState, plan: Option<&PlanProgress>) -> String {
    let thinking = match state {
        ThinkState::Idle => "idle",
        ThinkState::Queued { .. } => "queued to think",
        ThinkState::Waiting(PendingDecision { .. }) => "waiting on the model",
        ThinkState::CoolingDown { .. } => "cooling down",
    };
    match plan {
        Some(plan) => format!(
            "{thinking}; running a plan: {}, step {} of {}",
            plan.command, plan.step.0, plan.step.1
        ),
        None => thinking.to_owned(),
    }
}

/// What the overlay shows of the whole game: the model server (`backend`, as the
/// bridge describes it, which never holds a credential), its traffic, and the content
/// errors, each with its file.
pub fn global_view(backend: &str, stats: &LlmStats, errors: &[ContentError]) -> Vec<String> {
    let seconds = |duration: Option<Duration>| {
        duration.map_or("-".to_owned(), |d| format!("{:.2} s", d.as_secs_f32()))
    };
    let mut lines = vec![
        format!("Model: {backend}"),
        format!(
            "Requests: {} queued, {} running, {} completed, {} failed, {} timed out, {} cancelled, {} retries",
            stats.queued,
            stats.in_flight,
            stats.completed,
            stats.failed,
            stats.timed_out,
            stats.cancelled,
            stats.retries
        ),
        format!(
            "Latency p50 {} / p95 {}; first token p50 {} / p95 {}; tokens {} in, {} out",
            seconds(stats.latency_p50()),
            seconds(stats.latency_p95()),
            seconds(stats.first_token_p50()),
            seconds(stats.first_token_p95()),
            stats.tokens_in,
            stats.tokens_out
        ),
    ];
    lines.push(format!("Content errors: {}", errors.len()));
    lines.extend(errors.iter().map(ToString::to_string));
    lines
}

#[cfg(test)]
mod tests;
