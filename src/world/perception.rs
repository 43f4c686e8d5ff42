//! What an actor perceives, as prompt text.

use bevy::prelude::*;
use smallvec::SmallVec;

use super::WorldView;

/// Describes the actor's surroundings in the second person: its place, who and
/// what is there, what it carries, and the exits. Lines with nothing to say are left out.
pub fn describe_surroundings(view: &WorldView, actor: Entity) -> String {
    let mut text = String::with_capacity(256);
    write_surroundings(&mut text, view, actor);
    text
}

/// Like [`describe_surroundings`], appending to `text`.
pub fn write_surroundings(text: &mut String, view: &WorldView, actor: Entity) {
    let Some(place) = view.place_of(actor) else {
        text.push_str("You are nowhere in particular.");
        return;
    };
    text.push_str("You are in ");
    text.push_str(view.name(place));
    text.push('.');
    // Everyone and everything else here, looked up once: (entity, name, a character?).
    let others: SmallVec<[(Entity, &str, bool); 32]> = view
        .occupants(place)
        .iter()
        .filter(|&&e| e != actor)
        .map(|&e| (e, view.name(e), view.get(e).is_some_and(|v| v.character)))
        .collect();
    let characters = || others.iter().filter(|o| o.2);
    line(text, &[HERE_WITH_YOU], characters().map(|o| o.1));
    line(
        text,
        &["You see"],
        others.iter().filter(|o| !o.2).map(|o| o.1),
    );
    for &(character, name, _) in characters() {
        line(
            text,
            &[name, CARRIES],
            view.carried_by(character).iter().map(|&e| view.name(e)),
        );
    }
    line(
        text,
        &["You carry"],
        view.carried_by(actor).iter().map(|&e| view.name(e)),
    );
    line(
        text,
        &["Exits"],
        view.exits(place).iter().map(|&e| view.name(e)),
    );
}

/// One `Label: a, b.` line, left out when there is nothing to name.
fn line<'a>(text: &mut String, label: &[&str], mut names: impl Iterator<Item = &'a str>) {
    let Some(first) = names.next() else {
        return;
    };
    text.push('\n');
    label.iter().for_each(|part| text.push_str(part));
    text.push_str(": ");
    text.push_str(first);
    for name in names {
        text.push_str(", ");
        text.push_str(name);
    }
    text.push('.');
}

/// What opens a perception that says only what changed since the last one shown.
pub const PERCEPTION_CHANGES: &str = "(Only what changed; the rest is as before.)";

/// The label of the line naming who else is here.
const HERE_WITH_YOU: &str = "Here with you";

/// What follows someone's name in the label of the line naming what they carry.
const CARRIES: &str = " carries";

/// A perception's lines, each with its label (what comes before its `": "`, or the
/// whole line for the first, saying where the actor is); `None` when a line could be
/// read two ways: a name in it holds a `": "`, or a line break before words with no
/// label, or two lines are about one name. (A name broken before a label would read
/// as the lines it looks like; a [`WorldView`]'s names are one line each.)
fn labelled(text: &str) -> Option<SmallVec<[(&str, &str); 16]>> {
    let mut lines: SmallVec<[(&str, &str); 16]> = SmallVec::new();
    // Where `": "` is in a short line, found without setting up a string search.
    let colon = |line: &str| line.as_bytes().windows(2).position(|pair| pair == b": ");
    for line in text.lines() {
        let label = match colon(line) {
            Some(at) if colon(&line[at + 2..]).is_none() => &line[..at],
            None if lines.is_empty() => line,
            // Every line after the first has a label: this one is part of a name.
            _ => return None,
        };
        if lines.iter().any(|&(other, _)| other == label) {
            return None;
        }
        lines.push((label, line));
    }
    Some(lines)
}

/// Writes into `text` (cleared first) what changed between two perceptions written by
/// [`write_surroundings`], `before` and `now`: [`PERCEPTION_CHANGES`], then each line of
/// `now` that `before` did not have, and for each line of `before` whose label `now`
/// lacks, the label with nothing after it (someone's possessions only while they are
/// still here, which the line of who is here says). Returns `false`, with `text`
/// empty, when `now` is to be said whole: the actor is somewhere else, the changes are
/// no shorter, or a line cannot be told apart from another for sure (a name holding
/// `": "`, or `", "` where it is looked for, or two lines about one name).
pub fn write_perception_changes(text: &mut String, before: &str, now: &str) -> bool {
    text.clear();
    // The caller knows they differ; the actor is in the same place, or said whole.
    if before.lines().next() != now.lines().next() {
        return false;
    }
    let (Some(was), Some(is)) = (labelled(before), labelled(now)) else {
        return false;
    };
    text.push_str(PERCEPTION_CHANGES);
    for &(_, line) in is
        .iter()
        .filter(|(_, line)| !was.iter().any(|w| w.1 == *line))
    {
        text.push('\n');
        text.push_str(line);
    }
    let here = (is.iter().find(|(label, _)| *label == HERE_WITH_YOU))
        .and_then(|(label, line)| line.get(label.len() + 2..))
        .unwrap_or_default();
    let here = here.strip_suffix('.').unwrap_or(here);
    for &(gone, _) in was
        .iter()
        .filter(|(label, _)| !is.iter().any(|i| i.0 == *label))
    {
        let nothing = match gone.strip_suffix(CARRIES) {
            // Still here, as one of the names listed; or surely gone.
            Some(name) if here.split(", ").any(|here| here == name) => "nothing",
            Some(name) if !here.contains(name) => continue,
            Some(_) => {
                text.clear();
                return false;
            }
            None if gone == HERE_WITH_YOU => "no one",
            None => "nothing",
        };
        text.push('\n');
        text.push_str(gone);
        text.push_str(": ");
        text.push_str(nothing);
        text.push('.');
    }
    // Nothing said but the opening (lines only in another order), or nothing saved.
    if text.len() == PERCEPTION_CHANGES.len() || text.len() >= now.len() {
        text.clear();
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "You are in the common room.
Here with you: Brom, Silas, Traveler.
You see: long bar, mug of ale, oak bench.
Brom carries: oak cudgel.
Silas carries: battered lute, sealed letter.
You carry: cellar key.
Exits: the cellar, Lantern Street.";

    fn changes(before: &str, now: &str) -> Option<String> {
        let mut text = String::from("left from another actor");
        let said = write_perception_changes(&mut text, before, now);
        assert_eq!(said, !text.is_empty(), "{text}");
        said.then_some(text)
    }

    #[test]
    fn someone_leaving_is_the_line_of_who_is_here_and_their_possessions_go_unsaid() {
        let now = "You are in the common room.
Here with you: Silas, Traveler.
You see: long bar, mug of ale, oak bench.
Silas carries: battered lute, sealed letter.
You carry: cellar key.
Exits: the cellar, Lantern Street.";
        assert_eq!(
            changes(BEFORE, now).as_deref(),
            Some(
                "(Only what changed; the rest is as before.)
Here with you: Silas, Traveler."
            )
        );
    }

    #[test]
    fn a_line_gone_says_nothing_is_left_and_new_lines_are_said() {
        // Brom put down his cudgel, and the actor gave away its key.
        let now = "You are in the common room.
Here with you: Brom, Silas, Traveler.
You see: long bar, mug of ale, oak bench, oak cudgel.
Silas carries: battered lute, sealed letter.
Exits: the cellar, Lantern Street.";
        assert_eq!(
            changes(BEFORE, now).as_deref(),
            Some(
                "(Only what changed; the rest is as before.)
You see: long bar, mug of ale, oak bench, oak cudgel.
Brom carries: nothing.
You carry: nothing."
            )
        );
        // Everyone else left, with what they carry.
        let alone = "You are in the common room.
You see: long bar, mug of ale, oak bench.
You carry: cellar key.
Exits: the cellar, Lantern Street.";
        assert_eq!(
            changes(BEFORE, alone).as_deref(),
            Some("(Only what changed; the rest is as before.)\nHere with you: no one.")
        );
    }

    #[test]
    fn names_that_could_be_read_two_ways_are_said_whole() {
        let with = |name: &str, carries: &str| {
            format!(
                "You are in the common room.\nHere with you: Silas, {name}.\nYou see: long bar, \
                 mug of ale, oak bench, stone hearth, cold fireplace.\n{name} carries: \
                 {carries}.\nExits: the cellar, Lantern Street."
            )
        };
        let gave_away = |name: &str| {
            format!(
                "You are in the common room.\nHere with you: Silas, {name}.\nYou see: long bar, \
                 mug of ale, oak bench, stone hearth, cold fireplace.\nSilas carries: hammer.\n\
                 Exits: the cellar, Lantern Street."
            )
        };
        // A name ending in a full stop, last of those here, still carries nothing.
        let said = changes(&with("Jon Jr.", "hammer"), &gave_away("Jon Jr.")).expect("shorter");
        assert!(said.ends_with("\nJon Jr. carries: nothing."), "{said}");
        // A name holding ", " or ": ", or two lines about one name: said whole.
        for name in ["Brom, the Smith", "Sir Roland: the Bold"] {
            assert_eq!(
                changes(&with(name, "hammer"), &gave_away(name)),
                None,
                "{name}"
            );
        }
        let guards = "You are in the common room.\nHere with you: Guard, Guard.\nGuard carries: \
                      sword.\nGuard carries: shield.\nExits: the cellar, Lantern Street, the yard.";
        let one_gave = guards.replace("Guard carries: shield.", "You carry: shield.");
        assert_eq!(changes(guards, &one_gave), None, "two lines about one name");
    }

    #[test]
    fn a_name_holding_a_line_break_is_said_whole() {
        // A place named across three lines, one of them what labels who is here.
        let place = "You are in the cellar\nHere with you\nbelow the inn.";
        let before = format!("{place}\nYou see: barrel.\nExits: the common room.");
        let now = format!("{place}\nYou carry: barrel.\nExits: the common room.");
        assert_eq!(changes(&before, &now), None);
        let named = BEFORE.replace("Silas,", "Silas\nthe bard,");
        let left = named.replace("Brom, ", "");
        assert_eq!(changes(&named, &left), None, "a name of someone here");
    }

    #[test]
    fn somewhere_else_or_nothing_shorter_is_said_whole() {
        let cellar = "You are in the cellar.\nExits: the common room.";
        assert_eq!(changes(BEFORE, cellar), None, "another place");
        assert_eq!(changes(BEFORE, BEFORE), None, "nothing changed");
        assert_eq!(changes("", BEFORE), None, "nothing shown before");
        let short = "You are in the cellar.\nYou carry: key.";
        let shorter = "You are in the cellar.\nYou carry: lamp.";
        assert_eq!(changes(short, shorter), None, "the changes are no shorter");
        let reordered = BEFORE.replace(
            "Brom carries: oak cudgel.\nSilas carries: battered lute, sealed letter.",
            "Silas carries: battered lute, sealed letter.\nBrom carries: oak cudgel.",
        );
        assert_eq!(changes(BEFORE, &reordered), None, "only another order");
    }
}
