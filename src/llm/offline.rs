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
    /// How often each prompt was seen, so a repeated prompt gets a fresh answer.
    repeats: Mutex<HashMap<u64, u64>>,
}

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
