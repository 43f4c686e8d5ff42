//! How the plans smart actors follow end, told in their next prompt: a plan decides for
//! its actor while it runs ([`FollowingPlan`](crate::world::FollowingPlan)), so the
//! actor learns what came of it when it is asked again.

use bevy::prelude::*;

use super::ActorMind;
use crate::content::ContentRegistry;
use crate::world::{PlanCompleted, PlanFailed};

/// Notes each ended plan in its actor's mind, for its next prompt.
pub(super) fn note_plan_endings(
    registry: Res<ContentRegistry>,
    mut completed: MessageReader<PlanCompleted>,
    mut failed: MessageReader<PlanFailed>,
    mut minds: Query<&mut ActorMind>,
) {
    let name = |task_id| task_name(&registry, task_id);
    let endings = (completed.read())
        .map(|done| (done.actor, completed_note(name(&done.task_id))))
        .chain((failed.read()).map(|failed| {
            (
                failed.actor,
                failed_note(name(&failed.task_id), &failed.reason),
            )
        }));
    for (actor, note) in endings {
        if let Ok(mut mind) = minds.get_mut(actor) {
            mind.notes.note_plan_ending(&note);
        }
    }
}

/// A task's name, or its id when it is no longer loaded.
fn task_name<'a>(registry: &'a ContentRegistry, task_id: &'a str) -> &'a str {
    registry
        .task(task_id)
        .map_or(task_id, |task| task.name.as_str())
}

/// What an actor is told of a plan that carried out every step.
fn completed_note(task: &str) -> String {
    format!("Your plan \"{task}\" is done.")
}

/// What an actor is told of a plan that failed, and why.
fn failed_note(task: &str, reason: &str) -> String {
    format!("Your plan \"{task}\" failed: {reason}.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::mind::Notes;

    #[test]
    fn an_ended_plan_is_told_by_its_name_and_how_it_ended() {
        assert_eq!(
            completed_note("Serve a drink"),
            "Your plan \"Serve a drink\" is done."
        );
        assert_eq!(
            failed_note("Serve a drink", "not_here"),
            "Your plan \"Serve a drink\" failed: not_here."
        );
        let mut mind = ActorMind::default();
        let notes = &mut mind.notes;
        notes.answer = Some("Your last answer was not used: no such action.".to_owned());
        notes.note_plan_ending(&completed_note("Serve a drink"));
        notes.note_plan_ending(&failed_note("Fetch", "locked"));
        let mut told = Notes::default();
        let (all, fresh) = notes.tell(&mut told);
        let ended = "Your plan \"Serve a drink\" is done. Your plan \"Fetch\" failed: locked.";
        assert_eq!(
            all.as_deref(),
            Some(format!("Your last answer was not used: no such action. {ended}").as_str()),
            "a prompt that goes on from the last answer is told everything"
        );
        assert_eq!(
            fresh.as_deref(),
            Some(ended),
            "a fresh one, how the plans ended"
        );
        assert_eq!(notes.tell(&mut told), (None, None), "told once");
    }
}
