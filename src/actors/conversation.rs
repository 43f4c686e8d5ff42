//! Conversations between the player and a smart actor: who a line addresses, and
//! when a conversation ends. Deterministic token matching, no fuzzy guessing.
//!
//! - `@Name` anywhere in a line, or a line starting `talk <name>` / `talk to <name>`,
//!   addresses a visible actor; the rest of the line is what the player says to it.
//! - A name is an actor's exact label ("Old Tom"), its exact key (`tavern:tom`, or
//!   `tom`), or the first word of its label ("Old") when no other visible actor's
//!   label starts with it. The longest match wins; a tie answers "Be specific."
//! - Exactly "okay, bye" (any punctuation, any case) ends the conversation.

/// An actor the player can see: its label and its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addressable<'a> {
    /// Its name as the player sees it: "Marta", "Old Tom".
    pub label: &'a str,
    /// Its key: `tavern:marta`.
    pub key: &'a str,
}

/// What a player's line does to conversations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlayerLine {
    /// It addresses the visible actor at this index; the rest is what is said to it.
    Addressed {
        /// Index into the visible actors.
        actor: usize,
        /// The words around the name.
        utterance: String,
    },
    /// It addresses someone, but more than one visible actor fits the name.
    Ambiguous,
    /// It addresses someone nobody visible is called.
    Unknown(String),
    /// "okay, bye".
    Goodbye,
    /// It addresses nobody: in a conversation, it is said to the actor talked with.
    Plain(String),
}

/// What the answer to an ambiguous name is.
pub const BE_SPECIFIC: &str = "Be specific.";

/// Words of a line: split on whitespace, with punctuation at either end removed.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace()
        .map(|word| word.trim_matches(|c: char| c.is_ascii_punctuation() && c != '@'))
        .filter(|word| !word.is_empty())
        .collect()
}

/// Reads a player's line against the actors the player can see.
pub fn read_player_line(line: &str, visible: &[Addressable<'_>]) -> PlayerLine {
    let tokens = words(line);
    let lowered: Vec<String> = tokens.iter().map(|t| t.to_lowercase()).collect();
    if lowered == ["okay", "bye"] {
        return PlayerLine::Goodbye;
    }
    // `@Name` anywhere; else `talk <name>` / `talk to <name>` at the start.
    let (start, name_at) = if let Some(at) = lowered.iter().position(|t| t.starts_with('@')) {
        (at, at)
    } else if lowered.first().map(String::as_str) == Some("talk") && lowered.len() > 1 {
        let name_at = if lowered[1] == "to" && lowered.len() > 2 {
            2
        } else {
            1
        };
        (0, name_at)
    } else {
        return PlayerLine::Plain(tokens.join(" "));
    };
    let mut name: Vec<String> = lowered[name_at..].to_vec();
    name[0] = name[0].trim_start_matches('@').to_owned();
    if name[0].is_empty() {
        return PlayerLine::Unknown(String::new());
    }
    match find_name(&name, visible) {
        Found::One { actor, length } => {
            let rest: Vec<&str> = tokens[..start]
                .iter()
                .chain(&tokens[name_at + length..])
                .copied()
                .collect();
            PlayerLine::Addressed {
                actor,
                utterance: rest.join(" "),
            }
        }
        Found::Ambiguous => PlayerLine::Ambiguous,
        Found::Nobody => PlayerLine::Unknown(tokens[name_at].trim_start_matches('@').to_owned()),
    }
}

enum Found {
    One { actor: usize, length: usize },
    Ambiguous,
    Nobody,
}

/// The visible actor the words starting `name` name, with how many words the name took.
fn find_name(name: &[String], visible: &[Addressable<'_>]) -> Found {
    let mut best: Option<(usize, Vec<usize>)> = None;
    let mut consider = |actor: usize, length: usize| match &mut best {
        Some((longest, actors)) if *longest == length => {
            if !actors.contains(&actor) {
                actors.push(actor);
            }
        }
        Some((longest, _)) if *longest > length => {}
        _ => best = Some((length, vec![actor])),
    };
    for (actor, who) in visible.iter().enumerate() {
        let label: Vec<String> = words(who.label).iter().map(|w| w.to_lowercase()).collect();
        // The exact label, however many words.
        if !label.is_empty() && name.len() >= label.len() && name[..label.len()] == label[..] {
            consider(actor, label.len());
        }
        // The exact key, or its name after the mod.
        let key = who.key.to_lowercase();
        let short = key.rsplit(':').next().unwrap_or(&key).to_owned();
        if name[0] == key || name[0] == short {
            consider(actor, 1);
        }
    }
    // The first word of a label, when it is the only label starting so.
    if best.is_none() {
        let starting: Vec<usize> = visible
            .iter()
            .enumerate()
            .filter(|(_, who)| {
                words(who.label)
                    .first()
                    .is_some_and(|first| first.to_lowercase() == name[0])
            })
            .map(|(actor, _)| actor)
            .collect();
        match starting[..] {
            [actor] => return Found::One { actor, length: 1 },
            [] => {}
            _ => return Found::Ambiguous,
        }
    }
    match best {
        Some((length, actors)) if actors.len() == 1 => Found::One {
            actor: actors[0],
            length,
        },
        Some(_) => Found::Ambiguous,
        None => Found::Nobody,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAVERN: &[Addressable<'static>] = &[
        Addressable {
            label: "Marta",
            key: "tavern:marta",
        },
        Addressable {
            label: "Old Tom",
            key: "tavern:tom",
        },
        Addressable {
            label: "Old Tomas",
            key: "tavern:tomas",
        },
        Addressable {
            label: "Brom",
            key: "tavern:brom",
        },
    ];

    fn addressed(actor: usize, utterance: &str) -> PlayerLine {
        PlayerLine::Addressed {
            actor,
            utterance: utterance.to_owned(),
        }
    }

    #[test]
    fn a_mention_anywhere_addresses_the_actor_and_the_rest_is_said_to_it() {
        assert_eq!(
            read_player_line("@Marta, what's for supper?", TAVERN),
            addressed(0, "what's for supper")
        );
        assert_eq!(
            read_player_line("Tell me, @marta, about the cellar.", TAVERN),
            addressed(0, "Tell me about the cellar")
        );
        assert_eq!(read_player_line("talk to Brom", TAVERN), addressed(3, ""));
        assert_eq!(read_player_line("talk brom", TAVERN), addressed(3, ""));
        assert_eq!(
            read_player_line("@tavern:brom stand down", TAVERN),
            addressed(3, "stand down")
        );
    }

    #[test]
    fn the_longest_name_wins_and_a_shared_first_word_must_be_specific() {
        assert_eq!(
            read_player_line("@Old Tom hello", TAVERN),
            addressed(1, "hello")
        );
        assert_eq!(
            read_player_line("@Old Tomas hello", TAVERN),
            addressed(2, "hello")
        );
        assert_eq!(
            read_player_line("@Old hello", TAVERN),
            PlayerLine::Ambiguous
        );
        // A unique first word is enough.
        let pair = &TAVERN[..2];
        assert_eq!(read_player_line("@Old hello", pair), addressed(1, "hello"));
        assert_eq!(
            read_player_line("@Mart hello", TAVERN),
            PlayerLine::Unknown("Mart".to_owned()),
            "no fuzzy guessing"
        );
    }

    #[test]
    fn exactly_okay_bye_ends_a_conversation() {
        assert_eq!(read_player_line("Okay, bye!", TAVERN), PlayerLine::Goodbye);
        assert_eq!(read_player_line("okay bye", TAVERN), PlayerLine::Goodbye);
        assert_eq!(
            read_player_line("okay, bye then", TAVERN),
            PlayerLine::Plain("okay bye then".to_owned())
        );
    }
}
