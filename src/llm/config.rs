//! LLM settings as a file a game ships (`llm.ron` or `llm.json`), with the
//! environment taking precedence so a player or CI can point the game elsewhere.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

use super::{
    BackendChoice, LONGEST_DEADLINE, LlmEnvironment, LlmPlugin, LlmSettings, MOST_CONCURRENCY,
    SamplingOptions,
};

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
/// API keys never go in the file: `apiKeyEnv` names the variable that holds one, and
/// only a name that looks like a key's (ending in `_API_KEY` or `_TOKEN`) is read, so
/// a file cannot send any other variable to a server. Its `Debug` hides credentials in
/// the URLs.
#[derive(Clone, Default, PartialEq, Deserialize)]
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
    /// The environment variable holding the API key: a name ending in `_API_KEY` or
    /// `_TOKEN`, such as `OPENAI_API_KEY`.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The servers' slots (llama.cpp's `--parallel`), for servers that take `id_slot`;
    /// see [`OpenAiSettings::slots`](super::OpenAiSettings::slots).
    #[serde(default)]
    pub slots: Option<u32>,
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
    /// How long a request may take, in seconds: more than 0, at most 3600.
    #[serde(default)]
    pub deadline_seconds: Option<f64>,
    /// Requests one endpoint answers at a time: 1 or more, at most
    /// [`MOST_CONCURRENCY`](super::MOST_CONCURRENCY).
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
    /// The file is not valid settings, or settings that cannot work.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong, with the position or the field.
        message: String,
    },
    /// Settings (made in code, not read from a file) that cannot work.
    #[error("the LLM settings cannot work: {0}")]
    Unusable(String),
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let urls: Vec<String> = self
            .urls
            .iter()
            .map(|url| super::without_credentials(url))
            .collect();
        f.debug_struct("LlmConfig")
            .field("provider", &self.provider)
            .field("urls", &urls)
            .field("model", &self.model)
            .field("api_key_env", &self.api_key_env)
            .field("slots", &self.slots)
            .field("seed", &self.seed)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("stop", &self.stop)
            .field("deadline_seconds", &self.deadline_seconds)
            .field("concurrency_per_endpoint", &self.concurrency_per_endpoint)
            .field("max_retries", &self.max_retries)
            .field("keep_alive", &self.keep_alive)
            .finish()
    }
}

impl LlmConfig {
    /// Reads a settings file: RON for `.ron`, JSON otherwise. Settings that cannot
    /// work (see [`plugin`](Self::plugin)) are an error naming the field.
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
        let config: Self = parsed.map_err(|message| LlmConfigError::Invalid {
            file: file.clone(),
            message,
        })?;
        config
            .check()
            .map_err(|message| LlmConfigError::Invalid { file, message })?;
        Ok(config)
    }

    /// What in these settings cannot work, said in the file's field names: an unknown
    /// provider, a server provider without `urls` or with a blank one, no concurrency,
    /// no slots, a deadline of 0 or longer than an hour, an `apiKeyEnv` that does not
    /// name a key.
    fn check(&self) -> Result<(), String> {
        let provider = self.provider.as_deref().map(str::to_ascii_lowercase);
        match provider.as_deref() {
            None | Some("offline" | "ollama") => {}
            Some("openai") if self.urls.is_empty() => {
                return Err("provider `openai` needs at least one server in `urls`".to_owned());
            }
            Some("openai") => {}
            Some(other) => {
                return Err(format!(
                    "`provider` is `{other}`, which is not one of `openai`, `ollama`, `offline`"
                ));
            }
        }
        if self.urls.iter().any(|url| url.trim().is_empty()) {
            return Err("`urls` has a blank entry: give each server's address".to_owned());
        }
        match self.concurrency_per_endpoint {
            Some(0) => {
                return Err(
                    "`concurrencyPerEndpoint` is 0, so no request could ever be sent: use 1 or more"
                        .to_owned(),
                );
            }
            Some(concurrency) if concurrency > MOST_CONCURRENCY => {
                return Err(format!(
                    "`concurrencyPerEndpoint` is {concurrency}, more than any server answers at a \
                     time: use at most {MOST_CONCURRENCY}"
                ));
            }
            _ => {}
        }
        if self.slots == Some(0) {
            return Err(
                "`slots` is 0: give the servers' slot count (llama.cpp's `--parallel`), or leave it out"
                    .to_owned(),
            );
        }
        if let Some(seconds) = self.deadline_seconds
            && !(seconds > 0.0 && seconds <= LONGEST_DEADLINE.as_secs_f64())
        {
            return Err(format!(
                "`deadlineSeconds` is {seconds}: give more than 0 and at most {}",
                LONGEST_DEADLINE.as_secs()
            ));
        }
        if let Some(name) = &self.api_key_env
            && !names_a_key(name)
        {
            return Err(format!(
                "`apiKeyEnv` is `{name}`, which does not look like an API key's variable: its \
                 value is sent to the server, so only a name in capitals ending in `_API_KEY` \
                 or `_TOKEN` (such as `OPENAI_API_KEY`) is read"
            ));
        }
        Ok(())
    }

    /// The plugin this file describes, with the process's environment choosing the
    /// backend where it names one; see [`plugin_in`](Self::plugin_in).
    pub fn plugin(&self) -> Result<LlmPlugin, LlmConfigError> {
        self.plugin_in(&LlmEnvironment::process())
    }

    /// The plugin this file describes, in `environment`. The environment chooses the
    /// backend only where it names one of its own (`LOOM_LLM_URL`, `LOOM_LLM_REPLAY`,
    /// or `LOOM_LLM_PROVIDER` set to `ollama` or `offline`, as
    /// [`BackendChoice::from_environment`] reads them); `LOOM_LLM_RECORD` alone
    /// records this file's backend, and `OLLAMA_HOST` alone changes nothing.
    pub fn plugin_in(&self, environment: &LlmEnvironment) -> Result<LlmPlugin, LlmConfigError> {
        self.check().map_err(LlmConfigError::Unusable)?;
        let defaults = LlmPlugin::default();
        let settings = &defaults.settings;
        Ok(LlmPlugin {
            backend: BackendChoice::from_environment_or(environment, self.backend(environment)),
            settings: LlmSettings {
                deadline: self
                    .deadline_seconds
                    .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
                    .unwrap_or(settings.deadline),
                sampling: SamplingOptions {
                    temperature: self.temperature.or(settings.sampling.temperature),
                    max_tokens: self.max_tokens.or(settings.sampling.max_tokens),
                    seed: self.seed,
                    stop: self.stop.clone(),
                },
            },
            concurrency_per_endpoint: self
                .concurrency_per_endpoint
                .unwrap_or(defaults.concurrency_per_endpoint),
            retry: super::RetryPolicy {
                max_retries: self.max_retries.unwrap_or(defaults.retry.max_retries),
                ..defaults.retry
            },
            breaker: defaults.breaker,
        })
    }

    #[cfg_attr(not(feature = "http"), allow(unused_variables))]
    fn backend(&self, environment: &LlmEnvironment) -> BackendChoice {
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
                            .as_deref()
                            .filter(|name| names_a_key(name))
                            .and_then(|name| environment.var(name))
                            .map(super::ApiKey::new),
                        slots: self.slots.filter(|&slots| slots > 0),
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
            // `check` refused any other provider.
            _ => vec![BackendChoice::Offline { seed }],
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

/// Whether an environment variable's name looks like an API key's: capitals, digits
/// and underscores, ending in `_API_KEY` or `_TOKEN`.
fn names_a_key(name: &str) -> bool {
    let shaped = name
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    shaped
        && ["_API_KEY", "_TOKEN"]
            .iter()
            .any(|suffix| name.len() > suffix.len() && name.ends_with(suffix))
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

    /// Only these variables, whatever the machine running the tests has set.
    fn environment(vars: &[(&str, &str)]) -> LlmEnvironment {
        LlmEnvironment::from_vars(vars.iter().copied())
    }

    fn json(text: &str) -> LlmConfig {
        let (_dir, path) = write("llm.json", text);
        LlmConfig::load(&path).expect("valid settings")
    }

    #[test]
    fn a_ron_file_sets_sampling_schedule_and_a_fleet() {
        let (_dir, path) = write(
            "llm.ron",
            r#"(provider: "openai", urls: ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1"],
                model: "tiny", temperature: 0.2, maxTokens: 99, deadlineSeconds: 2.5,
                concurrencyPerEndpoint: 2, maxRetries: 0, stop: ["\n"])"#,
        );
        let plugin = LlmConfig::load(&path)
            .expect("valid settings")
            .plugin_in(&environment(&[]))
            .expect("settings that work");
        assert_eq!(plugin.settings.sampling.temperature, Some(0.2));
        assert_eq!(plugin.settings.sampling.max_tokens, Some(99));
        assert_eq!(plugin.settings.sampling.stop, ["\n"]);
        assert_eq!(plugin.settings.deadline, Duration::from_millis(2500));
        assert_eq!(
            (plugin.concurrency_per_endpoint, plugin.retry.max_retries),
            (2, 0)
        );
        assert!(
            matches!(&plugin.backend, BackendChoice::Fleet(members) if members.len() == 2),
            "{:?}",
            plugin.backend
        );
    }

    #[test]
    fn a_json_file_without_urls_answers_offline_with_its_seed() {
        let settings = json(r#"{ "seed": 42 }"#)
            .plugin_in(&environment(&[]))
            .expect("settings that work");
        assert!(matches!(
            settings.backend,
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

    #[test]
    fn settings_that_cannot_work_are_an_error_naming_the_field() {
        for (text, field) in [
            (
                r#"{ "concurrencyPerEndpoint": 0 }"#,
                "concurrencyPerEndpoint",
            ),
            (
                r#"{ "concurrencyPerEndpoint": 3000000000000000000 }"#,
                "concurrencyPerEndpoint",
            ),
            (r#"{ "deadlineSeconds": 0 }"#, "deadlineSeconds"),
            (r#"{ "deadlineSeconds": 1e30 }"#, "deadlineSeconds"),
            (r#"{ "deadlineSeconds": -1 }"#, "deadlineSeconds"),
            (
                r#"{ "urls": ["http://127.0.0.1:8080/v1"], "slots": 0 }"#,
                "slots",
            ),
            (r#"{ "provider": "openai" }"#, "urls"),
            (r#"{ "urls": [" "] }"#, "urls"),
            (r#"{ "provider": "claude" }"#, "provider"),
            (r#"{ "apiKeyEnv": "HOME" }"#, "apiKeyEnv"),
        ] {
            let (_dir, path) = write("llm.json", text);
            let error = LlmConfig::load(&path)
                .expect_err("settings that cannot work")
                .to_string();
            assert!(
                error.contains("llm.json") && error.contains(&format!("`{field}`")),
                "{text}: {error}"
            );
            let built_in_code: LlmConfig = serde_json::from_str(text).expect("well-formed");
            assert!(
                matches!(
                    built_in_code.plugin_in(&environment(&[])),
                    Err(LlmConfigError::Unusable(_))
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn only_a_variable_named_like_a_key_is_read_as_the_key() {
        let vars = environment(&[("GAME_API_KEY", "sk-game"), ("HOME", "/home/player")]);
        let settings =
            json(r#"{ "urls": ["http://127.0.0.1:8080/v1"], "apiKeyEnv": "GAME_API_KEY" }"#)
                .plugin_in(&vars)
                .expect("settings that work");
        assert!(
            matches!(&settings.backend, BackendChoice::OpenAi(server)
                if server.api_key == Some(super::super::ApiKey::new("sk-game"))),
            "{:?}",
            settings.backend
        );
        let config = LlmConfig {
            urls: vec!["http://127.0.0.1:8080/v1".to_owned()],
            api_key_env: Some("HOME".to_owned()),
            ..LlmConfig::default()
        };
        let error = config.plugin_in(&vars).expect_err("HOME is no key");
        assert!(error.to_string().contains("_API_KEY"), "{error}");
        for name in ["GITHUB_TOKEN", "OPENAI_API_KEY", "LLM2_API_KEY"] {
            assert!(names_a_key(name), "{name}");
        }
        for name in [
            "HOME",
            "_TOKEN",
            "aws_token",
            "API_KEY",
            "PATH",
            "MY_API_KEY_FILE",
        ] {
            assert!(!names_a_key(name), "{name}");
        }
    }

    #[test]
    fn the_environment_replaces_the_files_backend_only_when_it_names_one() {
        let config = json(r#"{ "urls": ["http://127.0.0.1:8080/v1"], "model": "tiny" }"#);
        let backend = |vars: &[(&str, &str)]| {
            config
                .plugin_in(&environment(vars))
                .expect("settings that work")
                .backend
        };
        let files = |choice: &BackendChoice| {
            matches!(choice, BackendChoice::OpenAi(server)
                if server.base_url == "http://127.0.0.1:8080/v1" && server.model == "tiny")
        };
        assert!(files(&backend(&[])));
        let choice = backend(&[("OLLAMA_HOST", "127.0.0.1:11434")]);
        assert!(files(&choice), "OLLAMA_HOST alone: {choice:?}");
        let choice = backend(&[("LOOM_LLM_RECORD", "turns.jsonl")]);
        assert!(
            matches!(&choice, BackendChoice::Record { backend, cassette }
                if files(backend) && cassette.as_os_str() == "turns.jsonl"),
            "LOOM_LLM_RECORD alone records the file's backend: {choice:?}"
        );
        let choice = backend(&[("LOOM_LLM_URL", "http://127.0.0.1:9000/v1")]);
        assert!(
            matches!(&choice, BackendChoice::OpenAi(server) if server.base_url == "http://127.0.0.1:9000/v1"),
            "{choice:?}"
        );
        let choice = backend(&[
            ("LOOM_LLM_PROVIDER", "ollama"),
            ("OLLAMA_HOST", "127.0.0.1:11434"),
        ]);
        assert!(
            matches!(&choice, BackendChoice::Ollama(server) if server.base_url == "http://127.0.0.1:11434"),
            "{choice:?}"
        );
        let choice = backend(&[("LOOM_LLM_REPLAY", "turns.jsonl")]);
        assert!(matches!(choice, BackendChoice::Replay { .. }), "{choice:?}");
    }

    #[test]
    fn credentials_in_the_urls_never_show() {
        let config = json(r#"{ "urls": ["http://player:hunter2@127.0.0.1:8080/v1"] }"#);
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("hunter2") && shown.contains("127.0.0.1:8080"),
            "{shown}"
        );
    }
}
