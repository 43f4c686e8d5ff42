//! LLM settings as a file a game ships (`llm.ron` or `llm.json`), with the
//! environment taking precedence so a player or CI can point the game elsewhere.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

use super::{BackendChoice, LlmSettings, SamplingOptions};

/// The settings file. Every field is optional; what is missing keeps its default.
///
/// ```ron
/// (
///     provider: "ollama",
///     urls: ["http://127.0.0.1:11434"],
///     model: "llama3.2",
///     temperature: 0.7,
///     maxTokens: 200,
///     deadlineSeconds: 20.0,
///     concurrencyPerEndpoint: 2,
/// )
/// ```
///
/// API keys never go in the file: `apiKeyEnv` names the variable that holds one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmConfig {
    /// `openai`, `ollama` or `offline`.
    #[serde(default)]
    pub provider: Option<String>,
    /// Server addresses; several make a fleet.
    #[serde(default)]
    pub urls: Vec<String>,
    /// The model name.
    #[serde(default)]
    pub model: Option<String>,
    /// The environment variable holding the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Seed of the offline backend, and of servers that take one.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// The longest answer, in tokens.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Text that ends an answer.
    #[serde(default)]
    pub stop: Vec<String>,
    /// How long a request may take, in seconds.
    #[serde(default)]
    pub deadline_seconds: Option<f64>,
    /// Requests one endpoint answers at a time.
    #[serde(default)]
    pub concurrency_per_endpoint: Option<usize>,
    /// Tries after a failure.
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// Ollama's `keep_alive`.
    #[serde(default)]
    pub keep_alive: Option<String>,
}

/// Why a settings file could not be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LlmConfigError {
    /// The file could not be read.
    #[error("cannot read the LLM settings {file}: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid settings.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong, with the position.
        message: String,
    },
}

impl LlmConfig {
    /// Reads a settings file: RON for `.ron`, JSON otherwise.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, LlmConfigError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| LlmConfigError::Read {
            file: file.clone(),
            source,
        })?;
        let parsed = if path.extension().is_some_and(|e| e == "ron") {
            // Optional fields take plain values, without `Some(...)`.
            ron::Options::default()
                .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
                .from_str(&text)
                .map_err(|e| e.to_string())
        } else {
            serde_json::from_str(&text).map_err(|e| e.to_string())
        };
        parsed.map_err(|message| LlmConfigError::Invalid { file, message })
    }

    /// The settings this file describes. When `LOOM_LLM_URL`, `LOOM_LLM_PROVIDER`,
    /// `OLLAMA_HOST`, `LOOM_LLM_REPLAY` or `LOOM_LLM_RECORD` is set, the environment
    /// chooses the backend instead.
    pub fn settings(&self) -> LlmSettings {
        let defaults = LlmSettings::default();
        let environment = [
            "LOOM_LLM_URL",
            "LOOM_LLM_PROVIDER",
            "OLLAMA_HOST",
            "LOOM_LLM_REPLAY",
            "LOOM_LLM_RECORD",
        ]
        .iter()
        .any(|name| super::env_var(name).is_some());
        LlmSettings {
            backend: if environment {
                BackendChoice::FromEnv
            } else {
                self.backend()
            },
            deadline: self
                .deadline_seconds
                .filter(|s| s.is_finite() && *s > 0.0)
                .map_or(defaults.deadline, Duration::from_secs_f64),
            sampling: SamplingOptions {
                temperature: self.temperature.or(defaults.sampling.temperature),
                max_tokens: self.max_tokens.or(defaults.sampling.max_tokens),
                seed: self.seed,
                stop: self.stop.clone(),
            },
            concurrency_per_endpoint: self
                .concurrency_per_endpoint
                .unwrap_or(defaults.concurrency_per_endpoint),
            retry: super::RetryPolicy {
                max_retries: self.max_retries.unwrap_or(defaults.retry.max_retries),
                ..defaults.retry
            },
            breaker: defaults.breaker,
        }
    }

    fn backend(&self) -> BackendChoice {
        let provider = self.provider.as_deref().unwrap_or(if self.urls.is_empty() {
            "offline"
        } else {
            "openai"
        });
        let seed = self.seed.unwrap_or(0);
        let members: Vec<BackendChoice> = match provider.to_ascii_lowercase().as_str() {
            #[cfg(feature = "http")]
            "openai" => self
                .urls
                .iter()
                .map(|url| {
                    let defaults = super::OpenAiSettings::default();
                    BackendChoice::OpenAi(super::OpenAiSettings {
                        base_url: url.clone(),
                        model: self.model.clone().unwrap_or(defaults.model.clone()),
                        api_key: self
                            .api_key_env
                            .as_ref()
                            .and_then(|name| super::env_var(name))
                            .map(super::ApiKey::new),
                        ..defaults
                    })
                })
                .collect(),
            #[cfg(feature = "http")]
            "ollama" => {
                let urls = if self.urls.is_empty() {
                    vec![super::OllamaSettings::default().base_url]
                } else {
                    self.urls.clone()
                };
                urls.into_iter()
                    .map(|base_url| {
                        let defaults = super::OllamaSettings::default();
                        BackendChoice::Ollama(super::OllamaSettings {
                            base_url,
                            model: self.model.clone().unwrap_or(defaults.model.clone()),
                            keep_alive: self.keep_alive.clone(),
                            ..defaults
                        })
                    })
                    .collect()
            }
            "offline" => vec![BackendChoice::Offline { seed }],
            other => {
                bevy::log::error!(
                    "provider `{other}` in the LLM settings is not one of openai, ollama, offline; answering offline"
                );
                vec![BackendChoice::Offline { seed }]
            }
        };
        match members.len() {
            0 => BackendChoice::Offline { seed },
            1 => members
                .into_iter()
                .next()
                .unwrap_or(BackendChoice::Offline { seed }),
            _ => BackendChoice::Fleet(members),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        (dir, path)
    }

    #[test]
    fn a_ron_file_sets_sampling_schedule_and_a_fleet() {
        let (_dir, path) = write(
            "llm.ron",
            r#"(provider: "openai", urls: ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1"],
                model: "tiny", temperature: 0.2, maxTokens: 99, deadlineSeconds: 2.5,
                concurrencyPerEndpoint: 2, maxRetries: 0, stop: ["\n"])"#,
        );
        let settings = LlmConfig::load(&path).expect("valid settings").settings();
        assert_eq!(settings.sampling.temperature, Some(0.2));
        assert_eq!(settings.sampling.max_tokens, Some(99));
        assert_eq!(settings.sampling.stop, ["\n"]);
        assert_eq!(settings.deadline, Duration::from_millis(2500));
        assert_eq!(
            (
                settings.concurrency_per_endpoint,
                settings.retry.max_retries
            ),
            (2, 0)
        );
        let environment =
            std::env::var("LOOM_LLM_URL").is_ok() || std::env::var("LOOM_LLM_PROVIDER").is_ok();
        if !environment {
            assert!(
                matches!(&settings.backend, BackendChoice::Fleet(members) if members.len() == 2)
            );
        }
    }

    #[test]
    fn a_json_file_without_urls_answers_offline_with_its_seed() {
        let (_dir, path) = write("llm.json", r#"{ "seed": 42 }"#);
        let config = LlmConfig::load(&path).expect("valid settings");
        assert!(matches!(
            config.backend(),
            BackendChoice::Offline { seed: 42 }
        ));
    }

    #[test]
    fn a_misspelt_field_is_named() {
        let (_dir, path) = write("llm.json", r#"{ "temprature": 0.5 }"#);
        let error = LlmConfig::load(&path)
            .expect_err("invalid settings")
            .to_string();
        assert!(
            error.contains("llm.json") && error.contains("unknown field `temprature`"),
            "{error}"
        );
    }
}
