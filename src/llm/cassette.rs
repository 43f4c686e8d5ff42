//! Record and replay: cassettes of requests and answers, so a game's CI can run an
//! LLM-driven scene with no server and get the same transcript every time.
//!
//! A cassette is a JSONL file: one line per answered request, keyed by a stable hash
//! of what the model sees (model, messages, schema, sampling, tools offered).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{
    ChatMessage, DeltaSink, LlmBackend, LlmError, LlmFuture, LlmReply, LlmRequest, SamplingOptions,
    TokenUsage, ToolCall, ToolSpec,
};

/// What a request's key is made of.
#[derive(Serialize)]
struct KeyedRequest<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    schema: &'a Option<Arc<Value>>,
    sampling: &'a SamplingOptions,
    /// Left out when none are offered, so the keys of requests without tools stay
    /// those recorded before tools were keyed.
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a [ToolSpec]>,
}

/// One line of a cassette.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    key: String,
    model: String,
    messages: Vec<ChatMessage>,
    #[serde(default)]
    schema: Option<Arc<Value>>,
    #[serde(default)]
    sampling: SamplingOptions,
    text: String,
    #[serde(default)]
    usage: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    cut_off: bool,
}

/// The stable key of a request to `model`: a SHA-256 of its model, messages, schema,
/// sampling and tools offered, in hex. Deadlines, streaming and intent do not change it.
pub fn request_key(model: &str, request: &LlmRequest) -> String {
    let keyed = KeyedRequest {
        model,
        messages: &request.messages,
        schema: &request.schema,
        sampling: &request.sampling,
        tools: request.tools.as_deref().map(Vec::as_slice),
    };
    // Serializing plain structs and serde_json maps is deterministic.
    let bytes = serde_json::to_vec(&keyed).unwrap_or_default();
    Sha256::digest(&bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Passes requests to another backend and appends each answered one to a cassette.
pub struct RecordingBackend {
    inner: Arc<dyn LlmBackend>,
    file: Arc<Mutex<std::fs::File>>,
    path: PathBuf,
}

impl RecordingBackend {
    /// Records what `inner` answers into the cassette at `path`, appending to it.
    pub fn new(inner: Arc<dyn LlmBackend>, path: impl Into<PathBuf>) -> Result<Self, LlmError> {
        let mut recording = Self::each(vec![inner], path)?;
        recording
            .pop()
            .ok_or_else(|| LlmError::Setup("a recording needs a backend to record".to_owned()))
    }

    /// Records what each of `endpoints` (a fleet's servers) answers into the one
    /// cassette at `path`, a whole line at a time.
    pub fn each(
        endpoints: Vec<Arc<dyn LlmBackend>>,
        path: impl Into<PathBuf>,
    ) -> Result<Vec<Self>, LlmError> {
        let path = path.into();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|error| {
                LlmError::Setup(format!(
                    "cannot open the cassette {}: {error}",
                    path.display()
                ))
            })?;
        let file = Arc::new(Mutex::new(file));
        Ok(endpoints
            .into_iter()
            .map(|inner| Self {
                inner,
                file: Arc::clone(&file),
                path: path.clone(),
            })
            .collect())
    }
}

impl LlmBackend for RecordingBackend {
    fn limits(&self) -> super::LimitsFuture {
        self.inner.limits()
    }

    fn describe(&self) -> String {
        format!(
            "{}, recorded to {}",
            self.inner.describe(),
            self.path.display()
        )
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn complete(&self, request: &LlmRequest, deltas: DeltaSink) -> LlmFuture {
        let model = self.inner.model().to_owned();
        let key = request_key(&model, request);
        let (messages, schema, sampling) = (
            Vec::clone(&request.messages),
            request.schema.clone(),
            request.sampling.clone(),
        );
        let answer = self.inner.complete(request, deltas);
        let (file, path) = (Arc::clone(&self.file), self.path.clone());
        Box::pin(async move {
            let reply = answer.await?;
            let entry = Entry {
                key,
                model,
                messages,
                schema,
                sampling,
                text: reply.text.clone(),
                usage: reply.usage,
                tool_calls: reply.tool_calls.clone(),
                cut_off: reply.cut_off,
            };
            let line = serde_json::to_string(&entry).unwrap_or_default();
            let written = file
                .lock()
                .map_err(|_| std::io::Error::other("the cassette's lock was poisoned"))
                .and_then(|mut file| writeln!(file, "{line}"));
            if let Err(error) = written {
                bevy::log::error!("could not record to {}: {error}", path.display());
            }
            Ok(reply)
        })
    }
}

/// Answers from a cassette; a request it does not hold fails with [`LlmError::NotRecorded`].
///
/// A request recorded several times (the same prompt on several turns) gets its
/// answers in recorded order, then the last one again.
pub struct ReplayBackend {
    answers: HashMap<String, Recorded>,
    model: String,
    path: PathBuf,
}

impl ReplayBackend {
    /// Reads the cassette at `path`. A line that is not a cassette entry is an error
    /// naming the line.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LlmError> {
        let path = path.as_ref().to_path_buf();
        let text = std::fs::read_to_string(&path).map_err(|error| {
            LlmError::Setup(format!(
                "cannot read the cassette {}: {error}",
                path.display()
            ))
        })?;
        let mut answers = HashMap::new();
        let mut model = String::new();
        for (number, line) in text
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
        {
            let entry: Entry = serde_json::from_str(line).map_err(|error| {
                LlmError::Setup(format!(
                    "{} line {}: not a cassette entry: {error}",
                    path.display(),
                    number + 1
                ))
            })?;
            model = entry.model;
            let recorded: &mut Recorded = answers.entry(entry.key).or_default();
            recorded.replies.push(LlmReply {
                text: entry.text,
                usage: entry.usage,
                tool_calls: entry.tool_calls,
                cut_off: entry.cut_off,
                ..LlmReply::default()
            });
        }
        Ok(Self {
            answers,
            model,
            path,
        })
    }
}

impl LlmBackend for ReplayBackend {
    fn describe(&self) -> String {
        let answers: usize = self.answers.values().map(|r| r.replies.len()).sum();
        format!("replay of {} ({answers} answers)", self.path.display())
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete(&self, request: &LlmRequest, deltas: DeltaSink) -> LlmFuture {
        let key = request_key(&self.model, request);
        let result = match self.answers.get(&key).and_then(Recorded::next) {
            Some(reply) => {
                if request.stream {
                    deltas.send(&reply.text);
                }
                Ok(reply)
            }
            None => Err(LlmError::NotRecorded {
                key,
                cassette: self.path.display().to_string(),
            }),
        };
        Box::pin(async move { result })
    }
}

/// The answers recorded for one key, and how many were replayed.
#[derive(Default)]
struct Recorded {
    replies: Vec<LlmReply>,
    replayed: Mutex<usize>,
}

impl Recorded {
    fn next(&self) -> Option<LlmReply> {
        let mut replayed = self.replayed.lock().ok()?;
        let reply = self.replies.get(*replayed).or(self.replies.last())?.clone();
        *replayed += 1;
        Some(reply)
    }
}
