//! One turn's request: the limits its answer is held to, what a fresh prompt leaves
//! the offer, the user message for how the turn goes into the transcript, and the
//! request sent to the bridge.

use std::sync::Arc;

use serde_json::Value;
use smallvec::SmallVec;

use super::super::SmartActorSettings;
use super::super::mind::FreshBudgets;
use crate::content::{ActorSpec, PromptTemplate};
use crate::llm::{ChatMessage, LlmRequest, Priority, SamplingOptions};
use crate::prompt::{
    DecisionContext, DecisionLimits, OfflineDecision, PromptPart, TokenScale, TurnPlan,
    estimate_tokens, write_decision_user_prompt,
};
use crate::world::{OfferedAbilities, OfferedActions, write_perception_changes};

/// What an appended turn says in place of actions that did not change: a line where a
/// block would be, read again by every later turn of the transcript.
pub(super) const SAME_ACTIONS: &str = "(The same actions as before, with the same numbers.)";

/// What an appended turn says in place of an offer of actions and tasks that did not
/// change.
pub(super) const SAME_ACTIONS_AND_TASKS: &str =
    "(The same actions and tasks as before, with the same numbers.)";

/// The limits an actor of `spec` answers within: the settings' `limits`, with the
/// spec's own speech and colour-line limits.
pub(super) fn decision_limits(spec: &ActorSpec, limits: &DecisionLimits) -> DecisionLimits {
    DecisionLimits {
        max_speech_chars: spec.policy.speech_limit(limits.max_speech_chars),
        max_color_lines: spec.policy.color_line_limit(limits.max_color_lines),
        ..limits.clone()
    }
}

/// The tokens a transcript may reach: `budget`, or less when the server said one of
/// its slots holds `context_per_slot` tokens, leaving room for an answer of
/// `answer_tokens`, but never more than half the slot: a long answer the model may
/// give does not leave a small slot without a transcript.
pub(super) fn transcript_budget(
    budget: usize,
    context_per_slot: Option<u32>,
    answer_tokens: u32,
) -> usize {
    match context_per_slot {
        Some(context) => {
            let room = context.saturating_sub(answer_tokens.min(context / 2)) as usize;
            budget.min(room)
        }
        None => budget,
    }
}

/// Writes into `user` the user message of a turn that goes in as `plan`, from
/// everything the turn shows (`whole`, and whether it offers tasks): all of it but the
/// note for a fresh prompt; for an appended turn, the note and what changed, the same
/// offer said in a line and of a changed perception only what changed since `shown`,
/// the perception shown last (empty to say it whole), written in `changes`
/// ([`write_perception_changes`]) when that is shorter.
pub(super) fn write_turn_message(
    user: &mut PromptPart,
    template: &PromptTemplate,
    plan: &TurnPlan,
    (whole, with_tasks): (&DecisionContext<'_>, bool),
    (shown, changes): (&str, &mut String),
    fresh_note: Option<&str>,
) {
    let context = match plan {
        TurnPlan::Fresh => DecisionContext {
            note: fresh_note,
            ..*whole
        },
        TurnPlan::Append {
            actions,
            perception,
            memories,
        } => {
            let new: SmallVec<[&str; 8]> = memories.iter().map(|&i| whole.memories[i]).collect();
            let perception = match *perception {
                true if write_perception_changes(changes, shown, whole.perception) => changes,
                true => whole.perception,
                false => "",
            };
            let context = DecisionContext {
                perception,
                memories: &new,
                actions_block: match (*actions, with_tasks) {
                    (true, _) => whole.actions_block,
                    (false, false) => SAME_ACTIONS,
                    (false, true) => SAME_ACTIONS_AND_TASKS,
                },
                ..*whole
            };
            write_decision_user_prompt(user, template, &context);
            return;
        }
    };
    write_decision_user_prompt(user, template, &context);
}

/// The request for a decision: `messages` answered by the `schema`, or offline by
/// `offline`, in at most `answer_tokens`, on the server (and slot) of `affinity`; a
/// reply to the player goes before background thinking.
pub(super) fn decision_request(
    messages: Arc<Vec<ChatMessage>>,
    schema: Arc<Value>,
    offline: OfflineDecision,
    answer_tokens: u32,
    affinity: u64,
    replying: bool,
) -> LlmRequest {
    LlmRequest {
        messages,
        schema: Some(schema),
        offline: Some(Arc::new(offline)),
        sampling: SamplingOptions {
            max_tokens: Some(answer_tokens),
            ..SamplingOptions::default()
        },
        // Each actor's requests go to the same server (and slot), which keeps its
        // prompt prefix.
        affinity: Some(affinity),
        // The player waits for a reply; background thinking can wait.
        priority: if replying {
            Priority::Dialogue
        } else {
            Priority::Background
        },
        ..LlmRequest::default()
    }
}

/// An offline answer for an actor called `name` among `offered` and `tasks`, and the
/// `abilities` when they go in the answer (not `as_tools`).
pub(super) fn offline_decision(
    name: &Arc<str>,
    (offered, tasks): (&OfferedActions, &OfferedActions),
    (abilities, as_tools): (&OfferedAbilities, bool),
) -> OfflineDecision {
    OfflineDecision {
        actor: Arc::clone(name),
        offered: offered.clone(),
        tasks: tasks.clone(),
        // Abilities offered as tools are invoked by a server's call, which no offline
        // answer makes.
        abilities: if as_tools {
            OfferedAbilities::default()
        } else {
            abilities.clone()
        },
    }
}

impl FreshBudgets {
    /// What a fresh prompt leaves the offer, fixed for the life of the transcript it
    /// starts: the actions get what the `system` message and the user message without
    /// them (`whole`, written from `template` into the buffer `user`) leave of
    /// `settings`' total, and the tasks and abilities their own budgets. A fresh
    /// prompt, tasks and abilities (when it is offered any) with it, fits `room`, what
    /// the server's slot holds besides the answer: on a small one, with less of the
    /// offer, rather than sent whole and refused.
    pub(super) fn of(
        settings: &SmartActorSettings,
        scale: TokenScale,
        (room, abilities): (usize, bool),
        (system, template, whole, user): (
            &str,
            &PromptTemplate,
            &DecisionContext<'_>,
            &mut PromptPart,
        ),
    ) -> Self {
        let budgets = &settings.budgets;
        // Budgets as high as they go mean "never trim": added, they stay that; and a
        // room not known (`usize::MAX`) bounds nothing, however much is set aside.
        let beside = (budgets.tasks * usize::from(settings.offer_tasks))
            .saturating_add(budgets.abilities * usize::from(abilities));
        let left = match room {
            usize::MAX => room,
            known => known.saturating_sub(beside),
        };
        let total = scale.to_estimate(budgets.total.min(left));
        user.text.clear();
        user.sections.clear();
        write_decision_user_prompt(user, template, whole);
        let rest = estimate_tokens(system) + estimate_tokens(&user.text);
        Self {
            actions: total.saturating_sub(rest),
            tasks: scale.to_estimate(budgets.tasks),
            abilities: scale.to_estimate(budgets.abilities),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::PERCEPTION_CHANGES;

    fn whole<'a>(memories: &'a [&'a str]) -> DecisionContext<'a> {
        DecisionContext {
            perception: "You are in the hall.",
            memories,
            player_says: None,
            fighting: false,
            actions_block: "<available_actions>\nwait\n</available_actions>",
            note: Some("Your last answer was not valid JSON."),
        }
    }

    fn written(plan: &TurnPlan, whole: &DecisionContext<'_>) -> String {
        written_with(plan, whole, false)
    }

    fn written_with(plan: &TurnPlan, whole: &DecisionContext<'_>, tasks: bool) -> String {
        let mut user = PromptPart::default();
        let template = PromptTemplate::default();
        let shown = "You are in the hall.\nHere with you: Ada.";
        let perception = (shown, &mut String::new());
        write_turn_message(&mut user, &template, plan, (whole, tasks), perception, None);
        user.text
    }

    #[test]
    fn a_fresh_turn_shows_everything_but_the_note() {
        let text = written(&TurnPlan::Fresh, &whole(&["Brom said hello."]));
        assert!(text.starts_with("<available_actions>\nwait"), "{text}");
        assert!(text.contains("You are in the hall.") && text.contains("Brom said hello."));
        assert!(!text.contains("not valid JSON"));
    }

    #[test]
    fn an_appended_turn_shows_the_note_and_only_what_changed() {
        let memories = ["Brom said hello.", "Ada left."];
        let plan = TurnPlan::Append {
            actions: false,
            perception: false,
            memories: vec![1],
        };
        let text = written(&plan, &whole(&memories));
        assert!(text.starts_with("Your last answer was not valid JSON.\n\n"));
        assert!(text.contains(SAME_ACTIONS), "{text}");
        assert!(!text.contains("You are in the hall.") && !text.contains("Brom said hello."));
        assert!(text.contains("Ada left."));
        let changed = TurnPlan::Append {
            actions: true,
            perception: true,
            memories: vec![],
        };
        let text = written(&changed, &whole(&memories));
        assert!(text.contains("wait\n</available_actions>") && !text.contains(SAME_ACTIONS));
        assert!(text.contains("You are in the hall.") && !text.contains("Ada left."));
        let same = TurnPlan::Append {
            actions: false,
            perception: false,
            memories: vec![],
        };
        let text = written_with(&same, &whole(&memories), true);
        assert!(text.contains(SAME_ACTIONS_AND_TASKS), "{text}");
    }

    #[test]
    fn a_changed_perception_is_said_whole_afresh_and_only_what_changed_when_appended() {
        let before = "You are in the hall.\nHere with you: Ada.\nYou see: a long bench, \
                      a cold hearth.\nExits: the yard.";
        let now = "You are in the hall.\nHere with you: Ada, Brom.\nYou see: a long \
                   bench, a cold hearth.\nExits: the yard.";
        let whole = DecisionContext {
            perception: now,
            ..whole(&[])
        };
        let write = |plan: &TurnPlan| {
            let mut user = PromptPart::default();
            let perception = (before, &mut String::from("from another actor"));
            let shown = (&whole, false);
            let template = PromptTemplate::default();
            write_turn_message(&mut user, &template, plan, shown, perception, None);
            user.text
        };
        let appended = write(&TurnPlan::Append {
            actions: false,
            perception: true,
            memories: vec![],
        });
        let changes = format!("{PERCEPTION_CHANGES}\nHere with you: Ada, Brom.\n</perception>");
        assert!(appended.contains(&changes), "{appended}");
        assert!(!appended.contains("You see") && !appended.contains("from another"));
        let fresh = write(&TurnPlan::Fresh);
        assert!(
            fresh.contains(now) && !fresh.contains(PERCEPTION_CHANGES),
            "{fresh}"
        );
    }

    #[test]
    fn a_slot_smaller_than_the_budget_bounds_the_transcript_with_room_to_answer() {
        let limits = DecisionLimits::default();
        let answer = limits.max_answer_tokens();
        assert_eq!(transcript_budget(2000, None, answer), 2000);
        assert_eq!(transcript_budget(2000, Some(1_000_000), answer), 2000);
        assert_eq!(
            transcript_budget(2000, Some(answer + 500), answer),
            500,
            "the slot less the answer"
        );
        assert_eq!(transcript_budget(2000, Some(0), answer), 0);
        assert_eq!(
            transcript_budget(2000, Some(1000), 4096),
            500,
            "half of a slot stays the transcript's"
        );
    }

    #[test]
    fn a_reply_to_the_player_goes_first_and_an_actor_keeps_its_server() {
        let limits = DecisionLimits::default();
        let request = |replying| {
            let none = OfferedActions::default();
            let offline = offline_decision(
                &"Marta".into(),
                (&none, &none),
                (&OfferedAbilities::default(), false),
            );
            decision_request(
                Arc::default(),
                Arc::new(Value::Null),
                offline,
                limits.max_answer_tokens(),
                42,
                replying,
            )
        };
        assert_eq!(request(true).priority, Priority::Dialogue);
        let background = request(false);
        assert_eq!(background.priority, Priority::Background);
        assert_eq!(background.affinity, Some(42));
        assert_eq!(
            background.sampling.max_tokens,
            Some(limits.max_answer_tokens())
        );
    }
}
