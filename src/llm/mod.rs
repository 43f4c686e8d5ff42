//! The LLM bridge: backends behind one trait, a background runtime that never
//! blocks a frame, and [`LlmResponse`] messages with the outcomes.
//!
//! **Layer:** the transport, above content only in order: it knows nothing of games.
//! What a request is for reaches it only as text, a schema and an [`OfflineAnswer`]
//! its requester wrote.
//!
//! | backend | when |
//! |---|---|
//! | [`OfflineBackend`] | no server configured; examples and tests. Not a language model. |
//! | [`OpenAiBackend`] (feature `http`) | `LOOM_LLM_URL` set, or [`BackendChoice::OpenAi`] |
//! | [`OllamaBackend`] (feature `http`) | `LOOM_LLM_PROVIDER=ollama`, or [`BackendChoice::Ollama`] |
//! | your own | [`BackendChoice::Custom`] with any [`LlmBackend`] |

mod backend;
mod bridge;
mod cassette;
mod config;
mod environment;
mod error_body;
#[cfg(feature = "http")]
mod http;
mod offline;
#[cfg(feature = "http")]
mod ollama;
#[cfg(feature = "http")]
mod openai;
mod profile;
mod request;
mod scheduler;
mod stats;

use std::sync::Arc;
use std::time::Duration;

use bevy::prelude::*;

pub use backend::{DeltaSink, LimitsFuture, LlmBackend, LlmFuture};
pub use bridge::LlmBridge;
pub use cassette::{RecordingBackend, ReplayBackend, request_key};
pub use config::{LlmConfig, LlmConfigError};
pub use environment::LlmEnvironment;
#[cfg(feature = "http")]
pub use http::{BACKSTOP_TIMEOUT, CONNECT_TIMEOUT, ResponseLimits};
pub use offline::OfflineBackend;
#[cfg(feature = "http")]
pub use ollama::{OllamaBackend, OllamaSettings};
#[cfg(feature = "http")]
pub use openai::{ApiKey, OpenAiBackend, OpenAiSettings, SchemaFormat};
pub use profile::ServerLimits;
pub use request::{
    ChatMessage, LlmDelta, LlmError, LlmReply, LlmRequest, LlmResponse, OfflineAnswer, Priority,
    RequestId, SamplingOptions, ServerTimings, TokenUsage, ToolCall, ToolSpec,
};
pub(crate) use scheduler::later;
pub use scheduler::{BreakerSettings, BreakerState, EndpointHealth, RetryPolicy};
pub use stats::LlmStats;

/// Which backend answers requests.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum BackendChoice {
    /// From the environment (see [`BackendChoice::from_environment`]):
    /// `LOOM_LLM_PROVIDER=ollama` talks to Ollama at `OLLAMA_HOST`;
    /// `LOOM_LLM_PROVIDER=offline` answers offline; otherwise an OpenAI-compatible
    /// server when `LOOM_LLM_URL` is set (a fleet when it lists several,
    /// comma-separated); otherwise offline with seed 0. `LOOM_LLM_MODEL`,
    /// `LOOM_LLM_API_KEY`, `LOOM_LLM_SCHEMA` and `LOOM_LLM_SLOTS` complete the
    /// settings. `LOOM_LLM_RECORD=FILE` records to a cassette; `LOOM_LLM_REPLAY=FILE`
    /// answers from one.
    #[default]
    FromEnv,
    /// The offline backend with this seed.
    Offline {
        /// Mixed into every choice.
        seed: u64,
    },
    /// An OpenAI-compatible server.
    #[cfg(feature = "http")]
    OpenAi(OpenAiSettings),
    /// Ollama's native API.
    #[cfg(feature = "http")]
    Ollama(OllamaSettings),
    /// Another choice, with every answered request appended to a cassette (by each
    /// member, when it is a fleet).
    Record {
        /// What answers.
        backend: Box<BackendChoice>,
        /// The JSONL cassette to append to.
        cassette: std::path::PathBuf,
    },
    /// Answers from a cassette only; a request it does not hold fails clearly.
    Replay {
        /// The JSONL cassette to read.
        cassette: std::path::PathBuf,
    },
    /// Several servers answering the same model: requests are balanced across the
    /// healthy ones and fail over when one fails.
    Fleet(Vec<BackendChoice>),
    /// A backend of your own.
    Custom(Arc<dyn LlmBackend>),
}

impl std::fmt::Debug for BackendChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::FromEnv => f.write_str("FromEnv"),
            Self::Offline { seed } => f.debug_struct("Offline").field("seed", seed).finish(),
            #[cfg(feature = "http")]
            Self::OpenAi(settings) => f.debug_tuple("OpenAi").field(settings).finish(),
            #[cfg(feature = "http")]
            Self::Ollama(settings) => f.debug_tuple("Ollama").field(settings).finish(),
            Self::Record { backend, cassette } => f
                .debug_struct("Record")
                .field("backend", backend)
                .field("cassette", cassette)
                .finish(),
            Self::Replay { cassette } => f
                .debug_struct("Replay")
                .field("cassette", cassette)
                .finish(),
            Self::Fleet(members) => f.debug_tuple("Fleet").field(members).finish(),
            Self::Custom(backend) => f.debug_tuple("Custom").field(&backend.describe()).finish(),
        }
    }
}

impl BackendChoice {
    /// The endpoints this choice stands for, one per server: every member of a fleet
    /// (each recorded, when the fleet is), otherwise the one backend. A server that
    /// cannot be set up answers offline instead, and an empty fleet offline, with an
    /// error in the log saying why.
    pub fn endpoints(&self) -> Vec<Arc<dyn LlmBackend>> {
        match self {
            Self::FromEnv => Self::from_environment(&LlmEnvironment::process()).endpoints(),
            Self::Offline { seed } => vec![Arc::new(OfflineBackend::new(*seed))],
            #[cfg(feature = "http")]
            Self::OpenAi(settings) => vec![or_offline(OpenAiBackend::new(settings.clone()))],
            #[cfg(feature = "http")]
            Self::Ollama(settings) => vec![or_offline(OllamaBackend::new(settings.clone()))],
            Self::Record { backend, cassette } => {
                match RecordingBackend::each(backend.endpoints(), cassette) {
                    Ok(recording) => recording
                        .into_iter()
                        .map(|member| Arc::new(member) as Arc<dyn LlmBackend>)
                        .collect(),
                    Err(error) => vec![Arc::new(backend::UnavailableBackend(error))],
                }
            }
            Self::Replay { cassette } => match ReplayBackend::open(cassette) {
                Ok(replay) => vec![Arc::new(replay)],
                // A replayed run must not quietly ask something else.
                Err(error) => vec![Arc::new(backend::UnavailableBackend(error))],
            },
            Self::Fleet(members) if members.is_empty() => {
                error!(
                    "{}; answering offline instead",
                    LlmSettingsError::EmptyFleet
                );
                vec![Arc::new(OfflineBackend::new(0))]
            }
            Self::Fleet(members) => members.iter().flat_map(Self::endpoints).collect(),
            Self::Custom(backend) => vec![Arc::clone(backend)],
        }
    }

    /// The first setting of this choice that cannot work; for
    /// [`FromEnv`](Self::FromEnv), of the process's environment.
    fn validate(&self) -> Result<(), LlmSettingsError> {
        match self {
            Self::FromEnv => {
                let environment = LlmEnvironment::process();
                environment::environment_problem(&environment).map_or(Ok(()), Err)?;
                Self::from_environment(&environment).validate()
            }
            Self::Fleet(members) if members.is_empty() => Err(LlmSettingsError::EmptyFleet),
            Self::Fleet(members) => members.iter().try_for_each(Self::validate),
            Self::Record { backend, .. } => backend.validate(),
            #[cfg(feature = "http")]
            Self::OpenAi(settings) if settings.slots == Some(0) => Err(LlmSettingsError::NoSlots {
                server: without_credentials(&settings.base_url),
            }),
            #[cfg(feature = "http")]
            Self::OpenAi(settings) => server_problem(&settings.base_url),
            #[cfg(feature = "http")]
            Self::Ollama(settings) => server_problem(&settings.base_url),
            _ => Ok(()),
        }
    }
}

/// Why a server at `base_url` cannot be set up, if it cannot.
#[cfg(feature = "http")]
fn server_problem(base_url: &str) -> Result<(), LlmSettingsError> {
    http::ServerUrl::new(base_url, "")
        .map(drop)
        .map_err(|error| LlmSettingsError::Server(error.to_string()))
}

/// A server backend, or the offline one (with the reason in the log) when it cannot be set up.
#[cfg(feature = "http")]
fn or_offline(backend: Result<impl LlmBackend, LlmError>) -> Arc<dyn LlmBackend> {
    match backend {
        Ok(backend) => Arc::new(backend),
        Err(error) => {
            error!("{error}; answering offline instead");
            Arc::new(OfflineBackend::new(0))
        }
    }
}

/// Adds an endpoint's address (without credentials) and model to its settings' debug output.
pub(crate) fn debug_endpoint(
    debug: &mut std::fmt::DebugStruct<'_, '_>,
    base_url: &str,
    model: &str,
) {
    debug
        .field("base_url", &without_credentials(base_url))
        .field("model", &model);
}

/// A backend's description: `what` server, where (without credentials), which model.
pub(crate) fn describe_server(what: &str, base_url: &str, model: &str) -> String {
    format!(
        "{what} at {} (model {model})",
        without_credentials(base_url)
    )
}

/// A server address as logs, errors and `Debug` show it: any `user:password@` part hidden.
pub(crate) fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://<redacted>@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

/// The longest deadline that settings may give a request.
pub const LONGEST_DEADLINE: Duration = Duration::from_secs(60 * 60);

/// The most requests one endpoint is sent at a time, far more than a server answers
/// side by side: settings asking for more are an error, and a server that says it has
/// more slots ([`LlmBackend::limits`]) gets this many.
pub const MOST_CONCURRENCY: usize = 4096;

/// Why an [`LlmPlugin`]'s settings cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmSettingsError {
    /// No request could ever be sent.
    #[error("`concurrency_per_endpoint` is 0, so no request could ever be sent: use 1 or more")]
    NoConcurrency,
    /// More requests at a time than any server answers.
    #[error(
        "`concurrency_per_endpoint` is {0}, more than any server answers at a time: use at most {MOST_CONCURRENCY}"
    )]
    TooMuchConcurrency(usize),
    /// Every request would time out at once, or wait past any sensible time.
    #[error(
        "the deadline {0:?} cannot work: give one longer than 0 and at most {LONGEST_DEADLINE:?}"
    )]
    Deadline(Duration),
    /// A fleet without servers.
    #[error("the fleet lists no servers: list at least one, or choose `BackendChoice::Offline`")]
    EmptyFleet,
    /// A server said to have no slots.
    #[error(
        "the server {server} has `slots: Some(0)`: give its slot count (llama.cpp's `--parallel`), or `None`"
    )]
    NoSlots {
        /// The server, without credentials.
        server: String,
    },
    /// A server that cannot be set up: its URL is not an http(s) one.
    #[error("{0}")]
    Server(String),
    /// `LOOM_LLM_PROVIDER` names no provider.
    #[error("LOOM_LLM_PROVIDER=`{0}` is not a provider: use `openai`, `ollama` or `offline`")]
    UnknownProvider(String),
    /// `LOOM_LLM_SCHEMA` names no way to send the answer's schema.
    #[error("LOOM_LLM_SCHEMA=`{0}` is not a schema format: use json_schema, json_object or off")]
    UnknownSchema(String),
    /// `LOOM_LLM_SLOTS` is no count of slots.
    #[error(
        "LOOM_LLM_SLOTS=`{0}` is not a slot count: give the server's slots (llama.cpp's `--parallel`), 1 or more, or leave it unset"
    )]
    NotASlotCount(String),
}

/// What the bridge applies to each request, changeable at run time.
///
/// [`LlmPlugin`] copies these into a resource; a change there applies to requests
/// submitted afterwards. What the bridge is started with (the backend, concurrency,
/// retries, the breaker) is on the plugin.
#[derive(Resource, Debug, Clone, Reflect)]
#[reflect(Resource, Default)]
pub struct LlmSettings {
    /// How long a request that sets no deadline of its own (a smart actor's decision)
    /// may take, once a server starts on it, before it ends as [`LlmError::TimedOut`]:
    /// waiting in the bridge's queue for a free slot does not count, and once the
    /// server's speed is measured it is at least twice what that speed predicts, so a
    /// long first prompt on a CPU is not lost to it. A request's own
    /// [`LlmRequest::deadline`] counts from submission instead (someone waits for
    /// it), and a request whose server's measured speed cannot meet it is not sent
    /// ([`LlmError::TooSlow`]).
    pub deadline: Duration,
    /// Sampling defaults for requests that leave them unset.
    pub sampling: SamplingOptions,
}

impl LlmSettings {
    /// The first setting that cannot work: a zero deadline or one longer than
    /// [`LONGEST_DEADLINE`].
    pub fn validate(&self) -> Result<(), LlmSettingsError> {
        if self.deadline.is_zero() || self.deadline > LONGEST_DEADLINE {
            return Err(LlmSettingsError::Deadline(self.deadline));
        }
        Ok(())
    }
}

impl Default for LlmSettings {
    fn default() -> Self {
        Self {
            deadline: Duration::from_secs(60),
            sampling: SamplingOptions {
                temperature: Some(0.7),
                max_tokens: Some(256),
                ..default()
            },
        }
    }
}

/// Starts the [`LlmBridge`] and writes [`LlmResponse`] messages in [`LlmSystems::Receive`].
///
/// The backend, concurrency, retries and breaker are read once, when the bridge
/// starts; the deadline and sampling defaults in [`settings`](Self::settings) follow
/// the [`LlmSettings`] resource at run time.
///
/// Settings that cannot work ([`LlmPlugin::validate`]) are an error in the log at
/// startup, and the game goes on with the nearest that can: one request at a time
/// per endpoint for no concurrency, [`MOST_CONCURRENCY`] for more, the offline backend
/// for an empty fleet, no slot for a server with 0 slots, and a deadline as given (0
/// times every request out at once, with an error that says to raise it).
#[derive(Debug, Clone)]
pub struct LlmPlugin {
    /// Which backend answers; chosen once, at startup.
    pub backend: BackendChoice,
    /// How many requests one endpoint answers at a time; the rest wait in the queue.
    /// A server that says how many slots it has (llama.cpp's `total_slots` in
    /// `/props`) is sent as many at a time instead, once it has said so: more would
    /// only wait in the server's own queue, where priority cannot reorder them.
    pub concurrency_per_endpoint: usize,
    /// How failed requests are tried again.
    pub retry: RetryPolicy,
    /// When a failing endpoint is skipped, and for how long.
    pub breaker: BreakerSettings,
    /// The deadline and sampling defaults, copied into a resource that may change at run time.
    pub settings: LlmSettings,
}

impl Default for LlmPlugin {
    fn default() -> Self {
        Self {
            backend: BackendChoice::FromEnv,
            concurrency_per_endpoint: 4,
            retry: RetryPolicy::default(),
            breaker: BreakerSettings::default(),
            settings: LlmSettings::default(),
        }
    }
}

impl LlmPlugin {
    /// The first setting that cannot work: no concurrency or more than
    /// [`MOST_CONCURRENCY`], a zero deadline or one longer than [`LONGEST_DEADLINE`],
    /// an empty fleet, a server with no slots or whose URL is not an http(s) one, a
    /// `LOOM_LLM_PROVIDER` that names no provider.
    pub fn validate(&self) -> Result<(), LlmSettingsError> {
        let concurrency = self.concurrency_per_endpoint;
        if concurrency == 0 {
            return Err(LlmSettingsError::NoConcurrency);
        }
        if concurrency > MOST_CONCURRENCY {
            return Err(LlmSettingsError::TooMuchConcurrency(concurrency));
        }
        self.settings.validate()?;
        self.backend.validate()
    }
}

impl Plugin for LlmPlugin {
    fn build(&self, app: &mut App) {
        if let Err(error) = self.validate() {
            error!("the LLM settings cannot work: {error}");
        }
        let bridge = LlmBridge::start(self.backend.endpoints(), self);
        info!("bevy_loom answers with {}", bridge.backend_description());
        app.insert_resource(self.settings.clone())
            .insert_resource(bridge)
            .register_type::<LlmSettings>()
            .init_resource::<LlmStats>()
            .add_message::<LlmResponse>()
            .add_message::<LlmDelta>()
            .add_systems(
                PreUpdate,
                apply_settings
                    .run_if(resource_changed::<LlmSettings>)
                    .in_set(LlmSystems::ApplySettings),
            )
            .add_systems(Update, receive_responses.in_set(LlmSystems::Receive))
            .add_systems(Last, flush_requests.in_set(LlmSystems::Flush));
    }
}

/// The bridge's systems, one set per schedule they run in.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LlmSystems {
    /// In `PreUpdate`: hands a changed [`LlmSettings`]' deadline and sampling to the
    /// bridge, for requests submitted afterwards.
    ApplySettings,
    /// In `Update`: drains finished requests into [`LlmResponse`] and [`LlmDelta`]
    /// messages. With the other bevy_loom plugins it runs in
    /// [`LoomSystems::Receive`](crate::LoomSystems::Receive): between prompts being
    /// submitted and answers being read.
    Receive,
    /// In `Last`: sends the requests submitted after [`Receive`](Self::Receive)
    /// (narration's, the game's own) this frame rather than the next.
    Flush,
}

fn apply_settings(settings: Res<LlmSettings>, mut bridge: ResMut<LlmBridge>) {
    bridge.set_defaults(settings.deadline, settings.sampling.clone());
}

fn flush_requests(mut bridge: ResMut<LlmBridge>) {
    bridge.flush();
}

fn receive_responses(
    mut bridge: ResMut<LlmBridge>,
    mut stats: ResMut<LlmStats>,
    mut deltas: MessageWriter<LlmDelta>,
    mut responses: MessageWriter<LlmResponse>,
) {
    let done = bridge.drain();
    stats::update_stats(&bridge, &done, &mut stats);
    deltas.write_batch(bridge.drain_deltas());
    responses.write_batch(done);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_that_cannot_work_say_which() {
        assert_eq!(LlmPlugin::default().validate(), Ok(()));
        let invalid = |plugin: LlmPlugin| plugin.validate().expect_err("cannot work");
        assert_eq!(
            invalid(LlmPlugin {
                concurrency_per_endpoint: 0,
                ..default()
            }),
            LlmSettingsError::NoConcurrency
        );
        assert_eq!(
            invalid(LlmPlugin {
                concurrency_per_endpoint: usize::MAX,
                ..default()
            }),
            LlmSettingsError::TooMuchConcurrency(usize::MAX)
        );
        for deadline in [Duration::ZERO, Duration::MAX] {
            assert_eq!(
                invalid(LlmPlugin {
                    settings: LlmSettings {
                        deadline,
                        ..default()
                    },
                    ..default()
                }),
                LlmSettingsError::Deadline(deadline)
            );
        }
        let nested_empty = BackendChoice::Record {
            backend: Box::new(BackendChoice::Fleet(Vec::new())),
            cassette: "turns.jsonl".into(),
        };
        assert_eq!(
            invalid(LlmPlugin {
                backend: nested_empty,
                ..default()
            }),
            LlmSettingsError::EmptyFleet
        );
        #[cfg(feature = "http")]
        {
            let no_slots = BackendChoice::Fleet(vec![BackendChoice::OpenAi(OpenAiSettings {
                base_url: "http://player:hunter2@127.0.0.1:8080/v1".to_owned(),
                slots: Some(0),
                ..default()
            })]);
            let error = invalid(LlmPlugin {
                backend: no_slots,
                ..default()
            })
            .to_string();
            assert!(
                error.contains("slots") && !error.contains("hunter2"),
                "{error}"
            );
            for no_scheme in [
                BackendChoice::OpenAi(OpenAiSettings {
                    base_url: "127.0.0.1:8080/v1".to_owned(),
                    ..default()
                }),
                BackendChoice::Ollama(OllamaSettings {
                    base_url: "ftp://127.0.0.1:11434".to_owned(),
                    ..default()
                }),
            ] {
                let error = invalid(LlmPlugin {
                    backend: no_scheme,
                    ..default()
                })
                .to_string();
                assert!(error.contains("is not an http(s) URL"), "{error}");
            }
        }
    }
}
