//! What an actor perceives, as prompt text.

use bevy::prelude::*;

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
    // One `Label: a, b.` line, left out when there is nothing to name.
    let line = |text: &mut String, label: &[&str], entities: &mut dyn Iterator<Item = Entity>| {
        let Some(first) = entities.next() else {
            return;
        };
        text.push('\n');
        label.iter().for_each(|part| text.push_str(part));
        text.push_str(": ");
        text.push_str(view.name(first));
        for entity in entities {
            text.push_str(", ");
            text.push_str(view.name(entity));
        }
        text.push('.');
    };
    let is_character = |e: Entity| view.get(e).is_some_and(|v| v.character);
    let others = || {
        view.occupants(place)
            .iter()
            .copied()
            .filter(|&e| e != actor)
    };
    line(
        text,
        &["Here with you"],
        &mut others().filter(|&e| is_character(e)),
    );
    line(
        text,
        &["You see"],
        &mut others().filter(|&e| !is_character(e)),
    );
    for character in others().filter(|&e| is_character(e)) {
        line(
            text,
            &[view.name(character), " carries"],
            &mut view.carried_by(character).iter().copied(),
        );
    }
    line(
        text,
        &["You carry"],
        &mut view.carried_by(actor).iter().copied(),
    );
    line(text, &["Exits"], &mut view.exits(place).iter().copied());
}
