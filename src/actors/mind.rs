//! A smart actor's mind: where it is in its turn ([`ThinkState`]), and what it keeps
//! from turn to turn (its conversation with the model, what it was last shown).

use bevy::prelude::*;

use super::memory::StoreInstance;
use super::think::ShownOffer;
use crate::llm::{LlmError, LlmReply, RequestId};
use crate::prompt::{DecisionLimits, Transcript, fit_lines, text_fingerprint};
use crate::world::{OfferedAbilities, OfferedActions};

/// Where a smart actor is in its turn. One state at a time:
///
/// ```text
///            turn begins            prompt sent              answer read
///   Idle ───────────────▶ Queued ───────────────▶ Waiting ───────────────▶ CoolingDown
///    ▲                     ▲  ▲                      │                          │
///    │                     │  └── the player speaks ─┤                          │
///    │                     └── context exceeded, ────┘                          │
///    │                         asked once again                                 │
///    └──────── a turn at or after `until` begins: queued again ◀─────────────────┘
/// ```
///
/// The player's words queue the actor they are for at the front, in place of
/// whatever it was waiting on. An actor whose spec is not loaded goes from `Queued`
/// back to `Idle` with a [`DecisionRejected`](super::DecisionRejected). A `Queued` or
/// `Waiting` actor goes back to `Idle`, its request cancelled, when it stops being a
/// [`SmartActor`](super::SmartActor) and when a plan is put on it
/// ([`FollowingPlan`](crate::world::FollowingPlan)) while it decides for itself. A
/// `Waiting` actor is `Queued` again, as it was asked, when the game replaces the
/// [`LlmBridge`](crate::llm::LlmBridge) it was asked of.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum ThinkState {
    /// Nothing to do until a turn begins.
    #[default]
    Idle,
    /// Waiting its turn to assemble a prompt ([`LoomSystems::Think`](crate::LoomSystems::Think)).
    Queued {
        /// What the player said to it, to reply to instead of acting.
        reply_to: Option<String>,
        /// Whether this is the one time it is asked again from a fresh prompt, after
        /// the server found its last prompt too long for its context.
        asking_again: bool,
    },
    /// Its prompt was sent; waiting on the model's answer.
    Waiting(PendingDecision),
    /// It decided; it thinks again on the first turn from `until` on (its spec's
    /// `cooldownTurns` after the turn it decided in).
    CoolingDown {
        /// The first turn it may think again.
        until: u64,
    },
}

/// A decision asked for and not yet answered: what the answer is checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingDecision {
    /// The request; its [`LlmResponse`](crate::llm::LlmResponse) carries the same id.
    pub request: RequestId,
    /// What the actor was offered, by index.
    pub offered: OfferedActions,
    /// The tasks it was offered, numbered after the actions.
    pub tasks: OfferedActions,
    /// The abilities it was offered.
    pub abilities: OfferedAbilities,
    /// Whether it was asked in combat.
    pub fighting: bool,
    /// What it is replying to, when the player spoke to it.
    pub reply_to: Option<String>,
    /// Whether this request asks again after a context overflow.
    pub asking_again: bool,
    /// The limits its answer is checked against.
    pub limits: DecisionLimits,
    /// Turns it rests after deciding (its spec's `cooldownTurns`).
    pub cooldown: u32,
}

impl ThinkState {
    /// Whether it may be queued when `turn` begins.
    pub fn ready_for(&self, turn: u64) -> bool {
        match self {
            Self::Idle => true,
            Self::CoolingDown { until } => turn >= *until,
            Self::Queued { .. } | Self::Waiting(_) => false,
        }
    }

    /// Whether it is queued to think or waiting for an answer.
    pub fn is_thinking(&self) -> bool {
        matches!(self, Self::Queued { .. } | Self::Waiting(_))
    }

    /// The decision it waits on, if any.
    pub fn pending(&self) -> Option<&PendingDecision> {
        match self {
            Self::Waiting(pending) => Some(pending),
            _ => None,
        }
    }
}

/// A smart actor's turn state and what it keeps from turn to turn.
///
/// A copy of the entity (`clone_and_spawn`) does not copy it: the copy's
/// [`SmartActor`](super::SmartActor) brings a fresh one, since a request out or a
/// place in the queue belongs to the original alone.
#[derive(Component, Debug, Clone, Default)]
#[component(clone_behavior = Ignore)]
pub struct ActorMind {
    /// Where it is in its turn.
    pub(super) state: ThinkState,
    /// Its conversation with the model so far.
    pub(super) transcript: Transcript,
    /// The history store whose memories the transcript shows.
    pub(super) memories_from: Option<StoreInstance>,
    /// What its next prompt tells it.
    pub(super) notes: Notes,
    /// What the turn out with the model told it: given back to `notes` when that turn
    /// is taken back, so the next one tells it instead.
    pub(super) notes_told: Notes,
    /// What its offer may take of its prompt, set when its transcript starts, so an
    /// unchanged world keeps the same offer from turn to turn.
    pub(super) budgets: FreshBudgets,
    /// The last offer it was shown, and how.
    pub(super) shown_offer: ShownOffer,
    /// What it last perceived, and how much of it was shown.
    pub(super) perceived: Perceived,
    /// Whether an [`OfferTrimmed`](super::OfferTrimmed) was written for it.
    pub(super) trimming_reported: bool,
}

/// The estimated tokens each part of a smart actor's offer may take, as what a fresh
/// prompt leaves it when its transcript starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct FreshBudgets {
    /// Its actions.
    pub actions: usize,
    /// Its tasks.
    pub tasks: usize,
    /// Its abilities.
    pub abilities: usize,
}

/// What a smart actor last perceived, and the part of it its prompt shows: fitted to
/// its budget once, while neither the text nor the budget changes.
#[derive(Debug, Clone, Default)]
pub(super) struct Perceived {
    /// The place model's revision when it was written
    /// ([`PlaceRevisions::revision`](crate::world::PlaceRevisions::revision)); 0 before
    /// the actor perceived anything.
    at: u64,
    text: String,
    /// The budget it was last fitted to, the length of what fit, and that part's
    /// [`text_fingerprint`]; `None` since it was written.
    fitted: Option<(usize, usize, u64)>,
}

impl Perceived {
    /// Whether what is around the actor changed since it was written: at revision
    /// `around`.
    pub(super) fn is_older_than(&self, around: u64) -> bool {
        self.at < around
    }

    /// Writes it again with `write`, as perceived at the place model's `revision`.
    pub(super) fn rewrite(&mut self, revision: u64, write: impl FnOnce(&mut String)) {
        self.at = revision;
        self.text.clear();
        write(&mut self.text);
        self.fitted = None;
    }

    /// Its leading whole lines that fit `budget` estimated tokens ([`fit_lines`]),
    /// their [`text_fingerprint`], and whether any line was left out.
    pub(super) fn fitted(&mut self, budget: usize) -> (&str, u64, bool) {
        let (length, fingerprint) = match self.fitted {
            Some((fitted_to, length, fingerprint)) if fitted_to == budget => (length, fingerprint),
            _ => {
                let shown = fit_lines(&self.text, budget);
                let fitted = (shown.len(), text_fingerprint(shown));
                self.fitted = Some((budget, fitted.0, fitted.1));
                fitted
            }
        };
        let cut = length < self.text.len();
        (&self.text[..length], fingerprint, cut)
    }
}

impl ActorMind {
    /// Where it is in its turn.
    pub fn state(&self) -> &ThinkState {
        &self.state
    }

    /// Whether the actor is queued to think or waiting for an answer.
    pub fn is_thinking(&self) -> bool {
        self.state.is_thinking()
    }

    /// Lets it think on the next turn, whatever cooldown it is resting: for a game
    /// that skips time, or a test.
    pub fn end_cooldown(&mut self) {
        if let ThinkState::CoolingDown { .. } = self.state {
            self.state = ThinkState::Idle;
        }
    }

    /// Ends the turn out with the model as `reply` says
    /// ([`Transcript::close_turn`](crate::prompt::Transcript::close_turn)); one that got
    /// no answer gives back the notes it told.
    pub(super) fn close_turn(&mut self, reply: &Result<LlmReply, LlmError>) {
        self.transcript.close_turn(reply);
        let told = std::mem::take(&mut self.notes_told);
        if reply.is_err() {
            self.notes.give_back(told);
        }
    }

    /// Takes back the turn out with the model, which will get no answer: its transcript
    /// goes on from its last answered turn, and the notes it told are told next time.
    pub(super) fn take_back_turn(&mut self) {
        self.transcript.unanswered();
        let told = std::mem::take(&mut self.notes_told);
        self.notes.give_back(told);
    }

    /// What the player said that it is queued to reply to, or waits on the model to.
    pub(super) fn words_unanswered(&self) -> Option<&str> {
        match &self.state {
            ThinkState::Queued { reply_to, .. } => reply_to.as_deref(),
            ThinkState::Waiting(pending) => pending.reply_to.as_deref(),
            ThinkState::Idle | ThinkState::CoolingDown { .. } => None,
        }
    }

    /// `said` after the words it has not answered yet, a line each, the oldest left
    /// out past [`MAX_LINES_UNANSWERED`]: what its reply answers.
    pub(super) fn to_answer(&self, said: String) -> String {
        let Some(earlier) = self.words_unanswered() else {
            return said;
        };
        let lines: Vec<&str> = (earlier.lines().chain([said.as_str()]))
            .filter(|line| !line.trim().is_empty())
            .collect();
        lines[lines.len().saturating_sub(MAX_LINES_UNANSWERED)..].join("\n")
    }

    /// Queues it to think, replying to `reply_to` when the player spoke to it; an
    /// actor already queued takes the newer words. Returns whether it joined the queue
    /// (it was not in it).
    pub(super) fn queue(&mut self, reply_to: Option<String>) -> bool {
        match &mut self.state {
            ThinkState::Queued {
                reply_to: queued, ..
            } => {
                if reply_to.is_some() {
                    *queued = reply_to;
                }
                false
            }
            _ => {
                self.state = ThinkState::Queued {
                    reply_to,
                    asking_again: false,
                };
                true
            }
        }
    }
}

/// The most lines the player said that one reply answers: the newest.
const MAX_LINES_UNANSWERED: usize = 8;

/// The most plan endings a prompt tells: the newest. A game that starts plans which
/// end at once, or a server down for many turns, would grow them past any context.
const MAX_PLAN_ENDINGS: usize = 4;

/// What a smart actor's next prompt tells it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Notes {
    /// Why its last answer was not used: only for a prompt that goes on from it.
    pub answer: Option<String>,
    /// How the plans it followed since its last prompt ended, oldest first: the newest
    /// [`MAX_PLAN_ENDINGS`].
    pub plans_ended: Vec<String>,
}

impl Notes {
    /// Adds how a plan it followed ended to what its next prompt tells it.
    pub fn note_plan_ending(&mut self, ending: &str) {
        self.plans_ended.push(ending.to_owned());
        self.keep_newest_endings();
    }

    fn keep_newest_endings(&mut self) {
        let over = self.plans_ended.len().saturating_sub(MAX_PLAN_ENDINGS);
        self.plans_ended.drain(..over);
    }

    /// What the turn about to be sent tells, taken and kept in `told` until that turn
    /// ends: all of it when the prompt goes on from its last answer, and only how its
    /// plans ended when it starts afresh (there is no last answer to speak of).
    pub fn tell(&mut self, told: &mut Notes) -> (Option<String>, Option<String>) {
        *told = std::mem::take(self);
        let ended = (!told.plans_ended.is_empty()).then(|| told.plans_ended.join(" "));
        let all = match (&told.answer, &ended) {
            (Some(note), Some(ended)) => Some(format!("{note} {ended}")),
            (note, ended) => note.clone().or_else(|| ended.clone()),
        };
        (all, ended)
    }

    /// Puts back the notes a turn that got no answer told, before those noted since.
    fn give_back(&mut self, mut told: Notes) {
        self.answer = self.answer.take().or(told.answer);
        told.plans_ended.append(&mut self.plans_ended);
        self.plans_ended = told.plans_ended;
        self.keep_newest_endings();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_answers_the_newest_lines_said_since_the_last() {
        let mut mind = ActorMind::default();
        assert_eq!(
            mind.to_answer("hello".to_owned()),
            "hello",
            "nothing before"
        );
        for n in 0..12 {
            let said = mind.to_answer(format!("line {n}"));
            mind.queue(Some(said));
        }
        let said = mind.to_answer("   ".to_owned());
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines.len(), MAX_LINES_UNANSWERED, "{said}");
        assert_eq!((lines[0], lines[7]), ("line 4", "line 11"), "the newest");
    }

    #[test]
    fn notes_a_turn_told_come_back_before_those_noted_since_when_it_gets_no_answer() {
        let mut mind = ActorMind::default();
        mind.notes.answer = Some("Your last answer was not used.".to_owned());
        mind.notes.note_plan_ending("Your plan \"Serve\" is done.");
        let told = mind.notes.tell(&mut mind.notes_told);
        assert!(
            told.0.is_some() && mind.notes == Notes::default(),
            "told once"
        );
        mind.notes
            .note_plan_ending("Your plan \"Fetch\" failed: locked.");
        mind.close_turn(&Err(LlmError::Cancelled));
        assert_eq!(
            mind.notes,
            Notes {
                answer: Some("Your last answer was not used.".to_owned()),
                plans_ended: vec![
                    "Your plan \"Serve\" is done.".to_owned(),
                    "Your plan \"Fetch\" failed: locked.".to_owned()
                ],
            }
        );
        mind.notes.tell(&mut mind.notes_told);
        mind.close_turn(&Ok(LlmReply::text("{}")));
        assert_eq!(
            mind.notes,
            Notes::default(),
            "an answered turn keeps nothing back"
        );
        assert_eq!(mind.notes_told, Notes::default());
    }

    #[test]
    fn only_the_newest_plan_endings_are_kept_however_many_come() {
        let mut mind = ActorMind::default();
        for n in 0..10_000 {
            mind.notes.note_plan_ending(&format!("Plan {n} failed."));
        }
        // A server down: each turn gives back what it told.
        for _ in 0..3 {
            mind.notes.tell(&mut mind.notes_told);
            mind.notes.note_plan_ending("Plan 10000 failed.");
            mind.close_turn(&Err(LlmError::Cancelled));
        }
        let (_, ended) = mind.notes.tell(&mut mind.notes_told);
        let ended = ended.expect("endings to tell");
        assert_eq!(
            ended.matches("failed.").count(),
            MAX_PLAN_ENDINGS,
            "{ended}"
        );
        assert!(ended.ends_with("Plan 10000 failed."), "{ended}");
    }

    #[test]
    fn a_perception_is_fitted_once_for_its_text_and_budget() {
        let mut perceived = Perceived::default();
        assert!(perceived.is_older_than(1), "nothing perceived yet");
        let hall = "You are in the hall.\nHere with you: Ada.";
        perceived.rewrite(3, |text| text.push_str(hall));
        assert!(!perceived.is_older_than(3) && perceived.is_older_than(4));
        let whole = (hall, text_fingerprint(hall), false);
        assert_eq!(perceived.fitted(100), whole);
        let first = "You are in the hall.";
        let cut = (first, text_fingerprint(first), true);
        assert_eq!(perceived.fitted(5), cut, "the first line's 5 tokens");
        // Fitted to the same budget, the text is not read again.
        perceived.text.replace_range(..3, "Now");
        assert_eq!(perceived.fitted(5).1, cut.1);
        perceived.rewrite(4, |text| text.push_str(first));
        assert_eq!(perceived.fitted(5), (first, text_fingerprint(first), false));
    }

    fn waiting() -> ThinkState {
        ThinkState::Waiting(PendingDecision {
            request: RequestId(1),
            offered: OfferedActions::default(),
            tasks: OfferedActions::default(),
            abilities: Default::default(),
            fighting: false,
            reply_to: None,
            asking_again: false,
            limits: DecisionLimits::default(),
            cooldown: 0,
        })
    }

    #[test]
    fn only_an_idle_or_rested_actor_is_ready_for_a_turn() {
        assert!(ThinkState::Idle.ready_for(0));
        assert!(!ThinkState::CoolingDown { until: 3 }.ready_for(2));
        assert!(ThinkState::CoolingDown { until: 3 }.ready_for(3));
        let queued = ThinkState::Queued {
            reply_to: None,
            asking_again: false,
        };
        assert!(!queued.ready_for(9) && queued.is_thinking());
        assert!(!waiting().ready_for(9) && waiting().is_thinking());
        assert!(waiting().pending().is_some() && queued.pending().is_none());
    }

    #[test]
    fn queueing_keeps_a_queued_actors_place_and_takes_the_newest_words() {
        let mut mind = ActorMind::default();
        assert!(mind.queue(None), "an idle actor joins the queue");
        assert!(
            !mind.queue(Some("Hello?".into())),
            "a queued one keeps its place"
        );
        assert!(!mind.queue(None), "and its words");
        assert_eq!(
            mind.state,
            ThinkState::Queued {
                reply_to: Some("Hello?".into()),
                asking_again: false
            }
        );
        mind.state = waiting();
        assert!(
            mind.queue(Some("Wait!".into())),
            "a waiting actor is queued again"
        );
    }

    #[test]
    fn ending_a_cooldown_makes_the_actor_ready() {
        let mut mind = ActorMind {
            state: ThinkState::CoolingDown { until: 10 },
            ..ActorMind::default()
        };
        mind.end_cooldown();
        assert!(mind.state.ready_for(1));
        mind.state = waiting();
        mind.end_cooldown();
        assert!(mind.is_thinking(), "a waiting actor keeps waiting");
    }
}
