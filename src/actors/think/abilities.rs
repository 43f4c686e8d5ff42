//! The abilities an actor is offered: when (in a conversation, by default), and how its
//! prompt shows them after the offer's block, within their own budget.

use smallvec::SmallVec;

use super::offer::ShownOffer;
use crate::actors::AbilityOffers;
use crate::content::AbilityDefinition;
use crate::prompt::{
    ABILITY_ANSWERS, ABILITY_TOOL_ANSWERS, INVOKE_OR_ASK, estimate_tokens,
    write_abilities_block_within,
};
use crate::world::OfferedAbilities;

/// Whether an actor is offered its abilities, as the settings say (`when`), replying
/// to the player or not; never in a fight.
pub(super) fn offers_abilities(when: AbilityOffers, replying: bool, fighting: bool) -> bool {
    !fighting
        && match when {
            AbilityOffers::InConversation => replying,
            AbilityOffers::Always => true,
            AbilityOffers::Never => false,
        }
}

/// Writes into `block` (cleared first) what an actor offered `abilities` is shown: the
/// offer's block (none in a reply, which offers no action and no task), the
/// `<abilities>` block fitted to `budget` with the rule and how to answer (by a tool
/// call when `as_tools`). Returns the abilities shown, those the block had room for.
pub(super) fn show_abilities(
    block: &mut String,
    offer: &ShownOffer,
    abilities: &OfferedAbilities,
    (budget, as_tools): (usize, bool),
) -> OfferedAbilities {
    block.clear();
    if !offer.trimmed().is_empty() || !offer.shown_tasks().is_empty() {
        block.push_str(offer.block());
        block.push('\n');
    }
    let how = if as_tools {
        ABILITY_TOOL_ANSWERS
    } else {
        ABILITY_ANSWERS
    };
    let answers = estimate_tokens(INVOKE_OR_ASK) + estimate_tokens(how) + 1;
    let definitions: SmallVec<[&AbilityDefinition; 4]> =
        abilities.iter().map(|a| &*a.definition).collect();
    let fits = write_abilities_block_within(block, &definitions, budget.saturating_sub(answers));
    block.push('\n');
    block.push_str(INVOKE_OR_ASK);
    block.push('\n');
    block.push_str(how);
    abilities.first(fits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abilities_are_offered_in_a_conversation_by_default_and_never_in_a_fight() {
        let default = AbilityOffers::default();
        assert!(offers_abilities(default, true, false));
        assert!(!offers_abilities(default, false, false));
        assert!(!offers_abilities(default, true, true), "not in a fight");
        assert!(offers_abilities(AbilityOffers::Always, false, false));
        assert!(!offers_abilities(AbilityOffers::Always, false, true));
        assert!(!offers_abilities(AbilityOffers::Never, true, false));
    }

    #[test]
    fn a_reply_shows_its_abilities_alone_with_the_rule_and_the_answers() {
        let definition: AbilityDefinition = serde_json::from_value(serde_json::json!({
            "id": "tavern:wave", "description": "d", "what": "Waves.", "when": "Greeted."
        }))
        .expect("an ability");
        let offered: OfferedAbilities = [crate::world::OfferedAbility {
            definition: std::sync::Arc::new(definition),
            candidates: Vec::new(),
        }]
        .into_iter()
        .collect();
        let mut block = String::from("left from the last actor");
        let shown = show_abilities(&mut block, &ShownOffer::default(), &offered, (500, false));
        assert_eq!(shown.len(), 1);
        assert!(block.starts_with("<abilities>\n- tavern:wave\n"), "{block}");
        assert!(block.ends_with(ABILITY_ANSWERS), "{block}");
        assert!(block.contains(INVOKE_OR_ASK));
        show_abilities(&mut block, &ShownOffer::default(), &offered, (500, true));
        assert!(block.ends_with(ABILITY_TOOL_ANSWERS), "{block}");
    }
}
