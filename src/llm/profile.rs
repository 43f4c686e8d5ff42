//! What the bridge learns of each endpoint as it answers: how many tokens the server
//! reads a character (from the `usage` it reports), and the context one of its slots
//! holds (from what it says of itself, [`LlmBackend::limits`](super::LlmBackend::limits)).
//! The game side reads them without locking to measure and budget prompts in the
//! server's own tokens.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::{ChatMessage, TokenUsage};

/// What a server says of its own limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerLimits {
    /// The tokens one request may take, prompt and answer together (llama.cpp's
    /// `n_ctx` per slot).
    pub context_per_slot: Option<u32>,
    /// How many requests it answers side by side (llama.cpp's `total_slots`).
    pub slots: Option<u32>,
}

/// One endpoint's profile, shared by the bridge's two sides.
#[derive(Debug, Default)]
struct ServerProfile {
    /// Tokens a character, as `f32` bits; 0 until a server reported usage.
    tokens_per_char: AtomicU32,
    /// 0 while unknown.
    context_per_slot: AtomicU32,
    /// Whether the server was asked for its limits after it first answered.
    asked_when_ready: AtomicBool,
    /// How many reports in a row came in far below the rate.
    low_reports: AtomicU32,
}

/// Every endpoint's profile, in the bridge's endpoint order.
#[derive(Debug, Default)]
pub(super) struct ServerProfiles(Vec<ServerProfile>);

/// How much a new measurement moves the rate: enough to settle within a few answers,
/// little enough that one odd answer does not swing it.
const WEIGHT_OF_NEW: f32 = 0.5;

/// The smallest context per slot a server is believed to have.
const SMALLEST_CONTEXT: u32 = 512;

/// How many reports in a row far below the rate make it move after all.
const LOW_REPORTS_TRUSTED: u32 = 3;

impl ServerProfiles {
    pub(super) fn new(endpoints: usize) -> Self {
        Self((0..endpoints).map(|_| ServerProfile::default()).collect())
    }

    /// Notes the tokens a server reported for a prompt of these messages.
    pub(super) fn observe(&self, endpoint: usize, messages: &[ChatMessage], usage: TokenUsage) {
        let Some(profile) = self.0.get(endpoint) else {
            return;
        };
        let chars: usize = messages.iter().map(|m| m.content.chars().count()).sum();
        if chars == 0 || usage.prompt_tokens == 0 {
            return;
        }
        let measured = usage.prompt_tokens as f32 / chars as f32;
        let known = f32::from_bits(profile.tokens_per_char.load(Ordering::Relaxed));
        let rate = if known > 0.0 {
            // Some servers report only the tokens they did not have cached: a rate far
            // below the known one is that, not the tokenizer, unless it keeps coming
            // (the known rate came from one count too high).
            if measured < known / 2.0 {
                let in_a_row = profile.low_reports.fetch_add(1, Ordering::Relaxed) + 1;
                if in_a_row < LOW_REPORTS_TRUSTED {
                    return;
                }
                profile.low_reports.store(0, Ordering::Relaxed);
                measured
            } else {
                profile.low_reports.store(0, Ordering::Relaxed);
                known + WEIGHT_OF_NEW * (measured - known)
            }
        } else {
            measured
        };
        if rate.is_finite() && rate > 0.0 {
            profile
                .tokens_per_char
                .store(rate.to_bits(), Ordering::Relaxed);
        }
    }

    /// Notes what a server said of its limits. A context too small to hold any
    /// decision prompt is not believed: it would only start every transcript cold.
    pub(super) fn learn(&self, endpoint: usize, limits: ServerLimits) {
        let context = limits
            .context_per_slot
            .filter(|&context| context >= SMALLEST_CONTEXT);
        if let (Some(profile), Some(context)) = (self.0.get(endpoint), context) {
            profile.context_per_slot.store(context, Ordering::Relaxed);
        }
    }

    /// Whether to ask a server that just answered for its limits: once, and only while
    /// they are unknown (it may have been loading when the bridge started).
    pub(super) fn ask_when_ready(&self, endpoint: usize) -> bool {
        self.0.get(endpoint).is_some_and(|profile| {
            profile.context_per_slot.load(Ordering::Relaxed) == 0
                && !profile.asked_when_ready.swap(true, Ordering::Relaxed)
        })
    }

    /// The endpoint requests with this affinity prefer; all of them without one.
    fn for_affinity(&self, affinity: Option<u64>) -> impl Iterator<Item = &ServerProfile> {
        let preferred = affinity
            .and_then(|affinity| super::scheduler::split_affinity(affinity, self.0.len()))
            .map(|(server, _)| server);
        self.0
            .iter()
            .enumerate()
            .filter(move |(index, _)| preferred.is_none_or(|p| p == *index))
            .map(|(_, profile)| profile)
    }

    /// Tokens a character on the endpoint for `affinity` (the first measured one
    /// without), once a server reported usage.
    pub(super) fn tokens_per_char(&self, affinity: Option<u64>) -> Option<f32> {
        self.for_affinity(affinity)
            .map(|profile| f32::from_bits(profile.tokens_per_char.load(Ordering::Relaxed)))
            .find(|&rate| rate > 0.0)
    }

    /// The context per slot of the endpoint for `affinity` (the smallest known
    /// without), once its server said it.
    pub(super) fn context_per_slot(&self, affinity: Option<u64>) -> Option<u32> {
        self.for_affinity(affinity)
            .map(|profile| profile.context_per_slot.load(Ordering::Relaxed))
            .filter(|&context| context > 0)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt_tokens: u64) -> TokenUsage {
        TokenUsage {
            prompt_tokens,
            completion_tokens: 1,
        }
    }

    #[test]
    fn the_rate_follows_reports_and_ignores_cached_counts() {
        let profiles = ServerProfiles::new(2);
        let prompt = [ChatMessage::user("x".repeat(1000))];
        assert_eq!(profiles.tokens_per_char(Some(1)), None);
        profiles.observe(1, &prompt, usage(300));
        assert_eq!(profiles.tokens_per_char(Some(1)), Some(0.3));
        assert_eq!(profiles.tokens_per_char(Some(0)), None, "another server");
        assert_eq!(profiles.tokens_per_char(None), Some(0.3));
        profiles.observe(1, &prompt, usage(20));
        assert_eq!(
            profiles.tokens_per_char(Some(1)),
            Some(0.3),
            "only the uncached part"
        );
        profiles.observe(1, &prompt, usage(400));
        let moved = profiles.tokens_per_char(Some(1)).expect("a rate");
        assert!(
            (moved - 0.35).abs() < 1e-6,
            "half way to the new rate: {moved}"
        );
        // One count far too high does not hold the rate up for good.
        profiles.observe(1, &prompt, usage(5000));
        for _ in 0..6 {
            profiles.observe(1, &prompt, usage(300));
        }
        let settled = profiles.tokens_per_char(Some(1)).expect("a rate");
        assert!(settled < 0.5, "back near the reports: {settled}");
    }

    #[test]
    fn limits_are_asked_for_once_when_unknown() {
        let profiles = ServerProfiles::new(1);
        assert!(profiles.ask_when_ready(0));
        assert!(!profiles.ask_when_ready(0));
        profiles.learn(
            0,
            ServerLimits {
                context_per_slot: Some(4096),
                slots: Some(1),
            },
        );
        assert_eq!(profiles.context_per_slot(Some(7)), Some(4096));
        assert!(!profiles.ask_when_ready(3), "no such endpoint");
        profiles.learn(
            0,
            ServerLimits {
                context_per_slot: Some(1),
                slots: None,
            },
        );
        assert_eq!(profiles.context_per_slot(None), Some(4096), "not believed");
    }
}
