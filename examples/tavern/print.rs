//! The tavern's printer: it gathers every decision of a turn — actions, tasks taken
//! on and the steps of their plans, speech, passes, hesitations and rejections — and
//! prints the turn once every action has its narration, then how plans ended. It writes through a locked stdout and stops quietly when the reader
//! goes away (`tavern | head`).

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

use bevy::prelude::*;
use bevy_loom::llm::RequestId;
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
            .init_resource::<Asked>()
            .init_resource::<Plans>()
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

/// How many decisions each actor asked the model for, over the whole run, how many
/// of them the model answered, and why the last decision it gave none got none.
#[derive(Resource, Default)]
struct Asked {
    by_actor: HashMap<Entity, usize>,
    /// The decisions asked and not answered yet, by request.
    waiting: HashSet<RequestId>,
    answered: usize,
    /// Why the last one unanswered was.
    why: Option<String>,
}

/// Each running plan's command, by its actor, kept to tell how it ends.
#[derive(Resource, Default)]
struct Plans(HashMap<Entity, String>);

/// "Decisions asked of the model: Marta 3, Silas 10, Brom 5 (18 in all)", in scene
/// order.
pub fn decisions_asked(world: &World) -> String {
    let order = world.resource::<SceneOrder>();
    let mut asked: Vec<(&Entity, &usize)> = world.resource::<Asked>().by_actor.iter().collect();
    asked.sort_by_key(|(actor, _)| order.rank(**actor));
    let each: Vec<String> = (asked.iter())
        .map(|(actor, count)| format!("{} {count}", name(world, **actor)))
        .collect();
    let all: usize = asked.iter().map(|(_, count)| **count).sum();
    if all == 0 {
        return "\nDecisions asked of the model: none".to_owned();
    }
    format!(
        "\nDecisions asked of the model: {} ({all} in all)",
        each.join(", ")
    )
}

/// The loaded content's warnings (an id that allows nothing, a file listed under
/// another kind), each a line: a game plays on with them, so they are told once, as
/// the content has loaded.
pub fn content_warnings(world: &World) -> Vec<String> {
    let registry = world.resource::<ContentRegistry>();
    (registry.warnings().iter())
        .map(|warning| format!("content warning: {warning}"))
        .collect()
}

/// When the model server answered none of the decisions asked of it (it is down, or
/// its address is wrong), says so with the last reason, which tells what to check.
pub fn nobody_answered(world: &World) -> Option<String> {
    let asked = world.resource::<Asked>();
    let all: usize = asked.by_actor.values().sum();
    // A decision cancelled for a reply gets neither an answer nor a rejection: what
    // counts is that no answer came and some decision was refused one.
    let why = asked.why.as_deref().filter(|_| asked.answered == 0)?;
    Some(format!(
        "The model server answered none of the {all} decisions asked of it. The last \
         reason: {why}"
    ))
}

/// The transcript's first line: the scene, the content, the turns (`None`: a turn
/// for each line the player gives) and who answers.
pub fn header(world: &World, scene: &SceneDefinition, (turns, seed): (Option<u32>, u64)) -> String {
    let registry = world.resource::<ContentRegistry>();
    let bridge = world.resource::<LlmBridge>();
    let turns = match turns {
        None => "one a line".to_owned(),
        Some(u32::MAX) => "no end".to_owned(),
        Some(turns) => turns.to_string(),
    };
    format!(
        "== {} — {} mods, {} actions; turns: {}, seed {}; answers from {} ==",
        if scene.name.is_empty() {
            "scene"
        } else {
            &scene.name
        },
        registry.mods().len(),
        registry.actions().len(),
        turns,
        seed,
        bridge.backend_description(),
    )
}

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
    /// The tasks actors took on, and their commands.
    started: Vec<(Entity, String)>,
    lines: Vec<Line>,
    /// How plans ended this turn, printed after its lines.
    endings: Vec<String>,
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
    plans: MessageReader<'w, 's, StartPlan>,
    responses: MessageReader<'w, 's, LlmResponse>,
}

fn gather(
    mut turn: ResMut<Turn>,
    mut decisions: Decisions,
    mut asked: ResMut<Asked>,
    mut plans: ResMut<Plans>,
) {
    let turn = &mut *turn;
    for prompt in decisions.prompts.read() {
        *asked.by_actor.entry(prompt.actor).or_default() += 1;
        asked.waiting.insert(prompt.request);
        turn.prompts.push(prompt.clone());
    }
    for start in decisions.plans.read() {
        let command = task_command(start, &turn.prompts);
        plans.0.insert(start.actor, command.clone());
        turn.started.push((start.actor, command));
    }
    turn.conversation
        .extend(decisions.conversation.read().cloned());
    turn.requests.extend(decisions.requests.read().cloned());
    for line in decisions.spoke.read() {
        turn.speech.insert(line.actor, one_line(&line.text));
    }
    turn.passed.extend(decisions.passed.read().cloned());
    turn.hesitated.extend(decisions.hesitated.read().cloned());
    // Warm-ups and narration are answered too; only a decision's answer counts.
    for response in decisions.responses.read() {
        if asked.waiting.remove(&response.id) && response.result.is_ok() {
            asked.answered += 1;
        }
    }
    for rejection in decisions.rejected.read() {
        if let RejectionReason::NoAnswer(error) = &rejection.reason {
            asked.why = Some(error.to_string());
        }
        turn.rejections.push(rejection.clone());
    }
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
fn compose(world: &mut World, mut told: Local<HashSet<(Entity, String)>>) {
    if !world.resource::<Turn>().resolved {
        return;
    }
    let mut turn = std::mem::take(&mut *world.resource_mut::<Turn>());
    // A running plan names its task as it started, even one the game started.
    let mut running = world.query::<(Entity, &Plan)>();
    let commands: Vec<(Entity, String)> = (running.iter(world))
        .map(|(actor, plan)| (actor, plan.command().to_owned()))
        .collect();
    world.resource_mut::<Plans>().0.extend(commands);
    let order = world.resource::<SceneOrder>();
    turn.prompts.sort_by_key(|p| order.rank(p.actor));
    turn.started.sort_by_key(|(actor, _)| order.rank(*actor));
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
    // A task taken on comes before the actions, its plan's first step among them, and
    // takes the words said as it was chosen.
    let plans = world.resource::<Plans>();
    lines.extend(turn.started.iter().map(|(actor, command)| {
        let command = plans.0.get(actor).unwrap_or(command);
        let speech = said(&mut silent, *actor);
        Line::plain(format!(
            "{} takes on: {command}{speech}",
            name(world, *actor)
        ))
    }));
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
    // An actor's reason is told whole once, with what the model wrote; a dead server
    // would otherwise fill every turn with the same paragraph for each actor.
    lines.extend(turn.rejections.iter().map(|rejection| {
        let reason = rejection.reason.to_string();
        let why = match told.insert((rejection.actor, reason.clone())) {
            true if rejection.raw.trim().is_empty() => reason,
            true => format!("{reason}; the model wrote \"{}\"", excerpt(&rejection.raw)),
            false => "as before".to_owned(),
        };
        Line::plain(format!(
            "{} passes (rejected: {why})",
            name(world, rejection.actor),
        ))
    }));
    let mut next = world.resource_mut::<Turn>();
    next.lines = lines;
    // Plans that ended before the turn was resolved are told with it.
    next.endings = turn.endings;
}

/// The start of what a model wrote, on one line and with no control character to
/// upset the terminal: enough to see what went wrong.
fn excerpt(written: &str) -> String {
    const SHOWN: usize = 80;
    let words: Vec<&str> = written.split_whitespace().collect();
    let line: String = (words.join(" ").chars())
        .map(|c| match bevy_loom::content::forbidden_character(c) {
            // A terminal's escape, or a mark that reorders the line.
            Some(_) => '\u{FFFD}',
            None => c,
        })
        .collect();
    match line.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// A line for each carried-out or refused request, with what its actor said
/// (taken from `silent`) and why the game refused it.
fn action_lines(
    world: &World,
    verdicts: Vec<Verdict>,
    silent: &mut Vec<(Entity, String)>,
) -> Vec<Line> {
    let plans = world.resource::<Plans>();
    verdicts
        .into_iter()
        .map(|verdict| {
            let request = &verdict.request;
            let speech = said(silent, request.actor);
            let outcome = verdict
                .refusal
                .map(|why| format!(" (the game refuses: {why})"))
                .unwrap_or_default();
            let actor = name(world, request.actor);
            // A plan's step says which plan, and how far along it is.
            let doing = match (&request.plan, plans.0.get(&request.actor)) {
                (Some(step), Some(task)) => {
                    let (k, n) = step.progress;
                    format!("{actor} — {task}, step {k} of {n}: {}", request.command)
                }
                _ => format!("{actor}: {}", request.command),
            };
            Line {
                text: format!("{doing}{speech}{outcome}"),
                report: Some(verdict.report),
                narration: None,
            }
        })
        .collect()
}

/// The command of the task a plan starts, as its actor's prompt offered it; its id
/// when it was not offered (the game started it).
fn task_command(start: &StartPlan, prompts: &[DecisionRequested]) -> String {
    let targets: Vec<Entity> = (start.params.iter())
        .filter_map(|(_, value)| value.entity())
        .collect();
    let prompt = prompts.iter().rev().find(|p| p.actor == start.actor);
    let offered = prompt.and_then(|prompt| {
        (prompt.tasks.iter())
            .find(|task| task.action_id == start.task_id && task.targets == targets)
    });
    offered.map_or_else(|| start.task_id.clone(), |task| task.command.to_owned())
}

/// Words said over several lines (a model may answer so) on the transcript's one
/// line, each line after the first following a space.
fn one_line(said: &str) -> String {
    let lines = said.lines().map(str::trim).filter(|line| !line.is_empty());
    lines.collect::<Vec<_>>().join(" ")
}

/// What `actor` said with its decision, taken from `silent`: ` — "..."`, or nothing.
fn said(silent: &mut Vec<(Entity, String)>, actor: Entity) -> String {
    silent
        .iter()
        .position(|(speaker, _)| *speaker == actor)
        .map(|i| format!(" — \"{}\"", silent.remove(i).1))
        .unwrap_or_default()
}

/// How a plan ended, as the transcript says it.
#[derive(bevy::ecs::system::SystemParam)]
struct Endings<'w, 's> {
    completed: MessageReader<'w, 's, PlanCompleted>,
    failed: MessageReader<'w, 's, PlanFailed>,
    plans: ResMut<'w, Plans>,
    names: Query<'w, 's, &'static DisplayName>,
}

impl Endings<'_, '_> {
    /// A line for each plan that ended since the last call.
    fn lines(&mut self) -> Vec<String> {
        let name = |actor: Entity| self.names.get(actor).map_or("Someone", |n| n.0.as_str());
        let mut lines = Vec::new();
        for done in self.completed.read() {
            let task = self
                .plans
                .0
                .remove(&done.actor)
                .unwrap_or(done.task_id.clone());
            lines.push(format!("{} has done it: {task}", name(done.actor)));
        }
        for failed in self.failed.read() {
            let task = self
                .plans
                .0
                .remove(&failed.actor)
                .unwrap_or(failed.task_id.clone());
            let reason = &failed.reason;
            lines.push(format!(
                "{} gives up: {task} ({reason})",
                name(failed.actor)
            ));
        }
        lines
    }
}

/// Gives each action line its narration; once every line has one, prints the turn
/// and how plans ended in it.
fn print_turn(
    mut turn: ResMut<Turn>,
    mut texts: MessageReader<NarrationText>,
    mut endings: Endings,
    mut printer: NonSendMut<Printer>,
) {
    let ended = endings.lines();
    turn.endings.extend(ended);
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
    for ending in std::mem::take(&mut turn.endings) {
        printer.line(&ending);
    }
}

/// What the transcript calls an entity.
pub fn name(world: &World, entity: Entity) -> String {
    world
        .get::<DisplayName>(entity)
        .map_or_else(|| entity.to_string(), |n| n.0.clone())
}
