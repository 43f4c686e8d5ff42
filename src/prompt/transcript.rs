//! An actor's conversation with the model, kept append-only from turn to turn: earlier
//! turns stay as they were sent (with the answers given), and each new turn appends
//! only what changed, so a server that caches prompts reads only the new part.
//!
//! A transcript starts again from a fresh prompt, deterministically, when its system
//! message changed (the spec or template was edited), when the next turn would take
//! it past its token budget, or when the server found it too long for its context
//! ([`Transcript::forget`]). A turn that got no answer (cancelled, timed out, failed)
//! is taken back ([`Transcript::unanswered`]): the next turn continues from the last
//! answered one, whose prefix the server still holds.

use std::hash::BuildHasher;
use std::sync::Arc;

use smallvec::SmallVec;

use super::{PromptPart, PromptSection, estimate_tokens};
use crate::llm::{ChatMessage, LlmError, LlmReply};

/// What an actor is shown on a turn, for the transcript to compare with what it showed.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    /// The system message; one shared by many actors is compared by address first.
    pub system: &'a Arc<str>,
    /// The available-actions block.
    pub actions: &'a str,
    /// Its [`text_fingerprint`]: whoever keeps the block keeps it too, so a turn
    /// whose block did not change does not hash it again.
    pub actions_fingerprint: u64,
    /// What the actor perceives.
    pub perception: &'a str,
    /// Its [`text_fingerprint`], kept with it as `actions_fingerprint` is with the block.
    pub perception_fingerprint: u64,
    /// The ids of the memories recalled.
    pub memories: &'a [u64],
}

/// How a turn goes into the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnPlan {
    /// From a fresh prompt: the system message and the whole user message.
    Fresh,
    /// Appended: only the parts that changed.
    Append {
        /// The actions block changed.
        actions: bool,
        /// The perception changed.
        perception: bool,
        /// Indices (into [`Shown::memories`]) of the memories not shown before.
        memories: Vec<usize>,
    },
}

impl TurnPlan {
    /// Whether the whole prompt is written: a fresh start.
    pub fn is_fresh(&self) -> bool {
        matches!(self, Self::Fresh)
    }

    /// The ids of the `memories` an appended turn shows for the first time.
    fn new_memories(&self, memories: &[u64]) -> Vec<u64> {
        match self {
            Self::Fresh => Vec::new(),
            Self::Append { memories: new, .. } => new
                .iter()
                .filter_map(|&i| memories.get(i).copied())
                .collect(),
        }
    }
}

/// One turn's request as the transcript sends it.
#[derive(Debug, Clone)]
pub struct TurnPrompt {
    /// Every message: earlier turns, their answers, and this turn's; shared with the
    /// transcript.
    pub messages: Arc<Vec<ChatMessage>>,
    /// Each part and its estimated tokens, in order; earlier turns are one
    /// `earlier_turns` section.
    pub sections: Vec<PromptSection>,
    /// The share of its characters that is an unchanged prefix of the actor's previous
    /// request: what a server with prompt caching need not read again.
    pub reused_prefix: f32,
}

/// An actor's running conversation with the model.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// Shared with the last requests made from it; appended to in place once they
    /// are gone, copied first when one is still held.
    messages: Arc<Vec<ChatMessage>>,
    tokens: usize,
    /// The characters of all messages.
    chars: usize,
    /// The characters of the last request's messages.
    requested_chars: usize,
    /// Fingerprints of the actions block and the perception last shown: comparing
    /// them touches 16 bytes of this actor's state instead of two copies of the texts.
    actions: u64,
    perception: u64,
    /// The perception last shown, for a turn to say what changed; and the one before
    /// it, while the last turn can be taken back.
    perception_text: String,
    perception_before: String,
    /// The ids of the memories shown, each once: a few, kept beside the rest of the
    /// transcript's state and searched in order.
    memories: SmallVec<[u64; 8]>,
    /// The last user message has no answer yet.
    awaiting: bool,
    /// How to take back the last turn while it has no answer: what the transcript
    /// was before it. `None` after a fresh start, which is taken back whole.
    before_turn: Option<BeforeTurn>,
}

/// A transcript's state before its last appended turn.
#[derive(Debug, Clone, Default)]
struct BeforeTurn {
    messages: usize,
    tokens: usize,
    chars: usize,
    actions: u64,
    perception: u64,
    /// The memories the turn showed for the first time.
    new_memories: Vec<u64>,
}

impl Transcript {
    /// The messages so far.
    pub fn messages(&self) -> &[ChatMessage] {
        &self.messages
    }

    /// Their estimated tokens.
    pub fn tokens(&self) -> usize {
        self.tokens
    }

    /// The perception the transcript showed last; empty before its first turn.
    pub fn shown_perception(&self) -> &str {
        &self.perception_text
    }

    /// How this turn should go in: appended when the transcript can take it.
    fn plan(&self, shown: &Shown<'_>, seen: Seen) -> TurnPlan {
        if !self.continues(shown.system) {
            return TurnPlan::Fresh;
        }
        TurnPlan::Append {
            actions: self.actions != seen.actions,
            perception: self.perception != seen.perception,
            memories: (0..shown.memories.len())
                .filter(|&i| !self.memories.contains(&shown.memories[i]))
                .collect(),
        }
    }

    /// The next turn's request. `write` writes the user message for a plan, with its
    /// sections, into `user` (cleared first): everything for [`TurnPlan::Fresh`], only
    /// what changed for [`TurnPlan::Append`]; it is given the perception shown last
    /// ([`shown_perception`](Self::shown_perception)), to say what changed in it. An
    /// appended turn that would take the transcript past `budget` tokens starts it
    /// again instead. `user` is working space: a caller prompting many actors passes
    /// one buffer for all of them.
    pub fn next_turn(
        &mut self,
        shown: &Shown<'_>,
        system_sections: &[PromptSection],
        budget: usize,
        user: &mut PromptPart,
        mut write: impl FnMut(&TurnPlan, &str, &mut PromptPart),
    ) -> TurnPrompt {
        match self.append_turn(shown, budget, user, &mut write) {
            Some(turn) => turn,
            None => self.fresh_turn(shown, system_sections, user, write),
        }
    }

    /// The next turn's request appended to the transcript, as
    /// [`next_turn`](Self::next_turn) appends it; `None`, and the transcript as it was,
    /// when the turn must start it again: under another system message, after a turn
    /// left unanswered, or past `budget` tokens. A caller that shows a fresh prompt
    /// something else than an appended turn (an offer trimmed to what a fresh prompt
    /// leaves it) learns so before it is written.
    pub fn append_turn(
        &mut self,
        shown: &Shown<'_>,
        budget: usize,
        user: &mut PromptPart,
        mut write: impl FnMut(&TurnPlan, &str, &mut PromptPart),
    ) -> Option<TurnPrompt> {
        let seen = Seen::of(shown);
        let plan = self.plan(shown, seen);
        // An appended turn that shows the actions again is at least their block: when
        // that does not fit, the turn starts afresh without being written to be measured.
        let too_long = |plan: &TurnPlan| match plan {
            TurnPlan::Append { actions: true, .. } => {
                !self.fits(estimate_tokens(shown.actions), budget)
            }
            _ => false,
        };
        if plan.is_fresh() || too_long(&plan) {
            return None;
        }
        let tokens = write_into(&plan, &self.perception_text, user, &mut write);
        if !self.fits(tokens, budget) {
            return None;
        }
        let earlier = self.tokens;
        let reused = self.requested_chars;
        self.before_turn = Some(BeforeTurn {
            messages: self.messages.len(),
            tokens: self.tokens,
            chars: self.chars,
            actions: self.actions,
            perception: self.perception,
            new_memories: plan.new_memories(shown.memories),
        });
        self.append(shown, seen, Arc::from(user.text.as_str()), tokens);
        let mut all = Vec::with_capacity(user.sections.len() + 1);
        all.push(PromptSection {
            name: "earlier_turns",
            tokens: earlier,
        });
        all.extend_from_slice(&user.sections);
        Some(self.prompt(all, reused))
    }

    /// The next turn's request from a fresh prompt, which starts the transcript again:
    /// the system message (whose sections are `system_sections`) and the whole user
    /// message, written by `write` as [`next_turn`](Self::next_turn) writes it.
    pub fn fresh_turn(
        &mut self,
        shown: &Shown<'_>,
        system_sections: &[PromptSection],
        user: &mut PromptPart,
        mut write: impl FnMut(&TurnPlan, &str, &mut PromptPart),
    ) -> TurnPrompt {
        let tokens = write_into(&TurnPlan::Fresh, &self.perception_text, user, &mut write);
        // What a fresh start shares with the last request: the system message when it
        // is the same, and the start of the first user message; all of it, kept, when
        // nothing it says changed.
        let (reused, kept) = match self.messages.as_slice() {
            [system, first, ..]
                if Arc::ptr_eq(&system.content, shown.system)
                    || *system.content == **shown.system =>
            {
                let common = common_prefix(user.text.as_bytes(), first.content.as_bytes());
                let same = common == user.text.len() && common == first.content.len();
                let kept = same.then(|| Arc::clone(&first.content));
                (system.content.len() + common, kept)
            }
            _ => (0, None),
        };
        let first_user = kept.unwrap_or_else(|| Arc::from(user.text.as_str()));
        self.restart(shown, Seen::of(shown), first_user, tokens);
        self.before_turn = None;
        let mut all = Vec::with_capacity(system_sections.len() + user.sections.len());
        all.extend_from_slice(system_sections);
        all.extend_from_slice(&user.sections);
        self.prompt(all, reused)
    }

    fn prompt(&mut self, sections: Vec<PromptSection>, reused: usize) -> TurnPrompt {
        self.requested_chars = self.chars;
        TurnPrompt {
            messages: Arc::clone(&self.messages),
            sections,
            reused_prefix: reused as f32 / self.chars.max(1) as f32,
        }
    }

    /// Whether the next turn can be appended under this system message (it may still
    /// start again if it outgrows its budget): the system message is the one it
    /// started with, and the last turn was answered.
    pub fn continues(&self, system: &Arc<str>) -> bool {
        !self.awaiting
            && self.messages.first().is_some_and(|first| {
                Arc::ptr_eq(&first.content, system) || *first.content == **system
            })
    }

    /// Whether a user message of `tokens` more fits in `budget`.
    fn fits(&self, tokens: usize, budget: usize) -> bool {
        self.tokens + tokens <= budget
    }

    /// Starts again from a fresh prompt.
    /// `user` is the first user message, of `tokens` estimated tokens.
    fn restart(&mut self, shown: &Shown<'_>, seen: Seen, user: Arc<str>, tokens: usize) {
        match Arc::get_mut(&mut self.messages) {
            Some(messages) => messages.clear(),
            None => self.messages = Arc::default(),
        }
        self.memories.clear();
        self.tokens = 0;
        self.chars = 0;
        let system = ChatMessage::system(Arc::clone(shown.system));
        self.push(system, estimate_tokens(shown.system));
        self.append(shown, seen, user, tokens);
    }

    /// Notes the model's answer to the last turn.
    pub fn answered(&mut self, answer: &str) {
        if self.awaiting {
            self.push(
                ChatMessage::assistant(Arc::<str>::from(answer)),
                estimate_tokens(answer),
            );
            self.awaiting = false;
        }
    }

    /// Ends the last turn as the model's reply says: an answer is kept (used or not);
    /// a context overflow [forgets](Self::forget) the conversation; any other failure
    /// takes the turn back ([`unanswered`](Self::unanswered)).
    pub fn close_turn(&mut self, reply: &Result<LlmReply, LlmError>) {
        match reply {
            Ok(reply) => self.answered(&reply.text),
            Err(LlmError::ContextExceeded { .. }) => self.forget(),
            Err(_) => self.unanswered(),
        }
    }

    /// Takes back the last turn, which got no answer (it was cancelled, ran out of
    /// time or failed): the next turn continues from the one before, which the server
    /// still holds, instead of starting again. A fresh start is taken back whole.
    pub fn unanswered(&mut self) {
        if !self.awaiting {
            return;
        }
        self.awaiting = false;
        let Some(before) = self.before_turn.take() else {
            self.forget();
            return;
        };
        Arc::make_mut(&mut self.messages).truncate(before.messages);
        if self.perception != before.perception {
            std::mem::swap(&mut self.perception_text, &mut self.perception_before);
        }
        self.tokens = before.tokens;
        self.chars = before.chars;
        self.requested_chars = before.chars;
        self.actions = before.actions;
        self.perception = before.perception;
        self.memories.retain(|id| !before.new_memories.contains(id));
    }

    /// Forgets the conversation: the next turn starts from a fresh prompt. For a
    /// transcript the server found too long for its context.
    pub fn forget(&mut self) {
        *self = Self::default();
    }

    /// Appends a turn's user message, of `tokens` estimated tokens, and notes what it
    /// showed.
    fn append(&mut self, shown: &Shown<'_>, seen: Seen, user: Arc<str>, tokens: usize) {
        self.actions = seen.actions;
        if self.perception != seen.perception {
            // Kept for taking the turn back; the buffers serve turn after turn.
            std::mem::swap(&mut self.perception_text, &mut self.perception_before);
            self.perception_text.clear();
            self.perception_text.push_str(shown.perception);
        }
        self.perception = seen.perception;
        for &id in shown.memories {
            if !self.memories.contains(&id) {
                self.memories.push(id);
            }
        }
        self.push(ChatMessage::user(user), tokens);
        self.awaiting = true;
    }

    /// Appends `message`, of `tokens` estimated tokens.
    fn push(&mut self, message: ChatMessage, tokens: usize) {
        self.tokens += tokens;
        self.chars += message.content.len();
        Arc::make_mut(&mut self.messages).push(message);
    }
}

/// Fingerprints ([`text_fingerprint`]) of what a turn shows that the transcript
/// compares with the next.
#[derive(Clone, Copy)]
struct Seen {
    actions: u64,
    perception: u64,
}

impl Seen {
    fn of(shown: &Shown<'_>) -> Self {
        debug_assert_eq!(
            shown.actions_fingerprint,
            text_fingerprint(shown.actions),
            "Shown::actions_fingerprint is not the block's"
        );
        debug_assert_eq!(
            shown.perception_fingerprint,
            text_fingerprint(shown.perception),
            "Shown::perception_fingerprint is not the perception's"
        );
        Self {
            actions: shown.actions_fingerprint,
            perception: shown.perception_fingerprint,
        }
    }
}

/// Writes the user message of `plan` with `write` into `user`, cleared first, given the
/// perception shown last; returns its estimated tokens.
fn write_into(
    plan: &TurnPlan,
    shown_perception: &str,
    user: &mut PromptPart,
    write: &mut impl FnMut(&TurnPlan, &str, &mut PromptPart),
) -> usize {
    user.text.clear();
    user.sections.clear();
    write(plan, shown_perception, user);
    estimate_tokens(&user.text)
}

/// A fingerprint of a text: two texts with the same one are, but for a 64-bit hash
/// collision, the same text.
pub fn text_fingerprint(text: &str) -> u64 {
    bevy::platform::hash::FixedHasher.hash_one(text)
}

/// How many leading bytes two texts share, compared a block at a time.
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let shorter = a.len().min(b.len());
    let mut same = 0;
    while same + BLOCK <= shorter && a[same..same + BLOCK] == b[same..same + BLOCK] {
        same += BLOCK;
    }
    same + a[same..shorter]
        .iter()
        .zip(&b[same..shorter])
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> &'static Arc<str> {
        static RULES: std::sync::OnceLock<Arc<str>> = std::sync::OnceLock::new();
        RULES.get_or_init(|| "rules".into())
    }

    /// What [`shown`] perceives.
    const COMMON_ROOM: &str = "You are in the common room.";

    fn shown<'a>(actions: &'a str, memories: &'a [u64]) -> Shown<'a> {
        Shown {
            system: rules(),
            actions,
            actions_fingerprint: text_fingerprint(actions),
            perception: COMMON_ROOM,
            perception_fingerprint: text_fingerprint(COMMON_ROOM),
            memories,
        }
    }

    fn plan(transcript: &Transcript, shown: &Shown<'_>) -> TurnPlan {
        transcript.plan(shown, Seen::of(shown))
    }

    fn restart(transcript: &mut Transcript, shown: &Shown<'_>, user: &str) {
        transcript.restart(shown, Seen::of(shown), user.into(), estimate_tokens(user));
    }

    /// A user message for a plan: the whole turn, or what changed.
    fn write(plan: &TurnPlan, _shown_perception: &str, user: &mut PromptPart) {
        user.text.push_str(match plan {
            TurnPlan::Fresh => "the whole turn",
            TurnPlan::Append { .. } => "what changed",
        });
    }

    /// The next turn, written by [`write`].
    fn next(transcript: &mut Transcript, shown: &Shown<'_>, budget: usize) -> TurnPrompt {
        transcript.next_turn(shown, &[], budget, &mut PromptPart::default(), write)
    }

    #[test]
    fn a_new_transcript_starts_fresh_then_appends_what_changed() {
        let mut transcript = Transcript::default();
        assert_eq!(plan(&transcript, &shown("wait", &[1])), TurnPlan::Fresh);
        restart(&mut transcript, &shown("wait", &[1]), "turn 1");
        transcript.answered(r#"{"type": "NONE"}"#);
        assert_eq!(
            plan(&transcript, &shown("wait", &[1, 2])),
            TurnPlan::Append {
                actions: false,
                perception: false,
                memories: vec![1]
            }
        );
        let turn_2 = shown("wait\nlook around", &[1, 2]);
        transcript.append(&turn_2, Seen::of(&turn_2), "turn 2".into(), 2);
        let roles: Vec<_> = transcript
            .messages()
            .iter()
            .map(|m| (m.role.clone(), m.content.to_string()))
            .collect();
        assert_eq!(roles.len(), 4, "system, user, assistant, user: {roles:?}");
        assert_eq!(roles[3].1, "turn 2");
    }

    #[test]
    fn next_turn_appends_within_budget_and_measures_the_reused_prefix() {
        let mut transcript = Transcript::default();
        let first = next(&mut transcript, &shown("wait", &[]), 1000);
        assert_eq!(first.messages.len(), 2);
        assert_eq!(first.reused_prefix, 0.0);
        transcript.answered("{}");
        let second = next(&mut transcript, &shown("wait", &[]), 1000);
        assert_eq!(second.messages.len(), 4);
        let before = "rules".len() + "the whole turn".len();
        let after = before + "{}".len() + "what changed".len();
        assert_eq!(second.reused_prefix, before as f32 / after as f32);
        assert_eq!(second.sections[0].name, "earlier_turns");
        transcript.answered("{}");
        // A budget the next turn would pass: a fresh start, sharing the system message
        // and the first user message with the last request.
        let budget = transcript.tokens();
        let third = next(&mut transcript, &shown("wait", &[]), budget);
        assert_eq!(third.messages.len(), 2);
        assert_eq!(third.reused_prefix, 1.0);
        assert!(
            Arc::ptr_eq(&third.messages[1].content, &first.messages[1].content),
            "the same first user message, kept rather than copied"
        );
        // A fresh start that says something else writes it anew.
        transcript.answered("{}");
        let mut user = PromptPart::default();
        let fourth = transcript.next_turn(&shown("wait", &[]), &[], 0, &mut user, |_, _, user| {
            user.text.push_str("the whole turn, and more")
        });
        assert_eq!(&*fourth.messages[1].content, "the whole turn, and more");
        let shared = "rules".len() + "the whole turn".len();
        let whole = "rules".len() + "the whole turn, and more".len();
        assert_eq!(fourth.reused_prefix, shared as f32 / whole as f32);
    }

    #[test]
    fn a_turn_that_cannot_be_appended_leaves_the_transcript_for_a_fresh_start() {
        let mut transcript = Transcript::default();
        let mut user = PromptPart::default();
        let first = shown("wait", &[]);
        assert!(
            transcript
                .append_turn(&first, 1000, &mut user, write)
                .is_none()
        );
        assert!(transcript.messages().is_empty(), "nothing to append to");
        transcript.fresh_turn(&first, &[], &mut user, write);
        transcript.answered("{}");
        let (messages, tokens) = (transcript.messages().to_vec(), transcript.tokens());
        let too_small = tokens + estimate_tokens("what changed") - 1;
        let next = shown("wait", &[7]);
        assert!(
            transcript
                .append_turn(&next, too_small, &mut user, write)
                .is_none()
        );
        assert_eq!(transcript.messages(), messages, "as it was");
        assert_eq!(transcript.tokens(), tokens);
        let turn = transcript.fresh_turn(&next, &[], &mut user, write);
        assert_eq!(turn.messages.len(), 2, "started again");
        assert!(
            turn.reused_prefix > 0.0,
            "the system message, as it was sent"
        );
    }

    #[test]
    fn new_actions_too_long_to_append_start_afresh_without_writing_the_appended_turn() {
        let mut transcript = Transcript::default();
        next(&mut transcript, &shown("wait", &[]), 1000);
        transcript.answered("{}");
        // The next turn, and the plans it was written for.
        let planned = |transcript: &mut Transcript, actions: &str, budget: usize| {
            let mut plans = Vec::new();
            let turn = transcript.next_turn(
                &shown(actions, &[]),
                &[],
                budget,
                &mut PromptPart::default(),
                |plan, shown_perception, user| {
                    plans.push(plan.clone());
                    write(plan, shown_perception, user);
                },
            );
            (turn, plans)
        };
        let long = "go north\n".repeat(40);
        let budget = transcript.tokens() + estimate_tokens(&long) - 1;
        let (turn, plans) = planned(&mut transcript, &long, budget);
        assert_eq!(plans, [TurnPlan::Fresh], "written once, afresh");
        assert_eq!(turn.messages.len(), 2);
        // Other actions with room for them are appended.
        transcript.answered("{}");
        let other = "go south\n".repeat(40);
        let budget = transcript.tokens() + estimate_tokens(&other) + 10;
        let (_, plans) = planned(&mut transcript, &other, budget);
        assert!(
            matches!(plans[..], [TurnPlan::Append { actions: true, .. }]),
            "{plans:?}"
        );
    }

    #[test]
    fn a_prompt_still_held_keeps_its_messages_and_a_dropped_one_is_appended_in_place() {
        let mut transcript = Transcript::default();
        let first = next(&mut transcript, &shown("wait", &[]), 1000);
        transcript.answered("{}");
        let second = next(&mut transcript, &shown("wait", &[]), 1000);
        assert_eq!(
            first.messages.len(),
            2,
            "the first prompt, still held, is as sent"
        );
        assert_eq!(second.messages.len(), 4);
        let list = Arc::as_ptr(&second.messages);
        drop((first, second));
        transcript.answered("{}");
        let third = next(&mut transcript, &shown("wait", &[]), 1000);
        assert_eq!(third.messages.len(), 6);
        assert_eq!(
            Arc::as_ptr(&third.messages),
            list,
            "nobody held the last prompt: appended in place"
        );
    }

    #[test]
    fn an_unanswered_turn_is_taken_back_and_the_next_continues_warm() {
        let mut transcript = Transcript::default();
        next(&mut transcript, &shown("wait", &[1]), 1000);
        transcript.answered("{}");
        let answered = transcript.messages().to_vec();
        let tokens = transcript.tokens();
        // A turn with new actions and a new memory gets no answer.
        let lost = next(&mut transcript, &shown("wait\ngo north", &[1, 2]), 1000);
        assert_eq!(lost.messages.len(), 4);
        transcript.unanswered();
        assert_eq!(transcript.messages(), answered.as_slice());
        assert_eq!(transcript.tokens(), tokens);
        // The next turn continues, showing again what the lost one showed first.
        assert_eq!(
            plan(&transcript, &shown("wait\ngo north", &[1, 2])),
            TurnPlan::Append {
                actions: true,
                perception: false,
                memories: vec![1]
            }
        );
        let next = next(&mut transcript, &shown("wait\ngo north", &[1, 2]), 1000);
        assert_eq!(next.messages.len(), 4);
        assert_eq!(
            next.messages[..3],
            answered[..],
            "the answered turns, unchanged"
        );
        assert!(next.reused_prefix > 0.5, "warm: {}", next.reused_prefix);
    }

    #[test]
    fn the_perception_shown_last_is_kept_and_taken_back_with_its_turn() {
        let mut transcript = Transcript::default();
        assert_eq!(transcript.shown_perception(), "");
        let at = |perception| Shown {
            perception,
            perception_fingerprint: text_fingerprint(perception),
            ..shown("wait", &[])
        };
        next(&mut transcript, &at("You are in the hall."), 1000);
        transcript.answered("{}");
        assert_eq!(transcript.shown_perception(), "You are in the hall.");
        // A turn showing another perception gets no answer: the one before stands.
        next(&mut transcript, &at("You are in the yard."), 1000);
        assert_eq!(transcript.shown_perception(), "You are in the yard.");
        transcript.unanswered();
        assert_eq!(transcript.shown_perception(), "You are in the hall.");
        // One showing the same perception and taken back leaves it too.
        next(&mut transcript, &at("You are in the hall."), 1000);
        transcript.unanswered();
        assert_eq!(transcript.shown_perception(), "You are in the hall.");
        next(&mut transcript, &at("You are in the yard."), 1000);
        transcript.answered("{}");
        assert_eq!(transcript.shown_perception(), "You are in the yard.");
        transcript.forget();
        assert_eq!(transcript.shown_perception(), "");
    }

    #[test]
    fn an_unanswered_fresh_start_or_a_forgotten_transcript_starts_again() {
        let mut transcript = Transcript::default();
        next(&mut transcript, &shown("wait", &[]), 1000);
        transcript.unanswered();
        assert_eq!(plan(&transcript, &shown("wait", &[])), TurnPlan::Fresh);
        next(&mut transcript, &shown("wait", &[]), 1000);
        transcript.answered("{}");
        transcript.forget();
        assert_eq!(plan(&transcript, &shown("wait", &[])), TurnPlan::Fresh);
        assert!(transcript.messages().is_empty());
    }

    #[test]
    fn an_unanswered_turn_or_a_changed_system_starts_again() {
        let mut transcript = Transcript::default();
        restart(&mut transcript, &shown("wait", &[]), "turn 1");
        assert_eq!(
            plan(&transcript, &shown("wait", &[])),
            TurnPlan::Fresh,
            "no answer came"
        );
        transcript.answered("{}");
        let new_rules: Arc<str> = "new rules".into();
        let edited = Shown {
            system: &new_rules,
            ..shown("wait", &[])
        };
        assert_eq!(plan(&transcript, &edited), TurnPlan::Fresh);
        assert!(transcript.fits(10, transcript.tokens() + 10));
        assert!(!transcript.fits(11, transcript.tokens() + 10));
    }
}
