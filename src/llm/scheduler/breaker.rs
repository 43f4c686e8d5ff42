//! An endpoint's circuit breaker: closed while the server answers, open (failing fast)
//! after repeated failures, then one probe at a time until one succeeds; and whether
//! the server was last seen loading its model.

use std::time::{Duration, Instant};

use super::later;
use crate::llm::LlmError;

/// The most characters of a failure a breaker keeps to tell why it opened.
const FAILURE_CHARS: usize = 300;

/// When an endpoint's circuit breaker opens, and for how long.
#[derive(Debug, Clone, PartialEq, Eq, bevy::reflect::Reflect)]
pub struct BreakerSettings {
    /// Consecutive failures that open the breaker.
    pub failures_to_open: u32,
    /// How long an open breaker fails fast before one probe request may try again.
    pub open_for: Duration,
}

impl Default for BreakerSettings {
    fn default() -> Self {
        Self {
            failures_to_open: 3,
            open_for: Duration::from_secs(10),
        }
    }
}

/// Where an endpoint's circuit breaker is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bevy::reflect::Reflect)]
pub enum BreakerState {
    /// The server answers: requests go to it.
    Closed,
    /// The server failed repeatedly: requests to it fail fast until the open period
    /// ends.
    Open,
    /// The open period ended: one probe request may go, or one is out, and the
    /// breaker closes when it succeeds.
    Probing,
}

/// How one model server is doing, as its breaker sees it
/// ([`LlmBridge::endpoint_health`](crate::llm::LlmBridge::endpoint_health)).
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointHealth {
    /// The endpoint as its backend describes it (never with a credential).
    pub endpoint: String,
    /// Its breaker.
    pub breaker: BreakerState,
    /// Whether the server was last seen not ready: loading its model, or not
    /// accepting connections yet ([`RetryPolicy::startup_grace`](crate::llm::RetryPolicy::startup_grace)).
    pub loading: bool,
    /// Why it last failed since it last answered, if it did.
    pub last_failure: Option<String>,
    /// Prompt tokens its server reads a second, once measured.
    pub prompt_tokens_per_second: Option<f32>,
    /// Answer tokens its server writes a second, once measured.
    pub answer_tokens_per_second: Option<f32>,
}

#[derive(Debug, Default)]
pub(in crate::llm) struct Breaker {
    failures: u32,
    open_until: Option<Instant>,
    /// When the probe of a half-open breaker went out; a probe that never reports
    /// back (cancelled) lets another go after one more open period.
    probing_since: Option<Instant>,
    /// Until when the server is taken to be still loading its model: requests go to
    /// another endpoint while one is ready.
    loading_until: Option<Instant>,
    /// The last failure since the server last answered, in words: what a request
    /// failed fast is told, since it often says what to fix.
    last_failure: Option<String>,
}

impl Breaker {
    /// Whether a request may go to this endpoint now. After the open period, one probe may.
    pub(super) fn admits(&self, now: Instant, settings: &BreakerSettings) -> bool {
        match (self.open_until, self.probing_since) {
            (None, _) => true,
            (Some(until), None) => now >= until,
            (Some(_), Some(since)) => now >= later(since, settings.open_for),
        }
    }

    /// Where the breaker is at `now`, and whether the server may still be loading.
    pub(in crate::llm) fn state(&self, now: Instant) -> (BreakerState, bool) {
        let state = match (self.open_until, self.probing_since) {
            (None, _) => BreakerState::Closed,
            (Some(until), None) if now < until => BreakerState::Open,
            (Some(_), _) => BreakerState::Probing,
        };
        (state, self.loading(now))
    }

    /// Takes the admission [`admits`](Self::admits) granted: an open breaker's probe.
    pub(super) fn admit(&mut self, now: Instant) {
        if self.open_until.is_some() {
            self.probing_since = Some(now);
        }
    }

    /// A request it admitted was not sent after all (too slow for its deadline, or out
    /// of time before it went): were it the probe, the next request may probe.
    pub(super) fn not_sent(&mut self) {
        self.probing_since = None;
    }

    /// Whether the server was last seen loading its model, and may still be.
    pub(super) fn loading(&self, now: Instant) -> bool {
        self.loading_until.is_some_and(|until| now < until)
    }

    /// The server answered that it is loading its model: take it to be loading for
    /// `for_about`, and let the next probe go.
    pub(super) fn still_loading(&mut self, now: Instant, for_about: Duration) {
        self.loading_until = Some(later(now, for_about));
        self.probing_since = None;
    }

    /// The server answered (even with a client error): it is up.
    pub(super) fn succeeded(&mut self) {
        *self = Self::default();
    }

    /// Why the server last failed since it last answered, if it did.
    pub(in crate::llm) fn last_failure(&self) -> Option<&str> {
        self.last_failure.as_deref()
    }

    /// The server answered that it limits how often it is asked (HTTP 429), as `why`
    /// says: it is up, so the failures counted stay as they are, but the request got
    /// no answer. Why is kept to tell, and an open breaker's probe lets the next go.
    pub(super) fn limited(&mut self, why: &LlmError) {
        self.last_failure = Some(in_few_words(why));
        self.probing_since = None;
    }

    /// The server was unreachable, overloaded or failing, as `why` says.
    pub(super) fn failed(&mut self, now: Instant, settings: &BreakerSettings, why: &LlmError) {
        self.last_failure = Some(in_few_words(why));
        self.failures = self.failures.saturating_add(1);
        if self.probing_since.is_some() || self.failures >= settings.failures_to_open {
            self.open_until = Some(later(now, settings.open_for));
            self.probing_since = None;
        }
    }
}

/// What `why` says, cut at [`FAILURE_CHARS`] characters.
fn in_few_words(why: &LlmError) -> String {
    let said = why.to_string();
    let mut words: String = said.chars().take(FAILURE_CHARS).collect();
    if words.len() < said.len() {
        words.push('…');
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's failure, as the breaker is told of it.
    fn down() -> LlmError {
        LlmError::Status {
            status: 502,
            body: "down".to_owned(),
            retry_after: None,
        }
    }

    #[test]
    fn a_breaker_keeps_why_the_server_last_failed_until_it_answers() {
        let settings = BreakerSettings::default();
        let mut breaker = Breaker::default();
        assert_eq!(breaker.last_failure(), None);
        breaker.failed(Instant::now(), &settings, &down());
        assert_eq!(
            breaker.last_failure(),
            Some("the model server answered HTTP 502: down")
        );
        let long = LlmError::Status {
            status: 500,
            body: "x".repeat(1000),
            retry_after: None,
        };
        breaker.failed(Instant::now(), &settings, &long);
        let kept = breaker.last_failure().unwrap_or_default();
        assert_eq!(
            kept.chars().count(),
            FAILURE_CHARS + 1,
            "cut, with an ellipsis"
        );
        assert!(kept.ends_with('…'));
        breaker.succeeded();
        assert_eq!(breaker.last_failure(), None, "forgotten once it answers");
    }

    /// A rate limit is no failure, and no answer either: the failures counted stay,
    /// and it is why the server last failed.
    #[test]
    fn a_rate_limit_keeps_the_count_and_says_why() {
        let settings = BreakerSettings {
            failures_to_open: 2,
            ..BreakerSettings::default()
        };
        let now = Instant::now();
        let mut breaker = Breaker::default();
        breaker.failed(now, &settings, &down());
        let limited = LlmError::Status {
            status: 429,
            body: "slow down".to_owned(),
            retry_after: None,
        };
        breaker.limited(&limited);
        assert_eq!(breaker.state(now).0, BreakerState::Closed);
        assert!(
            breaker
                .last_failure()
                .is_some_and(|why| why.starts_with("the model server answered HTTP 429")),
            "{:?}",
            breaker.last_failure()
        );
        breaker.failed(now, &settings, &down());
        assert_eq!(
            breaker.state(now).0,
            BreakerState::Open,
            "the second failure opens it"
        );
    }

    /// The breaker's life on a clock of the test's own: open after enough failures,
    /// one probe once the open period passed, closed by a good probe, open again
    /// after a bad one.
    #[test]
    fn a_breaker_opens_lets_one_probe_through_and_closes_on_its_success() {
        let settings = BreakerSettings {
            failures_to_open: 2,
            open_for: Duration::from_secs(10),
        };
        let start = Instant::now();
        let at = |seconds: u64| start + Duration::from_secs(seconds);
        let mut breaker = Breaker::default();
        let state = |breaker: &Breaker, now| breaker.state(now).0;
        breaker.failed(at(0), &settings, &down());
        assert!(
            breaker.admits(at(0), &settings),
            "one failure is not enough"
        );
        assert_eq!(state(&breaker, at(0)), BreakerState::Closed);
        breaker.failed(at(1), &settings, &down());
        assert!(!breaker.admits(at(1), &settings), "open: fails fast");
        assert_eq!(state(&breaker, at(1)), BreakerState::Open);
        assert!(!breaker.admits(at(10), &settings), "still open");
        assert!(breaker.admits(at(11), &settings), "the open period passed");
        assert_eq!(state(&breaker, at(11)), BreakerState::Probing);
        breaker.admit(at(11));
        assert!(!breaker.admits(at(12), &settings), "one probe at a time");
        assert_eq!(state(&breaker, at(12)), BreakerState::Probing);
        breaker.failed(at(12), &settings, &down());
        assert!(
            !breaker.admits(at(21), &settings),
            "a bad probe opens it again"
        );
        assert!(breaker.admits(at(22), &settings));
        breaker.admit(at(22));
        breaker.succeeded();
        assert!(breaker.admits(at(22), &settings), "a good probe closes it");
        assert_eq!(state(&breaker, at(22)), BreakerState::Closed);
        breaker.failed(at(23), &settings, &down());
        assert!(
            breaker.admits(at(23), &settings),
            "and counts from zero again"
        );
    }

    /// A breaker opened for 10 s by a failure at 0 s, whose probe went at 10 s; its
    /// settings, and the instant `seconds` after 0 s.
    fn probing() -> (Breaker, BreakerSettings, impl Fn(u64) -> Instant) {
        let settings = BreakerSettings {
            failures_to_open: 1,
            open_for: Duration::from_secs(10),
        };
        let start = Instant::now();
        let at = move |seconds: u64| start + Duration::from_secs(seconds);
        let mut breaker = Breaker::default();
        breaker.failed(at(0), &settings, &down());
        breaker.admit(at(10));
        (breaker, settings, at)
    }

    /// A probe that never reports back (cancelled) lets another go one open period on.
    #[test]
    fn a_probe_that_never_reports_lets_another_go_later() {
        let (breaker, settings, at) = probing();
        assert!(!breaker.admits(at(19), &settings));
        assert!(breaker.admits(at(20), &settings));
    }

    #[test]
    fn a_probe_not_sent_lets_the_next_request_probe_at_once() {
        let (mut breaker, settings, at) = probing();
        breaker.not_sent();
        assert!(breaker.admits(at(11), &settings));
        assert_eq!(breaker.state(at(11)).0, BreakerState::Probing);
    }
}
