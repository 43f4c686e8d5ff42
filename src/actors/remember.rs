//! Memories: each spec's seeds pinned into the history, and what every actor
//! witnessed (narration in its place, what others said) written under its store key.

use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use smallvec::SmallVec;

use super::memory::{self, MemoryEntry, MemoryScope, NewMemory};
use super::{ActorSpoke, HistoryStore, SmartActor, SmartActorSettings, TurnClock};
use crate::content::{ActorSpec, ContentRegistry, MemorySeed};
use crate::prompt::fit_words;
use crate::world::{
    self, DisplayName, NarrativeKey, WhereItIs, Whereabouts, Witnessed, one_line, printable,
};

/// Pins each spec's `memorySeeds` and `history.seeds` into the history, under its store
/// key, when one of its actors is first seen (an actor appears, or is given another
/// spec), when content is loaded again (a spec
/// edited on disk), and when the game puts in another [`HistoryStore`] (a save
/// loaded): a seed the store already pins, same source, text and scope, is not added
/// again, and the old words of one edited or removed are no longer recalled, whether
/// or not an actor of its spec is about.
pub(super) fn seed_memories(
    registry: Res<ContentRegistry>,
    clock: Res<TurnClock>,
    mut history: ResMut<HistoryStore>,
    mut seeded: Local<bevy::platform::collections::HashSet<String>>,
    mut store: Local<Option<memory::StoreInstance>>,
    actors: Query<&SmartActor>,
    arrived: Query<(), Changed<SmartActor>>,
) {
    // Only a new actor or one given another spec, newly loaded specs or another store
    // can need seeding.
    let replaced = *store != Some(history.instance());
    *store = Some(history.instance());
    let renewed = registry.is_changed() || replaced;
    if !renewed && arrived.is_empty() {
        return;
    }
    if renewed {
        seeded.clear();
        // Of every loaded spec: an actor of one edited while none was about may come
        // back, and its plot's seeds are everyone's meanwhile. (Those of a spec not
        // loaded stay: it may be back once its file is mended, and unpinned they would
        // be pinned again as copies.)
        history.unpin_where(|entry| {
            let owner = seed_owner(&entry.source, &registry);
            owner.is_some_and(|spec| !spec.seeds().any(|seed| is_seed(entry, spec, seed)))
        });
    }
    for actor in &actors {
        if seeded.contains(&actor.spec) {
            continue;
        }
        let Some(spec) = registry.actor(&actor.spec) else {
            continue;
        };
        seed(&mut history, spec, &registry, clock.turn);
        seeded.insert(actor.spec.clone());
    }
}

/// Pins `spec`'s seeds as it has them now, at `turn`: each one the history does not
/// pin already (same source, text and scope), once, and no longer those of its seeds
/// edited or removed since.
fn seed(history: &mut HistoryStore, spec: &ActorSpec, registry: &ContentRegistry, turn: u64) {
    // Each seed and the id of its newest pinned copy: a save made after it was edited
    // away and back brings older ones pinned too.
    let seeds: Vec<_> = (spec.seeds())
        .map(|seed| {
            let is = |entry: &MemoryEntry| is_seed(entry, spec, seed);
            (seed, history.pinned().filter(|e| is(e)).map(|e| e.id).max())
        })
        .collect();
    let kept: Vec<u64> = seeds.iter().filter_map(|seed| seed.1).collect();
    history.unpin_where(|entry| {
        let ours = seed_owner(&entry.source, registry).is_some_and(|owner| owner.id == spec.id);
        ours && !kept.contains(&entry.id)
    });
    for (seed, newest) in seeds {
        if newest.is_none() {
            history.append(NewMemory {
                text: seed.text.clone(),
                tags: seed.tags.clone(),
                scope: Some(seed_scope(spec, seed)),
                turn,
                source: seed_source(spec, seed),
                pinned: true,
            });
        }
    }
}

/// How every seed's source begins: `seed <spec id>/<seed id>`.
const SEED_SOURCE: &str = "seed ";

/// The source a seed of `spec` is pinned with.
fn seed_source(spec: &ActorSpec, seed: &MemorySeed) -> String {
    format!("{SEED_SOURCE}{}/{}", spec.id, seed.id)
}

/// Whose memory a seed of `spec` is: its plot's, or the spec's store key's.
fn seed_scope(spec: &ActorSpec, seed: &MemorySeed) -> MemoryScope {
    match &seed.plot {
        Some(plot) => MemoryScope::Plot(plot.clone()),
        None => MemoryScope::Actor(spec.store_key().to_owned()),
    }
}

/// Whether `entry` is `seed` of `spec` as it is now: its source, text and scope.
fn is_seed(entry: &MemoryEntry, spec: &ActorSpec, seed: &MemorySeed) -> bool {
    entry.text == seed.text
        && entry.scope == seed_scope(spec, seed)
        && entry.source == seed_source(spec, seed)
}

/// The loaded spec whose seed the source `seed <spec id>/<seed id>` names: of the
/// specs whose id and a `/` begin it, the one of the longest id (`core:troop/elders`
/// before `core:troop`), as either id may hold a `/`. `None` for another source.
fn seed_owner<'r>(source: &str, registry: &'r ContentRegistry) -> Option<&'r ActorSpec> {
    let named = source.strip_prefix(SEED_SOURCE)?;
    let ends = named.match_indices('/').map(|(at, _)| at).rev();
    ends.filter_map(|at| registry.actor(&named[..at])).next()
}

/// Appends a `memory` (its text, tags and source) to each of `stores`, as of `turn`.
fn append_to(
    history: &mut HistoryStore,
    stores: &[MemoryScope],
    (text, tags, source): (&str, &[String], &str),
    turn: u64,
) {
    for store in stores {
        history.append(NewMemory {
            text: text.to_owned(),
            tags: tags.to_vec(),
            scope: Some(store.clone()),
            turn,
            source: source.to_owned(),
            pinned: false,
        });
    }
}

/// What memories tag and call an entity by: its narrative key and its name.
type Named = (Option<&'static NarrativeKey>, Option<&'static DisplayName>);

/// Writes what each smart actor witnessed into its memory (under its spec's store
/// key, once a store: actors sharing one share what they remember): the narration of
/// every action in the place it happened (and of its own, wherever it is now), and
/// what others in its place said. Each is one line without the characters a player may
/// not show ([`printable`]), kept as far as recall could show it (twice its token
/// budget in estimated tokens, which a server's own tokens may outnumber): the rest
/// would never be read.
pub(super) fn remember_what_was_witnessed(
    settings: Res<SmartActorSettings>,
    registry: Res<ContentRegistry>,
    clock: Res<TurnClock>,
    mut history: ResMut<HistoryStore>,
    (mut witnessed, mut spoke): (MessageReader<Witnessed>, MessageReader<ActorSpoke>),
    actors: Query<(Entity, &SmartActor, WhereItIs)>,
    (about, whereabouts): (Query<Named>, Whereabouts),
) {
    let key = |entity: Entity| about.get(entity).ok()?.0.map(|k| k.0.clone());
    // An actor whose spec is not loaded never thinks; its memories wait under its id.
    let store_key = |actor: &SmartActor| {
        let key = registry
            .actor(&actor.spec)
            .map_or(actor.spec.as_str(), |spec| spec.store_key());
        MemoryScope::Actor(key.to_owned())
    };
    // Where someone is: carried, where the one carrying it is.
    let place_of = |entity: Entity| world::place_of(whereabouts.get(entity).ok()?, &whereabouts);
    if witnessed.is_empty() && spoke.is_empty() {
        return;
    }
    // Who is in each place, found once: a turn's lines are heard by everyone there,
    // and looking through every actor for each line costs actors × lines.
    let mut in_place: HashMap<Entity, SmallVec<[(Entity, &SmartActor); 8]>> = HashMap::default();
    for (entity, actor, at) in &actors {
        if let Some(place) = world::place_of(at, &whereabouts) {
            in_place.entry(place).or_default().push((entity, actor));
        }
    }
    let witnesses = |place: Option<Entity>| {
        place
            .and_then(|place| in_place.get(&place))
            .into_iter()
            .flatten()
            .copied()
    };
    // The stores of those `who` saw it, each once: actors sharing a store (one spec,
    // or one `storeKey`) share what they remember.
    let stores_of = |who: &mut dyn Iterator<Item = &SmartActor>| {
        let mut stores: SmallVec<[MemoryScope; 8]> = who.map(store_key).collect();
        stores.sort_unstable();
        stores.dedup();
        stores
    };
    // One line of the prompt's list of memories, whatever the text's breaks. The budget
    // is the server's tokens, which recall reads as more or fewer estimated ones by
    // the server's measured density: room is left for that.
    let most = settings.recall.token_budget.saturating_mul(2);
    let memory = |text: &str| fit_words(&one_line(&printable(text)), most);
    for seen in witnessed.read() {
        let text = memory(&seen.text);
        let place = seen.place.or_else(|| place_of(seen.actor));
        let mut tags: Vec<String> = [seen.actor]
            .into_iter()
            .chain(seen.involved.iter().copied())
            .chain(place)
            .filter_map(key)
            .collect();
        tags.sort_unstable();
        tags.dedup();
        // Those where it happened, and whoever did it, wherever it went since.
        let did_it = (actors.get(seen.actor).ok())
            .filter(|&(.., at)| place.is_none() || world::place_of(at, &whereabouts) != place)
            .map(|(entity, actor, _)| (entity, actor));
        let saw = &mut witnesses(place).chain(did_it).map(|(_, actor)| actor);
        let what = (text.as_str(), tags.as_slice(), "witnessed");
        append_to(&mut history, &stores_of(saw), what, clock.turn);
    }
    for line in spoke.read() {
        let place = place_of(line.actor);
        let speaker = about
            .get(line.actor)
            .ok()
            .and_then(|(_, name)| name)
            .map_or("Someone", |n| n.0.as_str());
        let heard = memory(&format!("{speaker} said: \"{}\"", line.text));
        let tags: Vec<String> = [Some(line.actor), place]
            .into_iter()
            .flatten()
            .filter_map(key)
            .collect();
        let listeners = witnesses(place).filter(|&(listener, _)| listener != line.actor);
        let stores = stores_of(&mut listeners.map(|(_, actor)| actor));
        append_to(&mut history, &stores, (&heard, &tags, "heard"), clock.turn);
    }
}
