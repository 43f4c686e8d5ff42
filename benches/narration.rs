//! Narration benchmarks: the `FragmentResolver` picking authored fragments for action
//! reports, and the offline weaver turning a plan into a line.
//!
//! - `narration/select_one_report`: `FragmentResolver::select` for one report (Marta
//!   takes the rusty sword): her behaviour core and colors, the sword's `carried`
//!   variant and 3–5 of its 20 traits, through the repetition buffers (window 10) in
//!   their steady state — one resolver lives across all iterations.
//! - `narration/plan_one_report`: `FragmentResolver::plan` for a report with an
//!   indirect object and an effect (Marta gives the sword to the player and sits down
//!   on the bench).
//! - `narration/1000_reports_one_frame`: what a frame's narration system does for
//!   1,000 reports (a mix of successes and failures by 4 actors on 12 entities):
//!   `Described::new` for every entity each report mentions, its `ReportEntities` and
//!   `FragmentResolver::plan`. One iteration is the whole batch.
//! - `narration/offline_weave`: `weave_offline` of the plan of `plan_one_report`
//!   (informational).
//!
//! All content is built in code (no files). Run with `cargo bench --bench narration`.
//! Tuned for a small (2-core) machine: the whole run takes well under a minute.

use std::hint::black_box;
use std::time::Duration;

use bevy::ecs::entity::Entity;
use bevy_loom::content::{Fragment, FragmentPool, NarrativeContext};
use bevy_loom::narration::{
    ActionReport, Described, EffectReport, FragmentResolver, NarrationPlan, Person, ReportEntities,
    Verbosity, weave_offline,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

/// The repetition window narration uses by default.
const WINDOW: usize = 10;

fn entity(index: u32) -> Entity {
    Entity::from_raw_u32(index).expect("index below u32::MAX")
}

fn fragments(texts: &[&str]) -> Vec<Fragment> {
    texts.iter().copied().map(Fragment::new).collect()
}

fn pool(core: &[&str], color: &[&str]) -> FragmentPool {
    FragmentPool {
        core: fragments(core),
        color: fragments(color),
    }
}

fn pools<const N: usize>(
    entries: [(&str, FragmentPool); N],
) -> std::collections::BTreeMap<String, FragmentPool> {
    entries
        .into_iter()
        .map(|(key, pool)| (key.to_owned(), pool))
        .collect()
}

fn variants<const N: usize>(
    entries: [(&str, &[&str]); N],
) -> std::collections::BTreeMap<String, Vec<Fragment>> {
    entries
        .into_iter()
        .map(|(key, texts)| (key.to_owned(), fragments(texts)))
        .collect()
}

// ---------------------------------------------------------------------------
// Content: narrative contexts, as a tavern mod would author them
// ---------------------------------------------------------------------------

fn sword() -> NarrativeContext {
    NarrativeContext {
        key: "tavern:rusty_sword".to_owned(),
        traits: fragments(&[
            "pitted blade",
            "rust blooms along the fuller",
            "a nicked edge",
            "the grip wrapped in cracked leather",
            "heavier than it looks",
            "a crossguard bent slightly out of true",
            "smells of old oil and iron",
            "the pommel worn smooth by a thumb",
            "a maker's mark too worn to read",
            "dull where it should shine",
            "a faint red tinge along the spine",
            "balanced for a taller hand",
            "the tip snapped and reground",
            "creaks in its scabbard",
            "{name} has seen better wars",
            "a ribbon of faded blue tied at the hilt",
            "cold to the touch",
            "flecks of old paint on the guard",
            "a soldier's weapon, not a duellist's",
            "it rings dully when tapped",
        ]),
        atmosphere: Some("neglected, stubborn".to_owned()),
        state_variants: variants([
            (
                "carried",
                &[
                    "a reassuring weight at the hip",
                    "knocking against a knee with every step",
                    "held point-down, away from the body",
                    "its rust leaving orange smudges on {actor}'s palm",
                ],
            ),
            (
                "here",
                &[
                    "lies where it was dropped, rust to the ceiling",
                    "leans against the wall like a tired guard",
                    "rests across the floorboards of {place}",
                ],
            ),
        ]),
        action_fragments: pools([
            (
                "take",
                pool(
                    &[
                        "you lift {item} from the table",
                        "you take up the rusty sword by its grip",
                        "you heft {item}",
                        "you pick up the sword, careful of the edge",
                    ],
                    &[
                        "flakes of rust drift to the floor",
                        "the leather creaks under your fingers",
                        "it is heavier than it looks",
                        "the blade wobbles in its hilt",
                        "an old smell of oil rises from it",
                        "somebody at the bar glances over",
                    ],
                ),
            ),
            (
                "drop",
                pool(
                    &[
                        "you let {item} clatter to the floor",
                        "you set the sword down",
                        "you drop the rusty sword",
                        "you lay {item} aside",
                    ],
                    &[
                        "it lands with a dull clang",
                        "the rust leaves a stain on your hand",
                        "a chair scrapes somewhere behind you",
                        "it spins once on the boards",
                        "nobody seems to notice",
                        "a cloud of dust rises around it",
                    ],
                ),
            ),
            (
                "examine",
                pool(
                    &[
                        "you turn {item} over in the lamplight",
                        "you look the sword over, tip to pommel",
                        "you study the rusty blade",
                        "you run a thumb along the flat of {item}",
                    ],
                    &[
                        "the edge is more notch than blade",
                        "under the rust, the steel is sound",
                        "a name was scratched into the grip once",
                        "the guard is loose",
                        "it has been sharpened badly, many times",
                        "the fuller is caked with old grime",
                    ],
                ),
            ),
        ]),
        failure_fragments: pools([
            (
                "too_heavy",
                pool(
                    &[
                        "the sword will not come up off the table",
                        "{item} drags at your arm and you let it be",
                        "you strain, but the blade stays where it is",
                    ],
                    &[
                        "your shoulder twinges",
                        "the table legs creak",
                        "someone laughs",
                    ],
                ),
            ),
            (
                "not_here",
                pool(
                    &[
                        "there is no sword within reach",
                        "{item} is nowhere to be seen",
                        "the rack where the sword hung is empty",
                    ],
                    &[
                        "only a rust stain marks where it was",
                        "someone must have moved it",
                        "the hooks on the wall are bare",
                    ],
                ),
            ),
        ]),
        ..Default::default()
    }
}

fn marta() -> NarrativeContext {
    NarrativeContext {
        key: "tavern:marta".to_owned(),
        traits: fragments(&[
            "flour on her forearms",
            "a voice that carries over any crowd",
            "grey hair pinned up with a pencil",
            "a laugh like a dropped tray",
            "sleeves rolled to the elbow",
            "keeps one eye on the door",
            "a burn scar across the back of one hand",
            "smells of bread and woodsmoke",
            "never forgets a debt",
            "a ring of keys at her belt",
            "a stained apron tied twice around",
            "quick, heavy footsteps",
            "knows every regular by name",
            "squints when she is counting",
            "a chipped front tooth",
            "hums old marching songs",
            "her boots mended at the toe",
            "patient until she isn't",
            "treats {place} like her own kitchen",
            "strong hands, red from the washtub",
        ]),
        atmosphere: Some("brisk, warm, watchful".to_owned()),
        state_variants: variants([
            (
                "sitting",
                &[
                    "perched on the edge of the seat, ready to rise",
                    "sitting with her hands folded in her apron",
                    "leaning back, the keys at her belt jingling",
                ],
            ),
            (
                "standing",
                &[
                    "standing with her hands on her hips",
                    "on her feet again, already looking for work",
                    "upright behind the bar",
                ],
            ),
        ]),
        behavior_fragments: pools([
            (
                "take",
                pool(
                    &[
                        "takes {item} with a practised hand",
                        "lifts {item} without a word",
                        "scoops up {item} and weighs it",
                        "reaches over and claims {item}",
                    ],
                    &[
                        "her keys jingling",
                        "humming under her breath",
                        "as if it were a soup ladle",
                        "glancing toward the door",
                        "with a tired sigh",
                        "wiping her hands on her apron first",
                    ],
                ),
            ),
            (
                "give",
                pool(
                    &[
                        "hands {item} to {target}",
                        "presses {item} into {target}'s hands",
                        "holds out {item} to {target}",
                        "passes {item} across the table",
                    ],
                    &[
                        "without quite meeting {target}'s eye",
                        "with a nod that says be careful",
                        "hilt first, as her father taught her",
                        "muttering about who left it lying there",
                        "a smile tugging at her mouth",
                        "and wipes the rust off her fingers",
                    ],
                ),
            ),
            (
                "greet",
                pool(
                    &[
                        "nods at {target}",
                        "calls out a greeting across the room",
                        "waves {target} over",
                        "looks up and smiles",
                    ],
                    &[
                        "without stopping her work",
                        "her voice cutting through the noise",
                        "as if she had been expecting company",
                        "drying a mug as she does",
                        "with a tilt of her head",
                        "eyes crinkling",
                    ],
                ),
            ),
        ]),
        ..Default::default()
    }
}

fn common_room() -> NarrativeContext {
    NarrativeContext {
        key: "tavern:common_room".to_owned(),
        traits: fragments(&[
            "low smoke-blackened beams",
            "a fire that never quite dies",
            "sticky tables",
            "the smell of spilled ale",
            "a dartboard with no darts",
            "a crooked painting of a ship",
            "noise from the kitchen",
            "rushes on the floor",
        ]),
        atmosphere: Some("smoky, loud, warm".to_owned()),
        effect_fragments: pools([
            (
                "sit_down",
                pool(
                    &[
                        "{actor} sits down at the nearest table",
                        "{actor} takes a seat by the fire",
                        "{actor} settles onto a stool",
                    ],
                    &[
                        "the fire pops",
                        "a draught stirs the rushes",
                        "the room's noise closes around {actor}",
                    ],
                ),
            ),
            (
                "enter",
                pool(
                    &[
                        "{actor} steps into {place}",
                        "{actor} comes in out of the cold",
                        "the door swings shut behind {actor}",
                    ],
                    &[
                        "warmth and noise roll over the threshold",
                        "a few heads turn",
                        "smoke stings the eyes",
                    ],
                ),
            ),
        ]),
        ..Default::default()
    }
}

fn bench_seat() -> NarrativeContext {
    NarrativeContext {
        key: "tavern:bench".to_owned(),
        traits: fragments(&[
            "worn smooth by years of sitting",
            "one leg shorter than the others",
            "initials carved into the end",
            "sticky with old ale",
            "long enough for four",
        ]),
        effect_fragments: pools([(
            "sit_down",
            pool(
                &[
                    "{actor} sits down on the bench",
                    "{actor} drops onto {name}",
                    "the bench creaks as {actor} sits",
                ],
                &[
                    "it wobbles on its short leg",
                    "the wood is warm from the fire",
                    "a splinter snags a sleeve",
                ],
            ),
        )]),
        ..Default::default()
    }
}

fn brom() -> NarrativeContext {
    NarrativeContext {
        key: "tavern:brom".to_owned(),
        traits: fragments(&[
            "a beard like a hedge",
            "hands the size of shovels",
            "speaks slowly",
            "smells of the stable",
            "a laugh that shakes the table",
            "wears a farrier's apron",
        ]),
        atmosphere: Some("slow, friendly".to_owned()),
        behavior_fragments: pools([
            (
                "greet",
                pool(
                    &[
                        "raises a hand to {target}",
                        "grunts a greeting",
                        "lifts his mug toward {target}",
                    ],
                    &["foam in his beard", "not getting up"],
                ),
            ),
            (
                "take",
                pool(
                    &[
                        "closes a huge hand around {item}",
                        "takes {item}",
                        "picks up {item} as if it weighed nothing",
                    ],
                    &["with a grunt", "squinting at it"],
                ),
            ),
        ]),
        ..Default::default()
    }
}

fn mug() -> NarrativeContext {
    NarrativeContext {
        key: "tavern:mug_of_ale".to_owned(),
        traits: fragments(&[
            "a thick head of foam",
            "dented pewter",
            "cold against the fingers",
            "smells of hops and honey",
            "sticky at the handle",
            "filled to the brim",
        ]),
        state_variants: variants([
            (
                "carried",
                &[
                    "sloshing gently",
                    "leaving a trail of drips",
                    "cold in a warm hand",
                ],
            ),
            (
                "here",
                &["sits in a ring of its own spillage", "waits on the table"],
            ),
        ]),
        action_fragments: pools([
            (
                "take",
                pool(
                    &[
                        "you take {item}",
                        "you pick up the mug",
                        "you lift {item} carefully",
                    ],
                    &[
                        "foam slides down the side",
                        "it is heavier than you expected",
                        "a drop lands on your boot",
                    ],
                ),
            ),
            (
                "drop",
                pool(
                    &["you set {item} down", "you put the mug on the table"],
                    &["ale slops over the rim", "it leaves a wet ring"],
                ),
            ),
        ]),
        ..Default::default()
    }
}

fn door() -> NarrativeContext {
    NarrativeContext {
        key: "tavern:oak_door".to_owned(),
        traits: fragments(&[
            "iron-studded",
            "black with age",
            "a brass handle polished by hands",
            "swollen in its frame",
            "a spyhole at eye level",
        ]),
        action_fragments: pools([(
            "examine",
            pool(
                &["you look the door over", "you study {item}"],
                &["the hinges are newer than the wood", "it smells of tar"],
            ),
        )]),
        failure_fragments: pools([(
            "locked",
            pool(
                &["the door does not budge", "{item} is locked fast"],
                &[
                    "the handle rattles",
                    "a draught whistles through the keyhole",
                ],
            ),
        )]),
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------
// The world: a tavern's entities as the narration system would query them
// ---------------------------------------------------------------------------

const PLAYER: u32 = 0;
const MARTA: u32 = 1;
const SWORD: u32 = 2;
const BENCH: u32 = 3;
const ROOM: u32 = 4;
const BROM: u32 = 5;
const MUG: u32 = 6;
const LUTE: u32 = 7;
const DOOR: u32 = 8;
const TOM: u32 = 9;
const CELLAR: u32 = 10;
const YARD: u32 = 11;

/// One entity's components as narration reads them.
struct Thing {
    name: &'static str,
    is_character: bool,
    is_player: bool,
    /// Index into `World::contexts` (its `NarrativeKey`, resolved).
    context: Option<usize>,
}

struct World {
    contexts: Vec<NarrativeContext>,
    things: Vec<Thing>,
    /// Where every actor is, and the places one can go from there.
    place: u32,
    exits: Vec<u32>,
}

impl World {
    fn new() -> Self {
        let contexts = vec![
            marta(),
            sword(),
            bench_seat(),
            common_room(),
            brom(),
            mug(),
            door(),
        ];
        let thing = |name, is_character, is_player, context| Thing {
            name,
            is_character,
            is_player,
            context,
        };
        // Indexed by the constants above.
        let things = vec![
            thing("Aldric", true, true, None),
            thing("Marta", true, false, Some(0)),
            thing("rusty sword", false, false, Some(1)),
            thing("bench", false, false, Some(2)),
            // Described::new puts "the" in front of a thing's name.
            thing("common room", false, false, Some(3)),
            thing("Brom", true, false, Some(4)),
            thing("mug of ale", false, false, Some(5)),
            thing("lute", false, false, None),
            thing("oak door", false, false, Some(6)),
            thing("Tom", true, false, None),
            thing("cellar", false, false, None),
            thing("yard", false, false, None),
        ];
        Self {
            contexts,
            things,
            place: ROOM,
            exits: vec![CELLAR, YARD],
        }
    }

    /// What the narration system's `describe` closure does for one entity.
    fn describe(&self, entity: Entity) -> Described<'_> {
        match self.things.get(entity.index_u32() as usize) {
            Some(thing) => {
                let context = thing.context.map(|i| &self.contexts[i]);
                let described = Described::new(
                    entity,
                    thing.name,
                    thing.is_character || thing.is_player,
                    context,
                );
                match (thing.is_player, thing.is_character) {
                    (true, _) => described.player(),
                    (false, true) => described.character(),
                    (false, false) => described,
                }
            }
            None => Described::new(entity, "someone", true, None),
        }
    }

    /// The `ReportEntities` the narration system builds for a report.
    fn entities(&self, report: &ActionReport) -> ReportEntities<'_> {
        ReportEntities {
            actor: self.describe(report.actor),
            object: report.object.map(|e| self.describe(e)),
            indirect_object: report.indirect_object.map(|e| self.describe(e)),
            instrument: report.instrument.map(|e| self.describe(e)),
            place: Some(self.describe(entity(self.place))),
            exits: self
                .exits
                .iter()
                .map(|&exit| self.things[exit as usize].name.into())
                .collect(),
            effects: report
                .effects
                .iter()
                .map(|effect| {
                    (
                        effect.target.map(|e| self.describe(e)),
                        effect.from.map(|e| self.describe(e)),
                    )
                })
                .collect(),
        }
    }
}

/// Marta takes the rusty sword.
fn marta_takes_sword() -> ActionReport {
    ActionReport::new(entity(MARTA), "take")
        .object(entity(SWORD))
        .new_state("carried")
}

/// Marta gives the sword to the player and sits down on the bench.
fn marta_gives_sword() -> ActionReport {
    ActionReport::new(entity(MARTA), "give")
        .object(entity(SWORD))
        .indirect_object(entity(PLAYER))
        .new_state("carried")
        .effect(EffectReport::new("position_change", "sit_down").target(entity(BENCH)))
}

/// A frame's worth of varied reports: 22 kinds (5 failures), 4 actors, cycled.
fn frame_reports(count: usize) -> Vec<ActionReport> {
    let e = entity;
    let new = ActionReport::new;
    let sit = || EffectReport::new("position_change", "sit_down").target(e(BENCH));
    let kinds = vec![
        new(e(PLAYER), "take").object(e(SWORD)).new_state("carried"),
        new(e(PLAYER), "examine").object(e(SWORD)),
        new(e(PLAYER), "drop").object(e(SWORD)).new_state("here"),
        marta_takes_sword(),
        marta_gives_sword(),
        new(e(MARTA), "greet").object(e(PLAYER)),
        new(e(BROM), "greet").object(e(MARTA)),
        new(e(PLAYER), "take").object(e(SWORD)).failed("too_heavy"),
        new(e(MARTA), "take").object(e(SWORD)).failed("not_here"),
        new(e(PLAYER), "take").object(e(MUG)).new_state("carried"),
        new(e(BROM), "take").object(e(MUG)).new_state("carried"),
        new(e(PLAYER), "drop").object(e(MUG)).new_state("here"),
        new(e(PLAYER), "examine").object(e(LUTE)),
        new(e(PLAYER), "open").object(e(DOOR)).failed("locked"),
        new(e(TOM), "greet").object(e(PLAYER)),
        new(e(PLAYER), "sit").effect(sit()),
        new(e(MARTA), "sit").new_state("sitting").effect(sit()),
        new(e(PLAYER), "enter").effect(
            EffectReport::new("position_change", "enter")
                .target(e(ROOM))
                .from(e(CELLAR)),
        ),
        new(e(BROM), "examine").object(e(DOOR)),
        new(e(PLAYER), "give")
            .object(e(MUG))
            .indirect_object(e(MARTA)),
        new(e(PLAYER), "take")
            .object(e(LUTE))
            .failed("not_portable"),
        new(e(BROM), "take").object(e(SWORD)).failed("too_heavy"),
    ];
    kinds.iter().cycle().take(count).cloned().collect()
}

/// A fresh resolver as `NarrationPlugin` makes it.
fn resolver() -> FragmentResolver {
    FragmentResolver::new(7, WINDOW, Verbosity::Full)
}

/// The texts a pool's fragments of the entity called `own` can become for the
/// fixtures' reports.
fn filled(pool: &[Fragment], own: &str) -> Vec<String> {
    pool.iter()
        .map(|f| {
            f.text()
                .replace("{item}", "the rusty sword")
                .replace("{target}", "Aldric")
                .replace("{actor}", "Marta")
                .replace("{name}", own)
                .replace("{place}", "the common room")
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Benchmarks
// ---------------------------------------------------------------------------

fn bench_narration(c: &mut Criterion) {
    let world = World::new();
    let (marta_context, sword_context) = (&world.contexts[0], &world.contexts[1]);

    // --- select_one_report --------------------------------------------------
    let report = marta_takes_sword();
    let entities = world.entities(&report);
    let mut resolver = resolver();
    {
        let take = &marta_context.behavior_fragments["take"];
        let (cores, colors) = (filled(&take.core, "Marta"), filled(&take.color, "Marta"));
        let carried = filled(&sword_context.state_variants["carried"], "the rusty sword");
        let traits = filled(&sword_context.traits, "the rusty sword");
        for _ in 0..50 {
            let selection = resolver.select(&report, &entities);
            let f = &selection.fragments;
            assert_eq!(f.subject.as_deref(), Some("Marta"));
            assert!(cores.iter().any(|c| *c == f.action_core), "{f:?}");
            assert!((1..=2).contains(&f.action_color.len()), "{f:?}");
            assert!(
                f.action_color
                    .iter()
                    .all(|c| colors.contains(&c.to_string()))
            );
            assert!(
                carried
                    .iter()
                    .any(|v| Some(v.as_str()) == f.new_state.as_deref())
            );
            assert_eq!(f.state_of.as_deref(), Some("the rusty sword"));
            assert!((3..=5).contains(&selection.traits.len()));
            assert!(
                selection
                    .traits
                    .iter()
                    .all(|t| traits.contains(&t.to_string()))
            );
        }
    }

    let mut group = c.benchmark_group("narration");
    group.bench_function("select_one_report", |b| {
        b.iter(|| black_box(resolver.select(black_box(&report), black_box(&entities))))
    });

    // --- plan_one_report ----------------------------------------------------
    let report = marta_gives_sword();
    let entities = world.entities(&report);
    let mut resolver = self::resolver();
    let example: NarrationPlan<'_> = resolver.plan(&report, &entities);
    {
        let give = filled(&marta_context.behavior_fragments["give"].core, "Marta");
        assert!(give.contains(&example.fragments.action_core.to_string()));
        assert_eq!(example.effects.len(), 1);
        let sit = filled(
            &world.contexts[2].effect_fragments["sit_down"].core,
            "the bench",
        );
        assert!(
            sit.contains(&example.effects[0].core.to_string()),
            "{:?}",
            example.effects
        );
        let names: Vec<&str> = example.entity_refs.iter().map(|r| r.name).collect();
        assert_eq!(names, ["rusty sword", "Marta", "Aldric"]);
        assert_eq!(example.viewpoint.person, Person::Third);
        assert_eq!(example.exits, ["cellar", "yard"]);
    }
    group.bench_function("plan_one_report", |b| {
        b.iter(|| black_box(resolver.plan(black_box(&report), black_box(&entities))))
    });

    // --- offline_weave (informational) --------------------------------------
    let line = weave_offline(&example, Verbosity::Full);
    println!("offline weave of plan_one_report: {line}");
    group.bench_function("offline_weave", |b| {
        b.iter(|| weave_offline(black_box(&example), black_box(Verbosity::Full)))
    });

    // --- 1000_reports_one_frame ---------------------------------------------
    let reports = frame_reports(1000);
    let failures = reports
        .iter()
        .filter(|r| r.failure_reason.is_some())
        .count();
    println!(
        "1000_reports_one_frame: {} successes, {failures} failures",
        reports.len() - failures
    );
    let mut resolver = self::resolver();
    group.throughput(Throughput::Elements(reports.len() as u64));
    group.bench_function("1000_reports_one_frame", |b| {
        b.iter(|| {
            for report in black_box(&reports) {
                let entities = world.entities(report);
                let plan = resolver.plan(report, &entities);
                black_box(&plan);
            }
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(50);
    targets = bench_narration
}
criterion_main!(benches);
