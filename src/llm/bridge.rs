//! The bridge: a background runtime that runs backend futures and hands results back.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bevy::prelude::*;
use futures_lite::FutureExt;

use super::{
    DeltaSink, LlmBackend, LlmDelta, LlmError, LlmReply, LlmRequest, LlmResponse, RequestId,
    SamplingOptions,
};

struct Job {
    id: RequestId,
    request: LlmRequest,
    submitted: Instant,
}

/// What the runtime hands back: pieces of streamed answers, then each request's outcome.
enum Arrival {
    Delta(LlmDelta),
    Done(LlmResponse),
}

/// Sends requests to the configured backend without blocking a frame.
///
/// Each [`submit`](Self::submit) returns at once; the outcome arrives later as an
/// [`LlmResponse`] message with the same id, after any [`LlmDelta`] pieces of a
/// streamed answer. The backend's futures run on a Tokio runtime on the bridge's own
/// thread, which stops when the bridge is dropped.
#[derive(Resource)]
pub struct LlmBridge {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
    arrivals: Mutex<mpsc::Receiver<Arrival>>,
    deltas: Vec<LlmDelta>,
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
        let (jobs, queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let (arrived, arrivals) = mpsc::channel();
        let description = backend.describe();
        let spawned = std::thread::Builder::new()
            .name("loom-llm-bridge".to_owned())
            .spawn(move || run(backend, queue, arrived, deadline));
        if let Err(error) = spawned {
            error!("the LLM bridge could not start its thread: {error}");
        }
        Self {
            jobs,
            arrivals: Mutex::new(arrivals),
            deltas: Vec::new(),
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
        if sampling.stop.is_empty() {
            sampling.stop.clone_from(&self.defaults.stop);
        }
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
                first_token: None,
            });
        }
        id
    }

    /// Outcomes that arrived since the last call, without waiting. Pieces of streamed
    /// answers that arrived with them wait in [`drain_deltas`](Self::drain_deltas).
    ///
    /// In an app with [`LlmPlugin`](super::LlmPlugin) the plugin drains the bridge every
    /// frame into messages; call this only when using the bridge on its own.
    pub fn drain(&mut self) -> Vec<LlmResponse> {
        let mut done = std::mem::take(&mut self.stopped);
        if let Ok(arrivals) = self.arrivals.get_mut() {
            for arrival in arrivals.try_iter() {
                match arrival {
                    Arrival::Delta(delta) => self.deltas.push(delta),
                    Arrival::Done(response) => done.push(response),
                }
            }
        }
        self.in_flight = self.in_flight.saturating_sub(done.len());
        done
    }

    /// Pieces of streamed answers gathered by [`drain`](Self::drain), in arrival order.
    pub fn drain_deltas(&mut self) -> Vec<LlmDelta> {
        std::mem::take(&mut self.deltas)
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

/// The bridge thread: a Tokio runtime running one task per request.
fn run(
    backend: Arc<dyn LlmBackend>,
    mut queue: tokio::sync::mpsc::UnboundedReceiver<Job>,
    arrived: mpsc::Sender<Arrival>,
    fallback_deadline: Duration,
) {
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
            let arrived = arrived.clone();
            tokio::spawn(async move {
                let deadline = job.request.deadline.unwrap_or(fallback_deadline);
                let first_token = Arc::new(Mutex::new(None));
                let deltas = {
                    let (arrived, first_token, id) = (arrived.clone(), first_token.clone(), job.id);
                    let submitted = job.submitted;
                    DeltaSink::new(move |text| {
                        if let Ok(mut first) = first_token.lock() {
                            first.get_or_insert_with(|| submitted.elapsed());
                        }
                        // The receiver is gone only when the bridge was dropped.
                        let _ = arrived.send(Arrival::Delta(LlmDelta { id, text }));
                    })
                };
                let result = tokio::time::timeout(deadline, answer(&*backend, job.request, deltas))
                    .await
                    .unwrap_or(Err(LlmError::TimedOut(deadline)));
                let first_token = first_token.lock().ok().and_then(|first| *first);
                let _ = arrived.send(Arrival::Done(LlmResponse {
                    id: job.id,
                    result,
                    latency: job.submitted.elapsed(),
                    first_token,
                }));
            });
        }
    });
}

/// Runs a backend on one request. A backend that panics ends its request with
/// [`LlmError::BackendFailed`] instead of leaving it without an outcome.
async fn answer(
    backend: &dyn LlmBackend,
    request: LlmRequest,
    deltas: DeltaSink,
) -> Result<LlmReply, LlmError> {
    let failed = |_| {
        LlmError::BackendFailed(format!(
            "the backend `{}` panicked; see the log",
            backend.describe()
        ))
    };
    let future = std::panic::catch_unwind(AssertUnwindSafe(|| backend.complete(request, deltas)))
        .map_err(failed)?;
    AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .map_err(failed)?
}
