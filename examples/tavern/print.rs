//! The tavern's printer: it gathers every decision of a turn — actions, speech,
//! passes, hesitations and rejections — and prints the turn once every action has
//! its narration. It writes through a locked stdout and stops quietly when the reader
//! goes away (`tavern | head`).

use std::collections::HashMap;
use std::io::{self, Write};

use bevy::prelude::*;
use bevy_loom::prelude::*;

use super::rules::{SceneOrder, Verdict, resolve_turn};

/// Gathers each turn's decisions and prints its transcript; needs a [`Printer`] (a
/// non-send resource) and the [`RulesPlugin`](super::rules::RulesPlugin).
pub struct TranscriptPlugin {
    /// Whether to print each assembled prompt.
    pub show_prompt: bool,
}

impl Plugin for TranscriptPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(ShowPrompt(self.show_prompt))
            .init_resource::<Turn>()
            .add_systems(
                Update,
                (
                    gather.after(LoomSystems::Decide).before(resolve_turn),
                    compose.after(resolve_turn).before(LoomSystems::Narrate),
                    print_turn.after(LoomSystems::Narrate),
                ),
            )
            .add_systems(Last, report_content_errors);
    }
}

#[derive(Resource)]
struct ShowPrompt(bool);

/// Where the transcript goes, and whether it can still be written.
pub struct Printer {
    out: Box<dyn Write>,
    stopped: Option<Result<(), String>>,
}

impl Printer {
    /// Prints to this process's stdout, locked for as long as the printer lives.
    pub fn stdout() -> Self {
        Self::new(Box::new(io::stdout().lock()))
    }

    pub fn new(out: Box<dyn Write>) -> Self {
        Self { out, stopped: None }
    }

    /// Writes one line; once a write fails, nothing more is written.
    pub fn line(&mut self, text: &str) {
        if self.stopped.is_some() {
            return;
        }
        if let Err(error) = writeln!(self.out, "{text}").and_then(|()| self.out.flush()) {
            self.stopped = Some(if error.kind() == io::ErrorKind::BrokenPipe {
                // The reader has all it wanted (`tavern | head`): not a failure.
                Ok(())
            } else {
                Err(format!("cannot print the transcript: {error}"))
            });
        }
    }

    /// `None` while printing goes on; `Ok` once the reader went away, `Err` when a
    /// write failed otherwise.
    pub fn stopped(&self) -> Option<Result<(), String>> {
        self.stopped.clone()
    }
}

/// This turn's decisions, gathered as they arrive, then its transcript lines, each
/// action's waiting for its narration.
#[derive(Resource, Default)]
pub struct Turn {
    /// Set when the turn begins; cleared once the rules have resolved it.
    pub open: bool,
    /// Set by the rules when they have carried out the turn's requests.
    pub resolved: bool,
    pub requests: Vec<ActionRequest>,
    pub verdicts: Vec<Verdict>,
    speech: HashMap<Entity, String>,
    passed: Vec<ActorPassed>,
    hesitated: Vec<ActorHesitated>,
    rejections: Vec<DecisionRejected>,
    prompts: Vec<DecisionRequested>,
    conversation: Vec<ConversationUpdate>,
    lines: Vec<Line>,
}

impl Turn {
    /// Whether the turn still waits for decisions, its rules or its narration.
    pub fn in_progress(&self) -> bool {
        self.open || self.resolved || !self.lines.is_empty()
    }
}

/// A transcript line, and for an action, its report and narration.
struct Line {
    text: String,
    report: Option<ActionReport>,
    narration: Option<String>,
}

impl Line {
    fn plain(text: String) -> Self {
        Self {
            text,
            report: None,
            narration: Some(String::new()),
        }
    }
}

#[derive(bevy::ecs::system::SystemParam)]
struct Decisions<'w, 's> {
    requests: MessageReader<'w, 's, ActionRequest>,
    spoke: MessageReader<'w, 's, ActorSpoke>,
    passed: MessageReader<'w, 's, ActorPassed>,
    hesitated: MessageReader<'w, 's, ActorHesitated>,
    rejected: MessageReader<'w, 's, DecisionRejected>,
    prompts: MessageReader<'w, 's, DecisionRequested>,
    conversation: MessageReader<'w, 's, ConversationUpdate>,
}

fn gather(mut turn: ResMut<Turn>, mut decisions: Decisions) {
    let turn = &mut *turn;
    turn.conversation
        .extend(decisions.conversation.read().cloned());
    turn.requests.extend(decisions.requests.read().cloned());
    for line in decisions.spoke.read() {
        turn.speech.insert(line.actor, line.text.clone());
    }
    turn.passed.extend(decisions.passed.read().cloned());
    turn.hesitated.extend(decisions.hesitated.read().cloned());
    turn.rejections.extend(decisions.rejected.read().cloned());
    turn.prompts.extend(decisions.prompts.read().cloned());
}

fn report_content_errors(
    mut errors: MessageReader<ContentError>,
    mut printer: NonSendMut<Printer>,
) {
    for error in errors.read() {
        printer.line(&format!("content error: {error}"));
    }
}

/// Once the rules have resolved the turn, writes its lines in scene order: the
/// conversation, prompts when shown, actions, then speech, passes and rejections.
fn compose(world: &mut World) {
    if !world.resource::<Turn>().resolved {
        return;
    }
    let mut turn = std::mem::take(&mut *world.resource_mut::<Turn>());
    let order = world.resource::<SceneOrder>();
    turn.prompts.sort_by_key(|p| order.rank(p.actor));
    turn.passed.sort_by_key(|p| order.rank(p.actor));
    turn.hesitated.sort_by_key(|h| order.rank(h.actor));
    turn.rejections.sort_by_key(|r| order.rank(r.actor));
    let mut silent: Vec<(Entity, String)> = turn.speech.drain().collect();
    silent.sort_by_key(|(actor, _)| order.rank(*actor));

    let mut lines: Vec<Line> = std::mem::take(&mut turn.conversation)
        .into_iter()
        .map(|event| {
            Line::plain(match event {
                ConversationUpdate::Started(actor) => {
                    format!("(you talk with {})", name(world, actor))
                }
                ConversationUpdate::Ended(actor) => {
                    format!("(you leave {} be)", name(world, actor))
                }
                ConversationUpdate::Notice(text) => text,
            })
        })
        .collect();
    if world.resource::<ShowPrompt>().0 {
        lines.extend(turn.prompts.iter().map(|prompt| {
            let mut text = format!("~~ prompt for {} ~~", name(world, prompt.actor));
            for message in prompt.messages.iter() {
                text.push_str(&format!("\n[{}]\n{}\n", message.role, message.content));
            }
            Line::plain(text)
        }));
    }
    lines.extend(action_lines(
        world,
        std::mem::take(&mut turn.verdicts),
        &mut silent,
    ));
    let talking_with = world.resource::<Conversation>().with;
    lines.extend(silent.into_iter().map(|(actor, text)| {
        Line::plain(if talking_with == Some(actor) {
            format!("{} (to you): \"{text}\"", name(world, actor))
        } else {
            format!("{} passes — \"{text}\"", name(world, actor))
        })
    }));
    lines.extend(
        turn.passed
            .iter()
            .map(|pass| Line::plain(format!("{} lets the moment pass.", name(world, pass.actor)))),
    );
    // A rejected answer in combat is a hesitation too; its rejection line says why.
    lines.extend(
        turn.hesitated
            .iter()
            .filter(|hesitation| hesitation.reason.is_none())
            .map(|hesitation| Line::plain(hesitation.line.clone())),
    );
    lines.extend(turn.rejections.iter().map(|rejection| {
        Line::plain(format!(
            "{} passes (rejected: {})",
            name(world, rejection.actor),
            rejection.reason
        ))
    }));
    world.resource_mut::<Turn>().lines = lines;
}

/// A line for each carried-out or refused request, with what its actor said
/// (taken from `silent`) and why the game refused it.
fn action_lines(
    world: &World,
    verdicts: Vec<Verdict>,
    silent: &mut Vec<(Entity, String)>,
) -> Vec<Line> {
    verdicts
        .into_iter()
        .map(|verdict| {
            let request = &verdict.request;
            let speech = silent
                .iter()
                .position(|(actor, _)| *actor == request.actor)
                .map(|i| format!(" — \"{}\"", silent.remove(i).1))
                .unwrap_or_default();
            let outcome = verdict
                .refusal
                .map(|why| format!(" (the game refuses: {why})"))
                .unwrap_or_default();
            Line {
                text: format!(
                    "{}: {}{speech}{outcome}",
                    name(world, request.actor),
                    request.command
                ),
                report: Some(verdict.report),
                narration: None,
            }
        })
        .collect()
}

/// Gives each action line its narration; once every line has one, prints the turn.
fn print_turn(
    mut turn: ResMut<Turn>,
    mut texts: MessageReader<NarrationText>,
    mut printer: NonSendMut<Printer>,
) {
    for text in texts.read().filter(|t| t.is_final) {
        if let Some(line) = turn
            .lines
            .iter_mut()
            .find(|line| line.narration.is_none() && line.report.as_ref() == Some(&*text.report))
        {
            line.narration = Some(text.text.clone());
        }
    }
    if turn.open || turn.resolved || turn.lines.iter().any(|line| line.narration.is_none()) {
        return;
    }
    for line in std::mem::take(&mut turn.lines) {
        printer.line(&line.text);
        if let Some(narration) = line.narration.filter(|n| !n.is_empty()) {
            printer.line(&format!("    {narration}"));
        }
    }
}

/// What the transcript calls an entity.
pub fn name(world: &World, entity: Entity) -> String {
    world
        .get::<DisplayName>(entity)
        .map_or_else(|| entity.to_string(), |n| n.0.clone())
}
