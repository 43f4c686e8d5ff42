//! The generic lines narration falls back on when an entity has no fragments for
//! what happened. All of them live here, so a game sees every default in one place.

/// The entity as a sentence names it: "Marta", or "the mug of ale" for a thing.
pub fn named(name: &str, is_character: bool) -> String {
    if is_character {
        name.to_owned()
    } else {
        format!("the {name}")
    }
}

/// A verb in the third person singular: `take` → `takes`, `go` → `goes`, `carry` → `carries`.
pub fn third_person(verb: &str) -> String {
    let verb = verb.replace('_', " ");
    let (head, tail) = verb.split_once(' ').unwrap_or((&verb, ""));
    let head = if let Some(stem) = head
        .strip_suffix('y')
        .filter(|stem| !stem.ends_with(['a', 'e', 'i', 'o', 'u']) && !stem.is_empty())
    {
        format!("{stem}ies")
    } else if ["s", "x", "z", "ch", "sh", "o"]
        .iter()
        .any(|end| head.ends_with(end))
    {
        format!("{head}es")
    } else {
        format!("{head}s")
    };
    if tail.is_empty() {
        head
    } else {
        format!("{head} {tail}")
    }
}

/// The action itself: "you take the mug of ale", "Marta takes the mug of ale",
/// "Marta goes to the cellar".
pub fn action_core(verb: &str, actor: Option<&str>, object: Option<&str>) -> String {
    let words = verb.replace('_', " ");
    let to = preposition(verb);
    match (actor, object) {
        (None, Some(object)) => format!("you {words} {to}{object}"),
        (None, None) => format!("you {words}"),
        (Some(actor), Some(object)) => format!("{actor} {} {to}{object}", third_person(verb)),
        (Some(actor), None) => format!("{actor} {}", third_person(verb)),
    }
}

/// A failure: "that doesn't work", "Marta tries to take the key, but it doesn't work".
pub fn failure_core(verb: &str, actor: Option<&str>, object: Option<&str>) -> String {
    let words = verb.replace('_', " ");
    let to = preposition(verb);
    match (actor, object) {
        (None, _) => "that doesn't work".to_owned(),
        (Some(actor), Some(object)) => {
            format!("{actor} tries to {words} {to}{object}, but it doesn't work")
        }
        (Some(actor), None) => format!("{actor} tries to {words}, but it doesn't work"),
    }
}

/// The word `verb` takes before its object, with a space after it, or nothing: "to "
/// for `go` (the cellar), "at " for `look` (the key), "from " for `retreat` (the
/// shipped positioning mod's). Of the canonical verbs
/// ([`CANONICAL_VERBS`](crate::content::CANONICAL_VERBS)), the others name their
/// object directly. One word a verb: the object of `sit` is taken to be a seat, of
/// `wait` someone waited for; an action that means otherwise ("wait by the fire")
/// reads right only with fragments of its own.
fn preposition(verb: &str) -> &'static str {
    match verb {
        "go" | "flee" | "talk" => "to ",
        "look" => "at ",
        "sit" => "on ",
        "wait" => "for ",
        "retreat" => "from ",
        _ => "",
    }
}

/// The state an entity is in afterwards: "you have the mug of ale", "Marta has the mug
/// of ale", "Marta is sitting". `in_inventory` is held by who acted: `actor`, or the
/// player when it is `None`.
pub fn state(state: &str, entity: &str, actor: Option<&str>) -> String {
    match (state, actor) {
        ("in_inventory", None) => format!("you have {entity}"),
        ("in_inventory", Some(actor)) => format!("{actor} has {entity}"),
        (other, _) => format!("{entity} is {}", other.replace('_', " ")),
    }
}

/// A side effect, said by its canonical effect with what it happened to or at
/// (`target`) and where it came from (`from`): "Marta sits down on the bench", "you
/// step down from the table", "Marta leaves the hall", "the door changes". An effect
/// a mod adds is said by its own words, as a verb: `bow_low` → "Marta bows low".
pub fn effect_core(
    effect: &str,
    actor: Option<&str>,
    (target, from): (Option<&str>, Option<&str>),
) -> String {
    // A game's name with stray underscores or spaces reads as the name.
    let effect = effect.trim_matches(|c: char| c == '_' || c.is_whitespace());
    // The verb, the word before its object, and the object.
    let (verb, to, object) = match effect {
        "step_up" => ("step_up", "onto ", target),
        "step_down" => ("step_down", "from ", from),
        "sit_down" => ("sit_down", "on ", target),
        "stand_up" => ("stand_up", "", None),
        "enter" => ("enter", "", target),
        "exit" => ("leave", "", from),
        "state_change" => {
            return match target {
                Some(target) => format!("{target} changes"),
                None => "something changes".to_owned(),
            };
        }
        // A game's effect of no name is said as acting at all, not as "Marta s".
        "" => ("act", "", target.or(from)),
        other => (other, "", target.or(from)),
    };
    let said = match actor {
        Some(actor) => format!("{actor} {}", third_person(verb)),
        None => format!("you {}", verb.replace('_', " ")),
    };
    match object {
        Some(object) => format!("{said} {to}{object}"),
        None => said,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn third_person_follows_english_spelling() {
        let forms: Vec<String> = ["take", "go", "carry", "pass", "reach", "say", "step_back"]
            .into_iter()
            .map(third_person)
            .collect();
        assert_eq!(
            forms,
            [
                "takes",
                "goes",
                "carries",
                "passes",
                "reaches",
                "says",
                "steps back"
            ]
        );
    }

    #[test]
    fn an_effect_is_said_by_what_it_is() {
        let said = |effect, actor, around| effect_core(effect, actor, around);
        let (bench, table, hall) = (Some("the bench"), Some("the table"), Some("the hall"));
        assert_eq!(
            said("sit_down", Some("Marta"), (bench, None)),
            "Marta sits down on the bench"
        );
        assert_eq!(
            said("step_down", None, (None, table)),
            "you step down from the table"
        );
        assert_eq!(said("step_up", Some("Brom"), (None, None)), "Brom steps up");
        assert_eq!(
            said("stand_up", Some("Brom"), (bench, None)),
            "Brom stands up"
        );
        assert_eq!(
            said("exit", Some("Hilda"), (None, hall)),
            "Hilda leaves the hall"
        );
        assert_eq!(
            said("enter", Some("Hilda"), (hall, None)),
            "Hilda enters the hall"
        );
        assert_eq!(
            said("pick_up", Some("Marta"), (Some("the mug"), None)),
            "Marta picks up the mug"
        );
        assert_eq!(
            said("state_change", Some("Marta"), (Some("the door"), None)),
            "the door changes"
        );
        assert_eq!(said("bow_low", Some("Vesk"), (None, None)), "Vesk bows low");
        assert_eq!(said("", Some("Vesk"), (None, None)), "Vesk acts");
        assert_eq!(said(" _\t", None, (None, None)), "you act");
        assert_eq!(said("_bow ", Some("Vesk"), (None, None)), "Vesk bows");
    }

    #[test]
    fn defaults_name_who_did_what() {
        assert_eq!(
            action_core("take", None, Some("the key")),
            "you take the key"
        );
        assert_eq!(
            action_core("greet", Some("Marta"), Some("Brom")),
            "Marta greets Brom"
        );
        assert_eq!(
            failure_core("take", None, Some("the key")),
            "that doesn't work"
        );
        assert_eq!(
            action_core("retreat", Some("Hilda"), Some("Traveler")),
            "Hilda retreats from Traveler"
        );
        // Verbs of going, looking, sitting and waiting take their object with a word.
        assert_eq!(
            action_core("go", Some("Marta"), Some("the cellar")),
            "Marta goes to the cellar"
        );
        assert_eq!(
            failure_core("flee", Some("Brom"), Some("the cellar")),
            "Brom tries to flee to the cellar, but it doesn't work"
        );
        assert_eq!(
            action_core("look", None, Some("the key")),
            "you look at the key"
        );
        assert_eq!(
            action_core("sit", Some("Silas"), Some("the bench")),
            "Silas sits on the bench"
        );
        assert_eq!(action_core("go", Some("Marta"), None), "Marta goes");
        assert_eq!(state("in_inventory", "the key", None), "you have the key");
        assert_eq!(
            state("in_inventory", "the key", Some("Marta")),
            "Marta has the key"
        );
        assert_eq!(state("sitting", "Marta", Some("Marta")), "Marta is sitting");
    }
}
