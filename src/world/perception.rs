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
    line(text, &["Here with you"], characters().map(|o| o.1));
    line(
        text,
        &["You see"],
        others.iter().filter(|o| !o.2).map(|o| o.1),
    );
    for &(character, name, _) in characters() {
        line(
            text,
            &[name, " carries"],
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
