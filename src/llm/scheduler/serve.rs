//! One request from dispatch to outcome: tries on healthy endpoints within its
//! deadline, retries with backoff, waits for a server still loading its model, and
//! exactly one outcome even when serving it panics.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures_lite::FutureExt;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::super::profile::PromptMarks;
use super::super::{
    DeltaSink, LlmBackend, LlmDelta, LlmError, LlmReply, LlmRequest, LlmResponse, Priority,
    RequestId, ServerLimits, TokenUsage,
};
use super::{
    Arrival, Deadline, Endpoint, Job, LONGEST_WAIT, RetryPolicy, Shared, Slot, Start, later, lock,
    pick_endpoint, split_affinity,
};

/// One request from dispatch to outcome: attempts on healthy endpoints, with retries.
async fn serve(shared: Arc<Shared>, job: Job, start: Start) {
    let Job {
        id,
        mut request,
        submitted,
        deadline: given,
    } = job;
    // The backend gets what is left of the affinity once the server is picked.
    let affinity = request.affinity;
    request.affinity = affinity
        .and_then(|affinity| split_affinity(affinity, shared.endpoints.len()))
        .map(|(_, slot)| slot);
    // See `Deadline` for when each kind counts from.
    let (counted_from, allowed) = match given {
        Deadline::Given(allowed) => (submitted, allowed),
        Deadline::Default(allowed) => (Instant::now(), allowed),
    };
    let mut deadline = later(counted_from, allowed);
    let mut first_try = true;
    // When the first piece of a streamed answer arrived; unset, nothing reached the game.
    let first_token = request.stream.then(|| Arc::new(OnceLock::new()));
    let mut retries = 0u32;
    // Waits for a server that is not ready yet, and why the last one was needed, while
    // no attempt since found a server ready.
    let mut waits = 0u32;
    let mut not_ready: Option<(usize, LlmError)> = None;
    // Only a retry needs jitter; most requests never make one.
    let mut rng: Option<ChaCha8Rng> = None;
    // The first try goes where the dispatcher found a free slot.
    let mut start = start.map(|(index, slot)| (&shared.endpoints[index], slot));
    let result = loop {
        let now = Instant::now();
        if now >= deadline {
            if let Some((endpoint, _)) = &start {
                lock(&endpoint.breaker).not_sent();
            }
            let waited = deadline - counted_from;
            break Err(if first_try {
                LlmError::NotStarted(waited)
            } else {
                LlmError::TimedOut(waited)
            });
        }
        let (endpoint, slot) = match start.take() {
            Some(started) => started,
            None => {
                // A retry goes wherever is healthiest: its preferred server just failed it.
                let affinity = affinity.filter(|_| retries == 0 && waits == 0);
                let times = (now, deadline, counted_from);
                match next_endpoint(&shared, affinity, request.priority, times).await {
                    Ok(picked) => picked,
                    // Out of time waiting for a slot before any was sent.
                    Err(LlmError::TimedOut(waited)) if first_try => {
                        break Err(LlmError::NotStarted(waited));
                    }
                    Err(error) => break Err(error),
                }
            }
        };
        if std::mem::take(&mut first_try) {
            match fit_to_speed(&shared, endpoint, &request, (given, deadline)) {
                Ok(fitted) => deadline = fitted,
                Err(too_slow) => {
                    lock(&endpoint.breaker).not_sent();
                    break Err(too_slow);
                }
            }
        }
        let sent = Instant::now();
        let deltas = match &first_token {
            Some(first_token) => delta_sink(&shared, id, submitted, first_token),
            None => DeltaSink::discard(),
        };
        let attempt = answer(&*endpoint.backend, &request, deltas);
        let result = match tokio::time::timeout_at(deadline.into(), attempt).await {
            Ok(result) => result,
            Err(_) => Err(LlmError::TimedOut(deadline - counted_from)),
        };
        let starting = result
            .as_ref()
            .is_err_and(|error| shared.not_ready(error, now));
        // An attempt cut short on the server that was not ready may have found it still
        // loading; one that heard from a server (an answer, an error, a first piece),
        // or went to another, found one ready: its end in time is no loading's.
        let streamed = (first_token.as_ref()).is_some_and(|first| first.get().is_some());
        let cut_short_there = matches!(result, Err(LlmError::TimedOut(_)))
            && !streamed
            && not_ready
                .as_ref()
                .is_some_and(|(at, _)| *at == endpoint.index);
        if !starting && !cut_short_there {
            not_ready = None;
        }
        note_health(&shared, endpoint, &request, (&result, starting), now);
        let error = match result {
            Ok(reply) => {
                let first = (first_token.as_ref()).and_then(|first| first.get().copied());
                note_speed(
                    &shared,
                    endpoint,
                    &request,
                    &reply,
                    (submitted, sent, first),
                );
                break Ok(reply);
            }
            Err(error) => error,
        };
        let rng = rng.get_or_insert_with(|| {
            ChaCha8Rng::seed_from_u64(id.0 ^ u64::from(submitted.elapsed().subsec_nanos()))
        });
        if starting {
            // Not ready yet: wait with backoff until the deadline, however many times.
            drop(slot);
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = retry_delay(&shared.schedule.retry, (waits, left), &error, rng);
            not_ready = Some((endpoint.index, loading(error)));
            waits = waits.saturating_add(1);
            let until = later(Instant::now(), wait).min(deadline);
            tokio::time::sleep_until(until.into()).await;
            continue;
        }
        // A streamed answer that already reached the game is not asked again.
        if !error.is_retryable()
            || retries >= shared.schedule.retry.max_retries
            || first_token
                .as_ref()
                .is_some_and(|first| first.get().is_some())
        {
            break Err(error);
        }
        drop(slot);
        let left = deadline.saturating_duration_since(Instant::now());
        let wait = retry_delay(&shared.schedule.retry, (retries, left), &error, rng);
        // A wait past the deadline (a huge `Retry-After`) ends the request now.
        if left <= wait {
            break Err(error);
        }
        tokio::time::sleep(wait).await;
        retries += 1;
    };
    // Out of time while the server was not ready: say so, not only that time ran out.
    let result = match (result, not_ready) {
        (Err(LlmError::TimedOut(_)), Some((_, not_ready))) => Err(not_ready),
        (result, _) => result,
    };
    let first_token = first_token.and_then(|first| first.get().copied());
    conclude(&shared, id, submitted, result, first_token, retries);
}

/// The healthiest endpoint `now` (the one `affinity` prefers, when healthy) and a
/// slot on it, waited for no longer than `deadline` (a wait that runs out says how
/// long since `counted_from`); when none is healthy, an error naming each server and
/// why it last failed, often what to fix.
async fn next_endpoint(
    shared: &Shared,
    affinity: Option<u64>,
    priority: Priority,
    (now, deadline, counted_from): (Instant, Instant, Instant),
) -> Result<(&Endpoint, Slot), LlmError> {
    let Some(endpoint) = pick_endpoint(shared, now, affinity, priority) else {
        let failing = (shared.endpoints.iter())
            .map(|e| match lock(&e.breaker).last_failure() {
                Some(why) => format!("{}: {why}", e.backend.describe()),
                None => e.backend.describe(),
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Err(LlmError::Unavailable(failing));
    };
    // A slot may be busy with other work.
    let slot = shared
        .wait_for_slot(endpoint, deadline, counted_from)
        .await?;
    lock(&endpoint.breaker).admit(Instant::now());
    Ok((endpoint, slot))
}

/// What an attempt's `result` on `endpoint` says of the server's health (its
/// breaker) and of its figures (a context it reported too small for the prompt);
/// `starting` when the server is not ready yet (loading its model, or refusing
/// connections while it starts).
fn note_health(
    shared: &Shared,
    endpoint: &Endpoint,
    request: &LlmRequest,
    (result, starting): (&Result<LlmReply, LlmError>, bool),
    now: Instant,
) {
    match result {
        // A server loading its model, or finding the prompt too long, is healthy.
        Err(_) if starting => {
            lock(&endpoint.breaker).still_loading(now, shared.schedule.retry.max_delay);
        }
        // The server answered: it is up. What it said of its figures is worth
        // knowing for the next prompt.
        Err(LlmError::ContextExceeded {
            prompt_tokens,
            context,
            ..
        }) => {
            lock(&endpoint.breaker).succeeded();
            if let Some(prompt_tokens) = *prompt_tokens {
                let usage = TokenUsage {
                    prompt_tokens,
                    ..TokenUsage::default()
                };
                shared
                    .profiles
                    .observe(endpoint.index, &request.messages, usage);
            }
            let context_per_slot = context.and_then(|c| u32::try_from(c).ok());
            shared.profiles.learn(
                endpoint.index,
                ServerLimits {
                    context_per_slot,
                    slots: None,
                },
            );
        }
        Err(limited @ LlmError::Status { status: 429, .. }) => {
            lock(&endpoint.breaker).limited(limited);
        }
        Err(error) if error.is_server_fault() => {
            let settings = &shared.schedule.breaker;
            lock(&endpoint.breaker).failed(Instant::now(), settings, error)
        }
        // A request out of time says nothing of the server: the game set the deadline.
        // (A probe that ran out lets another go after the next open period.)
        Err(LlmError::TimedOut(_) | LlmError::BackendTimedOut(_)) => {}
        _ => lock(&endpoint.breaker).succeeded(),
    }
}

/// What `reply` to `request` says of `endpoint`'s speed and prompt cache: it was
/// `submitted`, `sent` to the server, and its first streamed piece reached the game
/// `first_token` after it was submitted. Asks the server its limits when they are
/// due.
fn note_speed(
    shared: &Arc<Shared>,
    endpoint: &Endpoint,
    request: &LlmRequest,
    reply: &LlmReply,
    (submitted, sent, first_token): (Instant, Instant, Option<Duration>),
) {
    if let Some(usage) = reply.usage {
        shared
            .profiles
            .observe(endpoint.index, &request.messages, usage);
    }
    let waited = sent.saturating_duration_since(submitted);
    let first = first_token.map(|first| first.saturating_sub(waited));
    shared.profiles.observe_speed(
        endpoint.index,
        request.priority,
        (reply.usage, reply.timings),
        (sent.elapsed(), first),
    );
    if shared.profiles.ask_when_ready(endpoint.index) {
        shared.ask_limits(endpoint);
    }
}

/// The deadline of `request`, about to go to `endpoint`, once the server's measured
/// speed predicts how long it will take: the bridge's own stretched to twice that, or
/// [`LlmError::TooSlow`] when the requester's own cannot be met. Until the speed is
/// measured (never, for a backend that reports no usage; the writing speed, after only
/// warm-ups) the prompt is not read: the bridge's own deadline is stretched to twice
/// what the slowest server it expects would take ([`unmeasured_time`]), so an actor's
/// first, cold prompt is not lost to it, and the requester's own is kept.
fn fit_to_speed(
    shared: &Shared,
    endpoint: &Endpoint,
    request: &LlmRequest,
    (given, deadline): (Deadline, Instant),
) -> Result<Instant, LlmError> {
    let now = Instant::now();
    let measured = shared.profiles.speeds(endpoint.index).0.is_some();
    let marks = measured.then(|| PromptMarks::of(&request.messages));
    let predicted = marks.as_ref().and_then(|marks| {
        let others = endpoint.running().saturating_sub(1);
        let slots = endpoint.capacity.load(std::sync::atomic::Ordering::SeqCst);
        (shared.profiles).predict(endpoint.index, (request, marks), (others, slots))
    });
    if let (Some(predicted), Deadline::Given(_)) = (predicted, given) {
        let left = deadline.saturating_duration_since(now);
        if predicted > left {
            return Err(LlmError::TooSlow { predicted, left });
        }
    }
    if let Some(marks) = marks {
        (shared.profiles).hold(endpoint.index, request.affinity, marks);
    }
    // Not predicted: a speed not measured yet (a warm-up's one answer token measures
    // only the reading).
    let expected = predicted.unwrap_or_else(|| unmeasured_time(request));
    Ok(match given {
        Deadline::Default(_) => deadline.max(later(now, expected.saturating_mul(2))),
        Deadline::Given(_) => deadline,
    })
}

/// The prompt tokens a second the slowest server the bridge expects reads: a 3B model
/// on two CPU cores reads about 20.
const SLOWEST_READING: f32 = 15.0;

/// How long the slowest server expected would take to read `request`'s whole prompt
/// (a token taken for every 3 bytes, more than most tokenizers take), before its own
/// speed was measured. Counted from its bytes, so a backend that never reports its
/// speed pays next to nothing for it; a short prompt, short.
fn unmeasured_time(request: &LlmRequest) -> Duration {
    let bytes: usize = request.messages.iter().map(|m| m.content.len()).sum();
    Duration::try_from_secs_f32(bytes as f32 / 3.0 / SLOWEST_READING).unwrap_or(Duration::MAX)
}

/// Serves one request (see [`serve`]) so that a panic anywhere in serving it ends
/// that request with [`LlmError::BackendFailed`] and frees its slot, while the
/// dispatcher and every other request go on.
pub(super) async fn serve_unwinding(shared: Arc<Shared>, job: Job, start: Start) {
    let (id, submitted) = (job.id, job.submitted);
    let served = AssertUnwindSafe(serve(Arc::clone(&shared), job, start))
        .catch_unwind()
        .await;
    if served.is_err() {
        let error = LlmError::BackendFailed(
            "serving the request panicked; see the log for where".to_owned(),
        );
        conclude(&shared, id, submitted, Err(error), None, 0);
    }
}

/// Sends a running request's one outcome and frees its slot, unless a cancellation
/// already did.
fn conclude(
    shared: &Shared,
    id: RequestId,
    submitted: Instant,
    result: Result<LlmReply, LlmError>,
    first_token: Option<Duration>,
    retries: u32,
) {
    let claimed = lock(&shared.running).remove(&id).is_some();
    if claimed {
        shared.finish(LlmResponse {
            id,
            result,
            latency: submitted.elapsed(),
            first_token,
            retries,
        });
        shared.release();
    }
}

/// What a request that waited for a server not ready yet ends with at its deadline.
fn loading(error: LlmError) -> LlmError {
    match error {
        LlmError::Unreachable { url, .. } => LlmError::Loading {
            url,
            detail: "it did not accept connections yet".to_owned(),
        },
        other => other,
    }
}

/// Exponential backoff with jitter, after `retries` tries with `left` before the
/// deadline; or the server's `Retry-After` and up to a tenth more, so that requests it
/// refused together do not all come back at once (no more than half the time the
/// deadline leaves after it: a `Retry-After` that fits before the deadline is waited).
fn retry_delay(
    policy: &RetryPolicy,
    (retries, left): (u32, Duration),
    error: &LlmError,
    rng: &mut ChaCha8Rng,
) -> Duration {
    if let LlmError::Status {
        retry_after: Some(after),
        ..
    } = error
    {
        let spread = (*after / 10).mul_f64(rng.random_range(0.0..=1.0));
        let slack = left.saturating_sub(*after) / 2;
        return after.saturating_add(spread.min(slack));
    }
    let backoff = policy
        .first_delay
        .saturating_mul(1 << retries.min(16))
        .min(policy.max_delay)
        .min(LONGEST_WAIT);
    // "Full jitter": anywhere between half and all of the backoff.
    backoff.mul_f64(rng.random_range(0.5..=1.0))
}

/// Passes a streamed answer's pieces to the game, noting when the first arrived.
fn delta_sink(
    shared: &Arc<Shared>,
    id: RequestId,
    submitted: Instant,
    first_token: &Arc<OnceLock<Duration>>,
) -> DeltaSink {
    let (shared, first_token) = (Arc::clone(shared), Arc::clone(first_token));
    DeltaSink::new(move |text| {
        first_token.get_or_init(|| submitted.elapsed());
        let _ = shared.arrivals.send(Arrival::Delta(LlmDelta { id, text }));
    })
}

/// Runs a backend on one request. A backend that panics ends its request with
/// [`LlmError::BackendFailed`] instead of leaving it without an outcome.
async fn answer(
    backend: &dyn LlmBackend,
    request: &LlmRequest,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ChatMessage;

    fn request(prompt_bytes: usize) -> LlmRequest {
        LlmRequest {
            messages: Arc::new(vec![ChatMessage::user("x".repeat(prompt_bytes))]),
            ..LlmRequest::default()
        }
    }

    #[test]
    fn a_retry_after_is_honoured_and_spread_over_a_tenth_more() {
        let policy = RetryPolicy::default();
        let asked = |after: Duration| LlmError::Status {
            status: 429,
            body: "slow down".to_owned(),
            retry_after: Some(after),
        };
        let ten = Duration::from_secs(10);
        let waits: Vec<Duration> = (0..20)
            .map(|seed| {
                let rng = &mut ChaCha8Rng::seed_from_u64(seed);
                retry_delay(&policy, (0, Duration::MAX), &asked(ten), rng)
            })
            .collect();
        assert!(
            waits
                .iter()
                .all(|wait| (ten..=ten + ten / 10).contains(wait)),
            "{waits:?}"
        );
        let first = waits[0];
        assert!(
            waits.iter().any(|wait| *wait != first),
            "not all at once: {waits:?}"
        );
        let rng = &mut ChaCha8Rng::seed_from_u64(0);
        assert_eq!(
            retry_delay(&policy, (0, Duration::MAX), &asked(Duration::MAX), rng),
            Duration::MAX,
            "the longest wait does not overflow"
        );
        let rng = &mut ChaCha8Rng::seed_from_u64(0);
        let left = ten + Duration::from_millis(100);
        let wait = retry_delay(&policy, (0, left), &asked(ten), rng);
        assert!(
            (ten..left).contains(&wait),
            "spread within the deadline: {wait:?}"
        );
    }

    #[test]
    fn before_its_speed_is_measured_a_server_is_assumed_slow_enough_for_a_cold_prompt() {
        // An innkeeper's first prompt, about 4,500 bytes: 1,500 tokens at 15 a second.
        let cold = unmeasured_time(&request(4500));
        assert_eq!(cold.as_secs(), 100);
        assert!(
            cold * 2 > crate::llm::LlmSettings::default().deadline,
            "twice it is longer than the default deadline"
        );
        assert_eq!(
            unmeasured_time(&request(45)).as_millis(),
            1000,
            "a short one"
        );
        assert_eq!(unmeasured_time(&request(0)), Duration::ZERO);
    }
}
