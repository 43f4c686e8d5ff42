//! What an actor perceives, as prompt text.

use bevy::prelude::*;

use super::WorldView;

/// Describes the actor's surroundings in the second person: its place, who and
/// what is there, what it carries, and the exits. Lines with nothing to say are left out.
pub fn describe_surroundings(view: &WorldView, actor: Entity) -> String {
    let mut lines = Vec::new();
    let Some(place) = view.place_of(actor) else {
        return "You are nowhere in particular.".to_owned();
    };
    lines.push(format!("You are in {}.", view.name(place)));
    let here = view.occupants(place);
    let names = |filter: &dyn Fn(Entity) -> bool| {
        here.iter()
            .copied()
            .filter(|&e| e != actor && filter(e))
            .map(|e| view.name(e))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let characters = names(&|e| view.get(e).is_some_and(|v| v.character));
    if !characters.is_empty() {
        lines.push(format!("Here with you: {characters}."));
    }
    let things = names(&|e| view.get(e).is_some_and(|v| !v.character));
    if !things.is_empty() {
        lines.push(format!("You see: {things}."));
    }
    for &character in here
        .iter()
        .filter(|&&e| e != actor && view.get(e).is_some_and(|v| v.character))
    {
        let carried = view.carried_by(character);
        if !carried.is_empty() {
            let list = carried
                .iter()
                .map(|&e| view.name(e))
                .collect::<Vec<_>>()
                .join(", ");
            lines.push(format!("{} carries: {list}.", view.name(character)));
        }
    }
    let carried = view.carried_by(actor);
    if !carried.is_empty() {
        let list = carried
            .iter()
            .map(|&e| view.name(e))
            .collect::<Vec<_>>()
            .join(", ");
        lines.push(format!("You carry: {list}."));
    }
    let exits = view.exits(place);
    if !exits.is_empty() {
        let list = exits
            .iter()
            .map(|&e| view.name(e))
            .collect::<Vec<_>>()
            .join(", ");
        lines.push(format!("Exits: {list}."));
    }
    lines.join("\n")
}
