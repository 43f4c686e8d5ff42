//! The environment variables that choose a backend (`LOOM_LLM_*`, `OLLAMA_HOST`), as
//! an input: the process's own by default, or a fixed set that a test or a launcher
//! gives, so that what the machine happens to have set never leaks in.

use std::collections::HashMap;
use std::sync::Arc;

use bevy::log::error;

use super::{BackendChoice, LlmSettingsError};

/// Where the bridge reads its environment variables from.
///
/// [`BackendChoice::FromEnv`] and [`LlmConfig::plugin`](super::LlmConfig::plugin)
/// read [`process`](Self::process); [`BackendChoice::from_environment`] and
/// [`LlmConfig::plugin_in`](super::LlmConfig::plugin_in) take any, such as
/// [`from_vars`](Self::from_vars) in a test.
#[derive(Clone)]
pub struct LlmEnvironment {
    lookup: Arc<VariableLookup>,
}

/// A variable's value by its name.
type VariableLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

impl LlmEnvironment {
    /// The process's environment, read when a variable is asked for.
    pub fn process() -> Self {
        Self {
            lookup: Arc::new(|name| std::env::var(name).ok()),
        }
    }

    /// Only these variables: nothing of the process's environment shows through.
    pub fn from_vars<K: Into<String>, V: Into<String>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let vars: HashMap<String, String> = vars
            .into_iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect();
        Self {
            lookup: Arc::new(move |name| vars.get(name).cloned()),
        }
    }

    /// A variable's value, when it is set and not blank.
    pub fn var(&self, name: &str) -> Option<String> {
        (self.lookup)(name).filter(|value| !value.trim().is_empty())
    }
}

impl std::fmt::Debug for LlmEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Its values may hold keys.
        f.write_str("LlmEnvironment(..)")
    }
}

impl BackendChoice {
    /// What [`FromEnv`](Self::FromEnv) stands for in `environment`: a cassette when
    /// `LOOM_LLM_REPLAY` names one; otherwise the backend the environment names (see
    /// [`FromEnv`](Self::FromEnv)), or offline with seed 0 when it names none;
    /// recorded when `LOOM_LLM_RECORD` names a cassette.
    pub fn from_environment(environment: &LlmEnvironment) -> Self {
        Self::from_environment_or(environment, Self::Offline { seed: 0 })
    }

    /// Like [`from_environment`](Self::from_environment), with `otherwise` (a settings
    /// file's backend) where the environment names no backend of its own.
    pub(super) fn from_environment_or(environment: &LlmEnvironment, otherwise: Self) -> Self {
        if let Some(cassette) = environment.var("LOOM_LLM_REPLAY") {
            return Self::Replay {
                cassette: cassette.into(),
            };
        }
        let backend = named_backend(environment).unwrap_or(otherwise);
        match environment.var("LOOM_LLM_RECORD") {
            Some(cassette) => Self::Record {
                backend: Box::new(backend),
                cassette: cassette.into(),
            },
            None => backend,
        }
    }
}

/// The backend the environment names on its own: `LOOM_LLM_PROVIDER=offline`,
/// `LOOM_LLM_PROVIDER=ollama`, or a server at `LOOM_LLM_URL` (a fleet when it lists
/// several, comma-separated). `OLLAMA_HOST` alone names none: Ollama's own tools
/// read it too, so it only says where Ollama is once Ollama is chosen.
fn named_backend(environment: &LlmEnvironment) -> Option<BackendChoice> {
    let provider = environment
        .var("LOOM_LLM_PROVIDER")
        .map(|provider| provider.trim().to_ascii_lowercase());
    match provider.as_deref() {
        Some("offline") => Some(BackendChoice::Offline { seed: 0 }),
        #[cfg(feature = "http")]
        Some("ollama") => {
            let settings = super::OllamaSettings::from_environment(environment);
            fleet(&settings.base_url, |base_url| {
                BackendChoice::Ollama(super::OllamaSettings {
                    base_url,
                    ..settings.clone()
                })
            })
        }
        #[cfg(feature = "http")]
        None | Some("openai") => {
            let settings = super::OpenAiSettings::from_environment(environment)?;
            fleet(&settings.base_url, |base_url| {
                BackendChoice::OpenAi(super::OpenAiSettings {
                    base_url,
                    ..settings.clone()
                })
            })
        }
        #[cfg(not(feature = "http"))]
        None | Some("openai" | "ollama") => None,
        Some(other) => {
            let problem = LlmSettingsError::UnknownProvider(other.to_owned());
            error!("{problem}; it is ignored");
            None
        }
    }
}

/// What is wrong with the variables that name a choice rather than a place: a
/// `LOOM_LLM_PROVIDER` that names no provider, a `LOOM_LLM_SCHEMA` no format, a
/// `LOOM_LLM_SLOTS` no count. Read as they are, each would fall back to its default
/// without a word.
pub(super) fn environment_problem(environment: &LlmEnvironment) -> Option<LlmSettingsError> {
    if let Some(provider) = environment.var("LOOM_LLM_PROVIDER") {
        let known = ["openai", "ollama", "offline"];
        let named = provider.trim().to_ascii_lowercase();
        if !known.contains(&named.as_str()) {
            return Some(LlmSettingsError::UnknownProvider(named));
        }
    }
    #[cfg(feature = "http")]
    if let Some(schema) = environment.var("LOOM_LLM_SCHEMA")
        && super::SchemaFormat::parse(&schema).is_none()
    {
        return Some(LlmSettingsError::UnknownSchema(schema.trim().to_owned()));
    }
    let slots = environment.var("LOOM_LLM_SLOTS")?;
    let count = slots.trim().parse::<u32>().ok().filter(|&count| count > 0);
    count
        .is_none()
        .then(|| LlmSettingsError::NotASlotCount(slots.trim().to_owned()))
}

/// One member per comma-separated address; a fleet when there are several.
#[cfg(feature = "http")]
fn fleet(addresses: &str, member: impl Fn(String) -> BackendChoice) -> Option<BackendChoice> {
    let mut members: Vec<BackendChoice> = addresses
        .split(',')
        .map(str::trim)
        .filter(|address| !address.is_empty())
        .map(|address| member(address.to_owned()))
        .collect();
    match members.len() {
        0 => None,
        1 => members.pop(),
        _ => Some(BackendChoice::Fleet(members)),
    }
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    #[test]
    fn a_provider_that_is_none_is_a_settings_problem() {
        let provider = |name: &str| {
            environment_problem(&LlmEnvironment::from_vars([("LOOM_LLM_PROVIDER", name)]))
        };
        assert_eq!(
            provider("Olama"),
            Some(LlmSettingsError::UnknownProvider("olama".to_owned()))
        );
        for known in ["openai", "Ollama", " offline "] {
            assert_eq!(provider(known), None, "{known}");
        }
        assert_eq!(
            environment_problem(&LlmEnvironment::from_vars::<&str, &str>([])),
            None
        );
    }

    #[test]
    fn a_schema_or_slot_count_that_is_none_is_a_settings_problem() {
        let problem = |name: &str, value: &str| {
            environment_problem(&LlmEnvironment::from_vars([(name, value)]))
        };
        assert_eq!(
            problem("LOOM_LLM_SCHEMA", "json-object"),
            Some(LlmSettingsError::UnknownSchema("json-object".to_owned()))
        );
        for slots in ["four", "0", "-2"] {
            let expected = LlmSettingsError::NotASlotCount(slots.to_owned());
            assert_eq!(problem("LOOM_LLM_SLOTS", slots), Some(expected), "{slots}");
        }
        assert_eq!(problem("LOOM_LLM_SCHEMA", " JSON_object "), None);
        assert_eq!(problem("LOOM_LLM_SLOTS", " 4 "), None);
        let said = LlmSettingsError::UnknownSchema("json-object".to_owned()).to_string();
        assert!(said.contains("json_schema, json_object or off"), "{said}");
    }

    fn described(choice: &BackendChoice) -> Vec<String> {
        choice.endpoints().iter().map(|e| e.describe()).collect()
    }

    #[test]
    fn nothing_set_answers_offline() {
        let choice = BackendChoice::from_environment(&LlmEnvironment::from_vars(
            std::iter::empty::<(String, String)>(),
        ));
        assert!(matches!(choice, BackendChoice::Offline { seed: 0 }));
    }

    #[test]
    fn a_comma_separated_url_is_a_fleet_of_separate_servers_also_when_recorded() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let cassette = dir.path().join("fleet.jsonl");
        let environment = LlmEnvironment::from_vars([
            (
                "LOOM_LLM_URL",
                "http://127.0.0.1:8080/v1, http://127.0.0.1:8081/v1",
            ),
            ("LOOM_LLM_RECORD", &cassette.to_string_lossy()),
        ]);
        let choice = BackendChoice::from_environment(&environment);
        let BackendChoice::Record { backend, .. } = &choice else {
            panic!("recorded: {choice:?}");
        };
        assert!(
            matches!(&**backend, BackendChoice::Fleet(members) if members.len() == 2),
            "{backend:?}"
        );
        let endpoints = described(&choice);
        assert_eq!(endpoints.len(), 2, "{endpoints:?}");
        for (endpoint, port) in endpoints.iter().zip(["8080", "8081"]) {
            assert!(
                endpoint.starts_with(&format!(
                    "OpenAI-compatible server at http://127.0.0.1:{port}/v1 "
                )) && endpoint.ends_with(&format!("recorded to {}", cassette.display())),
                "{endpoint}"
            );
        }
    }

    #[test]
    fn a_fleet_keeps_every_member() {
        let fleet = BackendChoice::Fleet(vec![
            BackendChoice::Offline { seed: 1 },
            BackendChoice::Fleet(vec![
                BackendChoice::Offline { seed: 2 },
                BackendChoice::Offline { seed: 3 },
            ]),
        ]);
        assert_eq!(fleet.endpoints().len(), 3);
        let dir = tempfile::tempdir().expect("a temporary folder");
        let recorded = BackendChoice::Record {
            backend: Box::new(fleet),
            cassette: dir.path().join("fleet.jsonl"),
        };
        assert_eq!(recorded.endpoints().len(), 3);
    }

    #[test]
    fn ollama_is_chosen_only_by_the_provider() {
        let host_only = LlmEnvironment::from_vars([("OLLAMA_HOST", "127.0.0.1:11500")]);
        assert!(matches!(
            BackendChoice::from_environment_or(&host_only, BackendChoice::Offline { seed: 7 }),
            BackendChoice::Offline { seed: 7 }
        ));
        let chosen = LlmEnvironment::from_vars([
            ("OLLAMA_HOST", "127.0.0.1:11500"),
            ("LOOM_LLM_PROVIDER", "ollama"),
        ]);
        let choice = BackendChoice::from_environment(&chosen);
        assert!(
            matches!(&choice, BackendChoice::Ollama(settings) if settings.base_url == "http://127.0.0.1:11500"),
            "{choice:?}"
        );
    }
}
