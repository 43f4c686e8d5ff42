//! `LlmStats`: what the bridge has done, for overlays, logs and tuning.

use std::collections::VecDeque;
use std::time::Duration;

use bevy::prelude::*;

use super::{LlmBridge, LlmError, LlmResponse};

/// How many recent requests the percentiles are taken over.
const WINDOW: usize = 512;

/// Counters and recent timings of the bridge, updated every frame in
/// [`LoomSystems::Receive`](crate::LoomSystems::Receive).
#[derive(Resource, Debug, Clone, Default)]
pub struct LlmStats {
    /// Waiting for a free slot.
    pub queued: usize,
    /// Being answered now.
    pub in_flight: usize,
    /// Answered.
    pub completed: u64,
    /// Ended in an error other than a cancellation, a timeout or
    /// [`LlmError::TooSlow`] (counted in `too_slow`).
    pub failed: u64,
    /// Cancelled.
    pub cancelled: u64,
    /// Ran out of time: answering, or queued behind other requests
    /// ([`LlmError::NotStarted`]).
    pub timed_out: u64,
    /// Not sent, because the server's measured speed could not meet their deadline
    /// ([`LlmError::TooSlow`]).
    pub too_slow: u64,
    /// Tries after a first failure, across all requests.
    pub retries: u64,
    /// Prompt tokens, as servers reported them.
    pub tokens_in: u64,
    /// Answer tokens, as servers reported them.
    pub tokens_out: u64,
    latencies: VecDeque<Duration>,
    first_tokens: VecDeque<Duration>,
    /// How long the answers that reported their tokens took, in all.
    answering: Duration,
}

impl LlmStats {
    /// Counts one outcome. Counters stop at their largest value: token counts come
    /// from servers, which may report anything.
    pub fn record(&mut self, response: &LlmResponse) {
        self.retries = self.retries.saturating_add(u64::from(response.retries));
        match &response.result {
            Ok(reply) => {
                self.completed = self.completed.saturating_add(1);
                if let Some(usage) = reply.usage {
                    self.tokens_in = self.tokens_in.saturating_add(usage.prompt_tokens);
                    self.tokens_out = self.tokens_out.saturating_add(usage.completion_tokens);
                    self.answering = self.answering.saturating_add(response.latency);
                }
                push(&mut self.latencies, response.latency);
                if let Some(first) = response.first_token {
                    push(&mut self.first_tokens, first);
                }
            }
            Err(LlmError::Cancelled) => self.cancelled = self.cancelled.saturating_add(1),
            Err(LlmError::TimedOut(_) | LlmError::NotStarted(_) | LlmError::BackendTimedOut(_)) => {
                self.timed_out = self.timed_out.saturating_add(1)
            }
            Err(LlmError::TooSlow { .. }) => self.too_slow = self.too_slow.saturating_add(1),
            Err(_) => self.failed = self.failed.saturating_add(1),
        }
    }

    /// The median time to an answer, over recent answered requests.
    pub fn latency_p50(&self) -> Option<Duration> {
        percentile(&self.latencies, 50)
    }

    /// The 95th-percentile time to an answer, over recent answered requests.
    pub fn latency_p95(&self) -> Option<Duration> {
        percentile(&self.latencies, 95)
    }

    /// The median time to the first piece of a streamed answer.
    pub fn first_token_p50(&self) -> Option<Duration> {
        percentile(&self.first_tokens, 50)
    }

    /// The 95th-percentile time to the first piece of a streamed answer.
    pub fn first_token_p95(&self) -> Option<Duration> {
        percentile(&self.first_tokens, 95)
    }

    /// Answer tokens per second of a request: the answer tokens servers reported over
    /// the time their requests took, prompt reading and queueing on the server
    /// included; `None` until a server reported tokens.
    pub fn tokens_per_second(&self) -> Option<f64> {
        let seconds = self.answering.as_secs_f64();
        (seconds > 0.0).then(|| self.tokens_out as f64 / seconds)
    }
}

fn push(window: &mut VecDeque<Duration>, sample: Duration) {
    if window.len() == WINDOW {
        window.pop_front();
    }
    window.push_back(sample);
}

/// The nearest-rank percentile.
fn percentile(window: &VecDeque<Duration>, percent: usize) -> Option<Duration> {
    if window.is_empty() {
        return None;
    }
    let mut sorted: Vec<Duration> = window.iter().copied().collect();
    sorted.sort_unstable();
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

pub(super) fn update_stats(bridge: &LlmBridge, done: &[LlmResponse], stats: &mut LlmStats) {
    for response in done {
        stats.record(response);
    }
    stats.in_flight = bridge.running();
    stats.queued = bridge.in_flight().saturating_sub(stats.in_flight);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{LlmReply, RequestId, TokenUsage};

    fn answered(millis: u64) -> LlmResponse {
        LlmResponse {
            id: RequestId(millis),
            result: Ok(LlmReply {
                text: String::new(),
                usage: Some(TokenUsage {
                    prompt_tokens: 10,
                    completion_tokens: 2,
                    ..TokenUsage::default()
                }),
                ..LlmReply::default()
            }),
            latency: Duration::from_millis(millis),
            first_token: Some(Duration::from_millis(millis / 2)),
            retries: 1,
        }
    }

    #[test]
    fn counts_outcomes_and_takes_percentiles() {
        let mut stats = LlmStats::default();
        for millis in 1..=100 {
            stats.record(&answered(millis));
        }
        stats.record(&LlmResponse {
            result: Err(LlmError::Cancelled),
            ..answered(1)
        });
        stats.record(&LlmResponse {
            result: Err(LlmError::TimedOut(Duration::ZERO)),
            ..answered(1)
        });
        stats.record(&LlmResponse {
            result: Err(LlmError::Unavailable(String::new())),
            ..answered(1)
        });
        assert_eq!(
            (
                stats.completed,
                stats.cancelled,
                stats.timed_out,
                stats.failed
            ),
            (100, 1, 1, 1)
        );
        assert_eq!(
            (stats.tokens_in, stats.tokens_out, stats.retries),
            (1000, 200, 103)
        );
        assert_eq!(stats.latency_p50(), Some(Duration::from_millis(50)));
        assert_eq!(stats.latency_p95(), Some(Duration::from_millis(95)));
        assert_eq!(stats.first_token_p95(), Some(Duration::from_millis(47)));
        assert_eq!(LlmStats::default().latency_p50(), None);
        // 200 answer tokens over the 5.05 s the answered requests took.
        let rate = stats.tokens_per_second().unwrap_or_default();
        assert!((rate - 200.0 / 5.05).abs() < 1e-9, "{rate}");
        assert_eq!(LlmStats::default().tokens_per_second(), None);
    }

    #[test]
    fn token_counts_a_server_inflates_stop_at_the_largest_count() {
        let mut stats = LlmStats::default();
        let inflated = LlmResponse {
            result: Ok(LlmReply {
                text: String::new(),
                usage: Some(TokenUsage {
                    prompt_tokens: u64::MAX,
                    completion_tokens: u64::MAX - 1,
                    ..TokenUsage::default()
                }),
                ..LlmReply::default()
            }),
            ..answered(1)
        };
        stats.record(&inflated);
        stats.record(&inflated);
        assert_eq!((stats.tokens_in, stats.tokens_out), (u64::MAX, u64::MAX));
        assert_eq!(stats.completed, 2);
    }
}
