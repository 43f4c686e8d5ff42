//! Prompt-assembly benchmarks: the available-actions block, the available-actions
//! computation and the world-view snapshot they read; and fitting a long text to a
//! large budget.
//!
//! - `fit_words/100kb_line_10000_tokens`: a pasted line of 100,000 characters in
//!   20,000 words, fitted by whole words to 10,000 estimated tokens (`fit_words`, as
//!   the player's words and memories are fitted): the words kept are counted once.
//!
//! - `available_tasks/fit_1000_tasks_29_mods`: 1,000 offered tasks (the 29 mods of
//!   the actions block's benchmark, with their metadata, and five relevances in turn),
//!   numbered after 20 actions, fitted to the default tasks budget of 80 estimated
//!   tokens (`task_trim_mask`): the block is measured once, not written again after
//!   each task left out, so a spec offering many tasks costs what its tasks do, not
//!   their square.
//!
//! Run with `cargo bench --bench prompt`. Tuned for a small (2-core) machine: the
//! whole run takes well under two minutes.

use std::borrow::Cow;
use std::hint::black_box;
use std::time::Duration;

use bevy::ecs::entity::Entity;
use bevy_loom::content::{
    ActionDefinition, ContentRegistry, ContentSources, GameManifest, ModManifest,
};
use bevy_loom::prompt::{
    BlockOptions, PromptBudgets, fit_words, render_available_actions, task_trim_mask,
};
use bevy_loom::world::{AvailableAction, EntityView, TargetScopes, WorldView, available_actions};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

fn entity(index: u32) -> Entity {
    Entity::from_raw_u32(index).expect("index below u32::MAX")
}

fn manifest(id: &str, purpose: Option<&str>, consider_when: Option<&str>) -> ModManifest {
    ModManifest {
        id: id.to_owned(),
        version: semver::Version::new(1, 0, 0),
        name: id.replace('-', " "),
        description: None,
        dependencies: Vec::new(),
        conflicts: Vec::new(),
        action_purpose: purpose.map(str::to_owned),
        action_consider_when: consider_when.map(str::to_owned),
        content: Default::default(),
        vocabulary: Default::default(),
        verb_aliases: Default::default(),
    }
}

fn mod_file(id: &str) -> String {
    format!("mods/{id}/mod.json")
}

// ---------------------------------------------------------------------------
// 1. available_actions_block/200_actions_29_mods
// ---------------------------------------------------------------------------

/// The 29 mods of the block benchmark: id, actionPurpose, actionConsiderWhen, verbs
/// offered (action name, command prefix, description) and how many actions it offers.
struct BlockMod {
    id: &'static str,
    purpose: &'static str,
    consider_when: &'static str,
    verbs: &'static [(&'static str, &'static str, &'static str)],
    count: usize,
}

const BLOCK_MODS: &[BlockMod] = &[
    BlockMod {
        id: "affection",
        purpose: "Show warmth and fondness toward someone through small, caring gestures and gentle words.",
        consider_when: "You feel tenderness toward someone nearby and want them to notice it without making a scene.",
        verbs: &[
            (
                "pat_shoulder",
                "pat the shoulder of",
                "Give a reassuring pat",
            ),
            ("smile_at", "smile warmly at", "Offer a warm smile"),
        ],
        count: 8,
    },
    BlockMod {
        id: "ballet",
        purpose: "Perform classical ballet movements, from simple positions to expressive leaps and turns.",
        consider_when: "You are trained in ballet and want to practise, perform for an audience, or express emotion through dance.",
        verbs: &[
            (
                "plie",
                "perform a plié facing",
                "Bend the knees in a controlled plié",
            ),
            ("pirouette", "pirouette toward", "Spin on one foot"),
        ],
        count: 4,
    },
    BlockMod {
        id: "caressing",
        purpose: "Touch someone softly and intimately to comfort them or to express attraction and closeness.",
        consider_when: "You are physically close to someone who welcomes touch and the moment calls for tenderness.",
        verbs: &[
            (
                "caress_cheek",
                "caress the cheek of",
                "Softly stroke their cheek",
            ),
            (
                "stroke_hair",
                "stroke the hair of",
                "Run fingers through their hair",
            ),
        ],
        count: 6,
    },
    BlockMod {
        id: "clothing",
        purpose: "Put on, take off, adjust and inspect garments worn by yourself or by someone who allows it.",
        consider_when: "Your outfit matters to the situation: the weather changes, you need to look presentable, or a garment is in the way.",
        verbs: &[
            (
                "adjust_collar",
                "adjust the collar of",
                "Straighten a collar",
            ),
            ("remove_coat", "take off the coat of", "Help remove a coat"),
        ],
        count: 7,
    },
    BlockMod {
        id: "companionship",
        purpose: "Keep someone company: follow them, wait for them, or stay at their side as a friend would.",
        consider_when: "You want to stay near a person you trust, travel together, or stop travelling with someone.",
        verbs: &[
            ("follow", "follow", "Go where they go"),
            ("stop_following", "stop following", "Part ways for now"),
        ],
        count: 8,
    },
    BlockMod {
        id: "core",
        purpose: "The basics every character can always do: wait, look around, speak up, or examine something.",
        consider_when: "Nothing more specific fits, you need a moment to think, or you want to learn more about your surroundings.",
        verbs: &[
            ("examine", "examine", "Look closely at something"),
            ("wait", "wait near", "Let a moment pass"),
        ],
        count: 10,
    },
    BlockMod {
        id: "distress",
        purpose: "Express fear, grief or panic openly: cry, tremble, plead or call out for help.",
        consider_when: "You are overwhelmed, frightened or hurting and cannot or will not hide it from the people around you.",
        verbs: &[
            ("plead_with", "plead with", "Beg for mercy or help"),
            ("cling_to", "cling to", "Hold on out of fear"),
        ],
        count: 5,
    },
    BlockMod {
        id: "exercise",
        purpose: "Train the body with push-ups, stretches and running drills to build strength and stamina.",
        consider_when: "You have time and space to train, feel restless, or want to stay fit for what lies ahead.",
        verbs: &[
            ("spar_with", "spar with", "Trade light practice blows"),
            ("stretch_beside", "stretch beside", "Loosen stiff muscles"),
        ],
        count: 5,
    },
    BlockMod {
        id: "gymnastics",
        purpose: "Perform acrobatic feats such as cartwheels, handstands and flips, alone or with a partner.",
        consider_when: "You are agile, the floor is clear, and a display of skill would impress, distract or delight someone.",
        verbs: &[
            ("cartwheel_past", "cartwheel past", "Turn a cartwheel"),
            ("vault_over", "vault over", "Leap over an obstacle"),
        ],
        count: 4,
    },
    BlockMod {
        id: "hand-holding",
        purpose: "Take someone's hand, hold it, squeeze it or let it go, to reassure or to show affection.",
        consider_when: "You are standing or sitting beside someone you care about and want a quiet, physical connection.",
        verbs: &[
            ("hold_hand", "hold the hand of", "Take their hand"),
            (
                "squeeze_hand",
                "squeeze the hand of",
                "Give a reassuring squeeze",
            ),
        ],
        count: 6,
    },
    BlockMod {
        id: "hugging",
        purpose: "Embrace someone: a quick friendly hug, a long comforting one, or pulling away from a hug.",
        consider_when: "A greeting, a farewell or a moment of grief calls for an embrace, and the other person is willing.",
        verbs: &[
            ("hug", "hug", "Wrap your arms around them"),
            (
                "release_hug",
                "release the hug with",
                "Step back from the embrace",
            ),
        ],
        count: 7,
    },
    BlockMod {
        id: "items",
        purpose: "Handle objects: pick them up, drop them, give them away, put them down or use them.",
        consider_when: "An object nearby or in your hands could help you, someone needs something, or you should get rid of it.",
        verbs: &[
            ("give", "give the brass key to", "Hand over an item"),
            ("pick_up", "pick up", "Take something"),
        ],
        count: 14,
    },
    BlockMod {
        id: "kissing",
        purpose: "Kiss someone on the cheek, hand or lips, or break off a kiss that has gone on long enough.",
        consider_when: "You share romantic feelings with someone close to you and the moment is right for a kiss.",
        verbs: &[
            (
                "kiss_cheek",
                "kiss the cheek of",
                "A light kiss on the cheek",
            ),
            ("kiss_hand", "kiss the hand of", "A courtly kiss"),
        ],
        count: 6,
    },
    BlockMod {
        id: "metabolism",
        purpose: "Look after bodily needs: eat, drink, rest, and share food or drink with others.",
        consider_when: "You are hungry, thirsty or tired, or someone with you clearly needs something to eat or drink.",
        verbs: &[
            ("share_meal", "share a meal with", "Eat together"),
            ("offer_drink", "offer a drink to", "Pour and hand a drink"),
        ],
        count: 6,
    },
    BlockMod {
        id: "movement",
        purpose: "Move through the world: go to another place, approach someone or keep your distance.",
        consider_when: "Where you are is not where you need to be, or someone is too far away or too close for comfort.",
        verbs: &[
            ("get_close", "get close to", "Move closer to someone"),
            (
                "step_away",
                "step away from",
                "Put some distance between you",
            ),
        ],
        count: 14,
    },
    BlockMod {
        id: "music",
        purpose: "Make music: sing, hum, play an instrument or accompany someone who is already performing.",
        consider_when: "You are a musician, the mood needs lifting, or a song would say what plain words cannot.",
        verbs: &[
            ("sing_to", "sing to", "Sing a few lines"),
            ("accompany", "accompany", "Play along with them"),
        ],
        count: 5,
    },
    BlockMod {
        id: "physical-control",
        purpose: "Take physical hold of someone: restrain them, push them aside, or guide them where you want.",
        consider_when: "Someone must be stopped, moved or protected right now and words alone will not do it.",
        verbs: &[
            ("restrain", "restrain", "Hold them in place"),
            ("push_aside", "push aside", "Shove them out of the way"),
        ],
        count: 8,
    },
    BlockMod {
        id: "positioning",
        purpose: "Change how you stand, sit or face others: turn around, kneel, sit down, or stand behind someone.",
        consider_when: "Your posture or position relative to others matters: to hide, to show respect, to rest or to watch.",
        verbs: &[
            ("kneel_before", "kneel before", "Drop to one knee"),
            ("stand_behind", "stand behind", "Move behind them"),
        ],
        count: 14,
    },
    BlockMod {
        id: "seduction",
        purpose: "Draw someone's romantic interest with glances, flattery and deliberate, charged gestures.",
        consider_when: "You are attracted to someone and want to find out whether they feel the same, or to win them over.",
        verbs: &[
            ("wink_at", "wink at", "A knowing wink"),
            ("flatter", "flatter", "Pay a charming compliment"),
        ],
        count: 6,
    },
    BlockMod {
        id: "sitting",
        purpose: "Sit on chairs, benches and stools, get up again, or offer your seat to someone else.",
        consider_when: "You are tired, a conversation will take a while, or someone else needs the seat more than you.",
        verbs: &[
            ("offer_seat", "offer your seat to", "Give up your seat"),
            ("sit_beside", "sit beside", "Take the seat next to them"),
        ],
        count: 6,
    },
    BlockMod {
        id: "sleeping",
        purpose: "Fall asleep, wake up, or wake someone else who is sleeping nearby, gently or not.",
        consider_when: "You are exhausted, night has fallen, or someone asleep nearby needs to be roused right now.",
        verbs: &[
            ("wake", "wake", "Rouse them from sleep"),
            ("tuck_in", "tuck in", "Pull the blanket over them"),
        ],
        count: 4,
    },
    BlockMod {
        id: "social",
        purpose: "Everyday social gestures: greet, bow, wave, introduce yourself or take your leave politely.",
        consider_when: "You meet someone, part from them, or want to observe the courtesies expected in this company.",
        verbs: &[
            ("greet", "greet", "Say hello"),
            ("bow_to", "bow to", "Bow politely"),
        ],
        count: 9,
    },
    BlockMod {
        id: "speech",
        purpose: "Talk in ways beyond plain dialogue: whisper, shout, argue, or address a whole room at once.",
        consider_when: "What you say needs a particular tone or audience: a secret for one person or an announcement for all.",
        verbs: &[
            ("whisper_to", "whisper to", "Speak quietly to one person"),
            ("argue_with", "argue with", "Dispute their point"),
        ],
        count: 8,
    },
    BlockMod {
        id: "trading",
        purpose: "Buy, sell and barter goods with merchants and anyone else willing to make a fair deal.",
        consider_when: "You need something someone else has, or you hold something of value that you could exchange.",
        verbs: &[
            ("haggle_with", "haggle with", "Negotiate a price"),
            ("buy_from", "buy bread from", "Pay for goods"),
        ],
        count: 5,
    },
    BlockMod {
        id: "vision",
        purpose: "Use your eyes deliberately: stare, glance away, watch someone closely or search a place.",
        consider_when: "You suspect something is hidden, want to read someone's face, or need to avoid someone's gaze.",
        verbs: &[
            ("watch", "watch", "Observe them carefully"),
            ("glare_at", "glare at", "Fix them with a hard stare"),
        ],
        count: 6,
    },
    BlockMod {
        id: "violence",
        purpose: "Attack with bare hands: punch, kick or shove someone in anger or in self-defence.",
        consider_when: "You are threatened, enraged, or a fight has already started and you mean to take part in it.",
        verbs: &[
            ("punch", "punch", "Strike with a fist"),
            ("shove", "shove", "Push them hard"),
        ],
        count: 6,
    },
    BlockMod {
        id: "weapons",
        purpose: "Draw, sheathe, brandish and strike with weapons you carry or can reach from where you stand.",
        consider_when: "Combat is imminent or under way, or a show of steel might make someone think twice.",
        verbs: &[
            (
                "attack_with_sword",
                "attack with the sword",
                "Strike with the sword",
            ),
            ("threaten", "brandish the knife at", "Threaten with a blade"),
        ],
        count: 5,
    },
    BlockMod {
        id: "lying",
        purpose: "Lie down on beds, cots and floors, get back up, or lie beside someone who is resting.",
        consider_when: "You are hurt, exhausted or ill, or you want to rest close to someone who is already lying down.",
        verbs: &[
            ("lie_beside", "lie down beside", "Rest next to them"),
            ("help_up", "help up", "Help them to their feet"),
        ],
        count: 3,
    },
    BlockMod {
        id: "breathing",
        purpose: "Control your breath: steady it, hold it, sigh, or help someone who is struggling to breathe.",
        consider_when: "Panic, exertion or smoke makes breathing hard, or you need to keep utterly quiet for a while.",
        verbs: &[
            (
                "calm_breathing",
                "breathe slowly with",
                "Steady your breath together",
            ),
            ("sigh_at", "sigh at", "Let out a long sigh"),
        ],
        count: 5,
    },
];

const TARGET_NAMES: &[&str] = &[
    "Captain Vane",
    "Doctor Anselm",
    "Guard Hollis",
    "Marta",
    "Old Tobias",
    "Registrar Copperplate",
    "Scribe Ottoline",
    "Sister Ilse",
];

struct BlockFixture {
    registry: ContentRegistry,
    actions: Vec<Line>,
}

/// An offered action as the block reads it.
struct Line {
    index: usize,
    action_id: String,
    command: String,
    description: &'static str,
}

impl Line {
    /// The offered action this line stands for.
    fn offered(&self) -> AvailableAction<'_> {
        AvailableAction {
            index: self.index,
            action_id: &self.action_id,
            targets: &[],
            command: &self.command,
            description: self.description,
        }
    }
}

fn block_fixture() -> BlockFixture {
    assert_eq!(BLOCK_MODS.len(), 29, "29 mods");
    assert_eq!(
        BLOCK_MODS.iter().map(|m| m.count).sum::<usize>(),
        200,
        "200 actions"
    );
    for m in BLOCK_MODS {
        for text in [m.purpose, m.consider_when] {
            assert!(
                (60..=150).contains(&text.chars().count()),
                "{}: {} chars: {text}",
                m.id,
                text.len()
            );
        }
    }

    let game = GameManifest {
        mods: BLOCK_MODS.iter().map(|m| m.id.to_owned()).collect(),
        action_group_order: ["core", "movement", "positioning", "items", "social"]
            .map(str::to_owned)
            .to_vec(),
    };
    let manifests: Vec<(String, ModManifest)> = BLOCK_MODS
        .iter()
        .map(|m| {
            (
                mod_file(m.id),
                manifest(m.id, Some(m.purpose), Some(m.consider_when)),
            )
        })
        .collect();
    let mod_refs: Vec<(&str, &ModManifest)> = manifests
        .iter()
        .map(|(file, m)| (file.as_str(), m))
        .collect();
    let registry = ContentRegistry::build(ContentSources {
        narratives: &[],
        game: Some(("game.loom.json", &game)),
        mods: &mod_refs,
        actions: &[],
        actors: &[],
        scopes: None,
        ..ContentSources::default()
    });
    assert!(registry.problems().is_empty(), "{:?}", registry.problems());
    assert_eq!(registry.mods().len(), 29);

    // `count` actions per mod, alternating its verbs over the target names.
    let mut actions: Vec<Line> = Vec::with_capacity(200);
    for m in BLOCK_MODS {
        for k in 0..m.count {
            let (name, command, description) = m.verbs[k % m.verbs.len()];
            let target = TARGET_NAMES[(k / m.verbs.len()) % TARGET_NAMES.len()];
            actions.push(Line {
                index: 0,
                action_id: format!("{}:{name}", m.id),
                command: format!("{command} {target}"),
                description,
            });
        }
    }
    // The crate's order: group (game order, then alphabetical), then action id, then
    // target name (already ascending per action id here; the sort is stable).
    actions.sort_by(|a, b| {
        let rank = |id: &str| registry.group_rank(bevy_loom::content::action_namespace(id));
        rank(&a.action_id)
            .cmp(&rank(&b.action_id))
            .then_with(|| a.action_id.cmp(&b.action_id))
    });
    for (i, action) in actions.iter_mut().enumerate() {
        action.index = i + 1;
    }
    BlockFixture { registry, actions }
}

fn bench_block(c: &mut Criterion) {
    let fixture = block_fixture();
    let options = BlockOptions::default();
    let grouped: Vec<AvailableAction<'_>> = fixture.actions.iter().map(Line::offered).collect();
    let block = render_available_actions(&grouped, &fixture.registry, &options);
    assert!(
        block.contains("## CORE ACTIONS (10 actions)"),
        "grouped block"
    );
    assert!(block.contains("[Index: 200] "), "all 200 actions");
    assert_eq!(
        block.matches("**Purpose:** ").count(),
        29,
        "every mod's purpose"
    );
    assert!(
        block.find("## CORE ACTIONS").unwrap() < block.find("## MOVEMENT ACTIONS").unwrap()
            && block.find("## SOCIAL ACTIONS").unwrap()
                < block.find("## AFFECTION ACTIONS").unwrap(),
        "group order"
    );

    // The same actions dealt out one mod after the other, as an offer made in another
    // order than the groups' brings them: every line starts another group's run.
    let mut by_mod: Vec<Vec<AvailableAction<'_>>> = Vec::new();
    for action in &grouped {
        let namespace = action.action_id.split(':').next().unwrap_or_default();
        match by_mod
            .iter_mut()
            .find(|run| run[0].action_id.starts_with(namespace))
        {
            Some(run) => run.push(*action),
            None => by_mod.push(vec![*action]),
        }
    }
    let mut interleaved = Vec::with_capacity(grouped.len());
    for round in 0.. {
        let before = interleaved.len();
        interleaved.extend(by_mod.iter().filter_map(|run| run.get(round).copied()));
        if interleaved.len() == before {
            break;
        }
    }
    assert_eq!(
        render_available_actions(&interleaved, &fixture.registry, &options),
        block,
        "the same block: each group's lines keep their order"
    );

    for (name, actions) in [("", &grouped), ("_interleaved", &interleaved)] {
        c.bench_function(
            &format!("available_actions_block/200_actions_29_mods{name}"),
            |b| {
                b.iter(|| {
                    render_available_actions(
                        black_box(actions.as_slice()),
                        black_box(&fixture.registry),
                        black_box(&options),
                    )
                })
            },
        );
    }
}

// ---------------------------------------------------------------------------
// 2. available_actions/50_entities_30_definitions and 3. world_view/build_50_entities
// ---------------------------------------------------------------------------

const OFFICE: u32 = 1;
const ARCHIVE: u32 = 2;
const COURTYARD: u32 = 3;
const ACTOR: u32 = 10;

/// The places, and 50 entities in the office: 12 characters (the actor among them)
/// and 38 things, 6 of them carried by the actor.
fn world_records() -> Vec<(Entity, EntityView<'static>)> {
    let tags = |list: &[&str]| Cow::Owned(list.iter().map(|t| (*t).to_owned()).collect());
    let place = |name: &str, exits: &[u32]| EntityView {
        name: name.to_owned().into(),
        is_place: true,
        exits: exits.iter().map(|&e| entity(e)).collect::<Vec<_>>().into(),
        ..Default::default()
    };
    let mut records = vec![
        (
            entity(OFFICE),
            place("Records Office", &[ARCHIVE, COURTYARD]),
        ),
        (entity(ARCHIVE), place("Archive Hall", &[OFFICE])),
        (entity(COURTYARD), place("Courtyard", &[OFFICE])),
    ];

    let characters: [(&str, &[&str]); 12] = [
        ("Clerk Ambrose", &["has_hands", "can_move"]),
        ("Registrar Copperplate", &["has_hands", "official"]),
        ("Marta", &["has_hands"]),
        ("Old Tobias", &["has_hands", "asleep"]),
        ("Sister Ilse", &["has_hands", "clergy"]),
        ("Guard Hollis", &["has_hands", "guard", "armed"]),
        ("Guard Pell", &["has_hands", "guard", "armed"]),
        ("Widow Farrow", &["has_hands"]),
        ("Young Pim", &["has_hands", "child"]),
        ("Scribe Ottoline", &["has_hands", "official"]),
        ("Captain Vane", &["has_hands", "hostile", "armed"]),
        ("Doctor Anselm", &["has_hands"]),
    ];
    for (i, (name, character_tags)) in characters.iter().enumerate() {
        records.push((
            entity(ACTOR + i as u32),
            EntityView {
                name: (*name).to_owned().into(),
                tags: tags(character_tags),
                place: Some(entity(OFFICE)),
                character: true,
                ..Default::default()
            },
        ));
    }

    let carried: [(&str, &[&str]); 6] = [
        ("brass key", &["portable"]),
        ("mug of ale", &["portable", "drink", "giftable"]),
        ("letter opener", &["portable", "weapon", "blade"]),
        ("ledger", &["portable", "readable", "giftable"]),
        ("apple", &["portable", "food", "giftable"]),
        ("quill", &["portable", "giftable"]),
    ];
    let lying_about: [(&str, &[&str]); 32] = [
        ("oak chair", &["seat"]),
        ("second oak chair", &["seat"]),
        ("long bench", &["seat"]),
        ("three-legged stool", &["seat", "portable"]),
        ("velvet cushion", &["seat", "portable", "soft"]),
        ("writing desk", &["surface", "heavy"]),
        ("reading table", &["surface", "heavy"]),
        ("narrow cot", &["bed"]),
        ("tall bookshelf", &["heavy", "container"]),
        ("filing cabinet", &["heavy", "container", "locked"]),
        ("iron-bound chest", &["heavy", "container", "locked"]),
        ("wooden crate", &["container"]),
        ("rain barrel", &["heavy", "container"]),
        ("wicker basket", &["portable", "container"]),
        ("ceremonial sword", &["portable", "weapon", "blade"]),
        ("kitchen knife", &["portable", "weapon", "blade"]),
        ("walking cane", &["portable", "weapon"]),
        ("book of statutes", &["portable", "readable"]),
        ("census register", &["portable", "readable"]),
        ("wall map", &["readable"]),
        ("stack of petitions", &["portable", "readable"]),
        ("tallow candle", &["portable", "light"]),
        ("oil lamp", &["portable", "light", "fragile"]),
        ("inkwell", &["portable", "fragile"]),
        ("hourglass", &["portable", "fragile"]),
        ("brass bell", &["portable"]),
        ("broom", &["portable"]),
        ("rubber stamp", &["portable"]),
        ("stick of sealing wax", &["portable"]),
        ("faded rug", &[]),
        ("portrait of the mayor", &["fragile"]),
        ("stone fireplace", &["heavy", "warm"]),
    ];
    let mut next = 100;
    for (name, thing_tags) in carried {
        records.push((
            entity(next),
            EntityView {
                name: name.to_owned().into(),
                tags: tags(thing_tags),
                carried_by: Some(entity(ACTOR)),
                ..Default::default()
            },
        ));
        next += 1;
    }
    for (name, thing_tags) in lying_about {
        records.push((
            entity(next),
            EntityView {
                name: name.to_owned().into(),
                tags: tags(thing_tags),
                place: Some(entity(OFFICE)),
                ..Default::default()
            },
        ));
        next += 1;
    }
    assert_eq!(records.len(), 3 + 50);
    records
}

/// A target slot as JSON.
fn slot(scope: &str, placeholder: &str, required: &[&str], forbidden: &[&str]) -> Value {
    json!({
        "scope": scope,
        "placeholder": placeholder,
        "description": format!("the {placeholder}"),
        "requiredTags": required,
        "forbiddenTags": forbidden,
    })
}

/// An action definition parsed from JSON, as content files are.
fn action(
    id: &str,
    description: &str,
    template: &str,
    targets: Value,
    actor: Value,
) -> ActionDefinition {
    let name = id
        .split_once(':')
        .map_or(id, |(_, name)| name)
        .replace('_', " ");
    let mut definition = json!({
        "id": id,
        "name": name,
        "description": description,
        "template": template,
        "targets": targets,
        "actor": actor,
    });
    if template.contains("{topic}") {
        definition["parameters"] = json!({ "topic": { "default": "the day's business", "description": "What to think about" } });
    }
    serde_json::from_value(definition).unwrap_or_else(|e| panic!("{id}: {e}"))
}

/// 30 definitions across 5 mods, using every built-in scope.
fn action_definitions() -> Vec<ActionDefinition> {
    let none = json!({});
    let hands = json!({ "requiredTags": ["has_hands"] });
    let mobile = json!({ "requiredTags": ["can_move"], "forbiddenTags": ["restrained"] });
    let one = |s: Value| json!({ "primary": s });
    let two = |p: Value, s: Value| json!({ "primary": p, "secondary": s });
    let person = || slot("characters_here", "person", &[], &[]);
    let awake = || slot("characters_here", "person", &[], &["asleep"]);
    vec![
        // core (6)
        action(
            "core:wait",
            "Let a moment pass",
            "wait",
            json!({}),
            none.clone(),
        ),
        action(
            "core:think",
            "Think something over",
            "think about {topic}",
            json!({}),
            none.clone(),
        ),
        action(
            "core:examine",
            "Look closely at something",
            "examine {thing}",
            one(slot("things_here", "thing", &[], &[])),
            none.clone(),
        ),
        action(
            "core:look_at",
            "Study someone's face and manner",
            "look at {person}",
            one(person()),
            none.clone(),
        ),
        action(
            "core:check_self",
            "Take stock of how you are",
            "check on {me}",
            one(slot("self", "me", &[], &[])),
            none.clone(),
        ),
        action(
            "core:inspect_item",
            "Turn something you carry over in your hands",
            "inspect {item}",
            one(slot("inventory", "item", &[], &[])),
            none.clone(),
        ),
        // movement (6)
        action(
            "movement:go",
            "Leave for another place",
            "go to {place}",
            one(slot("exits", "place", &[], &[])),
            mobile.clone(),
        ),
        action(
            "movement:get_close",
            "Move closer to someone",
            "get close to {person}",
            one(person()),
            mobile.clone(),
        ),
        action(
            "movement:step_away",
            "Put some distance between you",
            "step away from {person}",
            one(person()),
            mobile.clone(),
        ),
        action(
            "movement:sit_on",
            "Take a seat",
            "sit on {seat}",
            one(slot("things_here", "seat", &["seat"], &["occupied"])),
            json!({ "requiredTags": ["can_move"], "forbiddenTags": ["sitting", "lying"] }),
        ),
        action(
            "movement:lie_on",
            "Lie down to rest",
            "lie down on {bed}",
            one(slot("things_here", "bed", &["bed"], &[])),
            json!({ "forbiddenTags": ["lying"] }),
        ),
        action(
            "movement:stand_up",
            "Get back on your feet",
            "stand up",
            json!({}),
            json!({ "requiredTags": ["sitting"] }),
        ),
        // items (8)
        action(
            "items:pick_up",
            "Take something",
            "pick up {item}",
            one(slot("things_here", "item", &["portable"], &[])),
            hands.clone(),
        ),
        action(
            "items:drop",
            "Put something down on the floor",
            "drop {item}",
            one(slot("inventory", "item", &[], &[])),
            none.clone(),
        ),
        action(
            "items:give",
            "Hand over something you carry",
            "give {item} to {recipient}",
            two(
                slot("inventory", "item", &["giftable"], &[]),
                slot("characters_here", "recipient", &[], &["asleep", "hostile"]),
            ),
            hands.clone(),
        ),
        action(
            "items:put_on",
            "Set something down on a surface",
            "put {item} on {surface}",
            two(
                slot("inventory", "item", &[], &[]),
                slot("things_here", "surface", &["surface"], &[]),
            ),
            hands.clone(),
        ),
        action(
            "items:show",
            "Show someone what you are reading",
            "show {item} to {person}",
            two(
                slot("inventory", "item", &["readable"], &[]),
                slot("characters_here", "person", &[], &["asleep"]),
            ),
            hands.clone(),
        ),
        action(
            "items:eat",
            "Eat or drink something you carry",
            "consume {item}",
            one(slot("inventory", "item", &[], &["weapon"])),
            none.clone(),
        ),
        action(
            "items:read",
            "Read something nearby",
            "read {text}",
            one(slot("things_here", "text", &["readable"], &[])),
            none.clone(),
        ),
        action(
            "items:open",
            "Open a container",
            "open {container}",
            one(slot(
                "things_here",
                "container",
                &["container"],
                &["locked"],
            )),
            hands.clone(),
        ),
        // affection (5)
        action(
            "affection:hug",
            "Wrap your arms around someone",
            "hug {person}",
            one(slot(
                "characters_here",
                "person",
                &[],
                &["hostile", "asleep"],
            )),
            hands.clone(),
        ),
        action(
            "affection:hold_hands",
            "Take someone's hand",
            "hold hands with {person}",
            one(slot(
                "characters_here",
                "person",
                &["has_hands"],
                &["hostile", "armed"],
            )),
            hands.clone(),
        ),
        action(
            "affection:compliment",
            "Say something kind",
            "compliment {person}",
            one(awake()),
            none.clone(),
        ),
        action(
            "affection:wave",
            "Wave in greeting",
            "wave at {person}",
            one(awake()),
            hands.clone(),
        ),
        action(
            "affection:thank",
            "Thank someone sincerely",
            "thank {person}",
            one(awake()),
            none.clone(),
        ),
        // violence (5)
        action(
            "violence:punch",
            "Strike with a fist",
            "punch {person}",
            one(person()),
            hands.clone(),
        ),
        action(
            "violence:shove",
            "Push someone hard",
            "shove {person}",
            one(slot("characters_here", "person", &[], &["guard"])),
            mobile.clone(),
        ),
        action(
            "violence:threaten",
            "Make a menacing threat",
            "threaten {person}",
            one(slot("characters_here", "person", &[], &["child"])),
            none.clone(),
        ),
        action(
            "violence:attack_with",
            "Attack someone with a weapon you hold",
            "attack {person} with {weapon}",
            two(
                slot("characters_here", "person", &[], &["child"]),
                slot("inventory", "weapon", &["weapon"], &[]),
            ),
            hands.clone(),
        ),
        action(
            "violence:throw_at",
            "Throw something at someone",
            "throw {item} at {person}",
            two(
                slot("inventory", "item", &["portable"], &["giftable"]),
                awake(),
            ),
            hands,
        ),
    ]
}

struct WorldFixture {
    records: Vec<(Entity, EntityView<'static>)>,
    view: WorldView<'static>,
    registry: ContentRegistry,
    scopes: TargetScopes,
}

fn world_fixture() -> WorldFixture {
    let records = world_records();
    let view = WorldView::new(records.clone());
    let definitions = action_definitions();
    assert_eq!(definitions.len(), 30);

    let mod_ids = ["core", "movement", "items", "affection", "violence"];
    let game = GameManifest {
        mods: mod_ids.map(str::to_owned).to_vec(),
        action_group_order: vec!["core".to_owned(), "movement".to_owned()],
    };
    let files: Vec<String> = definitions
        .iter()
        .map(|d| {
            let (namespace, name) = d.id.split_once(':').expect("mod:action id");
            format!("mods/{namespace}/actions/{name}.action.json")
        })
        .collect();
    // Each manifest lists its own action files, as content on disk does.
    let manifests: Vec<(String, ModManifest)> = mod_ids
        .iter()
        .map(|id| {
            let mut manifest = manifest(id, None, None);
            let folder = format!("mods/{id}/");
            manifest.content.actions = files
                .iter()
                .filter_map(|file| file.strip_prefix(&folder).map(str::to_owned))
                .collect();
            (mod_file(id), manifest)
        })
        .collect();
    let mod_refs: Vec<(&str, &ModManifest)> = manifests
        .iter()
        .map(|(file, m)| (file.as_str(), m))
        .collect();
    let action_refs: Vec<(&str, &ActionDefinition)> =
        files.iter().map(String::as_str).zip(&definitions).collect();
    let registry = ContentRegistry::build(ContentSources {
        narratives: &[],
        game: Some(("game.loom.json", &game)),
        mods: &mod_refs,
        actions: &action_refs,
        actors: &[],
        scopes: None,
        ..ContentSources::default()
    });
    assert!(registry.problems().is_empty(), "{:?}", registry.problems());
    assert_eq!(registry.actions().len(), 30);
    WorldFixture {
        records,
        view,
        registry,
        scopes: TargetScopes::default(),
    }
}

fn bench_world(c: &mut Criterion) {
    let fixture = world_fixture();
    let actor = entity(ACTOR);

    let offered = available_actions(
        &fixture.registry,
        &fixture.view,
        &fixture.scopes,
        actor,
        |_| true,
    );
    assert!(offered.len() > 30, "only {} actions offered", offered.len());
    let has = |command: &str| offered.iter().any(|a| a.command == command);
    assert!(
        has("go to Archive Hall")
            && has("get close to Registrar Copperplate")
            && has("give mug of ale to Marta")
            && has("attack Captain Vane with letter opener")
            && has("check on Clerk Ambrose")
            && has("think about the day's business")
            && !has("hug Captain Vane")
            && !has("stand up"),
        "implausible offer"
    );
    assert!(
        offered.iter().enumerate().all(|(i, a)| a.index == i + 1),
        "numbered from 1"
    );
    println!(
        "available_actions offers {} actions for one actor",
        offered.len()
    );

    c.bench_function("available_actions/50_entities_30_definitions", |b| {
        b.iter(|| {
            available_actions(
                black_box(&fixture.registry),
                black_box(&fixture.view),
                black_box(&fixture.scopes),
                black_box(actor),
                |_| true,
            )
        })
    });

    c.bench_function("world_view/build_50_entities", |b| {
        b.iter_batched(
            || fixture.records.clone(),
            |records| WorldView::new(black_box(records)),
            BatchSize::SmallInput,
        )
    });
}

fn bench_fit(c: &mut Criterion) {
    let pasted = "word ".repeat(20_000);
    let mut group = c.benchmark_group("fit_words");
    group.sample_size(10);
    group.bench_function("100kb_line_10000_tokens", |b| {
        b.iter(|| fit_words(black_box(&pasted), 10_000))
    });
    group.finish();
}

fn bench_tasks(c: &mut Criterion) {
    let fixture = block_fixture();
    let options = BlockOptions::default();
    // The actions block's lines, five times over, as tasks.
    let tasks: Vec<AvailableAction<'_>> = (0..1000)
        .map(|i| AvailableAction {
            index: i + 1,
            ..fixture.actions[i % fixture.actions.len()].offered()
        })
        .collect();
    let relevance = |task: &AvailableAction<'_>| (task.index % 5) as u32;
    let budget = PromptBudgets::default().tasks;
    let fit = |tasks: &[AvailableAction<'_>]| {
        task_trim_mask(tasks, (20, budget), relevance, &fixture.registry, &options)
    };
    let kept = fit(&tasks).iter().filter(|&&out| !out).count();
    assert!((1..10).contains(&kept), "a few of the 1,000 fit: {kept}");
    c.bench_function("available_tasks/fit_1000_tasks_29_mods", |b| {
        b.iter(|| fit(black_box(&tasks)))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(5))
        .sample_size(50);
    targets = bench_block, bench_world, bench_fit, bench_tasks
}
criterion_main!(benches);
