//! The `FragmentResolver`: picks authored fragments for a report, seeded and without
//! repeating itself, and builds the [`NarrationPlan`].

use std::borrow::Cow;
use std::collections::VecDeque;

use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::defaults;
use super::plan::{
    EntityRef, NarrationPlan, Person, PlanAction, PlanEffect, PlanFragments, Viewpoint,
};
use super::{ActionReport, EffectReport, Outcome, Verbosity};
use crate::content::{Fragment, FragmentPool, NarrativeContext};

/// One entity as narration sees it: its name and its narrative context.
#[derive(Debug, Clone)]
pub struct Described<'a> {
    /// The entity.
    pub entity: Entity,
    /// Its display name: "mug of ale".
    pub name: &'a str,
    /// Its name as a sentence uses it: "the mug of ale", "Marta".
    pub called: Cow<'a, str>,
    /// Its narrative context, when it has one.
    pub context: Option<&'a NarrativeContext>,
    /// Whether it is the player's character.
    pub is_player: bool,
}

impl<'a> Described<'a> {
    /// An entity with this name; `is_character` decides whether a sentence says "the".
    pub fn new(
        entity: Entity,
        name: &'a str,
        is_character: bool,
        context: Option<&'a NarrativeContext>,
    ) -> Self {
        let called = if is_character {
            Cow::Borrowed(name)
        } else {
            Cow::Owned(defaults::named(name, false))
        };
        Self {
            entity,
            name,
            called,
            context,
            is_player: false,
        }
    }

    /// Marks it as the player's character.
    #[must_use]
    pub fn player(mut self) -> Self {
        self.is_player = true;
        self
    }
}

/// The entities a report mentions, resolved from the world.
#[derive(Debug, Clone)]
pub struct ReportEntities<'a> {
    /// Who acted.
    pub actor: Described<'a>,
    /// What it was done to.
    pub object: Option<Described<'a>>,
    /// The second target.
    pub indirect_object: Option<Described<'a>>,
    /// The instrument.
    pub instrument: Option<Described<'a>>,
    /// Where the actor is.
    pub place: Option<Described<'a>>,
    /// Names of the places one can go from there.
    pub exits: Vec<&'a str>,
    /// For each of the report's effects, in order: its target and where it came from.
    pub effects: Vec<(Option<Described<'a>>, Option<Described<'a>>)>,
}

/// The fragments picked for a report's action: core, colors, state variant, traits.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection<'a> {
    /// Core, colors and state.
    pub fragments: PlanFragments<'a>,
    /// 3–5 traits of the entity acted on (or of the actor), shuffled.
    pub traits: Vec<Cow<'a, str>>,
}

/// The last picks for one entity, oldest first.
#[derive(Debug, Clone, Default)]
struct RepetitionBuffer {
    recent: VecDeque<u64>,
}

impl RepetitionBuffer {
    fn contains(&self, id: u64) -> bool {
        self.recent.contains(&id)
    }

    /// How recently `id` was picked: 0 for the oldest in the buffer; never-picked first.
    fn age(&self, id: u64) -> Option<usize> {
        self.recent.iter().position(|&recent| recent == id)
    }

    fn push(&mut self, id: u64, window: usize) {
        if window == 0 {
            return;
        }
        if let Some(position) = self.age(id) {
            self.recent.remove(position);
        }
        while self.recent.len() >= window {
            self.recent.pop_front();
        }
        self.recent.push_back(id);
    }
}

/// Picks fragments for reports: 1 action core, 1–2 colors, 1 state variant and 3–5
/// traits, and for each effect 1 core and 0–1 color, as the selection table says.
///
/// Fragments are used exactly as authored; only the placeholders `{name}`, `{actor}`,
/// `{item}`/`{object}`, `{target}`, `{instrument}` and `{place}` are filled from the
/// report. A missing pool falls back to the generic lines in one place
/// ([`defaults`](super::defaults)). Each entity keeps a repetition buffer: a fragment
/// it used within its last `window` picks is not picked again while its pool has
/// another (the least recently used goes first when every one was used). The same
/// seed and the same reports give the same picks.
#[derive(Debug)]
pub struct FragmentResolver {
    rng: ChaCha8Rng,
    recent: EntityHashMap<RepetitionBuffer>,
    window: usize,
    verbosity: Verbosity,
}

impl FragmentResolver {
    /// A resolver whose picks follow from `seed`, remembering each entity's last
    /// `window` picks.
    pub fn new(seed: u64, window: usize, verbosity: Verbosity) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
            recent: EntityHashMap::default(),
            window,
            verbosity,
        }
    }

    /// Changes how much is picked from now on.
    pub fn set_verbosity(&mut self, verbosity: Verbosity) {
        self.verbosity = verbosity;
    }

    /// Forgets an entity's recent picks (when it is despawned).
    pub fn forget(&mut self, entity: Entity) {
        self.recent.remove(&entity);
    }

    /// The fragments for the report's action: core, colors, state variant, traits.
    pub fn select<'a>(
        &mut self,
        report: &'a ActionReport,
        entities: &ReportEntities<'a>,
    ) -> Selection<'a> {
        let full = self.verbosity == Verbosity::Full;
        let names = Names::of(entities);
        let actor = &entities.actor;
        let object = entities.object.as_ref();
        let subject_of_object = object.map(|o| o.called.clone());
        let object_called = object.map(|o| o.called.as_ref());
        let (owner, pool, subject) = match report.outcome {
            Outcome::Success if actor.is_player => (
                object,
                object.and_then(|o| pool(o, |c| &c.action_fragments, &report.verb)),
                None,
            ),
            Outcome::Success => (
                Some(actor),
                pool(actor, |c| &c.behavior_fragments, &report.verb),
                Some(Cow::Borrowed(actor.name)),
            ),
            Outcome::Failure => {
                let reason = report.failure_reason.as_deref().unwrap_or_default();
                let by_actor = (!actor.is_player)
                    .then(|| pool(actor, |c| &c.failure_fragments, reason))
                    .flatten();
                match by_actor {
                    Some(found) => (Some(actor), Some(found), Some(Cow::Borrowed(actor.name))),
                    None => (
                        object,
                        object.and_then(|o| pool(o, |c| &c.failure_fragments, reason)),
                        subject_of_object,
                    ),
                }
            }
        };
        let (action_core, action_color, subject) = match (owner, pool) {
            (Some(owner), Some(pool)) => {
                let recent = self.recent.entry(owner.entity).or_default();
                let core = pick(&pool.core, recent, &mut self.rng, self.window)
                    .map(|f| fill(f, owner.called.as_ref(), &names));
                let colors = if full && !pool.color.is_empty() {
                    let count = self.rng.random_range(1..=2usize).min(pool.color.len());
                    (0..count)
                        .filter_map(|_| pick(&pool.color, recent, &mut self.rng, self.window))
                        .map(|f| fill(f, owner.called.as_ref(), &names))
                        .collect()
                } else {
                    Vec::new()
                };
                match core {
                    Some(core) => (core, colors, subject),
                    None => (default_core(report, actor, object_called), colors, None),
                }
            }
            _ => (default_core(report, actor, object_called), Vec::new(), None),
        };

        // The state variant and traits belong to the entity acted on, or the actor.
        let stateful = object.unwrap_or(actor);
        let (new_state, state_of) = match (&report.new_state, full, report.outcome) {
            (Some(state), true, Outcome::Success) => {
                let variants = stateful
                    .context
                    .and_then(|c| c.state_variants.get(state.as_str()))
                    .filter(|pool| !pool.is_empty());
                let picked = variants.and_then(|pool| {
                    let recent = self.recent.entry(stateful.entity).or_default();
                    pick(pool, recent, &mut self.rng, self.window)
                });
                match picked {
                    Some(variant) => (
                        Some(fill(variant, stateful.called.as_ref(), &names)),
                        Some(stateful.called.clone()),
                    ),
                    None => (
                        Some(Cow::Owned(defaults::state(state, &stateful.called))),
                        None,
                    ),
                }
            }
            _ => (None, None),
        };
        let traits = if full {
            self.traits(stateful, &names)
        } else {
            Vec::new()
        };
        Selection {
            fragments: PlanFragments {
                subject,
                action_core,
                action_color,
                new_state,
                state_of,
            },
            traits,
        }
    }

    /// The whole plan for a report: the selection, each effect's fragments, the
    /// entities mentioned with a few traits, the viewpoint and the exits.
    pub fn plan<'a>(
        &mut self,
        report: &'a ActionReport,
        entities: &'a ReportEntities<'a>,
    ) -> NarrationPlan<'a> {
        let Selection { fragments, traits } = self.select(report, entities);
        let full = self.verbosity == Verbosity::Full;
        let names = Names::of(entities);
        let actor = &entities.actor;
        let effects = report
            .effects
            .iter()
            .zip(
                entities
                    .effects
                    .iter()
                    .chain(std::iter::repeat(&(None, None))),
            )
            .map(|(effect, (target, from))| self.effect(effect, target, from, entities, &names))
            .collect();

        let primary = entities.object.as_ref().unwrap_or(actor);
        let mut mentioned = vec![primary.entity];
        let mut entity_refs = Vec::with_capacity(4);
        entity_refs.push(EntityRef {
            name: primary.name,
            called: primary.called.clone(),
            traits,
            atmosphere: primary.context.and_then(|c| c.atmosphere.as_deref()),
        });
        for other in [
            Some(actor),
            entities.indirect_object.as_ref(),
            entities.instrument.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            if mentioned.contains(&other.entity) {
                continue;
            }
            mentioned.push(other.entity);
            let traits = if full {
                self.traits(other, &names)
            } else {
                Vec::new()
            };
            entity_refs.push(EntityRef {
                name: other.name,
                called: other.called.clone(),
                traits,
                atmosphere: other.context.and_then(|c| c.atmosphere.as_deref()),
            });
        }
        NarrationPlan {
            action: PlanAction {
                verb: &report.verb,
                actor: actor.name,
                object: entities.object.as_ref().map(|o| o.name),
                indirect_object: entities.indirect_object.as_ref().map(|o| o.name),
                instrument: entities.instrument.as_ref().map(|o| o.name),
                outcome: report.outcome,
                failure_reason: report.failure_reason.as_deref(),
            },
            fragments,
            effects,
            entity_refs,
            viewpoint: Viewpoint {
                person: if actor.is_player {
                    Person::Second
                } else {
                    Person::Third
                },
                place: entities.place.as_ref().map(|p| p.name),
            },
            exits: entities.exits.clone(),
            text: report.text.as_deref(),
        }
    }

    /// 3–5 traits of an entity, in random order, or all of them when it has fewer.
    fn traits<'a>(&mut self, entity: &Described<'a>, names: &Names<'_>) -> Vec<Cow<'a, str>> {
        let Some(pool) = entity.context.map(|c| &c.traits).filter(|t| !t.is_empty()) else {
            return Vec::new();
        };
        let count = self.rng.random_range(3..=5usize).min(pool.len());
        let recent = self.recent.entry(entity.entity).or_default();
        (0..count)
            .filter_map(|_| pick(pool, recent, &mut self.rng, self.window))
            .map(|f| fill(f, entity.called.as_ref(), names))
            .collect()
    }

    /// One effect's core and optional color, from its target, where it came from, or
    /// the place, whichever has fragments for it.
    fn effect<'a>(
        &mut self,
        effect: &'a EffectReport,
        target: &Option<Described<'a>>,
        from: &Option<Described<'a>>,
        entities: &ReportEntities<'a>,
        names: &Names<'_>,
    ) -> PlanEffect<'a> {
        let found = [target.as_ref(), from.as_ref(), entities.place.as_ref()]
            .into_iter()
            .flatten()
            .find_map(|owner| {
                pool(owner, |c| &c.effect_fragments, &effect.action).map(|p| (owner, p))
            });
        let (core, color) = match found {
            Some((owner, pool)) => {
                let recent = self.recent.entry(owner.entity).or_default();
                let core = pick(&pool.core, recent, &mut self.rng, self.window)
                    .map(|f| fill(f, owner.called.as_ref(), names));
                let wants_color = self.verbosity == Verbosity::Full
                    && !pool.color.is_empty()
                    && self.rng.random_range(0..=1u8) == 1;
                let color = if wants_color {
                    pick(&pool.color, recent, &mut self.rng, self.window)
                        .map(|f| fill(f, owner.called.as_ref(), names))
                } else {
                    None
                };
                (core, color)
            }
            None => (None, None),
        };
        let actor = &entities.actor;
        PlanEffect {
            kind: &effect.kind,
            action: &effect.action,
            core: core.unwrap_or_else(|| {
                Cow::Owned(defaults::effect_core(
                    (!actor.is_player).then_some(actor.name),
                ))
            }),
            color,
        }
    }
}

/// A non-empty pool of `entity`'s context, chosen by `field` and `key`.
fn pool<'a>(
    entity: &Described<'a>,
    field: impl Fn(&'a NarrativeContext) -> &'a std::collections::BTreeMap<String, FragmentPool>,
    key: &str,
) -> Option<&'a FragmentPool> {
    entity
        .context
        .and_then(|context| field(context).get(key))
        .filter(|pool| !pool.core.is_empty())
}

fn default_core<'a>(
    report: &ActionReport,
    actor: &Described<'a>,
    object: Option<&str>,
) -> Cow<'a, str> {
    let actor = (!actor.is_player).then_some(actor.name);
    Cow::Owned(match report.outcome {
        Outcome::Success => defaults::action_core(&report.verb, actor, object),
        Outcome::Failure => defaults::failure_core(&report.verb, actor, object),
    })
}

/// One fragment from `pool`, not among the entity's recent picks while the pool has
/// another; then the least recently used. Records the pick.
fn pick<'a>(
    pool: &'a [Fragment],
    recent: &mut RepetitionBuffer,
    rng: &mut ChaCha8Rng,
    window: usize,
) -> Option<&'a Fragment> {
    let chosen = match pool.len() {
        0 => return None,
        1 => &pool[0],
        len => {
            // Most pools are mostly fresh: a few random draws find a fresh fragment
            // without scanning; when they do not, count the fresh ones exactly.
            let drawn = (0..4)
                .map(|_| &pool[rng.random_range(0..len)])
                .find(|f| !recent.contains(f.id()));
            match drawn {
                Some(fragment) => fragment,
                None => {
                    let fresh = pool.iter().filter(|f| !recent.contains(f.id())).count();
                    if fresh > 0 {
                        let nth = rng.random_range(0..fresh);
                        pool.iter().filter(|f| !recent.contains(f.id())).nth(nth)?
                    } else {
                        pool.iter().min_by_key(|f| recent.age(f.id()))?
                    }
                }
            }
        }
    };
    recent.push(chosen.id(), window);
    Some(chosen)
}

/// The names placeholders are filled with.
struct Names<'n> {
    actor: &'n str,
    object: Option<&'n str>,
    target: Option<&'n str>,
    instrument: Option<&'n str>,
    place: Option<&'n str>,
}

impl<'n> Names<'n> {
    fn of(entities: &'n ReportEntities<'_>) -> Self {
        Self {
            actor: entities.actor.called.as_ref(),
            object: entities.object.as_ref().map(|o| o.called.as_ref()),
            target: entities.indirect_object.as_ref().map(|o| o.called.as_ref()),
            instrument: entities.instrument.as_ref().map(|o| o.called.as_ref()),
            place: entities.place.as_ref().map(|o| o.called.as_ref()),
        }
    }
}

/// The fragment with its placeholders filled; borrowed when it has none. A
/// placeholder the report cannot fill stays as written.
fn fill<'a>(fragment: &'a Fragment, own_name: &str, names: &Names<'_>) -> Cow<'a, str> {
    let text = fragment.text();
    if !text.contains('{') {
        return Cow::Borrowed(text);
    }
    let mut filled = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        filled.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            filled.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let value = match &after[..close] {
            "name" => Some(own_name),
            "actor" => Some(names.actor),
            "item" | "object" => names.object,
            "target" => names.target,
            "instrument" => names.instrument,
            "place" => names.place,
            _ => None,
        };
        match value {
            Some(value) => filled.push_str(value),
            None => filled.push_str(&rest[open..open + close + 2]),
        }
        rest = &after[close + 1..];
    }
    filled.push_str(rest);
    Cow::Owned(filled)
}
