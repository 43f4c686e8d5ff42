//! The offline backend: deterministic answers with no network and no model.

use std::collections::HashMap;
use std::sync::Mutex;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use super::{DeltaSink, LlmBackend, LlmFuture, LlmReply, LlmRequest};

/// Answers without a model, for examples, tests and games running with no server.
///
/// **This is not a language model.** A request is answered by its own
/// [`OfflineAnswer`](super::OfflineAnswer), which its requester wrote knowing what a
/// valid answer is (a smart actor's decision picks one of the offered actions; a
/// narration is the line the offline weaver wrote), with a random source seeded from
/// the seed and the request's text; a request without one gets a fixed sentence. The
/// same seed and the same requests in the same order always give the same answers.
#[derive(Debug, Default)]
pub struct OfflineBackend {
    seed: u64,
    /// How often each prompt was seen, so a repeated prompt gets a fresh answer; at
    /// most [`REMEMBERED_PROMPTS`] of them.
    repeats: Mutex<HashMap<u64, u64>>,
}

/// The most prompts the backend remembers having seen; past it, it starts over (as
/// determined by the requests as the rest), so a game that runs offline for hours,
/// every turn a new prompt, does not grow it for good.
const REMEMBERED_PROMPTS: usize = 4096;

impl OfflineBackend {
    /// An offline backend whose choices follow from this seed.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            repeats: Mutex::default(),
        }
    }

    /// The answer to a request: the same seed and the same sequence of requests
    /// always give the same answers.
    pub fn answer(&self, request: &LlmRequest) -> String {
        let fingerprint = request_fingerprint(request);
        let repeat = match self.repeats.lock() {
            Ok(mut repeats) => {
                if repeats.len() >= REMEMBERED_PROMPTS && !repeats.contains_key(&fingerprint) {
                    repeats.clear();
                }
                let seen = repeats.entry(fingerprint).or_default();
                *seen += 1;
                *seen
            }
            Err(_) => 0,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.seed ^ fingerprint ^ repeat.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        match &request.offline {
            Some(answer) => answer.write(&mut rng),
            None => "Nothing stirs.".to_owned(),
        }
    }
}

impl LlmBackend for OfflineBackend {
    fn describe(&self) -> String {
        format!("offline (seed {}, not a language model)", self.seed)
    }

    fn complete(&self, request: &LlmRequest, deltas: DeltaSink) -> LlmFuture {
        let text = self.answer(request);
        if request.stream {
            deltas.send(&text);
        }
        Box::pin(async move { Ok(LlmReply::text(text)) })
    }
}

/// A stable 64-bit FNV-1a hash of the request's messages.
fn request_fingerprint(request: &LlmRequest) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for message in request.messages.iter() {
        for byte in message
            .role
            .bytes()
            .chain([0])
            .chain(message.content.bytes())
            .chain([0])
        {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::llm::ChatMessage;

    fn asking(text: String) -> LlmRequest {
        LlmRequest {
            messages: Arc::new(vec![ChatMessage::user(text)]),
            offline: Some(Arc::new(OneOfMany)),
            ..LlmRequest::default()
        }
    }

    /// An offline answer that shows which random draw it got.
    #[derive(Debug)]
    struct OneOfMany;

    impl crate::llm::OfflineAnswer for OneOfMany {
        fn write(&self, rng: &mut dyn rand::Rng) -> String {
            rng.next_u64().to_string()
        }
    }

    #[test]
    fn a_repeated_prompt_gets_a_fresh_answer_and_the_prompts_remembered_are_bounded() {
        let backend = OfflineBackend::new(3);
        let first = backend.answer(&asking("Hello".to_owned()));
        assert_ne!(backend.answer(&asking("Hello".to_owned())), first);
        // Hours of turns offline, each prompt a new one.
        let again = OfflineBackend::new(3);
        for n in 0..REMEMBERED_PROMPTS * 2 + 5 {
            let (one, other) = (
                backend.answer(&asking(format!("turn {n}"))),
                again.answer(&asking(format!("turn {n}"))),
            );
            assert_eq!(one, other, "the same requests, the same answers");
        }
        let remembered = backend.repeats.lock().map(|r| r.len()).unwrap_or_default();
        assert!(remembered <= REMEMBERED_PROMPTS, "{remembered}");
    }
}
