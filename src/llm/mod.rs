//! The LLM bridge: backends behind one trait, a background runtime that never
//! blocks a frame, and [`LlmResponse`] messages with the outcomes.
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
pub use offline::OfflineBackend;
#[cfg(feature = "http")]
pub use ollama::{OllamaBackend, OllamaSettings};
#[cfg(feature = "http")]
pub use openai::{ApiKey, OpenAiBackend, OpenAiSettings, SchemaFormat};
pub use profile::ServerLimits;
pub use request::{
    ChatMessage, LlmDelta, LlmError, LlmReply, LlmRequest, LlmResponse, OfferedChoice,
    OfferedChoices, Priority, RequestId, RequestIntent, SamplingOptions, TokenUsage,
};
pub use scheduler::{BreakerSettings, RetryPolicy};
pub use stats::LlmStats;

use crate::LoomSystems;

/// Which backend answers requests.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum BackendChoice {
    /// From the environment (feature `http`): `LOOM_LLM_PROVIDER=ollama` talks to
    /// Ollama at `OLLAMA_HOST`; otherwise an OpenAI-compatible server when `LOOM_LLM_URL`
    /// is set; otherwise offline with seed 0. `LOOM_LLM_MODEL` and `LOOM_LLM_API_KEY`
    /// complete the settings. `LOOM_LLM_RECORD=FILE` records to a cassette;
    /// `LOOM_LLM_REPLAY=FILE` answers from one.
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
    /// Another choice, with every answered request appended to a cassette.
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
    /// The backend this choice stands for. A server that cannot be set up falls back
    /// to the offline backend, with an error in the log saying why.
    pub fn resolve(&self) -> Arc<dyn LlmBackend> {
        match self {
            Self::FromEnv => {
                if let Some(cassette) = env_var("LOOM_LLM_REPLAY") {
                    return Self::Replay {
                        cassette: cassette.into(),
                    }
                    .resolve();
                }
                let backend = provider_from_env();
                match env_var("LOOM_LLM_RECORD") {
                    Some(cassette) => Self::Record {
                        backend: Box::new(Self::Custom(backend)),
                        cassette: cassette.into(),
                    }
                    .resolve(),
                    None => backend,
                }
            }
            Self::Offline { seed } => Arc::new(OfflineBackend::new(*seed)),
            #[cfg(feature = "http")]
            Self::OpenAi(settings) => or_offline(OpenAiBackend::new(settings.clone())),
            #[cfg(feature = "http")]
            Self::Ollama(settings) => or_offline(OllamaBackend::new(settings.clone())),
            Self::Record { backend, cassette } => {
                match RecordingBackend::new(backend.resolve(), cassette) {
                    Ok(recording) => Arc::new(recording),
                    Err(error) => Arc::new(cassette::UnavailableBackend(error)),
                }
            }
            Self::Replay { cassette } => match ReplayBackend::open(cassette) {
                Ok(replay) => Arc::new(replay),
                // A replayed run must not quietly ask something else.
                Err(error) => Arc::new(cassette::UnavailableBackend(error)),
            },
            Self::Fleet(members) => match members.first() {
                Some(first) => first.resolve(),
                None => Arc::new(OfflineBackend::new(0)),
            },
            Self::Custom(backend) => Arc::clone(backend),
        }
    }

    /// The endpoints this choice stands for: each member of a fleet (or of the fleet
    /// `LOOM_LLM_URL` lists, comma-separated), otherwise the one backend.
    pub fn endpoints(&self) -> Vec<Arc<dyn LlmBackend>> {
        match self {
            Self::Fleet(members) if !members.is_empty() => {
                members.iter().flat_map(Self::endpoints).collect()
            }
            #[cfg(feature = "http")]
            Self::FromEnv if env_fleet().len() > 1 => {
                env_fleet().iter().flat_map(Self::endpoints).collect()
            }
            _ => vec![self.resolve()],
        }
    }
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

/// An environment variable's value, when it is set and not blank.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// The backend `LOOM_LLM_PROVIDER`, `LOOM_LLM_URL` and `OLLAMA_HOST` choose.
#[cfg(feature = "http")]
fn provider_from_env() -> Arc<dyn LlmBackend> {
    let provider = env_var("LOOM_LLM_PROVIDER").unwrap_or_default();
    match provider.trim().to_ascii_lowercase().as_str() {
        "ollama" => BackendChoice::Ollama(OllamaSettings::from_env()).resolve(),
        "" | "openai" => match OpenAiSettings::from_env() {
            Some(settings) => BackendChoice::OpenAi(settings).resolve(),
            None => Arc::new(OfflineBackend::new(0)),
        },
        "offline" => Arc::new(OfflineBackend::new(0)),
        other => {
            error!(
                "LOOM_LLM_PROVIDER=`{other}` is not a provider: use `openai`, `ollama` or `offline`; answering offline"
            );
            Arc::new(OfflineBackend::new(0))
        }
    }
}

/// One OpenAI-compatible endpoint per comma-separated `LOOM_LLM_URL`, when no
/// cassette or other provider is asked for.
#[cfg(feature = "http")]
fn env_fleet() -> Vec<BackendChoice> {
    let plain = env_var("LOOM_LLM_REPLAY").is_none()
        && env_var("LOOM_LLM_RECORD").is_none()
        && env_var("LOOM_LLM_PROVIDER").is_none_or(|p| p.trim().eq_ignore_ascii_case("openai"));
    let Some(settings) = OpenAiSettings::from_env().filter(|_| plain) else {
        return Vec::new();
    };
    settings
        .base_url
        .split(',')
        .map(|url| {
            BackendChoice::OpenAi(OpenAiSettings {
                base_url: url.trim().to_owned(),
                ..settings.clone()
            })
        })
        .collect()
}

/// Without HTTP, only the offline backend answers.
#[cfg(not(feature = "http"))]
fn provider_from_env() -> Arc<dyn LlmBackend> {
    Arc::new(OfflineBackend::new(0))
}

/// How the bridge talks to a model.
///
/// The plugin copies these into a resource. Changing `deadline` or `sampling` there
/// applies to requests submitted afterwards; the backend is chosen once, at startup.
#[derive(Resource, Debug, Clone)]
pub struct LlmSettings {
    /// Which backend answers.
    pub backend: BackendChoice,
    /// How long a request may take before it ends as [`LlmError::TimedOut`].
    pub deadline: Duration,
    /// Sampling defaults for requests that leave them unset.
    pub sampling: SamplingOptions,
    /// How many requests one endpoint answers at a time; the rest wait in the queue.
    pub concurrency_per_endpoint: usize,
    /// How failed requests are tried again.
    pub retry: RetryPolicy,
    /// When a failing endpoint is skipped, and for how long.
    pub breaker: BreakerSettings,
}

impl Default for LlmSettings {
    fn default() -> Self {
        Self {
            backend: BackendChoice::FromEnv,
            deadline: Duration::from_secs(60),
            sampling: SamplingOptions {
                temperature: Some(0.7),
                max_tokens: Some(256),
                ..default()
            },
            concurrency_per_endpoint: 4,
            retry: RetryPolicy::default(),
            breaker: BreakerSettings::default(),
        }
    }
}

/// Starts the [`LlmBridge`] and writes [`LlmResponse`] messages in [`LoomSystems::Receive`].
#[derive(Debug, Clone, Default)]
pub struct LlmPlugin {
    /// The backend, deadline and sampling defaults.
    pub settings: LlmSettings,
}

impl Plugin for LlmPlugin {
    fn build(&self, app: &mut App) {
        let bridge = LlmBridge::start(self.settings.backend.endpoints(), &self.settings);
        info!("bevy_loom answers with {}", bridge.backend_description());
        crate::configure_loom_sets(app);
        app.insert_resource(self.settings.clone())
            .insert_resource(bridge)
            .init_resource::<LlmStats>()
            .add_message::<LlmResponse>()
            .add_message::<LlmDelta>()
            .add_systems(
                Update,
                (
                    apply_settings
                        .run_if(resource_changed::<LlmSettings>)
                        .before(LoomSystems::Think),
                    receive_responses.in_set(LoomSystems::Receive),
                ),
            )
            // Requests submitted after `Receive` (narration, the game's own) leave this frame.
            .add_systems(Last, flush_requests);
    }
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
