//! What the overlay draws, as plain data built by plain functions: [`overlay_view`]
//! turns a snapshot of the game ([`OverlaySnapshot`]) into the lines of each panel, so
//! a test (or another UI) gets exactly what the overlay shows without a window.

use std::time::Duration;

use bevy::prelude::*;

use super::{ActorRecord, DebugLog, Verdict};
use crate::actors::{HistoryStore, PendingDecision, ThinkState};
use crate::content::ContentError;
use crate::llm::{BreakerState, EndpointHealth, LlmStats};

/// Where an actor is in a plan: its task's command, and the step (k of n).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanProgress {
    /// The task as it started: "serve Traveler mug of stout from long bar".
    pub command: String,
    /// The step it is on and how many its method has, while the game carries one out.
    pub step: Option<(usize, usize)>,
}

/// What the overlay shows of one actor: a title and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorView {
    /// Its name.
    pub title: String,
    /// One line for each thing known: state, prompt, answer, verdict, timing, memories.
    pub lines: Vec<String>,
}

/// One smart actor as the overlay reads it in a frame.
#[derive(Debug, Clone)]
pub struct ActorSnapshot<'a> {
    /// The actor.
    pub entity: Entity,
    /// Its name (`DisplayName`, or its spec's id without one).
    pub name: &'a str,
    /// Where its thinking is.
    pub state: &'a ThinkState,
    /// The plan it follows, if it does.
    pub plan: Option<PlanProgress>,
}

/// Everything the overlay shows, read from the game in one frame.
#[derive(Debug, Clone, Copy)]
pub struct OverlaySnapshot<'a> {
    /// The smart actors, in the order the list shows them.
    pub actors: &'a [ActorSnapshot<'a>],
    /// The actor picked (Tab, or a click); the first is shown without one.
    pub selected: Option<Entity>,
    /// The model server, as the bridge describes it.
    pub backend: &'a str,
    /// The model's traffic.
    pub stats: &'a LlmStats,
    /// Each endpoint's health.
    pub endpoints: &'a [EndpointHealth],
    /// What each actor was asked, answered and did, and the content errors.
    pub log: &'a DebugLog,
    /// Where recalled memories are read from, when the game keeps one.
    pub history: Option<&'a HistoryStore>,
}

/// What the overlay draws: the game's lines, one row per actor, and the picked actor's
/// details.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OverlayView {
    /// The model's traffic, each endpoint's health, the content errors.
    pub global: Vec<String>,
    /// One row per actor, in the snapshot's order.
    pub rows: Vec<ActorRow>,
    /// The picked actor's details.
    pub detail: Option<ActorView>,
}

/// A row of the overlay's actor list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorRow {
    /// The actor.
    pub entity: Entity,
    /// Its name and state: "Marta: waiting on the model".
    pub label: String,
    /// Whether it is the actor whose details are shown.
    pub selected: bool,
}

/// The overlay's view of `snapshot`.
pub fn overlay_view(snapshot: &OverlaySnapshot<'_>) -> OverlayView {
    let OverlaySnapshot {
        actors,
        selected,
        backend,
        stats,
        endpoints,
        log,
        history,
    } = *snapshot;
    let shown = shown_actor(actors, selected);
    let rows = (actors.iter())
        .map(|actor| ActorRow {
            entity: actor.entity,
            label: format!(
                "{}: {}",
                actor.name,
                state_line(actor.state, actor.plan.as_ref())
            ),
            selected: Some(actor.entity) == shown,
        })
        .collect();
    let detail = (actors.iter())
        .find(|actor| Some(actor.entity) == shown)
        .map(|actor| {
            let record = log.actors.get(&actor.entity);
            let ids = record.map_or(&[][..], |record| &record.memories[..]);
            let memories: Vec<&str> = (ids.iter())
                .filter_map(|&id| history?.get(id))
                .map(|memory| memory.text.as_str())
                .collect();
            let plan = actor.plan.as_ref();
            actor_view(actor.name, actor.state, plan, record, &memories)
        });
    OverlayView {
        global: global_view(backend, stats, endpoints, log.content_errors()),
        rows,
        detail,
    }
}

/// The actor whose details show: the one picked while it is listed, else the first.
fn shown_actor(actors: &[ActorSnapshot<'_>], selected: Option<Entity>) -> Option<Entity> {
    let listed = |entity: &Entity| actors.iter().any(|actor| actor.entity == *entity);
    (selected.filter(listed)).or_else(|| actors.first().map(|actor| actor.entity))
}

/// The actor after `selected` in `actors` (before it, going `back`), around the list's
/// ends; the first (or last) when none is picked or the one picked is gone.
pub fn next_actor(actors: &[Entity], selected: Option<Entity>, back: bool) -> Option<Entity> {
    let count = actors.len();
    if count == 0 {
        return None;
    }
    let at = selected.and_then(|selected| actors.iter().position(|&a| a == selected));
    let next = match (at, back) {
        (Some(at), false) => (at + 1) % count,
        (Some(at), true) => (at + count - 1) % count,
        (None, false) => 0,
        (None, true) => count - 1,
    };
    Some(actors[next])
}

/// The view of the actor called `name`, in `state`, following `plan` if it is, with
/// its latest `record` and the `memories` it recalled for it.
pub fn actor_view(
    name: &str,
    state: &ThinkState,
    plan: Option<&PlanProgress>,
    record: Option<&ActorRecord>,
    memories: &[&str],
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
            Some(Verdict::TookOn(task)) => format!("Verdict: takes on {task}"),
            Some(Verdict::Hesitated) => "Verdict: hesitates".to_owned(),
            Some(Verdict::Withdrawn) => {
                "Verdict: none: it stopped being a smart actor before its answer was used"
                    .to_owned()
            }
            None => "Verdict: not yet".to_owned(),
        });
        if let Some(latency) = record.latency {
            let first = (record.first_token)
                .map(|first| format!(", first token {:.2} s", first.as_secs_f32()))
                .unwrap_or_default();
            lines.push(format!("Latency: {:.2} s{first}", latency.as_secs_f32()));
        }
    }
    if !memories.is_empty() {
        lines.push(format!("Recalled {} memories:", memories.len()));
        lines.extend(memories.iter().map(|memory| format!("- {memory}")));
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
        Some(PlanProgress {
            command,
            step: Some((step, of)),
        }) => format!("{thinking}; running a plan: {command}, step {step} of {of}"),
        Some(PlanProgress {
            command,
            step: None,
        }) => format!("{thinking}; running a plan: {command}"),
        None => thinking.to_owned(),
    }
}

/// What the overlay shows of the whole game: the model server (`backend`, as the
/// bridge describes it, which never holds a credential), its traffic, each endpoint's
/// health, and the content errors (the latest kept, each with its file, and how many
/// there were in all).
pub fn global_view(
    backend: &str,
    stats: &LlmStats,
    endpoints: &[EndpointHealth],
    (errors, in_all): (&[ContentError], usize),
) -> Vec<String> {
    let seconds = |duration: Option<Duration>| {
        duration.map_or("-".to_owned(), |d| format!("{:.2} s", d.as_secs_f32()))
    };
    let rate = (stats.tokens_per_second()).map_or("-".to_owned(), |rate| format!("{rate:.1}"));
    let mut lines = vec![
        format!("Model: {backend}"),
        format!(
            "Requests: {} queued, {} running, {} completed, {} failed, {} timed out, {} too slow to send, {} cancelled, {} retries",
            stats.queued,
            stats.in_flight,
            stats.completed,
            stats.failed,
            stats.timed_out,
            stats.too_slow,
            stats.cancelled,
            stats.retries
        ),
        format!(
            "Latency p50 {} / p95 {}; first token p50 {} / p95 {}",
            seconds(stats.latency_p50()),
            seconds(stats.latency_p95()),
            seconds(stats.first_token_p50()),
            seconds(stats.first_token_p95()),
        ),
        format!(
            "Tokens: {} in, {} out, {rate} per second",
            stats.tokens_in, stats.tokens_out
        ),
    ];
    for (n, endpoint) in endpoints.iter().enumerate() {
        let breaker = match endpoint.breaker {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::Probing => "probing",
        };
        let loading = if endpoint.loading {
            ", loading its model"
        } else {
            ""
        };
        let failure = (endpoint.last_failure.as_deref())
            .map(|why| format!("; last failure: {why}"))
            .unwrap_or_default();
        let speed = match (
            endpoint.prompt_tokens_per_second,
            endpoint.answer_tokens_per_second,
        ) {
            (Some(reading), Some(writing)) => {
                format!("; reads {reading:.0} and writes {writing:.1} tokens/s")
            }
            _ => String::new(),
        };
        lines.push(format!(
            "Endpoint {}: breaker {breaker}{loading}{speed}{failure}",
            n + 1
        ));
    }
    lines.push(if in_all > errors.len() {
        format!("Content errors: {in_all} (the latest {})", errors.len())
    } else {
        format!("Content errors: {}", errors.len())
    });
    lines.extend(errors.iter().map(ToString::to_string));
    lines
}

/// `text` as a line of the overlay shows it: without the characters a player may not
/// show either (control characters, the marks that reorder text, which a model's
/// answer may hold), and with the typographic punctuation Bevy's default font has no
/// glyph for (dashes, ellipses, curly quotes) written in ASCII, so it never shows as
/// boxes.
pub fn drawable(text: String) -> String {
    let text = crate::world::into_printable(text);
    const PLAIN: [(char, &str); 7] = [
        ('\u{2014}', "-"),
        ('\u{2013}', "-"),
        ('\u{2026}', "..."),
        ('\u{201c}', "\""),
        ('\u{201d}', "\""),
        ('\u{2018}', "'"),
        ('\u{2019}', "'"),
    ];
    if !text
        .chars()
        .any(|c| PLAIN.iter().any(|(fancy, _)| *fancy == c))
    {
        return text;
    }
    let mut plain = String::with_capacity(text.len());
    for c in text.chars() {
        match PLAIN.iter().find(|(fancy, _)| *fancy == c) {
            Some((_, ascii)) => plain.push_str(ascii),
            None => plain.push(c),
        }
    }
    plain
}
