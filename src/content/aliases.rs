//! Command words and per-mod verb aliases: how a player-like command line ("take the
//! mug of ale") is compared with the commands an actor was offered ("pick up mug of
//! ale"). Exact token matching after a fixed normalization; no fuzzy guessing.

use std::collections::BTreeMap;

use super::{ActionDefinition, ContentError};

/// Words that carry no meaning in a command: dropped from both sides before comparing.
pub const COMMAND_ARTICLES: &[&str] = &["a", "an", "the"];

/// A command line's words for matching: split on whitespace, punctuation at either
/// end of a word removed, lower-cased, articles dropped.
///
/// ```
/// use bevy_loom::content::command_words;
/// assert_eq!(command_words("Pick up the Mug of ale!"), ["pick", "up", "mug", "of", "ale"]);
/// ```
pub fn command_words(line: &str) -> Vec<String> {
    line.split_whitespace()
        .map(|word| word.trim_matches(|c: char| c.is_ascii_punctuation()))
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .filter(|word| !COMMAND_ARTICLES.contains(&word.as_str()))
        .collect()
}

/// Whether `text`'s [`command_words`] are `words`, found without collecting them:
/// an ASCII word is compared ignoring case, any other lower-cased.
pub(crate) fn command_words_are<'w>(text: &str, words: impl IntoIterator<Item = &'w str>) -> bool {
    let mut expected = words.into_iter();
    let trimmed = text
        .split_whitespace()
        .map(|word| word.trim_matches(|c: char| c.is_ascii_punctuation()))
        .filter(|word| !word.is_empty());
    for word in trimmed {
        let same = |known: &str| {
            if word.is_ascii() {
                known.eq_ignore_ascii_case(word)
            } else {
                known == word.to_lowercase()
            }
        };
        if COMMAND_ARTICLES.iter().any(|article| same(article)) {
            continue;
        }
        if !expected.next().is_some_and(same) {
            return false;
        }
    }
    expected.next().is_none()
}

/// The words a command template starts with, up to its first `{placeholder}`
/// (`pick up` for `pick up {item}`).
pub fn template_lead(template: &str) -> Vec<String> {
    let literal = template.split('{').next().unwrap_or_default();
    command_words(literal)
}

/// One entry of a manifest's `verbAliases`: words a command line may start with
/// instead of the words the mod's commands start with (`take` for `pick up`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerbAlias {
    /// The alias's words: `["take"]`.
    pub alias: Vec<String>,
    /// The command words it stands for: `["pick", "up"]`.
    pub command: Vec<String>,
}

impl VerbAlias {
    /// `words` with a leading alias replaced by the command words it stands for;
    /// `None` when `words` does not start with the alias.
    pub fn expand(&self, words: &[String]) -> Option<Vec<String>> {
        let rest = words.strip_prefix(self.alias.as_slice())?;
        Some(self.command.iter().chain(rest).cloned().collect())
    }
}

/// Checks a mod's `verbAliases` against its actions and returns those that can
/// apply: each alias must have words, and stand for the words some command of the
/// mod starts with. The rest are reported in `problems`.
pub(crate) fn resolve_aliases<'a>(
    file: &str,
    aliases: &BTreeMap<String, String>,
    actions: impl Iterator<Item = &'a ActionDefinition> + Clone,
    problems: &mut Vec<ContentError>,
) -> Vec<VerbAlias> {
    let mut resolved = Vec::new();
    for (alias, command) in aliases {
        let pointer = format!(
            "/verbAliases/{}",
            alias.replace('~', "~0").replace('/', "~1")
        );
        let (alias_words, command_words) = (command_words(alias), command_words(command));
        if alias_words.is_empty() || command_words.is_empty() {
            problems.push(ContentError::new(
                file,
                pointer,
                "an alias and the command words it stands for both need words: `\"take\": \"pick up\"`",
            ));
            continue;
        }
        let leads: Vec<Vec<String>> = actions
            .clone()
            .map(|action| template_lead(&action.template))
            .collect();
        if !leads.iter().any(|lead| lead.starts_with(&command_words)) {
            let mut known: Vec<String> = leads
                .iter()
                .filter(|lead| !lead.is_empty())
                .map(|lead| lead.join(" "))
                .collect();
            known.sort();
            known.dedup();
            problems.push(ContentError::new(
                file,
                pointer,
                format!(
                    "no command of this mod starts with `{command}`: alias one of {}",
                    if known.is_empty() {
                        "its commands' first words (it has none)".to_owned()
                    } else {
                        known
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            ));
            continue;
        }
        resolved.push(VerbAlias {
            alias: alias_words,
            command: command_words,
        });
    }
    // Longer aliases first, so "walk over to" is tried before "walk".
    resolved.sort_by(|a, b| {
        b.alias
            .len()
            .cmp(&a.alias.len())
            .then(a.alias.cmp(&b.alias))
    });
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparing_words_in_place_agrees_with_collecting_them() {
        let lines = [
            "",
            "  ",
            "Pick up the Mug of ale!",
            "pick up mug of ale",
            "pick up mug of ale.",
            "pick up THE mug, of ale",
            "pick up a mug of ale",
            "pick up mug of",
            "give crêpe to Zoë",
            "Give CRÊPE to zoë",
            "give crepe to Zoe",
            "ÉCLAIR",
            "éclair",
            "An ... the",
            "greet Marta",
            "greet marta?",
        ];
        for line in lines {
            for other in lines {
                let words = command_words(other);
                assert_eq!(
                    command_words_are(line, words.iter().map(String::as_str)),
                    command_words(line) == words,
                    "{line:?} against {other:?}"
                );
            }
        }
    }

    fn action(id: &str, template: &str) -> ActionDefinition {
        serde_json::from_value(serde_json::json!({
            "id": id, "name": id, "description": "d", "template": template
        }))
        .expect("an action")
    }

    #[test]
    fn words_are_normalized_the_same_way_on_both_sides() {
        assert_eq!(
            command_words("  go to The Cellar. "),
            ["go", "to", "cellar"]
        );
        assert_eq!(template_lead("give {item} to {recipient}"), ["give"]);
        assert_eq!(template_lead("look around"), ["look", "around"]);
    }

    #[test]
    fn aliases_must_stand_for_a_commands_first_words() {
        let actions = [
            action("items:pick_up", "pick up {item}"),
            action("items:give", "give {item} to {recipient}"),
        ];
        let aliases = BTreeMap::from([
            ("take".to_owned(), "pick up".to_owned()),
            ("hand".to_owned(), "give".to_owned()),
            ("yeet".to_owned(), "throw".to_owned()),
            ("!".to_owned(), "give".to_owned()),
        ]);
        let mut problems = Vec::new();
        let resolved = resolve_aliases(
            "mods/items/mod.json",
            &aliases,
            actions.iter(),
            &mut problems,
        );
        assert_eq!(
            resolved
                .iter()
                .map(|a| a.alias.join(" "))
                .collect::<Vec<_>>(),
            ["hand", "take"]
        );
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(pointers, ["/verbAliases/!", "/verbAliases/yeet"]);
        assert!(
            problems[1].message.contains("`give`, `pick up`"),
            "{}",
            problems[1].message
        );
        let take = &resolved[1];
        assert_eq!(
            take.expand(&command_words("take mug of ale")),
            Some(command_words("pick up mug of ale"))
        );
        assert_eq!(take.expand(&command_words("drop mug")), None);
    }
}
