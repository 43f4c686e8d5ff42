//! An actor's conversation with the model, kept append-only from turn to turn: earlier
//! turns stay as they were sent (with the answers given), and each new turn appends
//! only what changed, so a server that caches prompts reads only the new part.
//!
//! A transcript starts again from a fresh prompt, deterministically, when its system
//! message changed (the spec or template was edited), when the last request got no
//! answer, or when the next turn would take it past its token budget.

use std::collections::HashSet;

use crate::llm::ChatMessage;
use crate::prompt::estimate_tokens;

/// What an actor is shown on a turn, for the transcript to compare with what it showed.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    /// The system message.
    pub system: &'a str,
    /// The available-actions block.
    pub actions: &'a str,
    /// What the actor perceives.
    pub perception: &'a str,
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

/// An actor's running conversation with the model.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    messages: Vec<ChatMessage>,
    tokens: usize,
    actions: String,
    perception: String,
    memories: HashSet<u64>,
    /// The last user message has no answer yet.
    awaiting: bool,
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

    /// How this turn should go in: appended when the transcript can take it.
    pub fn plan(&self, shown: &Shown<'_>) -> TurnPlan {
        let same_system = self
            .messages
            .first()
            .is_some_and(|first| *first.content == *shown.system);
        if !same_system || self.awaiting {
            return TurnPlan::Fresh;
        }
        TurnPlan::Append {
            actions: self.actions != shown.actions,
            perception: self.perception != shown.perception,
            memories: (0..shown.memories.len())
                .filter(|&i| !self.memories.contains(&shown.memories[i]))
                .collect(),
        }
    }

    /// Whether a user message of `tokens` more fits in `budget`.
    pub fn fits(&self, tokens: usize, budget: usize) -> bool {
        self.tokens + tokens <= budget
    }

    /// Starts again from a fresh prompt.
    pub fn restart(&mut self, shown: &Shown<'_>, user: String) {
        self.messages.clear();
        self.memories.clear();
        self.tokens = 0;
        self.push(ChatMessage::system(shown.system.to_owned()));
        self.show(shown, user);
    }

    /// Appends a turn's user message.
    pub fn append(&mut self, shown: &Shown<'_>, user: String) {
        self.show(shown, user);
    }

    /// Notes the model's answer to the last turn.
    pub fn answered(&mut self, answer: &str) {
        if self.awaiting {
            self.push(ChatMessage::assistant(answer.to_owned()));
            self.awaiting = false;
        }
    }

    fn show(&mut self, shown: &Shown<'_>, user: String) {
        shown.actions.clone_into(&mut self.actions);
        shown.perception.clone_into(&mut self.perception);
        self.memories.extend(shown.memories.iter().copied());
        self.push(ChatMessage::user(user));
        self.awaiting = true;
    }

    fn push(&mut self, message: ChatMessage) {
        self.tokens += estimate_tokens(&message.content);
        self.messages.push(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown<'a>(actions: &'a str, memories: &'a [u64]) -> Shown<'a> {
        Shown {
            system: "rules",
            actions,
            perception: "You are in the common room.",
            memories,
        }
    }

    #[test]
    fn a_new_transcript_starts_fresh_then_appends_what_changed() {
        let mut transcript = Transcript::default();
        assert_eq!(transcript.plan(&shown("wait", &[1])), TurnPlan::Fresh);
        transcript.restart(&shown("wait", &[1]), "turn 1".into());
        transcript.answered(r#"{"type": "NONE"}"#);
        assert_eq!(
            transcript.plan(&shown("wait", &[1, 2])),
            TurnPlan::Append {
                actions: false,
                perception: false,
                memories: vec![1]
            }
        );
        transcript.append(&shown("wait\nlook around", &[1, 2]), "turn 2".into());
        let roles: Vec<_> = transcript
            .messages()
            .iter()
            .map(|m| (m.role.clone(), m.content.to_string()))
            .collect();
        assert_eq!(roles.len(), 4, "system, user, assistant, user: {roles:?}");
        assert_eq!(roles[3].1, "turn 2");
    }

    #[test]
    fn an_unanswered_turn_or_a_changed_system_starts_again() {
        let mut transcript = Transcript::default();
        transcript.restart(&shown("wait", &[]), "turn 1".into());
        assert_eq!(
            transcript.plan(&shown("wait", &[])),
            TurnPlan::Fresh,
            "no answer came"
        );
        transcript.answered("{}");
        let edited = Shown {
            system: "new rules",
            ..shown("wait", &[])
        };
        assert_eq!(transcript.plan(&edited), TurnPlan::Fresh);
        assert!(transcript.fits(10, transcript.tokens() + 10));
        assert!(!transcript.fits(11, transcript.tokens() + 10));
    }
}
