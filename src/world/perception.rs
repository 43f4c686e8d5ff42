//! What an actor perceives, as prompt text.

use bevy::prelude::*;

use super::WorldView;

/// Describes the actor's surroundings in the second person: its place, who and
/// what is there, what it carries, and the exits. Lines with nothing to say are left out.
pub fn describe_surroundings(view: &WorldView, actor: Entity) -> String {
    let Some(place) = view.place_of(actor) else {
        return "You are nowhere in particular.".to_owned();
    };
    let mut lines = vec![format!("You are in {}.", view.name(place))];
    let mut line = |label: &str, entities: &mut dyn Iterator<Item = Entity>| {
        let names: Vec<&str> = entities.map(|e| view.name(e)).collect();
        if !names.is_empty() {
            lines.push(format!("{label}: {}.", names.join(", ")));
        }
    };
    let is_character = |e: Entity| view.get(e).is_some_and(|v| v.character);
    let others = || {
        view.occupants(place)
            .iter()
            .copied()
            .filter(|&e| e != actor)
    };
    line("Here with you", &mut others().filter(|&e| is_character(e)));
    line("You see", &mut others().filter(|&e| !is_character(e)));
    for character in others().filter(|&e| is_character(e)) {
        let label = format!("{} carries", view.name(character));
        line(&label, &mut view.carried_by(character).iter().copied());
    }
    line("You carry", &mut view.carried_by(actor).iter().copied());
    line("Exits", &mut view.exits(place).iter().copied());
    lines.join("\n")
}
