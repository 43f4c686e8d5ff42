//! Narration: the game reports what happened as structure ([`ActionReport`]);
//! the [`FragmentResolver`] picks authored fragments for it, a model weaves them into
//! prose through the bridge, and every report gets exactly one final
//! [`NarrationText`], in the order the reports came — from the model, or from the
//! offline weaver when the model is slow, down or answers badly.
//!
//! **Layer:** a feature, beside smart actors: what it narrates reaches them as the
//! world's [`Witnessed`] messages.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy_loom::prelude::*;
//!
//! fn print_narration(mut texts: MessageReader<NarrationText>) {
//!     for text in texts.read().filter(|t| t.is_final) {
//!         println!("{}", text.text);
//!     }
//! }
//!
//! App::new()
//!     .add_plugins((MinimalPlugins, AssetPlugin::default(), LoomPlugins))
//!     .add_systems(Update, print_narration.after(LoomSystems::Narrate))
//!     .run();
//! ```

pub mod defaults;
mod in_order;
mod plan;
mod resolver;
mod weave;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::ecs::entity::Entities;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

pub use crate::world::{ActionReport, EffectReport, Outcome};
pub use plan::{
    EntityRef, NarrationPlan, Person, PlanAction, PlanEffect, PlanFragments, Viewpoint,
};
pub use resolver::{Described, FragmentResolver, ReportEntities, Selection};
pub use weave::weave_offline;

use in_order::{InOrder, Narration};

use crate::content::ContentRegistry;
use crate::llm::{
    ChatMessage, LlmBridge, LlmDelta, LlmError, LlmRequest, LlmResponse, Priority, RequestId,
    SamplingOptions, later,
};
use crate::prompt::{NARRATOR_RULES, narration_user_message};
use crate::world::{
    Character, DisplayName, Exits, InPlace, LoomSystems, NarrativeKey, Place, Player, Witnessed,
};

/// How much of the picked material narration uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Reflect)]
pub enum Verbosity {
    /// The action core (and each effect's core) only.
    Brief,
    /// Core, colors, the state variant and traits.
    #[default]
    Full,
}

/// How reports are narrated.
#[derive(Resource, Debug, Clone, PartialEq, Reflect)]
#[reflect(Resource, Default)]
pub struct NarrationSettings {
    /// How much of the picked material to use.
    pub verbosity: Verbosity,
    /// How long the model may take; past it the offline weave is the final text.
    pub deadline: Duration,
    /// Ask the model to weave; `false` always uses the offline weaver.
    pub use_model: bool,
    /// Ask for the model's text in pieces, shown as they come (`is_final: false`, each
    /// with the text written since the last).
    pub stream: bool,
    /// The most tokens the model may write for one report.
    pub max_tokens: u32,
    /// The longest text accepted from the model, in characters: a longer one is
    /// told from the offline weave, and no streamed piece past it is shown.
    pub max_chars: usize,
}

impl Default for NarrationSettings {
    fn default() -> Self {
        Self {
            verbosity: Verbosity::Full,
            deadline: Duration::from_secs(2),
            use_model: true,
            stream: true,
            max_tokens: 160,
            max_chars: 800,
        }
    }
}

/// Where a narration's text came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NarrationSource {
    /// The bridge's backend wrote it (the offline backend answers with the offline weave).
    Model,
    /// The offline weaver wrote it: no model was asked.
    Offline,
    /// The offline weaver wrote it because the model's answer could not be used.
    Fallback {
        /// Why: the bridge's error or what was wrong with the answer.
        reason: String,
    },
}

/// Narration of one report. Reports are told in the order they came: a report's
/// texts all come after the final text of every report before it (a quick answer
/// waits for a slow one before it, at most the model's
/// [`deadline`](NarrationSettings::deadline)), so one report's pieces never mix with
/// another's. Streamed pieces arrive as `is_final: false`, each with
/// the text written since the previous one (append them to show the text growing;
/// those that came while an earlier report was told arrive as one piece in its turn;
/// thinking a reasoning model's answer opens with, `<think>…</think>`, is not among
/// them, nor what shows nothing before the text; thinking the prompt opened, which
/// the answer only closes, is, until the final text leaves it out); exactly one
/// `is_final: true` message, with the whole text, ends each report.
#[derive(Message, Debug, Clone, PartialEq)]
pub struct NarrationText {
    /// The report narrated.
    pub report: Arc<ActionReport>,
    /// Where it happened: the report's [`at`](ActionReport::at), or the place its
    /// actor was in when it was reported (it may have moved by the time a model's
    /// text comes back).
    pub place: Option<Entity>,
    /// The text: while streaming, the piece written since the previous message; then
    /// the whole final text (which may differ from the pieces: trimmed, or the offline
    /// weave when the model's answer could not be used). A model's text comes without
    /// the control characters and reordering marks content may not hold either.
    pub text: String,
    /// Whether this is the report's final text.
    pub is_final: bool,
    /// Who wrote it.
    pub source: NarrationSource,
    /// Whether the player acted, as the report came: the text is told to the player,
    /// in the second person ("You greet Marta"), not what the others there saw.
    pub to_player: bool,
}

/// A report's narration was asked of the model: its [`LlmResponse`] carries `request`,
/// for a game that measures what narration costs.
#[derive(Message, Debug, Clone, PartialEq)]
pub struct NarrationRequested {
    /// The report to narrate.
    pub report: Arc<ActionReport>,
    /// The request to the model.
    pub request: RequestId,
}

/// Narrates every [`ActionReport`] in [`LoomSystems::Narrate`].
#[derive(Debug, Clone)]
pub struct NarrationPlugin {
    /// How reports are narrated, copied into a resource that may change at run time.
    pub settings: NarrationSettings,
    /// Seeds fragment picks: the same seed and reports give the same picks. The
    /// plugin builds its fragment resolver with it once, at startup.
    pub seed: u64,
    /// How many recent picks per entity are not picked again while their pool has
    /// others (whatever it is, one narration repeats none of its colors and traits);
    /// read once, at startup.
    pub repetition_window: usize,
}

impl Default for NarrationPlugin {
    fn default() -> Self {
        Self {
            settings: NarrationSettings::default(),
            seed: 0,
            repetition_window: 10,
        }
    }
}

impl Plugin for NarrationPlugin {
    fn build(&self, app: &mut App) {
        let settings = &self.settings;
        app.insert_resource(settings.clone())
            .insert_resource(Narrator {
                resolver: FragmentResolver::new(
                    self.seed,
                    self.repetition_window,
                    settings.verbosity,
                ),
                witnessing: FragmentResolver::new(
                    self.seed.wrapping_add(1),
                    self.repetition_window,
                    settings.verbosity,
                ),
                untold: InOrder::default(),
            })
            .register_type::<NarrationSettings>()
            .add_message::<ActionReport>()
            .add_message::<NarrationText>()
            .add_message::<NarrationRequested>()
            .add_message::<Witnessed>()
            .add_message::<LlmResponse>()
            .add_message::<LlmDelta>()
            .add_systems(
                Update,
                (
                    follow_settings,
                    receive_narration,
                    narrate_reports,
                    tell_witnesses,
                    forget_the_gone,
                )
                    .chain()
                    .in_set(LoomSystems::Narrate),
            );
        crate::world::configure_loom_sets(app);
    }
}

/// The resolver and the narrations not yet told whole.
#[derive(Resource)]
pub struct Narrator {
    resolver: FragmentResolver,
    /// Picks for what those who saw the player act remember, in the third person: its
    /// own, so that the player's narration picks as it would without it.
    witnessing: FragmentResolver,
    untold: InOrder,
}

impl Narrator {
    /// Reports whose final text has not been written yet: waiting for the model, or
    /// for a report before them that is (reports are told in the order they came).
    pub fn waiting(&self) -> usize {
        self.untold.len()
    }

    /// How many entities' recent picks it keeps, to vary what it says of them: those
    /// despawned are forgotten once they pile up.
    pub fn remembered(&self) -> usize {
        self.resolver.remembered()
    }
}

/// Forgets the recent picks of entities despawned, once enough of them piled up.
fn forget_the_gone(entities: &Entities, mut narrator: ResMut<Narrator>) {
    // Looked at without marking the narrator changed, as most frames do nothing.
    let exists = |entity| entities.contains_spawned(entity);
    if narrator.resolver.should_forget_gone() {
        narrator.resolver.forget_gone(exists);
    }
    if narrator.witnessing.should_forget_gone() {
        narrator.witnessing.forget_gone(exists);
    }
}

fn follow_settings(settings: Res<NarrationSettings>, mut narrator: ResMut<Narrator>) {
    if settings.is_changed() {
        narrator.resolver.set_verbosity(settings.verbosity);
        narrator.witnessing.set_verbosity(settings.verbosity);
    }
}

/// What narration reads of an entity.
type DescribedQuery<'w, 's> = Query<
    'w,
    's,
    (
        Option<&'static DisplayName>,
        Option<&'static NarrativeKey>,
        Has<Player>,
        Has<Character>,
        Has<Place>,
        Option<&'static InPlace>,
    ),
>;

/// The world as narration reads it.
#[derive(SystemParam)]
struct NarrationWorld<'w, 's> {
    registry: Res<'w, ContentRegistry>,
    entities: DescribedQuery<'w, 's>,
    exits: Query<'w, 's, &'static Exits>,
}

impl NarrationWorld<'_, '_> {
    /// How narration names `entity`: characters, the player and places by name
    /// (places carry their own article, "the common room"), other things with "the".
    fn describe(&self, entity: Entity) -> Described<'_> {
        let Ok((name, key, is_player, is_character, is_place, _)) = self.entities.get(entity)
        else {
            return Described::new(entity, "someone", true, None);
        };
        // No name is none shown: `Described::new` calls it "someone".
        let name = name.map_or("", |n| n.0.as_str());
        let context = key.and_then(|k| self.registry.narrative(&k.0));
        let by_name = is_character || is_player || is_place;
        let described = Described::new(entity, name, by_name, context);
        match (is_player, is_character) {
            (true, _) => described.player(),
            (false, true) => described.character(),
            (false, false) => described,
        }
    }

    /// Everything a report names, described, with the place it happened (its
    /// [`at`](ActionReport::at), or its actor's) and that place's exits.
    fn entities_of(&self, report: &ActionReport) -> ReportEntities<'_> {
        let place = report.place.or_else(|| {
            let actor = self.entities.get(report.actor).ok();
            actor.and_then(|(.., in_place)| in_place.map(|p| p.0))
        });
        let exits = place
            .and_then(|place| self.exits.get(place).ok())
            .map(|exits| {
                exits
                    .0
                    .iter()
                    .filter_map(|&exit| self.entities.get(exit).ok()?.0)
                    .map(|name| crate::world::prompt_name(Cow::Borrowed(name.0.as_str())))
                    .filter(|name| !name.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let describe = |entity: Entity| self.describe(entity);
        ReportEntities {
            actor: describe(report.actor),
            object: report.object.map(describe),
            indirect_object: report.indirect_object.map(describe),
            instrument: report.instrument.map(describe),
            place: place.map(describe),
            exits,
            effects: report
                .effects
                .iter()
                .map(|effect| (effect.target.map(describe), effect.from.map(describe)))
                .collect(),
        }
    }
}

fn narrate_reports(
    settings: Res<NarrationSettings>,
    mut reports: MessageReader<ActionReport>,
    world: NarrationWorld,
    mut narrator: ResMut<Narrator>,
    mut bridge: Option<ResMut<LlmBridge>>,
    mut writers: (
        MessageWriter<NarrationText>,
        MessageWriter<NarrationRequested>,
        MessageWriter<Witnessed>,
    ),
) {
    let (texts, requested, witnessed) = &mut writers;
    let narrator = &mut *narrator;
    for report in reports.read() {
        let entities = world.entities_of(report);
        let narration = Narration {
            report: Arc::new(report.clone()),
            place: entities.place.as_ref().map(|place| place.entity),
            to_player: entities.actor.is_player,
        };
        if narration.to_player {
            let text = as_witnessed(report, &entities, &mut narrator.witnessing, &settings);
            witnessed.write(text);
        }
        let plan = narrator.resolver.plan(report, &entities);
        let offline = weave_offline(&plan, settings.verbosity);
        let untold = &mut narrator.untold;
        let Some(bridge) = bridge.as_mut().filter(|_| settings.use_model) else {
            untold.ended(narration, offline, NarrationSource::Offline);
            continue;
        };
        match narration_request(&plan, &offline, &settings) {
            Ok(request) => {
                let id = bridge.submit(request);
                requested.write(NarrationRequested {
                    report: Arc::clone(&narration.report),
                    request: id,
                });
                // Saturating: a deadline of `Duration::MAX` is "never give up".
                let due = later(
                    Instant::now(),
                    settings.deadline.saturating_add(LATE_ANSWER),
                );
                untold.asked(id, narration, offline, due);
            }
            Err(reason) => untold.ended(narration, offline, NarrationSource::Fallback { reason }),
        }
    }
    narrator.untold.tell(|text| {
        texts.write(text);
    });
}

/// How long after its deadline a narration's answer is still waited for, as the
/// bridge may end it a little late and its message comes the frame after: past it,
/// the answer is taken as lost (the bridge removed, say) and the offline weave told.
const LATE_ANSWER: Duration = Duration::from_secs(1);

/// The request that asks the model to weave `plan`, answered `offline` by the offline
/// backend; or why it cannot be asked.
fn narration_request(
    plan: &NarrationPlan<'_>,
    offline: &str,
    settings: &NarrationSettings,
) -> Result<LlmRequest, String> {
    let plan_json = serde_json::to_string(plan)
        .map_err(|error| format!("the plan could not be written as JSON: {error}"))?;
    Ok(LlmRequest {
        messages: Arc::new(vec![
            ChatMessage::system(NARRATOR_RULES),
            ChatMessage::user(narration_user_message(&plan_json)),
        ]),
        sampling: SamplingOptions {
            max_tokens: Some(settings.max_tokens),
            ..SamplingOptions::default()
        },
        deadline: Some(settings.deadline),
        priority: Priority::Narration,
        stream: settings.stream,
        offline: Some(Arc::new(offline.to_owned())),
        ..LlmRequest::default()
    })
}

/// Each report's final text is what those in its actor's place witnessed, unless the
/// player acted: told to the player ("You greet Marta"), it is not what others saw
/// ([`as_witnessed`] is).
fn tell_witnesses(
    mut texts: MessageReader<NarrationText>,
    mut witnessed: MessageWriter<Witnessed>,
) {
    for text in texts.read().filter(|text| text.is_final) {
        if !text.to_player {
            witnessed.write(witnessed_as(&text.report, text.place, text.text.clone()));
        }
    }
}

/// What those who saw the player act witnessed: the report woven offline in the third
/// person ("Traveler greets Marta"), as they would tell it.
fn as_witnessed(
    report: &ActionReport,
    entities: &ReportEntities<'_>,
    resolver: &mut FragmentResolver,
    settings: &NarrationSettings,
) -> Witnessed {
    let mut seen = entities.clone();
    seen.actor.is_player = false;
    let plan = resolver.plan(report, &seen);
    let place = entities.place.as_ref().map(|place| place.entity);
    witnessed_as(report, place, weave_offline(&plan, settings.verbosity))
}

/// `text`, witnessed of `report`, which happened in `place`.
fn witnessed_as(report: &ActionReport, place: Option<Entity>, text: String) -> Witnessed {
    let involved = [report.object, report.indirect_object, report.instrument];
    (Witnessed::new(report.actor, text))
        .at(place)
        .involving(involved.into_iter().flatten())
}

fn receive_narration(
    settings: Res<NarrationSettings>,
    mut deltas: MessageReader<LlmDelta>,
    mut responses: MessageReader<LlmResponse>,
    mut narrator: ResMut<Narrator>,
    mut texts: MessageWriter<NarrationText>,
    bridge: Option<Res<LlmBridge>>,
) {
    if narrator.untold.is_empty() {
        deltas.clear();
        responses.clear();
        return;
    }
    let untold = &mut narrator.untold;
    let lost = untold.overdue(Instant::now());
    if lost > 0 {
        warn!(
            "{lost} narrations got no answer by their deadline and fall back to the offline weave: was the bridge removed?"
        );
    }
    for delta in deltas.read() {
        // Each piece is passed on alone: copying the text so far for every piece made a
        // long answer cost time in the square of its length. A reasoning model's
        // thinking is not: the player sees the prose.
        if let Some(text) = untold.piece(delta.id, &delta.text, settings.max_chars) {
            texts.write(text);
        }
    }
    for response in responses.read() {
        let accepted = match &response.result {
            // Cut off at the token limit, its last sentence is unfinished.
            Ok(reply) if reply.cut_off => Err(
                "the model was cut off at the token limit before it finished (a reasoning model spends its tokens thinking: turn its thinking off)".to_owned(),
            ),
            Ok(reply) => usable_text(&reply.text, settings.max_chars),
            // Its deadline is the narration's own.
            Err(error @ (LlmError::TimedOut(_) | LlmError::NotStarted(_))) => Err(format!(
                "the model did not answer by the narration's deadline (NarrationSettings::deadline, which the player waits at most): {error}"
            )),
            Err(error) => Err(format!("the model did not answer: {error}")),
        };
        if let Err(reason) = &accepted
            && untold.is_asked(response.id)
        {
            // Skipped as too slow for the server is how a slow server is meant to be
            // used, not a fault.
            if matches!(response.result, Err(LlmError::TooSlow { .. })) {
                debug!("narration falls back to the offline weave: {reason}");
            } else {
                warn!("narration falls back to the offline weave: {reason}");
            }
        }
        untold.answered(response.id, accepted);
    }
    // After the answers the old bridge passed on before it was replaced.
    let replaced = bridge.map_or(0, |bridge| {
        untold.answered_by(bridge.serial(), |id| bridge.issued(id))
    });
    if replaced > 0 {
        warn!(
            "the LLM bridge was replaced: {replaced} narrations asked of the old one fall back to the offline weave"
        );
    }
    untold.tell(|text| {
        texts.write(text);
    });
}

/// The model's text as narration, or why it cannot be used.
fn usable_text(answer: &str, max_chars: usize) -> Result<String, String> {
    // Told to the player as it looks: without a terminal's escapes, nor marks that
    // reorder it; judged so.
    let answer = crate::world::as_shown(answer);
    let text = crate::prompt::answer_body(&answer);
    // Quoted whole: the quotes go, unless the prose holds others (it opens and
    // closes with dialogue).
    let text = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .filter(|inner| !inner.contains('"'))
        .unwrap_or(text)
        .trim();
    if text.is_empty() {
        return Err("the model answered with nothing".to_owned());
    }
    if text.starts_with(['{', '[']) {
        return Err("the model answered with JSON instead of prose".to_owned());
    }
    let length = text.chars().count();
    if length > max_chars {
        return Err(format!(
            "the model wrote {length} characters, more than the {max_chars} allowed"
        ));
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::usable_text;

    #[test]
    fn model_text_that_is_not_prose_is_refused() {
        assert_eq!(
            usable_text("  \"You nod.\" ", 100),
            Ok("You nod.".to_owned())
        );
        assert!(usable_text("   ", 100).is_err());
        assert!(usable_text("{\"text\": \"hi\"}", 100).is_err());
        assert!(usable_text("word ".repeat(30).as_str(), 100).is_err());
        // Prose that opens and closes with dialogue is not one quotation.
        let shout = "\"Run!\" you shout. \"Now!\"";
        assert_eq!(usable_text(shout, 100), Ok(shout.to_owned()));
    }

    #[test]
    fn the_prose_is_read_out_of_a_fence_or_after_the_models_reasoning() {
        let you_nod = Ok("You nod.".to_owned());
        assert_eq!(usable_text("```\nYou nod.\n```", 100), you_nod);
        assert_eq!(usable_text("```text You nod. ```", 100), you_nod);
        assert_eq!(
            usable_text("<think>Short, second person.</think>\n\nYou nod.", 100),
            you_nod
        );
        assert_eq!(usable_text("\u{feff}You nod.\u{200b}", 100), you_nod);
        assert_eq!(usable_text("\u{1b} You\u{0} nod.\u{202e}", 100), you_nod);
        assert_eq!(
            usable_text("You nod.\rShe smiles.", 100),
            Ok("You nod.\nShe smiles.".into())
        );
        assert!(
            usable_text("\u{1b}\u{202e}", 100).is_err(),
            "nothing to tell"
        );
        assert!(
            usable_text("\u{200b}\u{2060}", 100).is_err(),
            "nothing to see"
        );
        assert!(usable_text("```json\n{\"text\": \"hi\"}\n```", 100).is_err());
        assert!(
            usable_text("<think>Short, second person, and then", 100).is_err(),
            "reasoning cut off before any prose"
        );
    }
}
