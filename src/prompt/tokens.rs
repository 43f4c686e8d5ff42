//! Token estimates: prompts are budgeted in tokens, without running a tokenizer.

/// Estimated tokens of a text: about four characters a token, as the common BPE
/// vocabularies average on English prose, and never less than one for a non-empty text.
pub fn estimate_tokens(text: &str) -> usize {
    tokens_of_chars(text.chars().count())
}

/// Estimated tokens of a text of `chars` characters, as [`estimate_tokens`] counts.
pub(crate) fn tokens_of_chars(chars: usize) -> usize {
    chars.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::estimate_tokens;

    #[test]
    fn about_four_characters_a_token() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("The innkeeper nods."), 5);
    }
}
