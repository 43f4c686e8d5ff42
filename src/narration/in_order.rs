//! Narrations told in the order their reports came: a report's text waits for the
//! final text of every report before it, so a quick answer never overtakes a slow
//! one, and one report's streamed pieces never interleave with another's. A model's
//! deadline bounds the wait: a narration it does not answer in time is told from the
//! offline weave.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use bevy::platform::collections::HashMap;
use bevy::prelude::*;

use super::{ActionReport, NarrationSource, NarrationText};
use crate::llm::RequestId;
use crate::prompt::StreamedAnswer;
use crate::world::into_printable;

/// Why a narration whose answer never came is told from its offline weave.
const LOST: &str = "no answer came by the narration's deadline (NarrationSettings::deadline; was the bridge removed?)";

/// Why a narration asked of a bridge that was replaced is told from its offline weave.
const REPLACED: &str = "the bridge it was asked of was replaced before it answered";

/// A report's narration, from when it is read to when its final text is told.
#[derive(Debug)]
pub(super) struct Narration {
    pub report: Arc<ActionReport>,
    /// Where it happened.
    pub place: Option<Entity>,
    /// Whether the player acted.
    pub to_player: bool,
}

impl Narration {
    /// Its text: a piece of it, or (`is_final`) the whole.
    fn text(&self, text: String, is_final: bool, source: NarrationSource) -> NarrationText {
        // Told as it looks, whoever wrote it: the model's text was cleaned to be
        // judged, but a weave tells a game's own words (`ActionReport::text`) too.
        let text = into_printable(text);
        NarrationText {
            report: Arc::clone(&self.report),
            place: self.place,
            text,
            is_final,
            source,
            to_player: self.to_player,
        }
    }
}

/// A narration not yet told whole.
#[derive(Debug)]
struct Untold {
    narration: Narration,
    /// What the model's text shows so far, as its pieces come.
    streamed: StreamedAnswer,
    /// What of it came while an earlier narration was being told: shown as one piece
    /// when its turn comes.
    held: String,
    /// How many characters of the model's text were shown or held.
    shown: usize,
    ending: Ending,
}

/// Where an untold narration's final text is.
#[derive(Debug)]
enum Ending {
    /// Asked of the model as `request`, whose answer is due by `due`: past it, the
    /// answer is taken as lost. `offline` is the weave it falls back on.
    Waiting {
        request: RequestId,
        due: Instant,
        offline: String,
    },
    /// Its final text and who wrote it.
    Ended(String, NarrationSource),
}

impl Untold {
    fn new(narration: Narration, ending: Ending) -> Self {
        Self {
            narration,
            streamed: StreamedAnswer::default(),
            held: String::new(),
            shown: 0,
            ending,
        }
    }

    /// Ends it with the model's `text`, or with its offline weave for the reason a
    /// text could not be used; one that ended already stays as it is.
    fn end(&mut self, text: Result<String, String>) {
        let Ending::Waiting { offline, .. } = &mut self.ending else {
            return;
        };
        self.ending = match text {
            Ok(text) => Ending::Ended(text, NarrationSource::Model),
            Err(reason) => Ending::Ended(
                std::mem::take(offline),
                NarrationSource::Fallback { reason },
            ),
        };
    }
}

/// The narrations not yet told whole, oldest first; each asked of the model is found
/// by its request.
#[derive(Debug, Default)]
pub(super) struct InOrder {
    untold: VecDeque<Untold>,
    /// The number of each narration asked of the model and not answered yet, counted
    /// from the first ever.
    asked: HashMap<RequestId, u64>,
    /// The number of the first in `untold`.
    first: u64,
    /// The [serial](crate::llm::LlmBridge::serial) of the bridge answering.
    bridge: Option<u64>,
}

impl InOrder {
    /// Narrations whose final text has not been told.
    pub fn len(&self) -> usize {
        self.untold.len()
    }

    /// Whether every narration was told whole.
    pub fn is_empty(&self) -> bool {
        self.untold.is_empty()
    }

    /// `narration`, asked of the model as `request`: its text comes with the request's
    /// pieces and answer, or is `offline` when the answer cannot be used or has not
    /// come by `due`.
    pub fn asked(
        &mut self,
        request: RequestId,
        narration: Narration,
        offline: String,
        due: Instant,
    ) {
        let number = self.first + self.untold.len() as u64;
        self.asked.insert(request, number);
        let waiting = Ending::Waiting {
            request,
            due,
            offline,
        };
        self.untold.push_back(Untold::new(narration, waiting));
    }

    /// Ends, with their offline weave, the narrations whose answer was due before
    /// `now` (a bridge removed, or messages not read): the ones after them are not
    /// held for ever. Returns how many it ended.
    pub fn overdue(&mut self, now: Instant) -> usize {
        self.end_waiting(|_, due| due <= now, LOST)
    }

    /// The bridge answering is the one with this `serial`, which `issued` some
    /// requests: when it is another than before, the narrations asked with others were
    /// asked of a bridge it replaced, and are ended with their offline weave now, not
    /// at their deadline. Returns how many it ended.
    pub fn answered_by(&mut self, serial: u64, issued: impl Fn(RequestId) -> bool) -> usize {
        if self.bridge.replace(serial) == Some(serial) {
            return 0;
        }
        self.end_waiting(|request, _| !issued(request), REPLACED)
    }

    /// Ends, with their offline weave and `reason`, the narrations waiting on a
    /// `request` due at a time that `lost` says will not be answered.
    fn end_waiting(&mut self, lost: impl Fn(RequestId, Instant) -> bool, reason: &str) -> usize {
        let mut ended = 0;
        for untold in &mut self.untold {
            if let Ending::Waiting { request, due, .. } = untold.ending
                && lost(request, due)
            {
                self.asked.remove(&request);
                untold.end(Err(reason.to_owned()));
                ended += 1;
            }
        }
        ended
    }

    /// `narration`, ended already with `text` from `source`: told after those before it.
    pub fn ended(&mut self, narration: Narration, text: String, source: NarrationSource) {
        let ended = Ending::Ended(text, source);
        self.untold.push_back(Untold::new(narration, ended));
    }

    /// Whether `request` asks a narration not answered yet.
    pub fn is_asked(&self, request: RequestId) -> bool {
        self.asked.contains_key(&request)
    }

    /// Where the narration asked as `request` is in `untold` (0: the oldest), while it
    /// is not answered.
    fn position(&self, request: RequestId) -> Option<usize> {
        let number = self.asked.get(&request)?;
        Some((number - self.first) as usize)
    }

    /// A piece of `request`'s text, the model's since the last: what of it to tell
    /// now, when its narration is the oldest untold; otherwise held for its turn.
    /// Nothing past `max_chars` of text: a text longer than that is refused, and the
    /// final text replaces what was shown.
    pub fn piece(
        &mut self,
        request: RequestId,
        piece: &str,
        max_chars: usize,
    ) -> Option<NarrationText> {
        let position = self.position(request)?;
        let untold = self.untold.get_mut(position)?;
        // Shown to the player as it looks: without a terminal's escapes, nor marks
        // that reorder it.
        let shown = into_printable(untold.streamed.show(piece)?);
        if shown.is_empty() {
            return None;
        }
        untold.shown += shown.chars().count();
        if untold.shown > max_chars {
            return None;
        }
        if position > 0 {
            untold.held.push_str(&shown);
            return None;
        }
        Some((untold.narration).text(shown, false, NarrationSource::Model))
    }

    /// The narration asked as `request` is answered: with the model's `text`, or
    /// why it cannot be used, and then with its offline weave.
    pub fn answered(&mut self, request: RequestId, text: Result<String, String>) {
        let Some(position) = self.position(request) else {
            return;
        };
        self.asked.remove(&request);
        if let Some(untold) = self.untold.get_mut(position) {
            untold.end(text);
        }
    }

    /// Tells, in order, every narration that ended and has none untold before it:
    /// its final text, then what was held of the next while it was told.
    pub fn tell(&mut self, mut write: impl FnMut(NarrationText)) {
        let ended = |untold: &mut Untold| matches!(untold.ending, Ending::Ended(..));
        while let Some(told) = self.untold.pop_front_if(ended) {
            self.first += 1;
            if let Ending::Ended(text, source) = told.ending {
                write(told.narration.text(text, true, source));
            }
            if let Some(next) = self.untold.front_mut()
                && !next.held.is_empty()
            {
                let held = std::mem::take(&mut next.held);
                write((next.narration).text(held, false, NarrationSource::Model));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The narration of `verb`, done by an actor of its own.
    fn narration(verb: &str) -> Narration {
        let actor = Entity::from_raw_u32(1).expect("a valid index");
        Narration {
            report: Arc::new(ActionReport::new(actor, verb)),
            place: None,
            to_player: true,
        }
    }

    /// What `untold` tells now: each text's verb, text and whether it is final.
    fn told(untold: &mut InOrder) -> Vec<(String, String, bool)> {
        let mut told = Vec::new();
        untold.tell(|text| told.push((text.report.verb.clone(), text.text, text.is_final)));
        told
    }

    /// A time no test reaches.
    fn later() -> Instant {
        Instant::now() + std::time::Duration::from_secs(3600)
    }

    #[test]
    fn a_narration_whose_answer_never_comes_is_told_offline_when_due() {
        let mut untold = InOrder::default();
        let due = Instant::now();
        untold.asked(
            RequestId(1),
            narration("take"),
            "You take it.".to_owned(),
            due,
        );
        untold.ended(
            narration("wait"),
            "You wait.".to_owned(),
            NarrationSource::Offline,
        );
        untold.overdue(due - std::time::Duration::from_millis(1));
        assert_eq!(told(&mut untold), [], "not due yet");
        untold.overdue(due);
        assert_eq!(
            told(&mut untold),
            [
                text("take", "You take it.", true),
                text("wait", "You wait.", true)
            ]
        );
        untold.answered(RequestId(1), Ok("too late".to_owned()));
        assert_eq!(told(&mut untold), [], "a late answer tells nothing");
    }

    #[test]
    fn narrations_asked_of_a_replaced_bridge_are_told_offline_at_once() {
        let mut untold = InOrder::default();
        // Bridge 1 issues the odd ids, bridge 2 the even ones.
        let second = |id: RequestId| id.0.is_multiple_of(2);
        let first = |id: RequestId| !second(id);
        assert_eq!(untold.answered_by(1, first), 0, "the first bridge");
        untold.asked(
            RequestId(1),
            narration("take"),
            "You take it.".to_owned(),
            later(),
        );
        assert_eq!(untold.answered_by(1, first), 0, "the same bridge");
        // Asked of the bridge that replaces it, before it is seen.
        untold.asked(RequestId(2), narration("greet"), String::new(), later());
        assert_eq!(untold.answered_by(2, second), 1);
        assert_eq!(told(&mut untold), [text("take", "You take it.", true)]);
        untold.answered(RequestId(1), Ok("too late".to_owned()));
        untold.answered(RequestId(2), Ok("You nod.".to_owned()));
        assert_eq!(told(&mut untold), [text("greet", "You nod.", true)]);
    }

    #[test]
    fn a_woven_text_is_told_without_control_characters() {
        let mut untold = InOrder::default();
        let woven = "You read: \u{1b}[2JBeware.".to_owned();
        untold.ended(narration("read"), woven, NarrationSource::Offline);
        assert_eq!(
            told(&mut untold),
            [text("read", "You read: [2JBeware.", true)]
        );
    }

    #[test]
    fn a_models_pieces_are_shown_without_control_characters() {
        let mut untold = asking(&["take"]);
        let piece = untold.piece(RequestId(1), "You \u{1b}[2Jlift", 100);
        assert_eq!(
            piece.map(|piece| piece.text),
            Some("You [2Jlift".to_owned())
        );
        assert!(
            untold.piece(RequestId(1), "\u{1b}\u{7}", 100).is_none(),
            "nothing to show"
        );
        untold.answered(RequestId(1), Ok("You lift the mug.".to_owned()));
        assert_eq!(told(&mut untold), [text("take", "You lift the mug.", true)]);
    }

    /// A take's narration asked as request 1, its offline text "You take it.".
    fn taking() -> InOrder {
        let mut untold = InOrder::default();
        untold.asked(
            RequestId(1),
            narration("take"),
            "You take it.".to_owned(),
            later(),
        );
        untold
    }

    /// Narrations of reports of these verbs asked in turn, as requests 1, 2, …, with
    /// no offline text and a deadline far off.
    fn asking(verbs: &[&str]) -> InOrder {
        let mut untold = InOrder::default();
        for (request, verb) in (1..).zip(verbs) {
            untold.asked(RequestId(request), narration(verb), String::new(), later());
        }
        untold
    }

    fn text(verb: &str, text: &str, is_final: bool) -> (String, String, bool) {
        (verb.to_owned(), text.to_owned(), is_final)
    }

    #[test]
    fn a_narration_ended_already_waits_for_the_one_asked_before_it() {
        let mut untold = taking();
        untold.ended(
            narration("wait"),
            "You wait.".to_owned(),
            NarrationSource::Offline,
        );
        assert_eq!(told(&mut untold), []);
        assert_eq!(untold.len(), 2);
        untold.answered(RequestId(1), Ok("You lift the mug.".to_owned()));
        assert_eq!(
            told(&mut untold),
            [
                text("take", "You lift the mug.", true),
                text("wait", "You wait.", true)
            ]
        );
        assert!(untold.is_empty());
    }

    #[test]
    fn pieces_of_a_later_narration_are_held_and_shown_as_one_in_its_turn() {
        let mut untold = asking(&["take", "greet"]);
        assert!(untold.piece(RequestId(2), "You ", 100).is_none());
        assert!(untold.piece(RequestId(2), "nod.", 100).is_none());
        untold.answered(RequestId(2), Ok("You nod.".to_owned()));
        assert_eq!(told(&mut untold), [], "the first is not told yet");
        let piece = untold.piece(RequestId(1), "You lift", 100);
        assert_eq!(piece.map(|piece| piece.text), Some("You lift".to_owned()));
        untold.answered(RequestId(1), Ok("You lift the mug.".to_owned()));
        assert_eq!(
            told(&mut untold),
            [
                text("take", "You lift the mug.", true),
                text("greet", "You nod.", false),
                text("greet", "You nod.", true)
            ]
        );
    }

    #[test]
    fn nothing_is_shown_past_the_longest_text_accepted() {
        let mut untold = asking(&["take", "greet"]);
        let shown = |untold: &mut InOrder, request, piece| {
            let text = untold.piece(RequestId(request), piece, 6);
            text.map(|text| text.text)
        };
        assert_eq!(shown(&mut untold, 1, "You "), Some("You ".to_owned()));
        assert_eq!(shown(&mut untold, 1, "lift"), None, "8 characters");
        assert_eq!(shown(&mut untold, 1, "."), None, "nor after them");
        // Held the same way.
        assert_eq!(shown(&mut untold, 2, "Nod"), None);
        assert_eq!(shown(&mut untold, 2, "ding."), None);
        untold.answered(RequestId(1), Err("too long".to_owned()));
        untold.answered(RequestId(2), Err("too long".to_owned()));
        let held = told(&mut untold)
            .into_iter()
            .filter(|(.., is_final)| !is_final);
        assert_eq!(held.collect::<Vec<_>>(), [text("greet", "Nod", false)]);
    }

    #[test]
    fn an_answer_that_cannot_be_used_is_told_as_the_offline_weave() {
        let mut untold = InOrder::default();
        untold.asked(
            RequestId(3),
            narration("take"),
            "You take it.".to_owned(),
            later(),
        );
        assert!(untold.is_asked(RequestId(3)));
        untold.answered(RequestId(3), Err("the model answered with JSON".to_owned()));
        assert!(!untold.is_asked(RequestId(3)));
        let mut texts = Vec::new();
        untold.tell(|text| texts.push(text));
        let [told] = texts.as_slice() else {
            panic!("one final text: {texts:?}");
        };
        assert_eq!(told.text, "You take it.");
        let reason = "the model answered with JSON".to_owned();
        assert_eq!(told.source, NarrationSource::Fallback { reason });
    }

    #[test]
    fn what_comes_for_a_request_not_asked_or_answered_already_is_ignored() {
        let mut untold = asking(&["take"]);
        untold.answered(RequestId(1), Ok("You lift the mug.".to_owned()));
        assert!(untold.piece(RequestId(1), "late", 100).is_none());
        untold.answered(RequestId(1), Ok("again".to_owned()));
        untold.answered(RequestId(9), Ok("unknown".to_owned()));
        assert_eq!(told(&mut untold), [text("take", "You lift the mug.", true)]);
        assert_eq!(told(&mut untold), []);
    }
}
