//! The bridge's runtime side: a priority queue, endpoints with bounded concurrency and
//! circuit breakers, retries with backoff and failover, deadlines and cancellation.
//! Every submitted request ends in exactly one [`Arrival::Done`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::panic::AssertUnwindSafe;

use bevy::platform::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use futures_lite::FutureExt;
use futures_util::StreamExt;
use futures_util::future::{AbortHandle, AbortRegistration, Abortable};
use futures_util::stream::FuturesUnordered;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

mod breaker;
mod serve;

pub(super) use breaker::Breaker;
pub use breaker::{BreakerSettings, BreakerState, EndpointHealth};
use serve::serve_unwinding;

use super::profile::ServerProfiles;
use super::{
    LlmBackend, LlmDelta, LlmError, LlmRequest, LlmResponse, MOST_CONCURRENCY, Priority, RequestId,
};

/// How the bridge retries failed requests.
#[derive(Debug, Clone, PartialEq, Eq, bevy::reflect::Reflect)]
pub struct RetryPolicy {
    /// Tries after the first; 0 never retries.
    pub max_retries: u32,
    /// The wait before the first retry; it doubles each time, with jitter.
    pub first_delay: Duration,
    /// The longest wait between tries (a server's `Retry-After` is honoured up to the deadline).
    pub max_delay: Duration,
    /// How long after the bridge starts a refused connection means a server still
    /// starting rather than a dead one: like a server loading its model
    /// ([`LlmError::Loading`]), it is waited for with backoff until the request's
    /// deadline, and counts neither as a retry nor toward the breaker.
    pub startup_grace: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 2,
            first_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(4),
            startup_grace: Duration::from_secs(10),
        }
    }
}

/// How the runtime side schedules requests.
#[derive(Debug, Clone)]
pub(super) struct Schedule {
    pub(super) concurrency: usize,
    pub(super) retry: RetryPolicy,
    pub(super) breaker: BreakerSettings,
}

pub(super) struct Job {
    pub(super) id: RequestId,
    pub(super) request: LlmRequest,
    pub(super) submitted: Instant,
    pub(super) deadline: Deadline,
}

impl Job {
    /// When it runs out of time while queued, if its requester gave it a deadline. One
    /// without waits in the queue for as long as it takes: its deadline counts from
    /// dispatch.
    fn queued_deadline(&self) -> Option<Instant> {
        match self.deadline {
            Deadline::Given(deadline) => Some(later(self.submitted, deadline)),
            Deadline::Default(_) => None,
        }
    }
}

/// How long a request may take.
#[derive(Debug, Clone, Copy)]
pub(super) enum Deadline {
    /// The requester's own, counted from submission: someone waits for the answer.
    /// A request the server's measured speed cannot answer in time is not sent.
    Given(Duration),
    /// The bridge's default, counted from dispatch (waiting in the bridge's queue for a
    /// free slot is not being late), and at least twice what the server's measured
    /// speed predicts: a long cold prompt on a slow server is not lost to it.
    Default(Duration),
}

pub(super) enum Command {
    /// Requests submitted during one frame, in order.
    Submit(Vec<Job>),
    Cancel(RequestId),
}

/// What the runtime hands back: pieces of streamed answers, then each request's outcome.
pub(super) enum Arrival {
    Delta(LlmDelta),
    Done(LlmResponse),
}

/// One model server, its free slots and its breaker.
struct Endpoint {
    /// Its place in the bridge's endpoints, and in [`ServerProfiles`].
    index: usize,
    backend: Arc<dyn LlmBackend>,
    slots: Arc<Semaphore>,
    /// How many slots it has: the bridge's concurrency, until its server says how many
    /// requests it answers side by side.
    capacity: AtomicUsize,
    /// Slots it lost while they were busy: each goes when its request ends.
    owed: Arc<AtomicUsize>,
    /// Shared with the bridge, which reports it ([`EndpointHealth`]).
    breaker: Arc<Mutex<Breaker>>,
}

impl Endpoint {
    /// How many requests run on it now.
    fn running(&self) -> usize {
        let slots = self.capacity.load(Ordering::SeqCst) + self.owed.load(Ordering::SeqCst);
        slots.saturating_sub(self.slots.available_permits())
    }

    /// Gives it `slots` slots, as its server has (at most [`MOST_CONCURRENCY`]): more at
    /// once, or fewer, the busy ones going as their requests end.
    fn resize(&self, slots: usize) {
        let slots = slots.clamp(1, MOST_CONCURRENCY);
        let capacity = self.capacity.swap(slots, Ordering::SeqCst);
        if slots > capacity {
            self.slots.add_permits(slots - capacity);
        } else {
            let free = self.slots.forget_permits(capacity - slots);
            self.owed
                .fetch_add(capacity - slots - free, Ordering::SeqCst);
        }
    }

    /// A slot of its, held by `permit`.
    fn slot(&self, permit: OwnedSemaphorePermit, freed: &Arc<tokio::sync::Notify>) -> Slot {
        Slot {
            permit: Some(permit),
            owed: Arc::clone(&self.owed),
            freed: Arc::clone(freed),
        }
    }
}

/// A queued job, highest priority first, then first come.
struct Queued(Priority, Reverse<u64>, Job);

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.0, self.1) == (other.0, other.1)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(other.0, other.1))
    }
}

/// What the dispatcher and its tasks share.
struct Shared {
    endpoints: Vec<Endpoint>,
    schedule: Schedule,
    arrivals: mpsc::Sender<Arrival>,
    /// Running requests; whoever removes an id sends its outcome.
    running: Mutex<HashMap<RequestId, AbortHandle>>,
    /// Requests dispatched and not yet finished; the bridge reads it for its stats.
    active: Arc<AtomicUsize>,
    /// Requests waiting for a free slot.
    queue: Mutex<BinaryHeap<Queued>>,
    next_endpoint: AtomicUsize,
    /// When the bridge started, for [`RetryPolicy::startup_grace`].
    started: Instant,
    /// What each endpoint's answers tell of it.
    profiles: Arc<ServerProfiles>,
    /// Told when a slot frees, so a queued request waiting for that server can go.
    freed: Arc<tokio::sync::Notify>,
}

/// A request's turn on one endpoint; dropping it frees the slot for the next, unless
/// the endpoint lost the slot meanwhile.
struct Slot {
    permit: Option<OwnedSemaphorePermit>,
    owed: Arc<AtomicUsize>,
    freed: Arc<tokio::sync::Notify>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let lost = (self.owed).fetch_update(Ordering::SeqCst, Ordering::SeqCst, |owed| {
            owed.checked_sub(1)
        });
        if lost.is_ok()
            && let Some(permit) = self.permit.take()
        {
            permit.forget();
        }
        self.freed.notify_one();
    }
}

/// Where a dispatched request first goes: an endpoint and a slot taken there, or
/// nowhere when no endpoint admits requests (it then fails fast).
type Start = Option<(usize, Slot)>;

impl Shared {
    /// Whether `error` means the server is not ready yet: it is loading its model, or
    /// refused the connection within the startup grace.
    fn not_ready(&self, error: &LlmError, now: Instant) -> bool {
        match error {
            LlmError::Loading { .. } => true,
            LlmError::Unreachable { refused, .. } => {
                *refused
                    && now.saturating_duration_since(self.started)
                        < self.schedule.retry.startup_grace
            }
            _ => false,
        }
    }

    /// Asks an endpoint for its limits, in the background, and gives it as many slots
    /// as its server says it has. A backend that panics telling them is taken to know
    /// none, and the bridge goes on.
    fn ask_limits(self: &Arc<Self>, endpoint: &Endpoint) {
        let backend = Arc::clone(&endpoint.backend);
        let panicked = |backend: &dyn LlmBackend| {
            let told = "panicked telling its limits; it is sent requests as configured";
            bevy::log::warn!("the backend `{}` {told}", backend.describe());
        };
        let Ok(limits) = std::panic::catch_unwind(AssertUnwindSafe(|| backend.limits())) else {
            return panicked(&*backend);
        };
        let (index, shared) = (endpoint.index, Arc::clone(self));
        tokio::spawn(async move {
            let Ok(limits) = AssertUnwindSafe(limits).catch_unwind().await else {
                return panicked(&*backend);
            };
            if let Some(limits) = limits {
                shared.profiles.learn(index, limits);
                if let Some(slots) = limits.slots {
                    shared.endpoints[index].resize(slots as usize);
                    // More slots: queued requests may go now.
                    shared.freed.notify_one();
                }
            }
        });
    }

    fn finish(&self, response: LlmResponse) {
        // The receiver is gone only when the bridge was dropped; nobody waits then.
        let _ = self.arrivals.send(Arrival::Done(response));
    }

    /// A running request ended: its slot is free for the next queued one.
    fn release(&self) {
        self.active.fetch_sub(1, Ordering::SeqCst);
    }

    /// The next queued request that can start now, highest priority first: its
    /// endpoint ([`pick_endpoint`]) has a free slot, which it takes, and it counts as
    /// running. One waiting for a busy server stays queued without holding up the
    /// requests behind it that can go elsewhere.
    fn next_job(&self) -> Option<(Job, AbortRegistration, Start)> {
        let capacity: usize = (self.endpoints.iter())
            .map(|endpoint| endpoint.capacity.load(Ordering::SeqCst))
            .sum();
        if self.active.load(Ordering::SeqCst) >= capacity {
            return None;
        }
        let now = Instant::now();
        let mut queue = lock(&self.queue);
        let mut passed = Vec::new();
        let found = loop {
            let Some(queued) = queue.pop() else {
                break None;
            };
            let request = &queued.2.request;
            let Some(endpoint) = pick_endpoint(self, now, request.affinity, request.priority)
            else {
                break Some((queued, None));
            };
            match self.take_slot(endpoint) {
                Some(slot) => {
                    lock(&endpoint.breaker).admit(now);
                    break Some((queued, Some((endpoint.index, slot))));
                }
                None => passed.push(queued),
            }
        };
        queue.extend(passed);
        drop(queue);
        let (Queued(_, _, job), start) = found?;
        self.active.fetch_add(1, Ordering::SeqCst);
        let (handle, registration) = AbortHandle::new_pair();
        lock(&self.running).insert(job.id, handle);
        Some((job, registration, start))
    }

    /// A free slot of `endpoint`, if it has one now.
    fn take_slot(&self, endpoint: &Endpoint) -> Option<Slot> {
        let permit = Arc::clone(&endpoint.slots).try_acquire_owned().ok()?;
        Some(endpoint.slot(permit, &self.freed))
    }

    /// A slot of `endpoint`, waited for until `deadline`; `Err` with why not.
    async fn wait_for_slot(
        &self,
        endpoint: &Endpoint,
        deadline: Instant,
        submitted: Instant,
    ) -> Result<Slot, LlmError> {
        let permit =
            tokio::time::timeout_at(deadline.into(), Arc::clone(&endpoint.slots).acquire_owned());
        match permit.await {
            Ok(Ok(permit)) => Ok(endpoint.slot(permit, &self.freed)),
            Ok(Err(_)) => Err(LlmError::BridgeStopped(
                "the bridge is shutting down".to_owned(),
            )),
            Err(_) => Err(LlmError::TimedOut(
                deadline.saturating_duration_since(submitted),
            )),
        }
    }
}

/// Runs the dispatcher on a current-thread Tokio runtime until the bridge is dropped.
pub(super) fn run(
    backends: Vec<Arc<dyn LlmBackend>>,
    schedule: Schedule,
    mut commands: tokio::sync::mpsc::UnboundedReceiver<Command>,
    arrivals: mpsc::Sender<Arrival>,
    active: Arc<AtomicUsize>,
    profiles: Arc<ServerProfiles>,
    breakers: Vec<Arc<Mutex<Breaker>>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            bevy::log::error!("the LLM bridge could not start its runtime: {error}");
            return;
        }
    };
    let concurrency = schedule.concurrency.clamp(1, MOST_CONCURRENCY);
    let shared = Arc::new(Shared {
        endpoints: backends
            .into_iter()
            .zip(breakers)
            .enumerate()
            .map(|(index, (backend, breaker))| Endpoint {
                index,
                backend,
                slots: Arc::new(Semaphore::new(concurrency)),
                capacity: AtomicUsize::new(concurrency),
                owed: Arc::default(),
                breaker,
            })
            .collect(),
        schedule,
        arrivals,
        running: Mutex::default(),
        active,
        queue: Mutex::default(),
        next_endpoint: AtomicUsize::new(0),
        started: Instant::now(),
        profiles,
        freed: Arc::default(),
    });
    // The running requests are polled by this one future rather than spawned as
    // tasks: a request costs no task of its own, and cancelling one drops its future,
    // and with it its connection.
    runtime.block_on(async move {
        for endpoint in &shared.endpoints {
            shared.ask_limits(endpoint);
        }
        let mut sequence = 0u64;
        let mut running = FuturesUnordered::new();
        // When each queued request runs out of time, soonest first: one still queued
        // then ends at once, rather than when a slot frees. Requests that left the
        // queue stay here until their time comes, and are passed over then.
        let mut expiring: BinaryHeap<Reverse<(Instant, RequestId)>> = BinaryHeap::new();
        loop {
            let next_expiry = expiring.peek().map(|Reverse((at, _))| *at);
            tokio::select! {
                command = commands.recv() => match command {
                    None => break,
                    Some(Command::Submit(jobs)) => {
                        let mut queue = lock(&shared.queue);
                        for job in jobs {
                            sequence += 1;
                            if let Some(at) = job.queued_deadline() {
                                expiring.push(Reverse((at, job.id)));
                            }
                            queue.push(Queued(job.request.priority, Reverse(sequence), job));
                        }
                        // Those that left the queue are passed over at their time; far
                        // more of them than are queued are dropped now.
                        if expiring.len() > 2 * queue.len() + 64 {
                            expiring = queue
                                .iter()
                                .filter_map(|Queued(_, _, job)| {
                                    Some(Reverse((job.queued_deadline()?, job.id)))
                                })
                                .collect();
                        }
                    }
                    Some(Command::Cancel(id)) => cancel(&shared, id),
                },
                Some(_) = running.next(), if !running.is_empty() => {}
                () = shared.freed.notified() => {}
                () = sleep_until_some(next_expiry), if next_expiry.is_some() => {
                    let now = Instant::now();
                    while let Some(&Reverse((at, id))) = expiring.peek() {
                        if at > now {
                            break;
                        }
                        expiring.pop();
                        expire(&shared, id, at);
                    }
                }
            }
            while let Some((job, registration, start)) = shared.next_job() {
                running.push(Abortable::new(
                    serve_unwinding(Arc::clone(&shared), job, start),
                    registration,
                ));
            }
        }
        // The bridge is gone: what still runs is dropped with this future.
    });
}

/// Sleeps until `at`; never returns without one (the branch is disabled then).
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Takes a request out of the queue, if it is still waiting there.
fn take_queued(shared: &Shared, id: RequestId) -> Option<Job> {
    let mut queue = lock(&shared.queue);
    if !queue.iter().any(|queued| queued.2.id == id) {
        return None;
    }
    let waiting: Vec<Queued> = std::mem::take(&mut *queue).into_vec();
    let (taken, kept): (Vec<Queued>, Vec<Queued>) = waiting.into_iter().partition(|q| q.2.id == id);
    *queue = kept.into();
    taken.into_iter().next().map(|Queued(_, _, job)| job)
}

/// Ends a request still queued at its deadline (`at`), never sent: however busy the
/// servers are with other work, it does not wait past it.
fn expire(shared: &Shared, id: RequestId, at: Instant) {
    if let Some(job) = take_queued(shared, id) {
        shared.finish(LlmResponse {
            id,
            result: Err(LlmError::NotStarted(
                at.saturating_duration_since(job.submitted),
            )),
            latency: job.submitted.elapsed(),
            first_token: None,
            retries: 0,
        });
    }
}

fn cancel(shared: &Arc<Shared>, id: RequestId) {
    let cancelled = take_queued(shared, id);
    let running = shared
        .running
        .lock()
        .ok()
        .and_then(|mut running| running.remove(&id));
    let submitted = match (cancelled, running) {
        (Some(job), _) => job.submitted,
        (None, Some(handle)) => {
            // Aborting drops the request's future, and with it its connection.
            handle.abort();
            shared.release();
            Instant::now()
        }
        // Already finished, or never known: nothing to do.
        (None, None) => return,
    };
    shared.finish(LlmResponse {
        id,
        result: Err(LlmError::Cancelled),
        latency: submitted.elapsed(),
        first_token: None,
        retries: 0,
    });
}

/// Where requests with `affinity` go in a fleet of `servers`: the affinity modulo the
/// servers picks the server, and what is left of it is the backend's to pick a slot
/// within that server, so that every slot of every server gets used (the same number
/// modulo both would leave most slots idle). `None` without servers.
pub(super) fn split_affinity(affinity: u64, servers: usize) -> Option<(usize, u64)> {
    let servers = u64::try_from(servers).ok().filter(|&n| n > 0)?;
    Some(((affinity % servers) as usize, affinity / servers))
}

/// `instant + duration`, saturating: a duration from outside (a settings file, a
/// server's `Retry-After`, a game's deadline) can be too long to add to an instant.
pub(crate) fn later(instant: Instant, duration: Duration) -> Instant {
    // Tokio rounds a deadline up to the next millisecond: one at the very end of
    // `Instant`'s range would overflow there.
    instant
        .checked_add(duration.min(LONGEST_WAIT))
        .unwrap_or(instant)
}

/// What [`later`] adds when a duration is too long to add: longer than any game waits.
const LONGEST_WAIT: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// The endpoint a request's affinity names while its breaker admits it, it is not
/// loading its model, and (for a request above background priority) it has a free
/// slot or no other server has; otherwise the healthy endpoint with the most free
/// slots, ready ones first, taking turns among equals. The caller admits the request
/// to the endpoint's breaker once it has a slot there.
fn pick_endpoint(
    shared: &Shared,
    now: Instant,
    affinity: Option<u64>,
    priority: Priority,
) -> Option<&Endpoint> {
    let count = shared.endpoints.len();
    if let Some((server, _)) = affinity.and_then(|affinity| split_affinity(affinity, count)) {
        let preferred = &shared.endpoints[server];
        // Someone waits for a narration or a reply: it does not wait behind whatever
        // keeps its server busy while another has a free slot. Background thinking
        // waits for its own server, which holds its prompt.
        let free_elsewhere = || {
            priority > Priority::Background
                && shared.endpoints.iter().any(|endpoint| {
                    !std::ptr::eq(endpoint, preferred)
                        && endpoint.slots.available_permits() > 0
                        && usable(endpoint, now, &shared.schedule.breaker)
                })
        };
        if usable(preferred, now, &shared.schedule.breaker)
            && (preferred.slots.available_permits() > 0 || !free_elsewhere())
        {
            return Some(preferred);
        }
    }
    let start = shared.next_endpoint.fetch_add(1, Ordering::SeqCst);
    let chosen = (0..count)
        .map(|offset| &shared.endpoints[(start + offset) % count])
        .filter(|endpoint| lock(&endpoint.breaker).admits(now, &shared.schedule.breaker))
        // A server still loading its model only when none is ready.
        .max_by_key(|endpoint| {
            let ready = !lock(&endpoint.breaker).loading(now);
            (ready, endpoint.slots.available_permits())
        })?;
    Some(chosen)
}

/// Whether an endpoint's breaker admits a request now and its server is not loading.
fn usable(endpoint: &Endpoint, now: Instant, breaker: &BreakerSettings) -> bool {
    let state = lock(&endpoint.breaker);
    state.admits(now, breaker) && !state.loading(now)
}

/// Locks a mutex whose holder cannot leave it inconsistent, even if poisoned.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(slots: usize) -> Endpoint {
        Endpoint {
            index: 0,
            backend: Arc::new(super::super::OfflineBackend::new(0)),
            slots: Arc::new(Semaphore::new(slots)),
            capacity: AtomicUsize::new(slots),
            owed: Arc::default(),
            breaker: Arc::default(),
        }
    }

    #[test]
    fn an_endpoint_takes_the_slots_its_server_says_it_has() {
        let freed = Arc::new(tokio::sync::Notify::new());
        let endpoint = endpoint(4);
        let take = || {
            let permit = Arc::clone(&endpoint.slots).try_acquire_owned().ok()?;
            Some(endpoint.slot(permit, &freed))
        };
        let busy: Vec<Slot> = (0..3).map_while(|_| take()).collect();
        assert_eq!(endpoint.running(), 3);
        // The server has one slot: the free one goes now, two of the busy as they end.
        endpoint.resize(1);
        assert_eq!(endpoint.running(), 3);
        assert!(take().is_none());
        drop(busy);
        assert_eq!(endpoint.running(), 0);
        let only = take().expect("its one slot");
        assert!(take().is_none(), "one at a time");
        drop(only);
        // More slots are there at once.
        endpoint.resize(3);
        let all: Vec<Slot> = (0..4).map_while(|_| take()).collect();
        assert_eq!(all.len(), 3);
    }

    #[test]
    fn a_server_claiming_countless_slots_gets_the_most_an_endpoint_has() {
        let endpoint = endpoint(4);
        endpoint.resize(u32::MAX as usize);
        assert_eq!(endpoint.capacity.load(Ordering::SeqCst), MOST_CONCURRENCY);
        assert_eq!(endpoint.slots.available_permits(), MOST_CONCURRENCY);
        endpoint.resize(usize::MAX);
        assert_eq!(endpoint.slots.available_permits(), MOST_CONCURRENCY);
    }
}
