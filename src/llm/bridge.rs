//! The bridge: a background runtime that runs backend futures and hands results back.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bevy::prelude::*;
use futures_lite::FutureExt;

use super::{LlmBackend, LlmError, LlmReply, LlmRequest, LlmResponse, RequestId, SamplingOptions};

struct Job {
    id: RequestId,
    request: LlmRequest,
    submitted: Instant,
}

/// Sends requests to the configured backend without blocking a frame.
///
/// Each [`submit`](Self::submit) returns at once; the outcome arrives later as an
/// [`LlmResponse`] message with the same id. The backend's futures run on a Tokio
/// runtime on the bridge's own thread, which stops when the bridge is dropped.
#[derive(Resource)]
pub struct LlmBridge {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
    done: Mutex<mpsc::Receiver<LlmResponse>>,
    stopped: Vec<LlmResponse>,
    next_id: u64,
    in_flight: usize,
    description: String,
    defaults: SamplingOptions,
    deadline: Duration,
}

impl LlmBridge {
    /// Starts a bridge for a backend, with a default deadline and sampling options.
    pub fn new(
        backend: Arc<dyn LlmBackend>,
        deadline: Duration,
        defaults: SamplingOptions,
    ) -> Self {
        let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let (finished, done) = mpsc::channel();
        let description = backend.describe();
        let fallback_deadline = deadline;
        let spawned = std::thread::Builder::new()
            .name("loom-llm-bridge".to_owned())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        error!("the LLM bridge could not start its runtime: {error}");
                        return;
                    }
                };
                runtime.block_on(async move {
                    while let Some(job) = queue.recv().await {
                        let backend = Arc::clone(&backend);
                        let finished: mpsc::Sender<LlmResponse> = finished.clone();
                        let deadline = job.request.deadline.unwrap_or(fallback_deadline);
                        tokio::spawn(async move {
                            let result =
                                tokio::time::timeout(deadline, answer(&*backend, job.request))
                                    .await
                                    .unwrap_or(Err(LlmError::TimedOut(deadline)));
                            // The receiver is gone only when the bridge was dropped; nobody waits then.
                            let _ = finished.send(LlmResponse {
                                id: job.id,
                                result,
                                latency: job.submitted.elapsed(),
                            });
                        });
                    }
                });
            });
        if let Err(error) = spawned {
            error!("the LLM bridge could not start its thread: {error}");
        }
        Self {
            jobs,
            done: Mutex::new(done),
            stopped: Vec::new(),
            next_id: 0,
            in_flight: 0,
            description,
            defaults,
            deadline,
        }
    }

    /// Queues a request and returns its id at once.
    pub fn submit(&mut self, mut request: LlmRequest) -> RequestId {
        self.next_id += 1;
        let id = RequestId(self.next_id);
        let sampling = &mut request.sampling;
        sampling.temperature = sampling.temperature.or(self.defaults.temperature);
        sampling.max_tokens = sampling.max_tokens.or(self.defaults.max_tokens);
        sampling.seed = sampling.seed.or(self.defaults.seed);
        request.deadline = request.deadline.or(Some(self.deadline));
        let job = Job {
            id,
            request,
            submitted: Instant::now(),
        };
        self.in_flight += 1;
        if self.jobs.send(job).is_err() {
            self.stopped.push(LlmResponse {
                id,
                result: Err(LlmError::BridgeStopped(
                    "its background thread has stopped; see the log for why".to_owned(),
                )),
                latency: Duration::ZERO,
            });
        }
        id
    }

    /// Outcomes that arrived since the last call, without waiting.
    ///
    /// In an app with [`LlmPlugin`](super::LlmPlugin) the plugin drains the bridge every
    /// frame into [`LlmResponse`] messages; call this only when using the bridge on its own.
    pub fn drain(&mut self) -> Vec<LlmResponse> {
        let mut arrived = std::mem::take(&mut self.stopped);
        if let Ok(done) = self.done.get_mut() {
            arrived.extend(done.try_iter());
        }
        self.in_flight = self.in_flight.saturating_sub(arrived.len());
        arrived
    }

    /// Requests submitted whose outcome has not been drained yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Which backend answers, for logs and transcripts.
    pub fn backend_description(&self) -> &str {
        &self.description
    }

    /// The deadline applied to requests that set none.
    pub fn default_deadline(&self) -> Duration {
        self.deadline
    }

    /// Changes the deadline and sampling defaults for requests submitted from now on.
    pub fn set_defaults(&mut self, deadline: Duration, sampling: SamplingOptions) {
        self.deadline = deadline;
        self.defaults = sampling;
    }
}

/// Runs a backend on one request. A backend that panics ends its request with
/// [`LlmError::BackendFailed`] instead of leaving it without an outcome.
async fn answer(backend: &dyn LlmBackend, request: LlmRequest) -> Result<LlmReply, LlmError> {
    let failed = |_| {
        LlmError::BackendFailed(format!(
            "the backend `{}` panicked; see the log",
            backend.describe()
        ))
    };
    let future =
        std::panic::catch_unwind(AssertUnwindSafe(|| backend.complete(request))).map_err(failed)?;
    AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .map_err(failed)?
}
