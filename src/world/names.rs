//! Names and words from outside the content as prompts show them: on one line,
//! printable, opening no section of a prompt, and namesakes numbered apart.

use std::borrow::Cow;

use bevy::prelude::*;

use crate::content::command_words;

/// `text` on one line: the lines of a text that holds line breaks of any kind (`\n`,
/// `\r`, vertical tab, form feed, U+0085, U+2028, U+2029) joined by spaces; a text
/// without one, borrowed; either without the spaces around it. What a game or a
/// player names something, or what a model says, stays one line of a prompt's list.
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    fn is_line_break(c: char) -> bool {
        matches!(
            c,
            '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'
        )
    }
    // Most names are ASCII, checked a word at a time; there a break is \n to \r.
    let breaks = if text.is_ascii() {
        text.bytes().any(|b| b.wrapping_sub(b'\n') < 4)
    } else {
        text.contains(is_line_break)
    };
    if !breaks {
        return Cow::Borrowed(text.trim());
    }
    let lines = text
        .split(is_line_break)
        .map(str::trim)
        .filter(|line| !line.is_empty());
    Cow::Owned(lines.collect::<Vec<_>>().join(" "))
}

/// `text` without the characters content may not hold either
/// ([`forbidden_character`](crate::content::forbidden_character): control characters
/// but line breaks and tabs, and the marks that reorder text), which a player may type
/// or paste (a terminal's colours, a right-to-left override): a prompt, a memory and a
/// transcript read as the text looks.
pub(crate) fn printable(text: &str) -> Cow<'_, str> {
    let forbidden = |c: char| crate::content::forbidden_character(c).is_some();
    // Most text is ASCII, checked a byte at a time.
    let any = if text.is_ascii() {
        text.bytes().any(|b| forbidden(char::from(b)))
    } else {
        text.contains(forbidden)
    };
    if !any {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().filter(|&c| !forbidden(c)).collect())
}

/// `text` made [`printable`], kept as it is (not copied) when it is already.
pub(crate) fn into_printable(text: String) -> String {
    match printable(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(clean) => clean,
    }
}

/// What a model wrote, as it is shown: [`printable`], and its line breaks each a `\n`
/// (a carriage return alone, which a terminal writes over the line with, or before a
/// `\n`, is one).
pub(crate) fn as_shown(text: &str) -> Cow<'_, str> {
    let text = printable(text);
    if !text.contains('\r') {
        return text;
    }
    Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// Pushes `said` (what the player typed, memories, which hold what was said, or a
/// name) with its angle brackets shown as `‹` `›`: words from outside the game's
/// content open and close none of a prompt's sections.
pub(crate) fn push_as_text(text: &mut String, said: &str) {
    let mut rest = said;
    // Found a byte at a time: a char pattern's search decodes every character.
    while let Some(at) = rest.bytes().position(|b| matches!(b, b'<' | b'>')) {
        text.push_str(&rest[..at]);
        text.push(if rest.as_bytes()[at] == b'<' {
            '‹'
        } else {
            '›'
        });
        rest = &rest[at + 1..];
    }
    text.push_str(rest);
}

/// A name as prompts show it: on one line ([`one_line`]), without the characters a
/// player may not show ([`printable`]), with its angle brackets shown as `‹` `›`, so
/// that it opens and closes none of a prompt's sections, and its double quotes as
/// `'`, so that it ends no offered command (`Command: "talk to …"`) to write lines
/// of its own after it.
pub(crate) fn prompt_name(name: Cow<'_, str>) -> Cow<'_, str> {
    // Most names are printable ASCII without angle brackets or double quotes, told in
    // one pass: only the spaces around them go.
    let plain = |b: u8| (b' '..=b'~').contains(&b) && !matches!(b, b'<' | b'>' | b'"');
    if name.bytes().all(plain) {
        return match name {
            Cow::Borrowed(name) => Cow::Borrowed(name.trim()),
            Cow::Owned(name) if name.trim().len() == name.len() => Cow::Owned(name),
            Cow::Owned(name) => Cow::Owned(name.trim().to_owned()),
        };
    }
    let name = match name {
        Cow::Borrowed(name) => match printable(name) {
            Cow::Borrowed(name) => one_line(name),
            Cow::Owned(name) => Cow::Owned(one_line(&name).into_owned()),
        },
        Cow::Owned(name) => Cow::Owned(one_line(&printable(&name)).into_owned()),
    };
    if !name.bytes().any(|b| matches!(b, b'<' | b'>' | b'"')) {
        return name;
    }
    let mut shown = String::with_capacity(name.len() + 8);
    push_as_text(&mut shown, &name);
    Cow::Owned(shown.replace('"', "'"))
}

/// The order entities were made in: the oldest first, by their `age` (in change
/// ticks, as [`EntityView::age`](super::EntityView::age)), then those of one age by
/// index and generation. By index alone, an entity spawned later in a freed index
/// would come first. (`Entity`'s own order puts higher indices first.)
pub(crate) fn made(entity: Entity, age: u32) -> impl Ord {
    (
        std::cmp::Reverse(age),
        entity.index_u32(),
        entity.generation().to_bits(),
    )
}

/// Numbers the entities of `found` (sorted by name) that share a name ("mug (1)",
/// "mug (2)"), each name's in the order `found` lists them: a model and a player name
/// each one apart. A number is passed over when a command or a player's line would
/// read its label as another name of `found` or of `others` (the rest in sight): "mug
/// 1" takes "mug (1)". Unnamed ones are left as they are.
pub(crate) fn tell_apart<'n>(
    found: &mut [(Entity, String)],
    others: impl IntoIterator<Item = &'n str>,
) {
    // Sorted: names shared are neighbours. Most lists have none.
    if !(found.windows(2)).any(|pair| pair[0].1 == pair[1].1 && !pair[0].1.is_empty()) {
        return;
    }
    // Only a name whose words end in a number reads as a label would. The labels given
    // are added as they are given: looked up, not scanned, however many share a name.
    let ends_in_a_number = |name: &str| {
        let words = name.trim_end_matches(|c: char| c.is_ascii_punctuation());
        words.ends_with(|c: char| c.is_ascii_digit())
    };
    let mut taken: bevy::platform::collections::HashSet<Vec<String>> = default();
    let mut take = |name: &str| {
        if ends_in_a_number(name) {
            taken.insert(command_words(name));
        }
    };
    others.into_iter().for_each(&mut take);
    found.iter().for_each(|(_, name)| take(name));
    let mut start = 0;
    while start < found.len() {
        let same = found[start..]
            .iter()
            .take_while(|(_, n)| *n == found[start].1);
        let end = start + same.count();
        // Unnamed things are all "something", and not numbered.
        if end - start > 1 && !found[start].1.is_empty() {
            let name = found[start].1.clone();
            let mut number = 0;
            for (_, named) in &mut found[start..end] {
                *named = loop {
                    number += 1;
                    let label = format!("{name} ({number})");
                    if taken.insert(command_words(&label)) {
                        break label;
                    }
                };
            }
        }
        start = end;
    }
}
