//! The offer: the actions (or tasks) one actor may take now, numbered, each with its
//! targets and command, one plain type from the world to the prompt and the answer check.

use std::sync::Arc;

use bevy::prelude::*;

use super::available::MenuAction;
use crate::content::Lifeline;

/// One action an actor may take, with its targets chosen and its command rendered:
/// one of [`OfferedActions`], borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvailableAction<'a> {
    /// Its number in the prompt, from 1.
    pub index: usize,
    /// The definition's `mod:action` id.
    pub action_id: &'a str,
    /// The chosen targets in slot order: primary, secondary, tertiary.
    pub targets: &'a [Entity],
    /// The rendered command: "give mug of ale to Marta".
    pub command: &'a str,
    /// The definition's description.
    pub description: &'a str,
}

/// The actions one actor is offered, numbered from 1 in a stable order: the
/// registry's action order (by group, then id), then targets by name. Its prompt lists
/// them and its answer is checked against them.
///
/// Iterate it, or [`get`](Self::get) an action by its number. Cloning it shares it.
#[derive(Clone, Default)]
pub struct OfferedActions(Option<Arc<OfferedList>>);

/// What [`OfferedActions`] shares: the menu the actions come from, each offered
/// action, and every command's text one after the other (shared with the offers left
/// out from it, which may not show them all).
struct OfferedList {
    menu: Arc<[Arc<MenuAction>]>,
    offered: Vec<Offered>,
    commands: Arc<str>,
}

/// One offered action: its menu action, targets and where its command is in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Offered {
    pub action: u32,
    pub targets: [Entity; 3],
    pub slots: u8,
    pub command: (u32, u32),
}

impl OfferedList {
    #[inline]
    fn view<'a>(&'a self, position: usize, offered: &'a Offered) -> AvailableAction<'a> {
        let action = &self.menu[offered.action as usize].definition;
        let (start, end) = offered.command;
        AvailableAction {
            index: position + 1,
            action_id: &action.id,
            targets: &offered.targets[..usize::from(offered.slots)],
            command: &self.commands[start as usize..end as usize],
            description: &action.description,
        }
    }
}

impl OfferedActions {
    /// How many actions are offered.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |list| list.offered.len())
    }

    /// Whether nothing is offered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the two are one offer, shared (or both empty): true of a clone, and of
    /// what [`ActionOffers::offer_again`](super::ActionOffers::offer_again) gives back unchanged.
    pub fn shares(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(one), Some(other)) => Arc::ptr_eq(one, other),
            (one, other) => one.is_none() && other.is_none(),
        }
    }

    /// Whether the two were made from one menu, shared. Two such offers that are not
    /// [shared](Self::shares) differ: [`ActionOffers::offer_again`](super::ActionOffers::offer_again) compared them.
    pub(crate) fn made_from_one_menu(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(one), Some(other)) => Arc::ptr_eq(&one.menu, &other.menu),
            _ => false,
        }
    }

    /// The action numbered `index` (from 1), as the prompt lists it.
    #[inline]
    pub fn get(&self, index: usize) -> Option<AvailableAction<'_>> {
        let list = self.0.as_deref()?;
        let position = index.checked_sub(1)?;
        list.offered
            .get(position)
            .map(|offered| list.view(position, offered))
    }

    /// The target slots of the definition the action numbered `index` was offered
    /// from, in slot order, each its placeholder and scope: what each of its targets
    /// was chosen as.
    pub(crate) fn target_slots(&self, index: usize) -> impl Iterator<Item = (&str, &str)> {
        let list = self.0.as_deref();
        let offered = list.zip(index.checked_sub(1)).and_then(|(list, position)| {
            let offered = list.offered.get(position)?;
            Some(&list.menu[offered.action as usize].definition)
        });
        (offered.into_iter())
            .flat_map(|definition| definition.target_slots())
            .map(|(_, slot)| (slot.placeholder.as_str(), slot.scope.as_str()))
    }

    /// Keeps the actions `keep` says yes to, numbered again from 1 in the same order.
    pub fn retain(&mut self, mut keep: impl FnMut(AvailableAction<'_>) -> bool) {
        let left_out: Vec<bool> = self.iter().map(|action| !keep(action)).collect();
        self.leave_out(&left_out);
    }

    /// Leaves out the actions at the positions `left_out` marks (the action numbered
    /// `n` at `n - 1`); the rest are numbered again from 1 in the same order.
    pub fn leave_out(&mut self, left_out: &[bool]) {
        if !left_out.contains(&true) {
            return;
        }
        let Some(shared) = self.0.as_mut() else {
            return;
        };
        match Arc::get_mut(shared) {
            Some(list) => {
                let mut position = 0;
                list.offered.retain(|_| {
                    position += 1;
                    !left_out.get(position - 1).copied().unwrap_or(false)
                });
            }
            // A new list of the actions kept, sharing the commands' text, allocated at
            // its size at once.
            None => {
                let marked = left_out
                    .iter()
                    .take(shared.offered.len())
                    .filter(|&&out| out);
                let mut offered = Vec::with_capacity(shared.offered.len() - marked.count());
                offered.extend(kept_offers(&shared.offered, left_out));
                *shared = Arc::new(OfferedList {
                    menu: Arc::clone(&shared.menu),
                    offered,
                    commands: Arc::clone(&shared.commands),
                });
            }
        }
    }

    /// Becomes `from` without the actions `left_out` marks, as a clone of `from` given
    /// to [`leave_out`](Self::leave_out) would, but in its own memory when it does not
    /// share it: an offer trimmed anew each turn does not allocate each turn.
    pub(crate) fn clone_leaving_out(&mut self, from: &Self, left_out: &[bool]) {
        let Some(source) = from.0.as_deref() else {
            self.0 = None;
            return;
        };
        let own = self.0.as_mut().and_then(Arc::get_mut);
        let Some(list) = own.filter(|_| left_out.contains(&true)) else {
            *self = from.clone();
            self.leave_out(left_out);
            return;
        };
        list.menu = Arc::clone(&source.menu);
        list.commands = Arc::clone(&source.commands);
        list.offered.clear();
        list.offered.extend(kept_offers(&source.offered, left_out));
    }

    /// What each offered action, by number, is to an actor that must not be stuck
    /// ([`ActionDefinition::lifeline`](crate::content::ActionDefinition::lifeline));
    /// none for an offered task.
    pub fn lifelines(&self) -> impl ExactSizeIterator<Item = Option<Lifeline>> + '_ {
        let list = self.0.as_deref();
        let offered = list.map_or(&[][..], |list| &list.offered);
        (offered.iter())
            .map(move |offered| list.and_then(|list| list.menu[offered.action as usize].lifeline))
    }

    /// Every offered action, by number.
    pub fn iter(&self) -> OfferedIter<'_> {
        OfferedIter {
            list: self.0.as_deref(),
            offered: self
                .0
                .as_deref()
                .map_or(&[][..], |list| &list.offered)
                .iter()
                .enumerate(),
        }
    }
}

/// The offers `left_out` does not mark (positions past its end are kept).
fn kept_offers<'o>(
    offered: &'o [Offered],
    left_out: &'o [bool],
) -> impl Iterator<Item = Offered> + 'o {
    (offered.iter())
        .zip(left_out.iter().chain(std::iter::repeat(&false)))
        .filter(|&(_, &out)| !out)
        .map(|(&offered, _)| offered)
}

impl<'a> IntoIterator for &'a OfferedActions {
    type Item = AvailableAction<'a>;
    type IntoIter = OfferedIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::fmt::Debug for OfferedActions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for OfferedActions {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for OfferedActions {}

/// The actions of an [`OfferedActions`], by number.
#[derive(Clone)]
pub struct OfferedIter<'a> {
    list: Option<&'a OfferedList>,
    offered: std::iter::Enumerate<std::slice::Iter<'a, Offered>>,
}

impl<'a> Iterator for OfferedIter<'a> {
    type Item = AvailableAction<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (position, offered) = self.offered.next()?;
        Some(self.list?.view(position, offered))
    }

    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        let (position, offered) = self.offered.nth(n)?;
        Some(self.list?.view(position, offered))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.offered.size_hint()
    }
}

impl DoubleEndedIterator for OfferedIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (position, offered) = self.offered.next_back()?;
        Some(self.list?.view(position, offered))
    }
}

impl ExactSizeIterator for OfferedIter<'_> {}

impl OfferedActions {
    /// Whether this offer is exactly `offered`, with `commands`, made from `menu`.
    pub(super) fn is(
        &self,
        menu: &Arc<[Arc<MenuAction>]>,
        offered: &[Offered],
        commands: &str,
    ) -> bool {
        // The commands' text first: compared as bytes, it tells most changes quicker.
        self.0.as_deref().is_some_and(|list| {
            Arc::ptr_eq(&list.menu, menu) && *list.commands == *commands && list.offered == offered
        })
    }

    /// The offer of `offered` with `commands`, made from `menu`, copied out at its exact
    /// size, so an offer holds no spare room.
    pub(super) fn from_parts(
        menu: &Arc<[Arc<MenuAction>]>,
        offered: &[Offered],
        commands: &str,
    ) -> Self {
        Self((!offered.is_empty()).then(|| {
            Arc::new(OfferedList {
                menu: Arc::clone(menu),
                offered: offered.to_vec(),
                commands: Arc::from(commands),
            })
        }))
    }
}
