//! Conversations between the player and a smart actor: who a line addresses, and
//! when a conversation ends. Deterministic token matching, no fuzzy guessing.
//!
//! - `@Name` anywhere in a line, or a line starting `talk <name>` / `talk to <name>`,
//!   addresses a visible actor; the rest of the line, as typed less the name and the
//!   commas that set it apart, is what the player says to it. While talking with
//!   someone, a line starting `talk` that names nobody here is said to them.
//! - A name is an actor's exact label ("Old Tom"), its exact key (`tavern:tom`, or
//!   `tom`), or the first word of its label ("Old") when no other visible actor's
//!   label starts with it. The longest match wins; a tie answers "Be specific."
//!   Actors in one place that share a name are labelled with their numbers, as the
//!   actors perceive them ("Guard (1)", "Guard (2)"), so `@Guard 2` names one.
//! - Exactly "okay, bye" (any punctuation, any case) ends the conversation.

use bevy::prelude::*;

use super::ConversationUpdate;

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

/// A word with the punctuation at either end removed (an `@` kept), as names are
/// matched.
fn bare(word: &str) -> &str {
    word.trim_matches(is_punctuation)
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() && c != '@'
}

/// Words of a line: split on whitespace, with punctuation at either end removed.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace()
        .map(bare)
        .filter(|word| !word.is_empty())
        .collect()
}

/// Whether a word typed sets a name apart, as a comma does: "-", ",", ":", ";" alone.
fn is_separator(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| matches!(c, ',' | ';' | ':' | '-'))
}

/// A line's words as typed, one space apart.
fn as_typed(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a word of the line is an `@` mention.
fn mentions_someone(line: &str) -> bool {
    line.split_whitespace()
        .any(|word| bare(word).starts_with('@'))
}

/// Reads a player's line against the actors the player can see. What is said keeps
/// its punctuation; the name, the commas and the separators alone that set it apart
/// (a "-", ",", ":" or ";" typed as a word of its own), and a `talk`/`talk to` before
/// an `@` mention are left out.
pub fn read_player_line(line: &str, visible: &[Addressable<'_>]) -> PlayerLine {
    let typed: Vec<&str> = line.split_whitespace().collect();
    // Each word as names are matched: bare and lower case; and where the words are
    // that are more than punctuation alone, which alone name someone or say `talk`.
    let lowered: Vec<String> = typed.iter().map(|t| bare(t).to_lowercase()).collect();
    let words: Vec<usize> = (0..typed.len())
        .filter(|&i| !lowered[i].is_empty())
        .collect();
    let word = |n: usize| words.get(n).map(|&i| lowered[i].as_str());
    if words.len() == 2 && (word(0), word(1)) == (Some("okay"), Some("bye")) {
        return PlayerLine::Goodbye;
    }
    // `@Name` anywhere (after `talk` or `talk to`, those are no words said); else
    // `talk <name>` / `talk to <name>` at the start. Positions among `words`.
    let talk = match (word(0), word(1)) {
        (Some("talk"), Some("to")) => 2,
        (Some("talk"), _) => 1,
        _ => 0,
    };
    let (start, name_at) = match (0..words.len()).find(|&n| lowered[words[n]].starts_with('@')) {
        Some(at) if at == talk => (0, at),
        Some(at) => (at, at),
        None if talk > 0 && words.len() > talk => (0, talk),
        None if talk == 2 => (0, 1),
        None => return PlayerLine::Plain(typed.join(" ")),
    };
    let mut name: Vec<String> = words[name_at..]
        .iter()
        .map(|&i| lowered[i].clone())
        .collect();
    name[0] = name[0].trim_start_matches('@').to_owned();
    if name[0].is_empty() {
        return PlayerLine::Unknown(String::new());
    }
    match find_name(&name, visible) {
        Found::One { actor, length } => PlayerLine::Addressed {
            actor,
            utterance: said_around(&typed, words[start], words[name_at + length - 1] + 1),
        },
        Found::Ambiguous => PlayerLine::Ambiguous,
        Found::Nobody => {
            let named = bare(typed[words[name_at]]).trim_start_matches('@');
            PlayerLine::Unknown(named.to_owned())
        }
    }
}

/// What is said around a name that takes the words `start..end`: the words before and
/// after it as typed, less the comma before the name and the separators alone next
/// to it ([`is_separator`]); a question or an exclamation mark typed right after a
/// name that ends the line ends what is said, unless it ends already.
fn said_around(typed: &[&str], start: usize, end: usize) -> String {
    let mut before = &typed[..start];
    while let [rest @ .., last] = before
        && is_separator(last)
    {
        before = rest;
    }
    let mut after = &typed[end..];
    while let [first, rest @ ..] = after
        && is_separator(first)
    {
        after = rest;
    }
    let mut said: Vec<&str> = before.to_vec();
    if let Some(last) = said.last_mut() {
        *last = last.strip_suffix(',').unwrap_or(last);
    }
    said.extend(after);
    let mut said = said.join(" ");
    let sentence_end = (typed[end - 1].chars().last()).filter(|c| matches!(c, '?' | '!'));
    let ends = said.ends_with(|c: char| c.is_ascii_punctuation());
    if let Some(mark) = sentence_end.filter(|_| end == typed.len() && !said.is_empty() && !ends) {
        said.push(mark);
    }
    said
}

enum Found {
    One { actor: usize, length: usize },
    Ambiguous,
    Nobody,
}

/// The visible actor the words starting `name` name, with how many words the name took:
/// the longest match, and of matches as long, a whole name before a key or a first word.
fn find_name(name: &[String], visible: &[Addressable<'_>]) -> Found {
    // The best match yet, as (length, whole name), and the actors it names.
    let mut best: Option<((usize, bool), Vec<usize>)> = None;
    let mut consider = |actor: usize, length: usize, whole: bool| match &mut best {
        Some((rank, actors)) if *rank == (length, whole) => {
            if !actors.contains(&actor) {
                actors.push(actor);
            }
        }
        Some((rank, _)) if *rank > (length, whole) => {}
        _ => best = Some(((length, whole), vec![actor])),
    };
    // Each label's first word, lower-cased.
    let mut first_words = Vec::with_capacity(visible.len());
    let mut labelled = false;
    for (actor, who) in visible.iter().enumerate() {
        let label: Vec<String> = words(who.label).iter().map(|w| w.to_lowercase()).collect();
        // The exact label, however many words.
        if !label.is_empty() && name.len() >= label.len() && name[..label.len()] == label[..] {
            consider(actor, label.len(), true);
            labelled = true;
        }
        // The exact key, or its name after the mod.
        let key = who.key.to_lowercase();
        let short = key.rsplit(':').next().unwrap_or(&key).to_owned();
        if name[0] == key || name[0] == short {
            consider(actor, 1, false);
        }
        first_words.push(label.into_iter().next());
    }
    // The first word of a label, when no label is named whole: as good as a key, which
    // the player cannot see, so a key and a first word alike are ambiguous.
    if !labelled {
        for (actor, first) in first_words.iter().enumerate() {
            if first.as_deref() == Some(name[0].as_str()) {
                consider(actor, 1, false);
            }
        }
    }
    match best {
        Some(((length, _), actors)) if actors.len() == 1 => Found::One {
            actor: actors[0],
            length,
        },
        Some(_) => Found::Ambiguous,
        None => Found::Nobody,
    }
}

/// A smart actor the player can see, as a conversation reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visible<'a> {
    /// The actor.
    pub entity: Entity,
    /// How the player may address it.
    pub name: Addressable<'a>,
}

/// What a player's line comes to: what to tell the game about the conversation, who
/// the player talks with afterwards, and the actor to reply with the words it heard.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Heard {
    /// What happened to the conversation, in order.
    pub updates: Vec<ConversationUpdate>,
    /// Who the player talks with now.
    pub with: Option<Entity>,
    /// The actor that replies, and what it was told.
    pub reply: Option<(Entity, String)>,
}

/// Hears a player's `line`, said while talking `with` someone (or nobody), among the
/// `visible` smart actors: a conversation whose actor is no longer visible ends; a
/// line naming an actor starts one with it; a goodbye ends it; an ambiguous, unknown
/// or missing name is a notice; and what is said goes to the actor talked with. A
/// line that says nothing new (blank, or naming the actor already talked with and
/// nothing more) asks no reply: the one under way goes on.
pub fn hear(line: &str, with: Option<Entity>, visible: &[Visible<'_>]) -> Heard {
    let mut heard = Heard {
        with,
        ..Heard::default()
    };
    if let Some(gone) = with.filter(|with| !visible.iter().any(|v| v.entity == *with)) {
        heard.with = None;
        heard.updates.push(ConversationUpdate::Ended(gone));
    }
    let names: Vec<Addressable<'_>> = visible.iter().map(|v| v.name).collect();
    let read = match read_player_line(line, &names) {
        // While talking with someone, a line starting "talk" that names nobody here
        // ("Talk to me!") is said to them.
        PlayerLine::Unknown(_) if heard.with.is_some() && !mentions_someone(line) => {
            PlayerLine::Plain(as_typed(line))
        }
        read => read,
    };
    let (to, said) = match read {
        PlayerLine::Goodbye => {
            if let Some(with) = heard.with.take() {
                heard.updates.push(ConversationUpdate::Ended(with));
            }
            return heard;
        }
        PlayerLine::Ambiguous => {
            heard
                .updates
                .push(ConversationUpdate::Notice(BE_SPECIFIC.to_owned()));
            return heard;
        }
        PlayerLine::Unknown(name) => {
            let notice = match (name.is_empty(), visible.first()) {
                (false, _) => format!("Nobody here is called {name}."),
                (true, Some(first)) => {
                    format!(
                        "Say who you talk to after the @, as in @{}.",
                        first.name.label
                    )
                }
                (true, None) => "There is nobody here to talk to.".to_owned(),
            };
            heard.updates.push(ConversationUpdate::Notice(notice));
            return heard;
        }
        PlayerLine::Addressed { actor, utterance } => {
            let to = visible[actor].entity;
            // The partner named again, with nothing more: nothing new to answer.
            if heard.with == Some(to) && utterance.trim().is_empty() {
                return heard;
            }
            if heard.with != Some(to) {
                if let Some(previous) = heard.with {
                    heard.updates.push(ConversationUpdate::Ended(previous));
                }
                heard.with = Some(to);
                heard.updates.push(ConversationUpdate::Started(to));
            }
            (to, utterance)
        }
        PlayerLine::Plain(text) => match heard.with {
            // A line that says nothing (an Enter pressed) asks nothing.
            Some(with) if !text.trim().is_empty() => (with, text),
            _ => return heard,
        },
    };
    heard.reply = Some((to, said));
    heard
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
            addressed(0, "what's for supper?")
        );
        assert_eq!(
            read_player_line("Tell me, @marta, about the cellar.", TAVERN),
            addressed(0, "Tell me about the cellar.")
        );
        assert_eq!(read_player_line("talk to Brom", TAVERN), addressed(3, ""));
        assert_eq!(read_player_line("talk brom", TAVERN), addressed(3, ""));
        assert_eq!(
            read_player_line("@tavern:brom stand down", TAVERN),
            addressed(3, "stand down")
        );
        // What is said keeps its punctuation, a sign and a question mark after the name.
        assert_eq!(
            read_player_line("Is it poisoned, @Marta?", TAVERN),
            addressed(0, "Is it poisoned?")
        );
        assert_eq!(
            read_player_line("@Brom: -3 for you, $5 for me!", TAVERN),
            addressed(3, "-3 for you, $5 for me!")
        );
        assert_eq!(
            read_player_line("thanks @Brom,", TAVERN),
            addressed(3, "thanks")
        );
        // Words of punctuation alone are no words; the end of a sentence is said once.
        for (line, said) in [
            ("talk - Marta", ""),
            ("talk , to Marta", ""),
            ("Hey , @Marta", "Hey"),
            (", @Marta hello", "hello"),
            ("@Marta , how are you", "how are you"),
            ("What?! @Marta?", "What?!"),
            ("Hello. @Marta.", "Hello."),
            ("Is it you, @Marta.?", "Is it you?"),
        ] {
            assert_eq!(read_player_line(line, TAVERN), addressed(0, said), "{line}");
        }
        // Elsewhere a word of punctuation alone is said as typed.
        assert_eq!(
            read_player_line("talk ...", TAVERN),
            PlayerLine::Plain("talk ...".to_owned())
        );
        assert_eq!(
            read_player_line("Tu as une chambre ?", TAVERN),
            PlayerLine::Plain("Tu as une chambre ?".to_owned())
        );
        assert_eq!(
            read_player_line("?", TAVERN),
            PlayerLine::Plain("?".to_owned())
        );
        assert_eq!(
            read_player_line("@Marta tu as une chambre ?", TAVERN),
            addressed(0, "tu as une chambre ?")
        );
        for line in ["Tu as une chambre, @Marta ?", "Tu as une chambre ? @Marta"] {
            assert_eq!(
                read_player_line(line, TAVERN),
                addressed(0, "Tu as une chambre ?"),
                "{line}"
            );
        }
        assert_eq!(read_player_line("@Marta ?", TAVERN), addressed(0, "?"));
        // The two ways of naming someone at once: "talk to" is no words said.
        assert_eq!(
            read_player_line("talk to @Marta any rooms?", TAVERN),
            addressed(0, "any rooms?")
        );
        assert_eq!(read_player_line("talk @Marta", TAVERN), addressed(0, ""));
    }

    #[test]
    fn a_line_starting_talk_that_names_nobody_here_is_said_to_the_actor_talked_with() {
        let heard = hear("Talk to me, please?", Some(entity(1)), &visible());
        assert!(heard.updates.is_empty(), "{:?}", heard.updates);
        assert_eq!(
            heard.reply,
            Some((entity(1), "Talk to me, please?".to_owned()))
        );
        // Out of a conversation it is a name not found; an @ always names.
        let notice = |heard: Heard| heard.updates;
        let unknown = [ConversationUpdate::Notice(
            "Nobody here is called me.".into(),
        )];
        assert_eq!(
            notice(hear("Talk to me, please?", None, &visible())),
            unknown
        );
        let unknown = [ConversationUpdate::Notice(
            "Nobody here is called Vesk.".into(),
        )];
        assert_eq!(notice(hear("@Vesk?", Some(entity(1)), &visible())), unknown);
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
    fn a_key_the_player_cannot_see_does_not_beat_a_name_it_can() {
        let keep = &[
            Addressable {
                label: "Ser Aldric",
                key: "town:guard",
            },
            Addressable {
                label: "Guard Captain Bren",
                key: "town:captain",
            },
        ];
        assert_eq!(read_player_line("@Guard hi", keep), PlayerLine::Ambiguous);
        assert_eq!(
            read_player_line("@Guard Captain Bren, hi", keep),
            addressed(1, "hi")
        );
        assert_eq!(
            read_player_line("@Aldric hi", keep),
            PlayerLine::Unknown("Aldric".to_owned())
        );
        assert_eq!(read_player_line("@Ser hi", keep), addressed(0, "hi"));
        assert_eq!(read_player_line("@town:guard hi", keep), addressed(0, "hi"));
        // A name given whole is that one, though another's key ends as it does.
        let stable = &[
            TAVERN[1],
            Addressable {
                label: "Tom",
                key: "tavern:stable_boy",
            },
        ];
        assert_eq!(read_player_line("@Tom hi", stable), addressed(1, "hi"));
        assert_eq!(read_player_line("talk to Tom", stable), addressed(1, ""));
        assert_eq!(
            read_player_line("@tavern:tom hi", stable),
            addressed(0, "hi")
        );
    }

    #[test]
    fn exactly_okay_bye_ends_a_conversation() {
        assert_eq!(read_player_line("Okay, bye!", TAVERN), PlayerLine::Goodbye);
        assert_eq!(read_player_line("okay bye", TAVERN), PlayerLine::Goodbye);
        assert_eq!(
            read_player_line("okay, bye then", TAVERN),
            PlayerLine::Plain("okay, bye then".to_owned())
        );
    }

    fn entity(n: u32) -> Entity {
        Entity::from_raw_u32(n).expect("a valid index")
    }

    fn visible() -> Vec<Visible<'static>> {
        [(1, "Marta", "tavern:marta"), (2, "Brom", "tavern:brom")]
            .into_iter()
            .map(|(n, label, key)| Visible {
                entity: entity(n),
                name: Addressable { label, key },
            })
            .collect()
    }

    #[test]
    fn naming_an_actor_starts_a_conversation_and_it_hears_the_rest() {
        let heard = hear("@Marta a room, please", None, &visible());
        assert_eq!(heard.updates, [ConversationUpdate::Started(entity(1))]);
        assert_eq!(heard.with, Some(entity(1)));
        assert_eq!(heard.reply, Some((entity(1), "a room, please".to_owned())));
        let heard = hear("talk to Brom", Some(entity(1)), &visible());
        assert_eq!(
            heard.updates,
            [
                ConversationUpdate::Ended(entity(1)),
                ConversationUpdate::Started(entity(2))
            ]
        );
    }

    #[test]
    fn a_plain_line_goes_to_the_actor_talked_with_or_to_nobody() {
        let heard = hear("how much?", Some(entity(2)), &visible());
        assert!(heard.updates.is_empty());
        assert_eq!(heard.reply, Some((entity(2), "how much?".to_owned())));
        assert_eq!(hear("how much?", None, &visible()), Heard::default());
    }

    #[test]
    fn a_line_that_says_nothing_more_asks_no_reply() {
        let talking = Heard {
            with: Some(entity(2)),
            ..Heard::default()
        };
        // An Enter pressed, or the partner named again with no words: nothing new to
        // answer, so the reply under way is not asked again.
        for nothing in ["", "   ", "@Brom", "talk to Brom"] {
            assert_eq!(
                hear(nothing, Some(entity(2)), &visible()),
                talking,
                "{nothing:?}"
            );
        }
        // Naming someone else with no words starts a conversation, and they answer it.
        let heard = hear("@Marta", Some(entity(2)), &visible());
        assert_eq!(heard.reply, Some((entity(1), String::new())));
    }

    #[test]
    fn a_goodbye_or_a_partner_gone_ends_it_and_unknown_names_are_notices() {
        let heard = hear("okay, bye", Some(entity(2)), &visible());
        assert_eq!(
            (heard.updates, heard.with, heard.reply),
            (vec![ConversationUpdate::Ended(entity(2))], None, None)
        );
        let heard = hear("hello?", Some(entity(9)), &visible());
        assert_eq!(
            (heard.updates, heard.with, heard.reply),
            (vec![ConversationUpdate::Ended(entity(9))], None, None)
        );
        let heard = hear("@Vesk hi", None, &visible());
        assert_eq!(
            heard.updates,
            [ConversationUpdate::Notice(
                "Nobody here is called Vesk.".into()
            )]
        );
    }

    #[test]
    fn an_at_sign_with_no_name_says_how_to_name_someone() {
        let notice = |visible: &[Visible<'_>]| hear("@ hello", None, visible).updates;
        assert_eq!(
            notice(&visible()),
            [ConversationUpdate::Notice(
                "Say who you talk to after the @, as in @Marta.".into()
            )]
        );
        assert_eq!(
            notice(&[]),
            [ConversationUpdate::Notice(
                "There is nobody here to talk to.".into()
            )]
        );
    }
}
