//! What the bridge learns of each endpoint as it answers: how many tokens the server
//! reads a character (from the `usage` it reports), the context one of its slots
//! holds (from what it says of itself, [`LlmBackend::limits`](super::LlmBackend::limits)),
//! and how fast it reads a prompt and writes an answer, which with the prompts it last
//! read predicts how long a request will take there.
//! The game side reads them without locking to measure and budget prompts in the
//! server's own tokens.

use std::hash::BuildHasher;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use bevy::platform::collections::HashMap;
use bevy::platform::hash::FixedHasher;

use super::{ChatMessage, LlmRequest, Priority, ServerTimings, TokenUsage};

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
    /// Prompt tokens read a second, as `f32` bits; 0 until measured.
    prompt_per_second: AtomicU32,
    /// Answer tokens written a second, as `f32` bits; 0 until measured.
    answer_per_second: AtomicU32,
    /// The usual answer's tokens for each [`Priority`] (a narration's and a decision's
    /// differ), as `f32` bits; 0 until one answered.
    answer_tokens: [AtomicU32; 3],
    /// The prompt last sent with each affinity, as the server may still hold it, and
    /// when it was sent (the count of prompts sent before it).
    held: Mutex<HashMap<u64, (u64, PromptMarks)>>,
    /// How many prompts were sent.
    sent: AtomicU64,
}

/// A message as a prediction compares it: its fingerprint and its characters.
type MessageMark = (u64, usize);

/// A prompt as a prediction compares it: each message's [`MessageMark`].
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct PromptMarks(Vec<MessageMark>);

impl PromptMarks {
    /// The marks of these messages.
    pub(super) fn of(messages: &[ChatMessage]) -> Self {
        Self(messages.iter().map(mark).collect())
    }
}

/// The most affinities whose prompts a profile remembers; past it, it forgets those
/// it last sent to longest ago.
const HELD_PROMPTS: usize = 4096;

/// The fewest tokens a measurement of speed is taken from: fewer say more of a
/// server's fixed costs than of its speed.
const FEWEST_TOKENS_MEASURED: u64 = 8;

/// The slowest speed believed, in tokens a second: a token in ten seconds serves no
/// game, and timings that say so are wrong (a server's clock, a bug). Believed, they
/// would refuse every request with a deadline as too slow, and so never be measured
/// again by those.
const SLOWEST_BELIEVED: f32 = 0.1;

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

    /// Notes how fast an endpoint served a request: from the `timings` its server
    /// reported, or else, for a streamed answer, from the time to its first piece
    /// (`first_token`, the prompt read) and the rest of `served` (the answer written),
    /// both counted from when the request was sent. Without either, the time cannot be
    /// split between reading and writing, and nothing is learnt.
    pub(super) fn observe_speed(
        &self,
        endpoint: usize,
        priority: Priority,
        (usage, timings): (Option<TokenUsage>, Option<ServerTimings>),
        (served, first_token): (Duration, Option<Duration>),
    ) {
        let Some(profile) = self.0.get(endpoint) else {
            return;
        };
        let answered = timings
            .map(|t| t.answer_tokens)
            .or(usage.map(|u| u.completion_tokens));
        if let Some(answered) = answered {
            ewma(
                &profile.answer_tokens[priority_index(priority)],
                answered as f32,
            );
        }
        let (read, reading, written, writing) = match (timings, usage, first_token) {
            (Some(t), _, _) => (t.prompt_tokens, t.prompt, t.answer_tokens, t.answer),
            (None, Some(usage), Some(first)) => (
                usage.new_prompt_tokens(),
                first,
                usage.completion_tokens.saturating_sub(1),
                served.saturating_sub(first),
            ),
            _ => return,
        };
        let rate = |tokens: u64, time: Duration| {
            let rate = (tokens >= FEWEST_TOKENS_MEASURED && !time.is_zero())
                .then(|| tokens as f32 / time.as_secs_f32());
            rate.filter(|&rate| rate >= SLOWEST_BELIEVED)
        };
        if let Some(rate) = rate(read, reading) {
            ewma(&profile.prompt_per_second, rate);
        }
        if let Some(rate) = rate(written, writing) {
            ewma(&profile.answer_per_second, rate);
        }
    }

    /// How long `request` (whose messages are `marks`) would take on `endpoint` beside
    /// `others` requests running there: reading the part of its prompt the server does
    /// not hold from the last prompt sent there with the same affinity ([`hold`](Self::hold);
    /// others read theirs at the same time, and share its speed), then writing an answer
    /// as long as the usual one of its priority (at most its `max_tokens`). A server of
    /// `slots` slots is taken to hold the prompts of the last `slots` affinities sent
    /// there: actors sharing one llama.cpp slot push each other's out. `None` until the
    /// endpoint's speeds and tokens a character are known.
    pub(super) fn predict(
        &self,
        endpoint: usize,
        (request, marks): (&LlmRequest, &PromptMarks),
        (others, slots): (usize, usize),
    ) -> Option<Duration> {
        let profile = self.0.get(endpoint)?;
        let per_char = measured(&profile.tokens_per_char)?;
        let reading = measured(&profile.prompt_per_second)?;
        let writing = measured(&profile.answer_per_second)?;
        let held: usize = match request.affinity {
            Some(affinity) => {
                let held = super::scheduler::lock(&profile.held);
                let last = match held.get(&affinity) {
                    // Pushed out by as many other affinities' prompts as it has slots.
                    Some((sent, _))
                        if held.values().filter(|(s, _)| s > sent).take(slots).count() >= slots =>
                    {
                        &[][..]
                    }
                    Some((_, last)) => &last.0[..],
                    None => &[][..],
                };
                let same = marks.0.iter().zip(last).take_while(|(a, b)| a == b);
                same.map(|((_, chars), _)| chars).sum()
            }
            None => 0,
        };
        let chars: usize = marks.0.iter().map(|&(_, chars)| chars).sum();
        let to_read = chars.saturating_sub(held) as f32 * per_char;
        let usual = measured(&profile.answer_tokens[priority_index(request.priority)]);
        let limit = request.sampling.max_tokens.map(|max| max as f32);
        let to_write = match (usual, limit) {
            (Some(usual), Some(limit)) => usual.min(limit),
            (usual, limit) => usual.or(limit).unwrap_or(0.0),
        };
        let seconds = to_read * (others + 1) as f32 / reading + to_write / writing;
        Duration::try_from_secs_f32(seconds).ok()
    }

    /// Notes that `endpoint` was sent a prompt (`marks`) with `affinity`: it holds it
    /// for the next one with the same affinity, until others push it out.
    pub(super) fn hold(&self, endpoint: usize, affinity: Option<u64>, marks: PromptMarks) {
        let (Some(profile), Some(affinity)) = (self.0.get(endpoint), affinity) else {
            return;
        };
        let sent = profile.sent.fetch_add(1, Ordering::Relaxed);
        let mut held = super::scheduler::lock(&profile.held);
        if held.len() >= HELD_PROMPTS && !held.contains_key(&affinity) {
            // The older half goes: prompts sent that long ago are pushed out of any
            // server with fewer slots, and the newer ones are what a server holds now.
            let newest_half = sent.saturating_sub(HELD_PROMPTS as u64 / 2);
            held.retain(|_, (sent, _)| *sent >= newest_half);
        }
        held.insert(affinity, (sent, marks));
    }

    /// The speeds measured on an endpoint: prompt tokens read and answer tokens
    /// written a second, once each was measured.
    pub(super) fn speeds(&self, endpoint: usize) -> (Option<f32>, Option<f32>) {
        let Some(profile) = self.0.get(endpoint) else {
            return (None, None);
        };
        (
            measured(&profile.prompt_per_second),
            measured(&profile.answer_per_second),
        )
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
            .find_map(|profile| measured(&profile.tokens_per_char))
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

/// The `f32` in `bits`, once one was measured.
fn measured(bits: &AtomicU32) -> Option<f32> {
    Some(f32::from_bits(bits.load(Ordering::Relaxed))).filter(|&value| value > 0.0)
}

/// Moves the `f32` in `bits` toward `measured` (to it, the first time).
fn ewma(bits: &AtomicU32, measured: f32) {
    if !measured.is_finite() || measured <= 0.0 {
        return;
    }
    let known = f32::from_bits(bits.load(Ordering::Relaxed));
    let value = if known > 0.0 {
        known + WEIGHT_OF_NEW * (measured - known)
    } else {
        measured
    };
    bits.store(value.to_bits(), Ordering::Relaxed);
}

fn priority_index(priority: Priority) -> usize {
    match priority {
        Priority::Background => 0,
        Priority::Narration => 1,
        Priority::Dialogue => 2,
    }
}

/// A message's fingerprint (its role and text) and its characters.
fn mark(message: &ChatMessage) -> MessageMark {
    let fingerprint = FixedHasher.hash_one((&*message.role, &*message.content));
    (fingerprint, message.content.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt_tokens: u64) -> TokenUsage {
        TokenUsage {
            prompt_tokens,
            completion_tokens: 1,
            cached_tokens: None,
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

    fn seconds(seconds: u64) -> Duration {
        Duration::from_secs(seconds)
    }

    #[test]
    fn speeds_come_from_the_server_timings_or_the_first_token() {
        let profiles = ServerProfiles::new(1);
        let timings = ServerTimings {
            prompt_tokens: 420,
            prompt: seconds(20),
            answer_tokens: 22,
            answer: seconds(2),
        };
        let reported = (Some(usage(500)), Some(timings));
        profiles.observe_speed(0, Priority::Background, reported, (seconds(25), None));
        assert_eq!(profiles.speeds(0), (Some(21.0), Some(11.0)));
        // Without timings, a streamed answer's first piece came once the prompt's
        // uncached tokens were read.
        let streamed = ServerProfiles::new(1);
        let usage = TokenUsage {
            prompt_tokens: 300,
            completion_tokens: 41,
            cached_tokens: Some(100),
        };
        let times = (seconds(14), Some(seconds(10)));
        streamed.observe_speed(0, Priority::Background, (Some(usage), None), times);
        assert_eq!(streamed.speeds(0), (Some(20.0), Some(10.0)));
        // Without either, the time cannot be split: nothing is learnt.
        let whole = ServerProfiles::new(1);
        whole.observe_speed(
            0,
            Priority::Background,
            (Some(usage), None),
            (seconds(14), None),
        );
        assert_eq!(whole.speeds(0), (None, None));
        assert_eq!(whole.speeds(3), (None, None), "no such endpoint");
        // Timings no server could have (llama.cpp's `predicted_ms` at 1e15) are not
        // believed; the speeds measured before stay.
        let absurd = ServerTimings {
            prompt_tokens: 420,
            prompt: Duration::from_secs_f64(1e12),
            answer_tokens: 22,
            answer: Duration::from_secs_f64(1e12),
        };
        let told = (Some(usage), Some(absurd));
        profiles.observe_speed(0, Priority::Background, told, (seconds(25), None));
        assert_eq!(profiles.speeds(0), (Some(21.0), Some(11.0)));
    }

    #[test]
    fn a_prediction_counts_only_what_the_server_does_not_hold() {
        let profiles = ServerProfiles::new(1);
        let system = ChatMessage::system("r".repeat(2000));
        let user = ChatMessage::user("u".repeat(1000));
        let first = LlmRequest {
            messages: std::sync::Arc::new(vec![system.clone(), user.clone()]),
            affinity: Some(7),
            ..LlmRequest::default()
        };
        let marks = PromptMarks::of(&first.messages);
        assert_eq!(
            profiles.predict(0, (&first, &marks), (0, 1)),
            None,
            "not measured"
        );
        // A quarter of a token a character; 25 tokens read and 10 written a second.
        profiles.observe(0, &first.messages, usage(750));
        let timings = ServerTimings {
            prompt_tokens: 750,
            prompt: seconds(30),
            answer_tokens: 20,
            answer: seconds(2),
        };
        let reported = (Some(usage(750)), Some(timings));
        profiles.observe_speed(0, Priority::Background, reported, (seconds(32), None));
        assert_eq!(
            profiles.predict(0, (&first, &marks), (0, 1)),
            Some(seconds(32)),
            "cold: 750 tokens to read, then the usual 20 to write"
        );
        profiles.hold(0, Some(7), marks);
        let second = LlmRequest {
            messages: std::sync::Arc::new(vec![
                system,
                user,
                ChatMessage::assistant("a".repeat(200)),
                ChatMessage::user("v".repeat(200)),
            ]),
            ..first.clone()
        };
        let marks = PromptMarks::of(&second.messages);
        assert_eq!(
            profiles.predict(0, (&second, &marks), (0, 1)),
            Some(seconds(6)),
            "warm: only the 100 tokens appended are read"
        );
        assert_eq!(
            profiles.predict(0, (&second, &marks), (1, 1)),
            Some(seconds(10)),
            "beside another request, reading takes twice as long"
        );
        let stranger = LlmRequest {
            affinity: Some(8),
            ..second.clone()
        };
        assert_eq!(
            profiles.predict(0, (&stranger, &marks), (0, 1)),
            Some(seconds(36)),
            "another affinity's prompt is not held: all 850 tokens are read"
        );
        let short = LlmRequest {
            sampling: crate::llm::SamplingOptions {
                max_tokens: Some(5),
                ..crate::llm::SamplingOptions::default()
            },
            ..second.clone()
        };
        assert_eq!(
            profiles.predict(0, (&short, &marks), (0, 1)),
            Some(Duration::from_millis(4500)),
            "no longer an answer than it may have"
        );
        // Another actor's prompt sent since: one slot holds it instead, two hold both.
        profiles.hold(0, Some(8), PromptMarks::of(&[ChatMessage::user("w")]));
        assert_eq!(
            profiles.predict(0, (&second, &marks), (0, 1)),
            Some(seconds(36)),
            "pushed out of the one slot: all 850 tokens are read again"
        );
        assert_eq!(
            profiles.predict(0, (&second, &marks), (0, 2)),
            Some(seconds(6)),
            "two slots still hold it"
        );
        // A game whose actors come and go sends on ever more affinities: past the most
        // the profile remembers, the newest prompts are still taken to be held.
        let held = || super::super::scheduler::lock(&profiles.0[0].held).len();
        let other = || PromptMarks::of(&[ChatMessage::user("w")]);
        let mut affinity = 100;
        while held() < HELD_PROMPTS - 1 {
            profiles.hold(0, Some(affinity), other());
            affinity += 1;
        }
        profiles.hold(0, Some(7), PromptMarks::of(&first.messages));
        profiles.hold(0, Some(99), other());
        profiles.hold(0, Some(98), other());
        assert_eq!(
            profiles.predict(0, (&second, &marks), (0, 3)),
            Some(seconds(6)),
            "three slots hold the last three prompts sent, past the most remembered"
        );
        assert!(held() <= HELD_PROMPTS, "{}", held());
    }
}
