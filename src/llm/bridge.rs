//! The bridge's game side: submit, cancel, and drain outcomes without blocking a frame.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use bevy::prelude::*;

use super::profile::ServerProfiles;
use super::scheduler::{self, Arrival, Breaker, Command, Deadline, EndpointHealth, Job, Schedule};
use super::{
    LlmBackend, LlmDelta, LlmError, LlmPlugin, LlmRequest, LlmResponse, LlmSettings, RequestId,
    SamplingOptions,
};

/// The next bridge's serial: no two bridges of a process share one.
static NEXT_BRIDGE: AtomicU64 = AtomicU64::new(1);

/// A request id's low bits count the bridge's requests; the bits above them are its
/// bridge's serial, so an id is unique in the process and tells which bridge issued it
/// (for the first 2^24 bridges of a process, of 2^40 requests each).
const REQUEST_BITS: u32 = 40;

/// Sends requests to model servers without blocking a frame.
///
/// Each [`submit`](Self::submit) returns at once; the outcome arrives later as one
/// [`LlmResponse`] with the same id, after any [`LlmDelta`] pieces of a streamed
/// answer. Requests submitted during a frame go to the bridge's thread together, on
/// the next [`flush`](Self::flush) or [`drain`](Self::drain) (the plugin flushes in
/// [`LoomSystems::Receive`](crate::LoomSystems::Receive) and in `Last`), so a frame
/// that starts many requests wakes that thread once. Requests run on a Tokio runtime on the bridge's own thread, which stops
/// when the bridge is dropped: highest [`Priority`](super::Priority) first, a bounded
/// number at a time per endpoint, balanced across healthy endpoints, retried with
/// backoff when a server is unreachable or overloaded, each within its deadline.
#[derive(Resource)]
pub struct LlmBridge {
    commands: tokio::sync::mpsc::UnboundedSender<Command>,
    /// Submitted since the last flush.
    outgoing: Vec<Job>,
    arrivals: Mutex<mpsc::Receiver<Arrival>>,
    deltas: Vec<LlmDelta>,
    stopped: Vec<LlmResponse>,
    /// Which bridge this is, in the high bits of each id it issues.
    serial: u64,
    /// Requests submitted so far.
    submitted: u64,
    in_flight: usize,
    running: Arc<AtomicUsize>,
    description: String,
    /// Each endpoint's description and breaker, shared with the bridge's thread.
    endpoints: Vec<(String, Arc<Mutex<Breaker>>)>,
    defaults: SamplingOptions,
    deadline: Duration,
    profiles: Arc<ServerProfiles>,
}

impl LlmBridge {
    /// Starts a bridge for one backend with a default deadline and sampling options,
    /// and the default concurrency, retries and breaker.
    pub fn new(
        backend: Arc<dyn LlmBackend>,
        deadline: Duration,
        sampling: SamplingOptions,
    ) -> Self {
        Self::start(
            vec![backend],
            &LlmPlugin {
                settings: LlmSettings { deadline, sampling },
                ..LlmPlugin::default()
            },
        )
    }

    /// Starts a bridge over several endpoints (a fleet of servers), scheduled as
    /// `plugin` says. Its backend choice is ignored: `endpoints` answer. With none,
    /// every request fails at once with [`LlmError::Setup`].
    pub fn start(mut endpoints: Vec<Arc<dyn LlmBackend>>, plugin: &LlmPlugin) -> Self {
        if endpoints.is_empty() {
            let none = LlmError::Setup(
                "the bridge was started with no model server: give it at least one endpoint"
                    .to_owned(),
            );
            endpoints.push(Arc::new(super::backend::UnavailableBackend(none)));
        }
        let settings = &plugin.settings;
        let (commands, receiver) = tokio::sync::mpsc::unbounded_channel();
        let (arrived, arrivals) = mpsc::channel();
        let described: Vec<(String, Arc<Mutex<Breaker>>)> = (endpoints.iter())
            .map(|endpoint| (endpoint.describe(), Arc::default()))
            .collect();
        let description = (described.iter())
            .map(|(description, _)| description.as_str())
            .collect::<Vec<_>>()
            .join(" + ");
        let breakers = described.iter().map(|(_, b)| Arc::clone(b)).collect();
        let schedule = Schedule {
            concurrency: plugin.concurrency_per_endpoint,
            retry: plugin.retry.clone(),
            breaker: plugin.breaker.clone(),
        };
        let running = Arc::new(AtomicUsize::new(0));
        let shared_running = Arc::clone(&running);
        let profiles = Arc::new(ServerProfiles::new(endpoints.len()));
        let shared_profiles = Arc::clone(&profiles);
        let spawned = std::thread::Builder::new()
            .name("loom-llm-bridge".to_owned())
            .spawn(move || {
                scheduler::run(
                    endpoints,
                    schedule,
                    receiver,
                    arrived,
                    shared_running,
                    shared_profiles,
                    breakers,
                )
            });
        if let Err(error) = spawned {
            error!("the LLM bridge could not start its thread: {error}");
        }
        Self {
            commands,
            outgoing: Vec::new(),
            arrivals: Mutex::new(arrivals),
            deltas: Vec::new(),
            stopped: Vec::new(),
            serial: NEXT_BRIDGE.fetch_add(1, Ordering::Relaxed),
            submitted: 0,
            in_flight: 0,
            running,
            description,
            endpoints: described,
            defaults: settings.sampling.clone(),
            deadline: settings.deadline,
            profiles,
        }
    }

    /// Queues a request and returns its id at once. It goes to the bridge's thread on
    /// the next [`flush`](Self::flush) or [`drain`](Self::drain).
    pub fn submit(&mut self, mut request: LlmRequest) -> RequestId {
        self.submitted += 1;
        let id = RequestId(self.serial << REQUEST_BITS | self.submitted);
        let sampling = &mut request.sampling;
        sampling.temperature = sampling.temperature.or(self.defaults.temperature);
        sampling.max_tokens = sampling.max_tokens.or(self.defaults.max_tokens);
        sampling.seed = sampling.seed.or(self.defaults.seed);
        if sampling.stop.is_empty() {
            sampling.stop.clone_from(&self.defaults.stop);
        }
        let deadline = match request.deadline {
            Some(deadline) => Deadline::Given(deadline),
            None => Deadline::Default(self.deadline),
        };
        self.in_flight += 1;
        self.outgoing.push(Job {
            id,
            request,
            submitted: Instant::now(),
            deadline,
        });
        id
    }

    /// Sends the requests submitted since the last flush to the bridge's thread.
    pub fn flush(&mut self) {
        if self.outgoing.is_empty() {
            return;
        }
        let jobs = std::mem::take(&mut self.outgoing);
        if let Err(unsent) = self.commands.send(Command::Submit(jobs)) {
            let Command::Submit(jobs) = unsent.0 else {
                return;
            };
            self.stopped.extend(jobs.into_iter().map(|job| LlmResponse {
                id: job.id,
                result: Err(LlmError::BridgeStopped(
                    "its background thread has stopped; see the log for why".to_owned(),
                )),
                latency: job.submitted.elapsed(),
                first_token: None,
                retries: 0,
            }));
        }
    }

    /// Which bridge this is: no two bridges of a process have the same serial.
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// Whether this bridge issued `id`. Ids are unique in the process: one it did not
    /// issue came from another bridge (one it replaced, when a game inserts a new
    /// `LlmBridge` to change servers), and its outcome never comes from this one.
    /// Smart actors and narration waiting on such a request ask again, or fall back,
    /// when they see another bridge's [`serial`](Self::serial).
    pub fn issued(&self, id: RequestId) -> bool {
        id.0 >> REQUEST_BITS == self.serial
    }

    /// Cancels a request: queued, it never starts; running, its connection is
    /// dropped. Its outcome is [`LlmError::Cancelled`]; a request that already
    /// finished keeps its outcome.
    pub fn cancel(&mut self, id: RequestId) {
        self.flush();
        // When the runtime is gone, every request already has its outcome.
        let _ = self.commands.send(Command::Cancel(id));
    }

    /// Sends what was submitted (see [`flush`](Self::flush)), then returns the outcomes
    /// that arrived since the last call, without waiting. Pieces of streamed
    /// answers that arrived with them wait in [`drain_deltas`](Self::drain_deltas).
    ///
    /// In an app with [`LlmPlugin`](super::LlmPlugin) the plugin drains the bridge every
    /// frame into messages; call this only when using the bridge on its own.
    pub fn drain(&mut self) -> Vec<LlmResponse> {
        self.flush();
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

    /// Requests being answered right now; the rest of [`in_flight`](Self::in_flight) wait in the queue.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst).min(self.in_flight)
    }

    /// Whether nothing is left to come: every request submitted had its outcome
    /// drained, and nothing runs or waits on the bridge's thread. An outcome sent just
    /// as the thread went idle is in the next [`drain`](Self::drain); after that, none
    /// arrives until the next submit.
    pub fn is_idle(&self) -> bool {
        self.outgoing.is_empty() && self.in_flight == 0 && self.running.load(Ordering::SeqCst) == 0
    }

    /// Which backends answer, for logs and transcripts.
    pub fn backend_description(&self) -> &str {
        &self.description
    }

    /// How each endpoint is doing now, in the order they were given: its breaker
    /// (closed, open or probing), whether it is loading its model, why it last
    /// failed, and how fast its server was measured to read and write.
    pub fn endpoint_health(&self) -> Vec<EndpointHealth> {
        let now = Instant::now();
        (self.endpoints.iter().enumerate())
            .map(|(index, (endpoint, breaker))| {
                let breaker = scheduler::lock(breaker);
                let (state, loading) = breaker.state(now);
                let (reading, writing) = self.profiles.speeds(index);
                EndpointHealth {
                    endpoint: endpoint.clone(),
                    breaker: state,
                    loading,
                    last_failure: breaker.last_failure().map(str::to_owned),
                    prompt_tokens_per_second: reading,
                    answer_tokens_per_second: writing,
                }
            })
            .collect()
    }

    /// How many tokens a character of prompt is to the server that requests with this
    /// affinity go to (any server's, without one), measured from the `usage` servers
    /// reported; `None` until one did. Budgets in the server's tokens start from it
    /// ([`TokenScale`](crate::prompt::TokenScale)).
    pub fn tokens_per_char(&self, affinity: Option<u64>) -> Option<f32> {
        self.profiles.tokens_per_char(affinity)
    }

    /// The tokens one request may take, prompt and answer, on the server that requests
    /// with this affinity go to (the smallest known, without one), when the server said
    /// (llama.cpp's `/props`).
    pub fn context_per_slot(&self, affinity: Option<u64>) -> Option<u32> {
        self.profiles.context_per_slot(affinity)
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
