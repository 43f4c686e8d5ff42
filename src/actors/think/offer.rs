//! The offer an actor is shown: made again only when what it reads changed, weighed by
//! what matters to the actor, trimmed to its budget and written as a block (its
//! actions, then the tasks it may take on), and kept as it was shown while the world
//! around the actor stays the same.

use bevy::platform::collections::HashMap;

use bevy::prelude::*;
use smallvec::SmallVec;

use super::{Around, Asked, Frame};
use crate::actors::OfferTrimmed;
use crate::actors::memory::MemoryEntry;
use crate::actors::prompt_cache::PromptCache;
use crate::content::ContentRegistry;
use crate::prompt::{
    BlockOptions, Shown, TrimScratch, estimate_tokens, task_trim_mask, text_fingerprint,
    trim_mask_with, write_available_actions, write_available_tasks,
};
use crate::world::{ActionMenu, AvailableAction, OfferedActions, ScopeReach};

/// The last offer an actor was shown, trimmed to its budget and written as a block:
/// the same offer next turn is shown the same way without trimming or writing it again.
#[derive(Debug, Clone, Default)]
pub(in crate::actors) struct ShownOffer {
    /// Whether an offer was shown yet.
    shown: bool,
    /// The actions as offered, before trimming.
    pub(super) actions: KeptOffer,
    /// The tasks as offered, before trimming.
    pub(super) tasks: KeptOffer,
    /// The budget the tasks were trimmed to.
    tasks_budget: usize,
    /// The tasks without those left out, numbered after the actions shown.
    tasks_shown: OfferedActions,
    /// The budget it was trimmed to.
    budget: usize,
    /// Which of its actions were left out.
    mask: Vec<bool>,
    /// The offer without them.
    trimmed: OfferedActions,
    /// Its available-actions block (and available-tasks block after it), and their
    /// [`text_fingerprint`].
    block: String,
    /// Where in `block` the actions' block ends.
    actions_end: usize,
    block_fingerprint: u64,
}

/// An offer made from a menu (of actions, or of tasks), kept while nothing it reads
/// changes.
#[derive(Debug, Clone, Default)]
pub(in crate::actors) struct KeptOffer {
    /// The last offer made from it, before trimming.
    offered: OfferedActions,
    /// The menu it was made from and the place model's revision then
    /// ([`PlaceRevisions::revision`](crate::world::PlaceRevisions::revision)): an offer
    /// is made from the menu and the world view alone, so while the menu is the same
    /// and nothing it reads changed it is not made again. `None` when it was not made
    /// from a menu (a reply's empty offer).
    made_from: Option<(ActionMenu, u64)>,
}

/// The offer to show next: the last one, kept, or one made again.
pub(super) type NextOffer = Option<OfferedActions>;

impl KeptOffer {
    /// The offer to show next: nothing without a `menu` (a reply); the last offer
    /// (`None`: it is not even looked at, an unchanged world's turn touches none of
    /// it), when it was made from `menu` at or after `changed_at` (the revision at
    /// which what the menu reads last changed); otherwise one `make` makes from the
    /// menu (given the last offer, to give it back shared when nothing in it changed),
    /// noted as made at `revision`.
    pub(super) fn next(
        &mut self,
        menu: Option<&ActionMenu>,
        (changed_at, revision): (u64, u64),
        make: impl FnOnce(&ActionMenu, &OfferedActions) -> OfferedActions,
    ) -> NextOffer {
        let Some(menu) = menu else {
            self.made_from = None;
            return Some(OfferedActions::default());
        };
        match &self.made_from {
            Some((made, at)) if made.shares(menu) && *at >= changed_at => None,
            _ => {
                self.made_from = Some((menu.clone(), revision));
                Some(make(menu, &self.offered))
            }
        }
    }

    /// The offer `next` is: the last one, shared, when it is kept.
    fn or_last(&self, next: NextOffer) -> OfferedActions {
        next.unwrap_or_else(|| self.offered.clone())
    }

    /// Whether `next` is the last offer, kept or given back shared.
    fn is_last(&self, next: Option<&OfferedActions>) -> bool {
        next.is_none_or(|offered| self.offered.shares(offered))
    }
}

impl ShownOffer {
    /// Whether it shows `offered` and `tasks` within `budget`: the same offers, kept
    /// (`None`) or shared, as
    /// [`ActionOffers::offer_again`](crate::world::ActionOffers::offer_again) gives
    /// them back unchanged. Such an offer comes from the same menu, which the prompt
    /// cache drops on any change of content or settings, so its block is still the one
    /// they would write; or it is empty, and the empty block is always the same text.
    pub(super) fn shows(
        &self,
        (offered, tasks): (Option<&OfferedActions>, Option<&OfferedActions>),
        (budget, tasks_budget): (usize, usize),
    ) -> bool {
        self.shown
            && self.actions.is_last(offered)
            && self.tasks.is_last(tasks)
            && (self.budget, self.tasks_budget) == (budget, tasks_budget)
    }

    /// The offers `next` are: the last ones where they are kept.
    pub(super) fn or_last(
        &self,
        (offered, tasks): (NextOffer, NextOffer),
    ) -> (OfferedActions, OfferedActions) {
        (self.actions.or_last(offered), self.tasks.or_last(tasks))
    }

    /// Shows `offered` within `budget`, trimmed as `relevance` weighs its lines
    /// ([`trim_mask`](crate::prompt::trim_mask), with the buffers of `scratch`) when its
    /// block (from `registry` with `options`) does not fit whole; and after it the
    /// block of `tasks`, the least relevant left out until it fits `tasks_budget`. The
    /// same offer and budgets as last time are trimmed the same way, so an unchanged
    /// world keeps its prompt. Returns how many of its actions were left out.
    pub(super) fn show(
        &mut self,
        (offered, tasks): (OfferedActions, OfferedActions),
        (budget, tasks_budget): (usize, usize),
        (registry, options): (&ContentRegistry, &BlockOptions),
        relevance: impl Fn(&AvailableAction<'_>) -> u32,
        scratch: &mut TrimScratch,
    ) -> usize {
        let budgets = (offered.len(), tasks_budget);
        let left_out = task_trim_mask(&tasks, budgets, &relevance, registry, options);
        self.tasks_shown.clone_leaving_out(&tasks, &left_out);
        let write = |shown: &mut Self| {
            shown.trimmed.clone_leaving_out(&offered, &shown.mask);
            shown.block.clear();
            write_available_actions(&mut shown.block, &shown.trimmed, registry, options);
            shown.actions_end = shown.block.len();
            if !shown.tasks_shown.is_empty() {
                shown.block.push('\n');
                let after = shown.trimmed.len();
                let tasks = &shown.tasks_shown;
                write_available_tasks(&mut shown.block, tasks, after, registry, options);
            }
        };
        // The same offer made again from a menu built again (content or settings
        // changed) keeps its mask, unless its block no longer fits: another layout, or
        // longer mod metadata. From the same menu, an offer not shared is another.
        let last = &self.actions.offered;
        let made_again = !last.made_from_one_menu(&offered) && *last == offered;
        let kept = self.shown && self.budget == budget && made_again && {
            write(self);
            estimate_tokens(&self.block[..self.actions_end]) <= budget
        };
        if !kept {
            let block = (registry, options);
            trim_mask_with(&offered, budget, relevance, block, scratch, &mut self.mask);
            write(self);
        }
        self.block_fingerprint = text_fingerprint(&self.block);
        self.actions.offered = offered;
        self.tasks.offered = tasks;
        self.shown = true;
        (self.budget, self.tasks_budget) = (budget, tasks_budget);
        self.mask.iter().filter(|&&left_out| left_out).count()
    }

    /// The offer as shown, without what was left out.
    pub(super) fn trimmed(&self) -> &OfferedActions {
        &self.trimmed
    }

    /// The tasks as shown, numbered after the actions shown.
    pub(super) fn shown_tasks(&self) -> &OfferedActions {
        &self.tasks_shown
    }

    /// Its available-actions block.
    pub(super) fn block(&self) -> &str {
        &self.block
    }

    /// What a turn shows with this offer, under `system`, perceiving `perception` (with
    /// its [`text_fingerprint`]) and recalling the memories `memories`.
    pub(super) fn shown<'a>(
        &'a self,
        system: &'a std::sync::Arc<str>,
        (perception, perception_fingerprint): (&'a str, u64),
        memories: &'a [u64],
    ) -> Shown<'a> {
        Shown {
            system,
            actions: &self.block,
            actions_fingerprint: self.block_fingerprint,
            perception,
            perception_fingerprint,
            memories,
        }
    }
}

/// What makes an offered action relevant to an actor: a player among its targets
/// counts 2, a target the actor's recalled memories are tagged with 1.
pub(super) struct Relevance<'a> {
    /// The players.
    pub players: &'a [Entity],
    /// What the actor remembers ([`remembered_targets`]).
    pub remembered: &'a [Entity],
}

impl Relevance<'_> {
    /// How much `action` matters to the actor: higher is kept longer.
    pub(super) fn of(&self, action: &AvailableAction<'_>) -> u32 {
        let player = action.targets.iter().any(|t| self.players.contains(t));
        let known = action.targets.iter().any(|t| self.remembered.contains(t));
        2 * u32::from(player) + u32::from(known)
    }
}

/// Puts in `remembered` the entities whose narrative key one of `tags` (a recalled
/// memory's) is, by `with_key`: entities by their narrative key.
pub(super) fn remembered_targets<'t>(
    remembered: &mut SmallVec<[Entity; 8]>,
    tags: impl IntoIterator<Item = &'t String>,
    with_key: &HashMap<&str, SmallVec<[Entity; 1]>>,
) {
    remembered.clear();
    remembered.extend(
        tags.into_iter()
            .filter_map(|tag| with_key.get(tag.as_str()))
            .flatten()
            .copied(),
    );
}

/// How a frame makes each actor's offers and shows them.
impl Frame<'_, '_, '_> {
    /// The offers `asked` is to be shown, each made again only when what its menu reads
    /// changed ([`KeptOffer::next`], `None` when kept): its
    /// actions (none in a reply out of a fight) from the menu its spec allows, and its
    /// tasks (none in a reply or a fight, or with tasks turned off) from the tasks its
    /// spec allows.
    pub(super) fn offers(
        &mut self,
        asked: &Asked<'_>,
        shown: &mut ShownOffer,
        cache: &mut PromptCache,
        around: Around,
    ) -> (NextOffer, NextOffer) {
        let (settings, replying) = (self.settings, asked.reply_to.is_some());
        // A fighter replies with a combat action: talking to it does not stop the fight.
        let menu = (!replying || asked.fighting).then(|| {
            let verbs = &settings.combat_verbs;
            cache.menu(self.registry, asked.spec, asked.fighting, verbs)
        });
        let actions = self.offer_from(asked.entity, &mut shown.actions, menu, around);
        let menu = (settings.offer_tasks && !replying && !asked.fighting)
            .then(|| cache.task_menu(self.registry, asked.spec))
            .filter(|menu| !menu.is_empty());
        let tasks = self.offer_from(asked.entity, &mut shown.tasks, menu, around);
        (actions, tasks)
    }

    /// The offer `kept` makes next to `actor` from `menu` (nothing without one), with
    /// what is `around` the actor.
    fn offer_from(
        &mut self,
        actor: Entity,
        kept: &mut KeptOffer,
        menu: Option<&ActionMenu>,
        around: Around,
    ) -> NextOffer {
        let revision = self.revisions.revision();
        // Without a menu nothing is read.
        let changed_at = menu.map_or(revision, |menu| self.changed_at(menu, around));
        let offers = &mut self.offers;
        kept.next(menu, (changed_at, revision), |menu, last| {
            offers.offer_again(menu, actor, last)
        })
    }

    /// The revision at which what `menu` reads for an actor last changed, with what is
    /// `around` the actor.
    fn changed_at(&mut self, menu: &ActionMenu, (place, around): Around) -> u64 {
        let known = self.reaches.iter().find(|(known, _)| known.shares(menu));
        let reach = match known {
            Some(&(_, reach)) => reach,
            None => {
                let reach = menu.reach(self.scopes);
                self.reaches.push((menu.clone(), reach));
                reach
            }
        };
        match reach {
            // What `changed_within` would give, looked up already for the perception.
            ScopeReach::Place => around,
            _ => self.revisions.changed_within(place, reach),
        }
    }

    /// Shows `offered` to `asked` within its actions budget (`shown` is what it was
    /// last shown, and the budget), weighed by what it remembers (`recalled`), unless
    /// it shows it already; an offer trimmed past half is to be reported, unless it
    /// was (`reported`).
    pub(super) fn show(
        &mut self,
        asked: &Asked<'_>,
        (shown, budgets): (&mut ShownOffer, (usize, usize)),
        reported: bool,
        next: (NextOffer, NextOffer),
        recalled: &[&MemoryEntry],
    ) -> Option<OfferTrimmed> {
        if shown.shows((next.0.as_ref(), next.1.as_ref()), budgets) {
            return None;
        }
        let (offered, tasks) = shown.or_last(next);
        let budget = budgets.0;
        let key_holders = self.key_holders;
        let with_key = self.with_key.get_or_insert_with(|| {
            let mut with_key: HashMap<&str, SmallVec<[Entity; 1]>> = HashMap::new();
            for (entity, key) in key_holders {
                with_key.entry(key.0.as_str()).or_default().push(entity);
            }
            with_key
        });
        let tags = recalled.iter().flat_map(|memory| &memory.tags);
        remembered_targets(&mut self.remembered, tags, with_key);
        let relevance = Relevance {
            players: &self.players,
            remembered: &self.remembered,
        };
        let count = offered.len();
        let left_out = shown.show(
            (offered, tasks),
            budgets,
            (self.registry, &self.settings.block),
            |action: &AvailableAction<'_>| relevance.of(action),
            &mut self.trim,
        );
        if left_out * 2 <= count || reported {
            return None;
        }
        Some(OfferTrimmed {
            actor: asked.entity,
            offered: count,
            left_out,
            budget,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn entity(n: u32) -> Entity {
        Entity::from_raw_u32(n).expect("a valid index")
    }

    #[test]
    fn a_reply_is_offered_nothing_and_an_offer_is_made_again_only_after_a_change() {
        let menu = ActionMenu::default();
        let mut shown = KeptOffer::default();
        let made = Cell::new(0);
        let make = |_: &ActionMenu, _: &OfferedActions| {
            made.set(made.get() + 1);
            OfferedActions::default()
        };
        assert!(shown.next(Some(&menu), (0, 3), make).is_some());
        assert_eq!(made.get(), 1, "the first offer is made");
        // As showing it keeps it.
        shown.offered = crate::world::offer_to_go();
        let kept = shown.next(Some(&menu.clone()), (3, 4), make);
        assert!(kept.is_none(), "nothing it reads changed since revision 3");
        assert_eq!(made.get(), 1, "kept");
        assert!(shown.or_last(kept).shares(&shown.offered));
        assert!(shown.is_last(None));
        assert!(shown.next(Some(&menu), (4, 4), make).is_some());
        assert_eq!(made.get(), 2, "what it reads changed at 4: made again");
        let reply = shown.next(None, (0, 5), make);
        assert!(reply.as_ref().is_some_and(OfferedActions::is_empty));
        assert!(shown.made_from.is_none(), "a reply's offer has no menu");
        assert!(shown.next(Some(&menu), (0, 5), make).is_some());
        assert_eq!(made.get(), 3, "after a reply, the offer is made again");
    }

    #[test]
    fn a_player_target_matters_more_than_a_remembered_one() {
        let (player, friend, stranger) = (entity(1), entity(2), entity(3));
        let relevance = Relevance {
            players: &[player],
            remembered: &[friend],
        };
        fn action(targets: &[Entity]) -> AvailableAction<'_> {
            AvailableAction {
                index: 1,
                action_id: "core:greet",
                targets,
                command: "greet",
                description: "Greet",
            }
        }
        assert_eq!(relevance.of(&action(&[])), 0);
        assert_eq!(relevance.of(&action(&[stranger])), 0);
        assert_eq!(relevance.of(&action(&[friend])), 1);
        assert_eq!(relevance.of(&action(&[player])), 2);
        assert_eq!(relevance.of(&action(&[player, friend])), 3);
    }

    #[test]
    fn memories_name_what_holds_their_tags_as_narrative_keys() {
        let mut with_key: HashMap<&str, SmallVec<[Entity; 1]>> = HashMap::new();
        with_key.entry("cellar_key").or_default().push(entity(7));
        with_key.entry("brom").or_default().push(entity(8));
        let tags = ["cellar_key".to_owned(), "weather".to_owned()];
        let mut remembered = SmallVec::from_slice(&[entity(9)]);
        remembered_targets(&mut remembered, &tags, &with_key);
        assert_eq!(remembered.as_slice(), [entity(7)], "cleared first");
    }
}
