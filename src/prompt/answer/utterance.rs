//! An `UTTERANCE` answer ("take the mug of ale") matched to the offered command it
//! names ("pick up mug of ale"): the same words after [`command_words`], or the same
//! words once a leading verb alias of the command's mod is replaced. Exact token
//! matching; no fuzzy guessing.

use crate::content::{
    ActionDefinition, ContentRegistry, command_words, command_words_are, template_lead,
};
use crate::world::OfferedActions;

use super::RejectionReason;

/// The position (from 1) of the one offered task whose command `line` is, word for
/// word ([`command_words`]); none for a line of no words.
pub(super) fn named_task(line: &str, tasks: &OfferedActions) -> Option<usize> {
    let words = command_words(line);
    if words.is_empty() {
        return None;
    }
    let as_said = || words.iter().map(String::as_str);
    let mut named = tasks
        .iter()
        .filter(|task| command_words_are(task.command, as_said()));
    let task = named.next()?;
    named.next().is_none().then_some(task.index)
}

/// The index (from 1) of the one offered action `line` names.
///
/// When it names none, the reason says why: no command of the content starts that
/// way, or the line has no words at all, only punctuation and articles
/// ([`UnknownCommand`](RejectionReason::UnknownCommand)), the command's verb is one
/// `permitted` refuses ([`VerbNotAllowed`](RejectionReason::VerbNotAllowed)), or the
/// command exists but not with these targets now
/// ([`CommandNotOffered`](RejectionReason::CommandNotOffered)).
pub fn match_utterance(
    line: &str,
    offered: &OfferedActions,
    registry: &ContentRegistry,
    permitted: impl Fn(&ActionDefinition) -> bool,
) -> Result<usize, RejectionReason> {
    let words = command_words(line);
    // No words name nothing, not a command that renders to none ("...").
    if words.is_empty() {
        return Err(RejectionReason::UnknownCommand(line.to_owned()));
    }
    let mut matches: Vec<usize> = Vec::new();
    for action in offered {
        let as_said = || words.iter().map(String::as_str);
        let named = command_words_are(action.command, as_said())
            || registry.verb_aliases(action.action_id).iter().any(|alias| {
                // The line with the alias it starts with replaced.
                let rest = words.strip_prefix(alias.alias.as_slice());
                rest.is_some_and(|rest| {
                    let expanded = alias.command.iter().chain(rest).map(String::as_str);
                    command_words_are(action.command, expanded)
                })
            });
        if named && !matches.contains(&action.index) {
            matches.push(action.index);
        }
    }
    match matches.as_slice() {
        [index] => return Ok(*index),
        [] => {}
        several => {
            return Err(RejectionReason::AmbiguousCommand {
                line: line.to_owned(),
                count: several.len(),
            });
        }
    }
    // Which actions of the content the line starts like, to say what is wrong: those
    // whose first words (or an alias of them) take the most of the line's words.
    let mut named: Vec<&ActionDefinition> = Vec::new();
    let mut longest = 0;
    for action in registry.actions() {
        let lead = template_lead(&action.template);
        if lead.is_empty() {
            continue;
        }
        let direct = words.starts_with(&lead).then_some(lead.len());
        let aliased = registry
            .verb_aliases(&action.id)
            .iter()
            .filter(|alias| {
                alias
                    .expand(&words)
                    .is_some_and(|expanded| expanded.starts_with(&lead))
            })
            .map(|alias| alias.alias.len() + lead.len().saturating_sub(alias.command.len()))
            .max();
        let Some(taken) = direct.max(aliased) else {
            continue;
        };
        if taken > longest {
            longest = taken;
            named.clear();
        }
        if taken == longest {
            named.push(action);
        }
    }
    if named.is_empty() {
        return Err(RejectionReason::UnknownCommand(line.to_owned()));
    }
    match named.iter().find(|action| !permitted(action)) {
        Some(refused) if !named.iter().any(|action| permitted(action)) => {
            Err(RejectionReason::VerbNotAllowed {
                line: line.to_owned(),
                verb: refused
                    .verb
                    .clone()
                    .unwrap_or_else(|| template_lead(&refused.template).join(" ")),
            })
        }
        _ => Err(RejectionReason::CommandNotOffered(line.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use bevy::prelude::Entity;
    use serde_json::json;

    use super::*;
    use crate::world::{
        EntityView, TargetScopes, WorldView, available_actions, registry_of_actions,
    };

    #[test]
    fn a_line_of_no_words_names_no_command() {
        // A command that renders to no word: a sigh, written as an ellipsis.
        let content = registry_of_actions(&[
            json!({ "id": "core:sigh", "name": "Sigh", "description": "Sigh", "template": "..." }),
        ]);
        let view = WorldView::new([]);
        let actor = Entity::from_raw_u32(1).expect("a valid index");
        let offered = available_actions(&content, &view, &TargetScopes::default(), actor, |_| true);
        assert_eq!(offered.len(), 1, "the sigh is offered");
        for line in ["...", "the", "—"] {
            let named = match_utterance(line, &offered, &content, |_| true);
            assert_eq!(
                named,
                Err(RejectionReason::UnknownCommand(line.to_owned())),
                "{line:?}"
            );
            assert_eq!(named_task(line, &offered), None, "{line:?}");
        }
    }

    /// Two mugs and a "mug 1": each offered command names one thing, said exactly as
    /// offered, though a command's words take "mug (1)" for "mug 1".
    #[test]
    fn commands_naming_namesakes_name_one_each() {
        let content = registry_of_actions(&[json!({
            "id": "items:take", "name": "Take", "description": "Pick up", "template": "take {item}",
            "targets": { "primary": { "scope": "things_here", "placeholder": "item" } }
        })]);
        let entity = |n| Entity::from_raw_u32(n).expect("a valid index");
        let here = |name: &str, character: bool| EntityView {
            name: name.to_owned().into(),
            place: Some(entity(1)),
            character,
            ..Default::default()
        };
        let hall = EntityView {
            is_place: true,
            ..Default::default()
        };
        let view = WorldView::new([
            (entity(1), hall),
            (entity(2), here("Ann", true)),
            (entity(10), here("mug", false)),
            (entity(11), here("mug", false)),
            (entity(12), here("mug 1", false)),
        ]);
        let ann = entity(2);
        let offered = available_actions(&content, &view, &TargetScopes::default(), ann, |_| true);
        let commands: Vec<&str> = offered.iter().map(|action| action.command).collect();
        assert_eq!(commands, ["take mug (2)", "take mug (3)", "take mug 1"]);
        for action in offered.iter() {
            let named = match_utterance(action.command, &offered, &content, |_| true);
            assert_eq!(named, Ok(action.index), "{}", action.command);
        }
    }
}
