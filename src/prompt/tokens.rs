//! Token estimates: prompts are budgeted in tokens, without running a tokenizer, and
//! the estimates are calibrated against the tokens a server reports.

/// Estimated tokens of a text: about four characters a token, as the common BPE
/// vocabularies average on English prose, and never less than one for a non-empty text.
pub fn estimate_tokens(text: &str) -> usize {
    tokens_of_chars(text.chars().count())
}

/// Estimated tokens of a text of `chars` characters, as [`estimate_tokens`] counts.
pub(crate) fn tokens_of_chars(chars: usize) -> usize {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// The characters [`estimate_tokens`] takes for one token.
const CHARS_PER_TOKEN: usize = 4;

/// How many of a server's tokens one estimated token is, measured from what the server
/// reported for earlier prompts ([`LlmBridge::tokens_per_char`](crate::llm::LlmBridge::tokens_per_char)).
/// Budgets are in the server's tokens: a prompt is measured in estimates and compared
/// with the budget [`to_estimate`](Self::to_estimate) gives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenScale(f32);

impl Default for TokenScale {
    /// Uncalibrated: one estimated token is one token.
    fn default() -> Self {
        Self(1.0)
    }
}

impl TokenScale {
    /// The scale for a server that reads `tokens_per_char` tokens a character; the
    /// default when it is unknown or not a sane rate.
    pub fn from_tokens_per_char(tokens_per_char: Option<f32>) -> Self {
        tokens_per_char
            .map(|rate| rate * CHARS_PER_TOKEN as f32)
            .filter(|scale| scale.is_finite() && (0.1..=10.0).contains(scale))
            .map_or_else(Self::default, Self)
    }

    /// The server's tokens for `estimated` tokens.
    pub fn to_server(self, estimated: usize) -> usize {
        (estimated as f32 * self.0).round() as usize
    }

    /// The estimated tokens that make `server` tokens of the server's: a budget in
    /// its tokens, as estimates are compared with it.
    pub fn to_estimate(self, server: usize) -> usize {
        (server as f32 / self.0).round() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::{TokenScale, estimate_tokens};

    #[test]
    fn a_calibrated_scale_converts_both_ways_and_ignores_nonsense() {
        let llama = TokenScale::from_tokens_per_char(Some(0.3));
        assert_eq!(llama.to_server(1000), 1200);
        assert_eq!(llama.to_estimate(1200), 1000);
        for nonsense in [
            None,
            Some(0.0),
            Some(f32::NAN),
            Some(f32::INFINITY),
            Some(-1.0),
        ] {
            assert_eq!(
                TokenScale::from_tokens_per_char(nonsense),
                TokenScale::default()
            );
        }
        assert_eq!(TokenScale::default().to_server(993), 993);
    }

    #[test]
    fn about_four_characters_a_token() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("The innkeeper nods."), 5);
    }
}
