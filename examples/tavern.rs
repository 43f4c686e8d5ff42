//! A headless tavern: smart NPCs take turns on real content, the game's own rule
//! system carries out what they choose and reports it, and narration weaves the
//! tavern's authored fragments into a line for each action. Prints a transcript.
//!
//! ```text
//! cargo run --example tavern -- [--turns N] [--seed S] [--show-prompt]
//!                               [--content DIR] [--scene FILE]
//!                               [--interactive | --script FILE]
//! ```
//!
//! With `--interactive` each line you type is the player's for one turn (`@Marta, any
//! rooms?` starts a conversation, `okay, bye` ends it); `--script FILE` reads the
//! lines from a file instead. Either way the game runs until the lines run out.
//!
//! With `LOOM_LLM_URL` set it asks that server; otherwise the offline backend answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use bevy_loom::actors::{ActorMind, SpawnedScene};
use bevy_loom::content::parse_content;
use bevy_loom::llm::SamplingOptions;
use bevy_loom::narration::EffectReport;
use bevy_loom::prelude::*;

const USAGE: &str = "usage: tavern [--turns N] [--seed S] [--show-prompt] [--content DIR] [--scene FILE] [--interactive | --script FILE]";

#[derive(Resource, Clone)]
struct Options {
    content: PathBuf,
    scene: PathBuf,
    turns: u32,
    seed: u64,
    show_prompt: bool,
    /// Where the player's lines come from, if the player speaks.
    player: Option<PlayerLines>,
}

/// Where the player's lines come from.
#[derive(Clone)]
enum PlayerLines {
    Stdin,
    Script(PathBuf),
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        content: Path::new(env!("CARGO_MANIFEST_DIR")).join("assets"),
        scene: PathBuf::from("scenes/tavern.scene.json"),
        turns: 5,
        seed: 0,
        show_prompt: false,
        player: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--content" => options.content = PathBuf::from(value("--content")?),
            "--scene" => options.scene = PathBuf::from(value("--scene")?),
            "--turns" => {
                options.turns = value("--turns")?
                    .parse()
                    .map_err(|e| format!("--turns: {e}"))?
            }
            "--seed" => {
                options.seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--show-prompt" => options.show_prompt = true,
            "--interactive" => options.player = Some(PlayerLines::Stdin),
            "--script" => {
                options.player = Some(PlayerLines::Script(PathBuf::from(value("--script")?)))
            }
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    match parse_args().and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: Options) -> Result<(), String> {
    let content = options
        .content
        .canonicalize()
        .map_err(|e| format!("content folder {}: {e}", options.content.display()))?;
    let scene_path = if options.scene.is_absolute() || options.scene.exists() {
        options.scene.clone()
    } else {
        content.join(&options.scene)
    };
    let bytes =
        std::fs::read(&scene_path).map_err(|e| format!("scene {}: {e}", scene_path.display()))?;
    let scene: SceneDefinition =
        parse_content(&bytes, &scene_path.to_string_lossy()).map_err(|problems| {
            let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
            lines.join("\n")
        })?;

    let backend = if std::env::var("LOOM_LLM_URL").is_ok_and(|url| !url.trim().is_empty()) {
        BackendChoice::FromEnv
    } else {
        BackendChoice::Offline { seed: options.seed }
    };
    let llm = LlmSettings {
        backend,
        sampling: SamplingOptions {
            seed: Some(options.seed),
            ..LlmSettings::default().sampling
        },
        ..default()
    };
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin {
            file_path: content.to_string_lossy().into_owned(),
            ..default()
        },
        LoomPlugins.set(LlmPlugin { settings: llm }),
    ))
    .insert_resource(options.clone())
    .init_resource::<Turn>()
    .add_systems(
        Update,
        (gather, resolve_turn)
            .chain()
            .after(LoomSystems::Decide)
            .before(LoomSystems::Narrate),
    )
    .add_systems(Update, print_turn.after(LoomSystems::Narrate))
    .add_systems(Last, report_content_errors);
    app.finish();
    app.cleanup();

    let started = Instant::now();
    while app.world().resource::<ContentRegistry>().generation() == 0 {
        app.update();
        if started.elapsed() > Duration::from_secs(30) {
            return Err(format!(
                "content in {} did not finish loading in 30 s",
                content.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // Scenes load apart from the mods: every actor key must name a loaded spec, and
    // an entity whose narrative key names no file is narrated by its name alone.
    let registry = app.world().resource::<ContentRegistry>();
    let unbound = scene.check_actor_keys(registry, &scene_path.to_string_lossy());
    if !unbound.is_empty() {
        let lines: Vec<String> = unbound.iter().map(ToString::to_string).collect();
        return Err(lines.join("\n"));
    }
    for problem in scene.check_narrative_keys(registry, &scene_path.to_string_lossy()) {
        eprintln!("warning: {problem}");
    }
    let spawned = {
        let world = app.world_mut();
        let spawned = scene
            .spawn(&mut world.commands())
            .map_err(|e| e.to_string())?;
        world.flush();
        spawned
    };
    app.insert_resource(SceneOrder::new(&spawned));

    let registry = app.world().resource::<ContentRegistry>();
    let bridge = app.world().resource::<LlmBridge>();
    println!(
        "== {} — {} mods, {} actions; turns: {}, seed {}; answers from {} ==",
        if scene.name.is_empty() {
            "scene"
        } else {
            &scene.name
        },
        registry.mods().len(),
        registry.actions().len(),
        options.turns,
        options.seed,
        bridge.backend_description(),
    );
    let give_up = bridge.default_deadline() + Duration::from_secs(5);

    let mut lines: Box<dyn Iterator<Item = String>> = match &options.player {
        None => Box::new(std::iter::empty()),
        Some(PlayerLines::Stdin) => {
            println!("(type a line for each turn: `@Marta, any rooms?`; end with Ctrl-D)");
            Box::new(std::io::stdin().lines().map_while(Result::ok))
        }
        Some(PlayerLines::Script(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("script {}: {e}", path.display()))?;
            Box::new(
                text.lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
                    .into_iter(),
            )
        }
    };
    let turns = if options.player.is_some() {
        u32::MAX
    } else {
        options.turns
    };
    for number in 1..=turns {
        if options.player.is_some() {
            let Some(line) = lines.next() else {
                break;
            };
            println!("\n-- Turn {number} --\n> {line}");
            app.world_mut().write_message(PlayerSaid { text: line });
        } else {
            println!("\n-- Turn {number} --");
        }
        app.world_mut().resource_mut::<Turn>().open = true;
        app.world_mut().write_message(TurnEnded);
        let started = Instant::now();
        while app.world().resource::<Turn>().in_progress() {
            app.update();
            if started.elapsed() > give_up {
                return Err("the model did not answer in time".into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(())
}

/// Scene entities in the order the scene lists them, for a stable transcript.
#[derive(Resource)]
struct SceneOrder(HashMap<Entity, usize>);

impl SceneOrder {
    fn new(spawned: &SpawnedScene) -> Self {
        let order = spawned.order.iter().enumerate();
        Self(
            order
                .filter_map(|(i, id)| spawned.entities.get(id).map(|&e| (e, i)))
                .collect(),
        )
    }

    fn rank(&self, entity: Entity) -> usize {
        self.0.get(&entity).copied().unwrap_or(usize::MAX)
    }
}

/// This turn's decisions, gathered as they arrive, then its transcript lines, each
/// action's waiting for its narration.
#[derive(Resource, Default)]
struct Turn {
    open: bool,
    requests: Vec<ActionRequest>,
    speech: HashMap<Entity, String>,
    rejections: Vec<DecisionRejected>,
    prompts: Vec<DecisionRequested>,
    conversation: Vec<ConversationEvent>,
    lines: Vec<Line>,
}

/// A transcript line, and for an action, its report and narration.
struct Line {
    text: String,
    report: Option<ActionReport>,
    narration: Option<String>,
}

impl Turn {
    fn in_progress(&self) -> bool {
        self.open || !self.lines.is_empty()
    }
}

fn gather(
    mut turn: ResMut<Turn>,
    mut requests: MessageReader<ActionRequest>,
    mut spoke: MessageReader<ActorSpoke>,
    mut rejected: MessageReader<DecisionRejected>,
    mut prompts: MessageReader<DecisionRequested>,
    mut conversation: MessageReader<ConversationEvent>,
) {
    turn.conversation.extend(conversation.read().cloned());
    turn.requests.extend(requests.read().cloned());
    for line in spoke.read() {
        turn.speech.insert(line.actor, line.text.clone());
    }
    turn.rejections.extend(rejected.read().cloned());
    turn.prompts.extend(prompts.read().cloned());
}

fn report_content_errors(mut errors: MessageReader<ContentError>) {
    for error in errors.read() {
        println!("content error: {error}");
    }
}

/// The game's rules. Everyone acts at once: once no smart actor is still thinking,
/// the turn's requests are carried out in scene order, each checked against the
/// world as it is by then — the model proposed, the game disposes.
fn resolve_turn(world: &mut World) {
    if !world.resource::<Turn>().open {
        return;
    }
    let mut minds = world.query::<&ActorMind>();
    if minds.iter(world).any(ActorMind::is_thinking) {
        return;
    }
    let mut turn = std::mem::take(&mut *world.resource_mut::<Turn>());
    let mut lines = Vec::new();
    let talking_with = world.resource::<Conversation>().with;
    for event in std::mem::take(&mut turn.conversation) {
        lines.push(Line::plain(match event {
            ConversationEvent::Started(actor) => format!("(you talk with {})", name(world, actor)),
            ConversationEvent::Ended(actor) => format!("(you leave {} be)", name(world, actor)),
            ConversationEvent::Notice(text) => text,
        }));
    }
    let order = world.resource::<SceneOrder>();
    turn.prompts.sort_by_key(|p| order.rank(p.actor));
    turn.requests.sort_by_key(|r| order.rank(r.actor));
    turn.rejections.sort_by_key(|r| order.rank(r.actor));
    let mut silent: Vec<(Entity, String)> = turn.speech.drain().collect();
    silent.sort_by_key(|(actor, _)| order.rank(*actor));

    if world.resource::<Options>().show_prompt {
        for prompt in &turn.prompts {
            let mut text = format!("~~ prompt for {} ~~", name(world, prompt.actor));
            for message in prompt.messages.iter() {
                text.push_str(&format!("\n[{}]\n{}\n", message.role, message.content));
            }
            lines.push(Line::plain(text));
        }
    }
    for request in &turn.requests {
        let speech = silent
            .iter()
            .position(|(actor, _)| *actor == request.actor)
            .map(|i| format!(" — \"{}\"", silent.remove(i).1))
            .unwrap_or_default();
        let verb = world
            .resource::<ContentRegistry>()
            .action(&request.action_id)
            .and_then(|action| action.verb.clone())
            .unwrap_or_else(|| {
                request
                    .action_id
                    .rsplit(':')
                    .next()
                    .unwrap_or("act")
                    .to_owned()
            });
        let mut report = ActionReport::new(request.actor, verb);
        report.object = request.targets.first().copied();
        report.indirect_object = request.targets.get(1).copied();
        let outcome = match carry_out(world, request) {
            Ok(done) => {
                report.new_state = done.new_state.map(str::to_owned);
                report.effects = done.effects;
                String::new()
            }
            Err(refusal) => {
                report = report.failed(refusal.reason);
                format!(" (the game refuses: {})", refusal.why)
            }
        };
        world.write_message(report.clone());
        lines.push(Line {
            text: format!(
                "{}: {}{speech}{outcome}",
                name(world, request.actor),
                request.command
            ),
            report: Some(report),
            narration: None,
        });
    }
    for (actor, text) in silent {
        lines.push(Line::plain(if talking_with == Some(actor) {
            format!("{} (to you): \"{text}\"", name(world, actor))
        } else {
            format!("{} passes — \"{text}\"", name(world, actor))
        }));
    }
    for rejection in &turn.rejections {
        lines.push(Line::plain(format!(
            "{} passes (rejected: {})",
            name(world, rejection.actor),
            rejection.reason
        )));
    }
    world.resource_mut::<Turn>().lines = lines;
}

impl Line {
    fn plain(text: String) -> Self {
        Self {
            text,
            report: None,
            narration: Some(String::new()),
        }
    }
}

/// Gives each action line its narration; once every line has one, prints the turn.
fn print_turn(mut turn: ResMut<Turn>, mut texts: MessageReader<NarrationText>) {
    for text in texts.read().filter(|t| t.is_final) {
        if let Some(line) = turn
            .lines
            .iter_mut()
            .find(|line| line.narration.is_none() && line.report.as_ref() == Some(&*text.report))
        {
            line.narration = Some(text.text.clone());
        }
    }
    if turn.open || turn.lines.iter().any(|line| line.narration.is_none()) {
        return;
    }
    for line in std::mem::take(&mut turn.lines) {
        println!("{}", line.text);
        if let Some(narration) = line.narration.filter(|n| !n.is_empty()) {
            println!("    {narration}");
        }
    }
}

fn name(world: &World, entity: Entity) -> String {
    world
        .get::<DisplayName>(entity)
        .map_or_else(|| entity.to_string(), |n| n.0.clone())
}

/// What carrying out a request changed, for its report.
#[derive(Default)]
struct Done {
    new_state: Option<&'static str>,
    effects: Vec<EffectReport>,
}

/// Why the game refused a request: a canonical failure reason, and words for the transcript.
struct Refusal {
    reason: &'static str,
    why: &'static str,
}

fn refuse(reason: &'static str, why: &'static str) -> Refusal {
    Refusal { reason, why }
}

/// One request, checked against the world as it is now.
fn carry_out(world: &mut World, request: &ActionRequest) -> Result<Done, Refusal> {
    let actor = request.actor;
    let target = request.targets.first().copied();
    let here = world.get::<InPlace>(actor).map(|p| p.0);
    let mut done = Done::default();
    match (request.action_id.as_str(), target) {
        ("items:pick_up", Some(item)) => {
            if world.get::<InPlace>(item).map(|p| p.0) != here {
                return Err(refuse("not_here", "it is no longer here"));
            }
            world
                .entity_mut(item)
                .remove::<InPlace>()
                .insert(CarriedBy(actor));
            done.new_state = Some("carried");
        }
        ("items:drop", Some(item)) => {
            let place = here.ok_or(refuse("blocked", "there is nowhere to drop it"))?;
            world
                .entity_mut(item)
                .remove::<CarriedBy>()
                .insert(InPlace(place));
            done.new_state = Some("here");
        }
        ("items:give", Some(item)) => {
            let recipient = *request
                .targets
                .get(1)
                .ok_or(refuse("not_here", "nobody to give it to"))?;
            if world.get::<CarriedBy>(item).map(|c| c.0) != Some(actor) {
                return Err(refuse("not_held", "they no longer hold it"));
            }
            if world.get::<InPlace>(recipient).map(|p| p.0) != here {
                return Err(refuse("not_here", "they are no longer here"));
            }
            world.entity_mut(item).insert(CarriedBy(recipient));
            done.new_state = Some("carried");
        }
        ("positioning:sit_down", seat) => {
            tag(world, actor, "sitting", true);
            let effect = EffectReport::new("position_change", "sit_down");
            done.effects.push(match seat {
                Some(seat) => effect.target(seat),
                None => effect,
            });
        }
        ("positioning:stand_up", _) => {
            tag(world, actor, "sitting", false);
            done.effects
                .push(EffectReport::new("position_change", "stand_up"));
        }
        ("combat:draw_weapon", _) => {
            tag(world, actor, "armed", true);
        }
        ("core:go" | "combat:flee", Some(destination)) => {
            tag(world, actor, "sitting", false);
            world.entity_mut(actor).insert(InPlace(destination));
            let mut exit = EffectReport::new("position_change", "exit");
            if let Some(left) = here {
                exit = exit.target(left);
            }
            done.effects.push(exit);
            done.effects
                .push(EffectReport::new("position_change", "enter").target(destination));
        }
        _ => {}
    }
    Ok(done)
}

fn tag(world: &mut World, entity: Entity, tag: &str, on: bool) {
    if let Some(mut tags) = world.get_mut::<Tags>(entity) {
        if on {
            tags.0.insert(tag.to_owned());
        } else {
            tags.0.remove(tag);
        }
    }
}
