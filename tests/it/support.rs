//! Shared test helpers: content folders on disk and headless apps that load them.

use std::path::Path;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy_loom::prelude::*;
use bevy_loom::testing::{self, HeadlessApp};
use serde_json::{Value, json};
use tempfile::TempDir;

/// Writes files (path relative to the folder, text) into a fresh temporary folder.
pub fn content_dir(files: &[(&str, String)]) -> TempDir {
    testing::content_folder(files).expect("a content folder")
}

/// Writes one file, creating its folders.
pub fn write(root: &Path, path: &str, text: &str) {
    testing::write_file(root, Path::new(path), text.as_bytes()).expect("the file is written");
}

/// A valid mod manifest with the given overrides merged in.
pub fn manifest(id: &str, overrides: Value) -> String {
    let mut manifest = json!({
        "id": id,
        "version": "1.0.0",
        "name": format!("The {id} mod"),
        "actionPurpose": format!("Actions of the {id} mod, for tests."),
        "actionConsiderWhen": "When a test needs them to be offered.",
        "content": { "actions": [] }
    });
    if let (Value::Object(base), Value::Object(extra)) = (&mut manifest, overrides) {
        base.extend(extra);
    }
    manifest.to_string()
}

/// A valid action definition with the given overrides merged in.
pub fn action(id: &str, overrides: Value) -> String {
    let mut action = json!({
        "id": id,
        "name": "Wait",
        "description": "Let time pass",
        "template": "wait"
    });
    if let (Value::Object(base), Value::Object(extra)) = (&mut action, overrides) {
        base.extend(extra);
    }
    action.to_string()
}

/// The files of a valid `core` mod with one action, `core:wait`.
pub fn core_mod() -> Vec<(&'static str, String)> {
    vec![
        (
            "mods/core/mod.json",
            manifest(
                "core",
                json!({ "content": { "actions": ["actions/wait.action.json"] } }),
            ),
        ),
        (
            "mods/core/actions/wait.action.json",
            action("core:wait", json!({})),
        ),
    ]
}

/// A game file listing these mods.
pub fn game(mods: &[&str]) -> (&'static str, String) {
    ("game.loom.json", json!({ "mods": mods }).to_string())
}

/// Content errors seen so far.
pub use bevy_loom::testing::ContentErrorLog as SeenErrors;
pub use bevy_loom::testing::record_content_errors as record_errors;

/// A headless app on the content in `root` (watched for edits when `watch`), finished
/// but not yet updated, keeping every content error in [`SeenErrors`].
pub fn content_app(root: &Path, watch: bool) -> App {
    let mut app = HeadlessApp::new(root).watch(watch).build();
    app.finish();
    app.cleanup();
    app
}

/// Updates until `done` holds, failing the test after two minutes instead of hanging:
/// a guard against a hang, not a measure of speed, so loose enough for a machine
/// busy with other work (a real model server's turn took over 20 s on two loaded cores).
pub fn update_until(app: &mut App, what: &str, mut done: impl FnMut(&mut App) -> bool) {
    let started = Instant::now();
    while !done(app) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "gave up waiting for {what}"
        );
        app.update();
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Updates until a decision of `actor`'s is rejected (as [`TurnLog`] records it);
/// the reason.
pub fn rejection_of(app: &mut App, actor: Entity) -> RejectionReason {
    let rejected = |app: &App| {
        let log = app.world().resource::<TurnLog>();
        (log.rejected.iter().find(|r| r.actor == actor)).map(|r| r.reason.clone())
    };
    update_until(app, "a rejection", |app| rejected(app).is_some());
    rejected(app).expect("rejected")
}

/// Updates until the content has loaded, failing the test on a timeout.
pub fn wait_for_content(app: &mut App) {
    if let Err(error) = testing::wait_for_content(app, testing::CONTENT_TIMEOUT) {
        panic!("{error}");
    }
}

/// Loads a content folder once and returns the registry and every error reported.
pub fn load(files: &[(&str, String)]) -> (ContentRegistry, Vec<ContentError>) {
    testing::registry_from_files(files).unwrap_or_else(|error| panic!("{error}"))
}

/// The repository's own content folder.
pub fn repo_assets() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

/// Answers every request with the same reply.
pub struct FixedBackend(pub bevy_loom::llm::LlmReply);

impl bevy_loom::llm::LlmBackend for FixedBackend {
    fn describe(&self) -> String {
        "fixed answers".to_owned()
    }

    fn complete(
        &self,
        _request: &LlmRequest,
        _deltas: bevy_loom::llm::DeltaSink,
    ) -> bevy_loom::llm::LlmFuture {
        let reply = self.0.clone();
        Box::pin(async move { Ok(reply) })
    }
}

impl FixedBackend {
    /// The backend choice of a model that answers every request with `answer`.
    pub fn choice(answer: &str) -> BackendChoice {
        Self::replying(bevy_loom::llm::LlmReply::text(answer))
    }

    /// The backend choice of a model that gives every request this `reply`.
    pub fn replying(reply: bevy_loom::llm::LlmReply) -> BackendChoice {
        BackendChoice::Custom(std::sync::Arc::new(Self(reply)))
    }
}

/// Answers each request, once its gate opens, with what `answer` makes of the
/// request's last message: for a test that acts while a request is out.
pub struct GatedBackend {
    gate: std::sync::Arc<std::sync::atomic::AtomicBool>,
    answer: fn(&str) -> String,
}

impl GatedBackend {
    /// The backend choice of one answering with `answer`, and its gate, closed.
    pub fn choice(
        answer: fn(&str) -> String,
    ) -> (BackendChoice, std::sync::Arc<std::sync::atomic::AtomicBool>) {
        let gate = std::sync::Arc::default();
        let backend = Self {
            gate: std::sync::Arc::clone(&gate),
            answer,
        };
        (BackendChoice::Custom(std::sync::Arc::new(backend)), gate)
    }
}

impl bevy_loom::llm::LlmBackend for GatedBackend {
    fn describe(&self) -> String {
        "answers once its gate opens".to_owned()
    }

    fn complete(
        &self,
        request: &LlmRequest,
        _deltas: bevy_loom::llm::DeltaSink,
    ) -> bevy_loom::llm::LlmFuture {
        let user = request.messages.last().map_or("", |m| &*m.content);
        let text = (self.answer)(user);
        let gate = std::sync::Arc::clone(&self.gate);
        Box::pin(async move {
            while !gate.load(std::sync::atomic::Ordering::SeqCst) {
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            Ok(bevy_loom::llm::LlmReply::text(text))
        })
    }
}

/// A headless app on the content in `root` (not watched) whose model answers every
/// request with `answer`, with the default smart-actor settings.
pub fn answering_app(root: &Path, answer: &str) -> App {
    loom_app(
        root,
        false,
        LlmPlugin {
            backend: FixedBackend::choice(answer),
            ..default()
        },
        SmartActorSettings::default(),
    )
}

/// Everything the plugin wrote during a turn.
#[derive(Resource, Default, Debug, Clone)]
pub struct TurnLog {
    pub requests: Vec<ActionRequest>,
    pub spoke: Vec<ActorSpoke>,
    pub passed: Vec<ActorPassed>,
    pub rejected: Vec<DecisionRejected>,
    pub prompts: Vec<DecisionRequested>,
    pub responses: Vec<LlmResponse>,
}

fn record_turn(
    mut log: ResMut<TurnLog>,
    mut requests: MessageReader<ActionRequest>,
    mut spoke: MessageReader<ActorSpoke>,
    mut passed: MessageReader<ActorPassed>,
    mut rejected: MessageReader<DecisionRejected>,
    mut prompts: MessageReader<DecisionRequested>,
    mut responses: MessageReader<LlmResponse>,
) {
    log.requests.extend(requests.read().cloned());
    log.spoke.extend(spoke.read().cloned());
    log.passed.extend(passed.read().cloned());
    log.rejected.extend(rejected.read().cloned());
    log.prompts.extend(prompts.read().cloned());
    log.responses.extend(responses.read().cloned());
}

/// A headless app on the repository's content and tavern scene, with this backend.
pub fn tavern_app(backend: BackendChoice) -> (App, bevy_loom::actors::SpawnedScene) {
    tavern_app_with(backend, SmartActorSettings::default())
}

/// Like [`tavern_app`], with these smart-actor settings.
pub fn tavern_app_with(
    backend: BackendChoice,
    actors: SmartActorSettings,
) -> (App, bevy_loom::actors::SpawnedScene) {
    tavern_app_configured(
        LlmPlugin {
            backend,
            ..default()
        },
        actors,
    )
}

/// A headless app with every plugin on the content in `root` (watched for edits when
/// `watch`), with these bridge and smart-actor settings, updated until the content has
/// loaded; [`run_turn`] logs what each turn writes.
pub fn loom_app(root: &Path, watch: bool, llm: LlmPlugin, actors: SmartActorSettings) -> App {
    let mut app = HeadlessApp::new(root)
        .watch(watch)
        .llm(llm)
        .actors(actors)
        .build();
    app.init_resource::<TurnLog>()
        .add_systems(Update, record_turn.after(LoomSystems::Decide));
    wait_for_content(&mut app);
    app
}

/// Like [`tavern_app`], with these bridge and smart-actor settings.
pub fn tavern_app_configured(
    llm: LlmPlugin,
    actors: SmartActorSettings,
) -> (App, bevy_loom::actors::SpawnedScene) {
    let root = repo_assets();
    let mut app = loom_app(&root, false, llm, actors);
    let path = root.join("scenes/tavern.scene.json");
    let bytes = std::fs::read(&path).expect("the tavern scene");
    let scene: SceneDefinition =
        bevy_loom::content::parse_content(&bytes, &path.to_string_lossy()).expect("a valid scene");
    let registry = app.world().resource::<ContentRegistry>();
    let mut unbound = scene.check_actor_keys(registry, &path.to_string_lossy());
    unbound.extend(scene.check_narrative_keys(registry, &path.to_string_lossy()));
    assert!(unbound.is_empty(), "{unbound:#?}");
    let spawned = {
        let world = app.world_mut();
        let spawned = scene
            .spawn(&mut world.commands())
            .expect("the scene spawns");
        world.flush();
        spawned
    };
    (app, spawned)
}

/// Ends a turn and updates until no smart actor is thinking; returns what the turn wrote.
pub fn run_turn(app: &mut App) -> TurnLog {
    app.world_mut().write_message(TurnEnded);
    app.update();
    update_until(app, "every actor to decide", |app| {
        let mut minds = app.world_mut().query::<&bevy_loom::actors::ActorMind>();
        !minds.iter(app.world()).any(|mind| mind.is_thinking())
    });
    app.update();
    std::mem::take(&mut *app.world_mut().resource_mut::<TurnLog>())
}

/// A runtime for a test server, which the caller owns (dropping it stops the server),
/// a listener on a free port of 127.0.0.1, and its address, `http://127.0.0.1:PORT`.
pub fn local_listener() -> (tokio::runtime::Runtime, tokio::net::TcpListener, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime for the test server");
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a free port on 127.0.0.1");
    let port = listener.local_addr().expect("the server's address").port();
    (runtime, listener, format!("http://127.0.0.1:{port}"))
}

/// Serves `router` on a free port of 127.0.0.1 from a runtime the caller owns, and
/// returns that runtime (dropping it stops the server) and `http://127.0.0.1:PORT`.
pub fn serve(router: axum::Router) -> (tokio::runtime::Runtime, String) {
    let (runtime, listener, root) = local_listener();
    runtime.spawn(async move {
        axum::serve(listener, router)
            .await
            .expect("the test server runs")
    });
    (runtime, root)
}

/// A port on 127.0.0.1 that refuses every connection for as long as this lives: a
/// socket bound to it that never listens, so no other test can take the port meanwhile.
pub struct RefusedPort {
    _socket: socket2::Socket,
    port: u16,
}

impl RefusedPort {
    pub fn new() -> Self {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .expect("a TCP socket");
        let any_port = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        socket
            .bind(&any_port.into())
            .expect("a free port on 127.0.0.1");
        let port = socket
            .local_addr()
            .ok()
            .and_then(|address| address.as_socket())
            .expect("the bound address")
            .port();
        Self {
            _socket: socket,
            port,
        }
    }

    /// `http://127.0.0.1:PORT/v1`, an OpenAI-style API base where nothing answers.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}
