//! What the debug overlay shows, built headless: for each smart actor, what it was
//! asked (the prompt's sections and their tokens, and how much of the last prompt it
//! reused), what it answered (as the answer streams in), what came of it (the action
//! or ability chosen, a line said, a pass, or the rejection and why) and how long it
//! took; for the whole game, the model's traffic and the content errors.
//!
//! **Layer:** a feature, beside actors and narration: it reads their messages and
//! the bridge's, and changes nothing. [`DebugLog`] keeps the latest of each actor,
//! recorded by [`DebugLogPlugin`]; [`overlay_view`] turns it and a snapshot of the
//! game into lines to draw, a plain function that any UI (or a test) can call. With
//! the `overlay` feature, `LoomDebugOverlayPlugin` draws them with `bevy_ui`, on top
//! of the game, toggled with F12.

use std::time::Duration;

use bevy::ecs::entity::Entities;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use smallvec::SmallVec;

use crate::actors::memory::StoreInstance;
use crate::actors::{
    ActorHesitated, ActorPassed, ActorSpoke, DecisionRejected, DecisionRequested, HistoryStore,
    SmartActor,
};
use crate::content::ContentError;
use crate::llm::{LlmDelta, LlmResponse, RequestId};
use crate::prompt::PromptSection;
use crate::world::{
    AbilityInvoked, ActionRequest, ForgetGone, InputValue, LoomSystems, PlanOrigin, StartPlan,
};

#[cfg(feature = "overlay")]
mod ui;
mod view;

#[cfg(feature = "overlay")]
pub use ui::{DebugOverlay, LoomDebugOverlayPlugin};
pub use view::{
    ActorRow, ActorSnapshot, ActorView, OverlaySnapshot, OverlayView, PlanProgress, actor_view,
    drawable, global_view, next_actor, overlay_view,
};

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
            .add_message::<StartPlan>()
            .add_message::<ActorHesitated>()
            .add_message::<ContentError>()
            .init_resource::<DebugLog>()
            .configure_sets(Update, DebugOverlaySystems.after(LoomSystems::Narrate))
            .add_systems(Update, record.in_set(DebugOverlaySystems));
    }
}

/// The debug overlay's systems, after [`LoomSystems::Narrate`]: recording the frame's
/// messages into [`DebugLog`], then, with the `overlay` feature, the keys and the
/// drawing.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DebugOverlaySystems;

/// The latest of each smart actor, and the content errors since the game started.
#[derive(Resource, Debug, Default)]
pub struct DebugLog {
    /// By actor.
    pub actors: HashMap<Entity, ActorRecord>,
    /// Which actor each request in flight is for.
    requests: HashMap<RequestId, Entity>,
    /// The latest content errors, oldest first.
    pub errors: Vec<ContentError>,
    /// How many content errors there were in all.
    pub errors_seen: usize,
    /// When the records and requests look for actors gone.
    forget_gone: ForgetGone,
    /// The memory store the records' memory ids are of: another one (a save loaded, a
    /// new game begun) numbers other memories alike.
    memories_from: Option<StoreInstance>,
}

/// An actor's latest decision, as far as it has gone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActorRecord {
    /// The request that asked for it: what arrives for an earlier request of the
    /// actor's (one a reply replaced) is not this decision's.
    pub request: Option<RequestId>,
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
    /// The ids of the memories recalled for the prompt, in the game's
    /// [`HistoryStore`]; none once another store replaced the one they were recalled
    /// from.
    pub memories: SmallVec<[u64; 8]>,
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
    /// The answer was rejected: why, and what was done instead, if anything.
    Rejected(String),
    /// A task was taken on: its id.
    TookOn(String),
    /// In combat, the answer chose no combat action.
    Hesitated,
    /// The actor stopped being a smart actor before its answer was used.
    Withdrawn,
}

/// The messages [`record`] reads, and the memory store they name memories of.
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
    started: MessageReader<'w, 's, StartPlan>,
    hesitated: MessageReader<'w, 's, ActorHesitated>,
    errors: MessageReader<'w, 's, ContentError>,
    departed: RemovedComponents<'w, 's, SmartActor>,
    /// Where the memories recalled now are.
    history: Option<Res<'w, HistoryStore>>,
}

/// Notes this frame's messages in the log, and forgets the actors gone once they
/// pile up.
fn record(mut log: ResMut<DebugLog>, mut heard: Heard, entities: &Entities) {
    let log = &mut *log;
    log.recall_from(heard.history.as_deref());
    for asked in heard.requested.read() {
        log.requests.insert(asked.request, asked.actor);
        log.actors.insert(
            asked.actor,
            ActorRecord {
                request: Some(asked.request),
                sections: asked.sections.clone(),
                reused_prefix: asked.reused_prefix,
                memories: asked.memories.clone(),
                ..ActorRecord::default()
            },
        );
    }
    for delta in heard.deltas.read() {
        if let Some(record) = log.record_of(delta.id) {
            push_bounded(&mut record.answer, &delta.text);
        }
    }
    let responses = heard.responses.read();
    let mut answered: Vec<Entity> = responses
        .filter_map(|answer| log.answered(answer))
        .collect();
    answered.sort_unstable();
    // What an actor's answer chose is requested in the frame the answer comes: a
    // request the game writes itself, or a plan's step, is no verdict.
    let decided = |action: &&ActionRequest| {
        action.plan.is_none() && answered.binary_search(&action.actor).is_ok()
    };
    for action in heard.actions.read().filter(decided) {
        log.decided(action.actor, Verdict::Acted(action.command.clone()));
    }
    for invoked in heard.invoked.read() {
        log.decided(invoked.actor, Verdict::Invoked(invocation(invoked)));
    }
    // The plans the game starts are not decisions.
    let chosen = |start: &&StartPlan| start.chosen_by == PlanOrigin::Model;
    for start in heard.started.read().filter(chosen) {
        log.decided(start.actor, Verdict::TookOn(start.task_id.clone()));
    }
    // Words said with an action, an ability or a task go with it; a reply's, with the
    // hesitation that came with it in combat.
    for line in heard.spoke.read() {
        log.decided_unless_known(line.actor, || Verdict::Spoke(line.text.clone()));
    }
    for hesitation in heard.hesitated.read() {
        log.decided_unless_known(hesitation.actor, || Verdict::Hesitated);
    }
    for pass in heard.passed.read() {
        log.decided(pass.actor, Verdict::Passed);
    }
    for rejection in heard.rejected.read() {
        let mut why = String::new();
        let instead = rejection.fallback.as_ref();
        let instead = instead.map_or(String::new(), |command| format!("; did instead: {command}"));
        // Bounded, what was done instead kept: a server's error can be a whole page.
        let room = MAX_ANSWER_CHARS.saturating_sub(instead.chars().count());
        why.extend(rejection.reason.to_string().chars().take(room));
        why.push_str(&instead);
        log.decided(rejection.actor, Verdict::Rejected(why));
    }
    // Its answer, if it comes, is not used: nothing else will say so.
    for actor in heard.departed.read() {
        if let Some(record) = log.actors.get_mut(&actor) {
            record.verdict.get_or_insert(Verdict::Withdrawn);
        }
    }
    let errors = heard.errors.read();
    log.errors_seen += errors.len();
    log.errors.extend(errors.cloned());
    let over = log.errors.len().saturating_sub(MAX_ERRORS);
    log.errors.drain(..over);
    log.forget_gone(|actor| entities.contains_spawned(actor));
}

impl DebugLog {
    /// Notes that memories are recalled from `history` now: those recalled from a store
    /// the game has replaced since are not the ones their ids name in it.
    fn recall_from(&mut self, history: Option<&HistoryStore>) {
        let store = history.map(HistoryStore::instance);
        if std::mem::replace(&mut self.memories_from, store) != store {
            self.actors
                .values_mut()
                .for_each(|record| record.memories.clear());
        }
    }

    /// The record of the decision a request in flight asked for: none once a newer
    /// request of its actor's replaced it.
    fn record_of(&mut self, request: RequestId) -> Option<&mut ActorRecord> {
        let actor = self.requests.get(&request)?;
        let record = self.actors.get_mut(actor)?;
        (record.request == Some(request)).then_some(record)
    }

    /// Forgets the records and requests of the actors `exists` says are gone, once
    /// they have piled up: a game whose actors come and go does not grow the log.
    fn forget_gone(&mut self, exists: impl Fn(Entity) -> bool) {
        if !(self.forget_gone).is_due(self.actors.len() + self.requests.len()) {
            return;
        }
        self.actors.retain(|&actor, _| exists(actor));
        self.requests.retain(|_, &mut actor| exists(actor));
        (self.forget_gone).looked(self.actors.len() + self.requests.len());
    }

    /// Notes the answer to a request in flight in the record of the decision it asked
    /// for, and gives that actor; none when a newer request of its actor's replaced it.
    fn answered(&mut self, response: &LlmResponse) -> Option<Entity> {
        let actor = self.requests.remove(&response.id)?;
        let record = self.actors.get_mut(&actor);
        let record = record.filter(|record| record.request == Some(response.id))?;
        record.answer.clear();
        match &response.result {
            Ok(reply) => push_bounded(&mut record.answer, &reply.text),
            Err(error) => push_bounded(&mut record.answer, &format!("(no answer: {error})")),
        }
        (record.latency, record.first_token) = (Some(response.latency), response.first_token);
        Some(actor)
    }

    /// Notes what came of `actor`'s decision.
    fn decided(&mut self, actor: Entity, verdict: Verdict) {
        self.actors.entry(actor).or_default().verdict = Some(verdict);
    }

    /// Notes what came of `actor`'s decision, unless something else did already.
    fn decided_unless_known(&mut self, actor: Entity, verdict: impl FnOnce() -> Verdict) {
        let record = self.actors.entry(actor).or_default();
        record.verdict.get_or_insert_with(verdict);
    }

    /// The latest content errors, and how many there were in all.
    pub fn content_errors(&self) -> (&[ContentError], usize) {
        (&self.errors, self.errors_seen)
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

#[cfg(test)]
mod tests;
