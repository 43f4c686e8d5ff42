//! A model's text as it streams in, piece by piece: what of it can be shown before it
//! ends. A reasoning model's thinking, written inline before its answer
//! (`<think>…</think>`), is held back, as [`answer_body`](super::answer_body) leaves
//! it out of the whole text; so is an answer that begins as JSON, a list or a code
//! fence, which only the whole text can tell usable or not.

use super::parse::{THOUGHT_BEGINS, THOUGHT_ENDS, unseen};

/// Where a streamed answer is: each piece that comes is given to
/// [`show`](Self::show), which says what of it to show now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamedAnswer {
    /// Nothing shown yet: what came so far shows nothing, or may begin the thinking
    /// (`<thi`), and is held until the next piece tells.
    Starting(String),
    /// In the thinking: held back, with the end of what came, which may hold the
    /// start of its end (`</thi`).
    Thinking(String),
    /// Past the start: pieces are shown as they come.
    Showing,
    /// An answer that does not start as prose (JSON, a list, a fence): nothing of it
    /// is shown until the whole text says whether it is usable.
    Withheld,
}

/// How an answer that is not prose starts: JSON, a list, a code fence.
const NOT_PROSE: [&str; 3] = ["{", "[", FENCE];

/// A code fence.
const FENCE: &str = "```";

impl Default for StreamedAnswer {
    fn default() -> Self {
        Self::Starting(String::new())
    }
}

impl StreamedAnswer {
    /// What of `piece`, the text that came since the last, to show now: nothing while
    /// the answer has not begun, or is thinking, or when it does not begin as prose;
    /// the answer's start without what shows nothing before it; after it, every piece
    /// as it comes.
    pub(crate) fn show(&mut self, piece: &str) -> Option<String> {
        match self {
            Self::Showing => Some(piece.to_owned()),
            Self::Withheld => None,
            Self::Starting(held) => {
                held.push_str(piece);
                // What shows nothing goes as it comes, not kept to be read again with
                // each piece (a stream of blanks would cost the square of its length).
                let unseen_len = held.len() - held.trim_start_matches(unseen).len();
                held.drain(..unseen_len);
                let start = held.as_str();
                if let Some(thinking) = start.strip_prefix(THOUGHT_BEGINS) {
                    let thinking = thinking.to_owned();
                    *self = Self::Thinking(String::new());
                    return self.show(&thinking);
                }
                if NOT_PROSE.iter().any(|opening| start.starts_with(opening)) {
                    *self = Self::Withheld;
                    return None;
                }
                // What may still begin the thinking or a fence waits for more.
                if start.is_empty() || THOUGHT_BEGINS.starts_with(start) || FENCE.starts_with(start)
                {
                    return None;
                }
                let start = start.to_owned();
                *self = Self::Showing;
                Some(start)
            }
            Self::Thinking(tail) => {
                tail.push_str(piece);
                if let Some((_, after)) = tail.split_once(THOUGHT_ENDS) {
                    let after = after.to_owned();
                    *self = Self::default();
                    return self.show(&after);
                }
                // Only the end of what came may begin the thinking's end.
                let mut keep = tail.len().saturating_sub(THOUGHT_ENDS.len() - 1);
                while !tail.is_char_boundary(keep) {
                    keep -= 1;
                }
                tail.drain(..keep);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is shown of `pieces`, streamed in turn, each shown piece in brackets.
    fn shown(pieces: &[&str]) -> String {
        let mut streamed = StreamedAnswer::default();
        let shown = pieces.iter().filter_map(|piece| streamed.show(piece));
        shown.map(|piece| format!("[{piece}]")).collect()
    }

    #[test]
    fn an_answer_without_thinking_is_shown_as_it_comes_from_its_first_visible_piece() {
        assert_eq!(shown(&["You", " nod", "."]), "[You][ nod][.]");
        assert_eq!(shown(&["\n", " \u{200b}", " You", " nod."]), "[You][ nod.]");
        assert_eq!(shown(&["<b>You</b>", " nod."]), "[<b>You</b>][ nod.]");
        assert_eq!(shown(&["<", "3 you"]), "[<3 you]");
    }

    /// However many pieces show nothing, only what may begin the answer is held.
    #[test]
    fn what_shows_nothing_is_not_held() {
        let mut streamed = StreamedAnswer::default();
        for _ in 0..1_000 {
            assert_eq!(streamed.show(" \n\u{200b}"), None);
        }
        assert_eq!(streamed, StreamedAnswer::Starting(String::new()));
        assert_eq!(streamed.show(" <th"), None);
        assert_eq!(streamed, StreamedAnswer::Starting("<th".to_owned()));
        assert_eq!(streamed.show("ere"), Some("<there".to_owned()));
    }

    #[test]
    fn thinking_is_held_back_however_its_tags_are_cut_into_pieces() {
        let pieces = [
            "<think>", "Marta is", " wary.", "</think>", "\n\n", "You", " nod.",
        ];
        assert_eq!(shown(&pieces), "[You][ nod.]");
        let cut = ["<th", "ink>Hm", "m. </th", "in", "k>\nYou", " nod."];
        assert_eq!(shown(&cut), "[You][ nod.]");
        assert_eq!(shown(&["<think>Hmm.</think>You nod."]), "[You nod.]");
        assert_eq!(shown(&[" <think>é", "é</think> You"]), "[You]");
    }

    #[test]
    fn an_answer_that_is_not_prose_is_held_back_whole() {
        // JSON (or a list) is refused as narration when it ends: none of it is shown.
        assert_eq!(shown(&["{\"text\": ", "\"You nod.\"}"]), "");
        assert_eq!(shown(&["<think>Hm.</think>", " [", "\"You\"]"]), "");
        // A fence may hold prose or not: the whole text tells, when it ends.
        assert_eq!(shown(&["`", "``\nYou", " nod.\n```"]), "");
        // A quote or a back-tick inside prose is prose.
        assert_eq!(shown(&["You nod", ": `yes`."]), "[You nod][: `yes`.]");
        assert_eq!(shown(&["`Yes`", ", you nod."]), "[`Yes`][, you nod.]");
    }

    #[test]
    fn thinking_that_never_ends_shows_nothing() {
        assert_eq!(shown(&["<think>", "Marta", " is wary"]), "");
        assert_eq!(shown(&["<thi"]), "");
        assert_eq!(shown(&["   "]), "");
    }
}
