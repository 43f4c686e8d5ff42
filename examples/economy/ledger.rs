//! What each request to the model cost: for every decision and every narration, the
//! prompt's tokens, those the server held in its cache and those it had to read, the
//! answer's tokens, the time to the answer and to its first piece, and whether it was
//! answered, not sent because the server is too slow for its deadline, or lost. Then
//! the totals and medians, as a table.

use std::time::Duration;

use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy_loom::llm::{LlmError, RequestId};
use bevy_loom::prelude::*;

/// Keeps the [`Ledger`] from the messages the game writes.
pub struct LedgerPlugin;

impl Plugin for LedgerPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Ledger>().add_systems(Last, keep_ledger);
    }
}

/// What a request was for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// A smart actor's decision, by its name.
    Decision(String),
    /// The narration of what this character did.
    Narration(String),
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The model answered.
    Answered,
    /// Not sent: the server's measured speed could not meet its deadline.
    TooSlow { predicted: Duration },
    /// No answer: why.
    Lost(String),
}

/// One request, as the ledger keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The turn it was asked in, from 1.
    pub turn: u32,
    pub purpose: Purpose,
    pub outcome: Outcome,
    /// Prompt tokens, as the server counted them.
    pub prompt: Option<u64>,
    /// Of them, those the server took from its cache.
    pub cached: Option<u64>,
    /// Answer tokens.
    pub answer: Option<u64>,
    pub latency: Duration,
    pub first_token: Option<Duration>,
}

impl Row {
    /// The prompt tokens the server had to read: all of them when it did not say
    /// how many it held.
    pub fn new_tokens(&self) -> Option<u64> {
        let prompt = self.prompt?;
        Some(prompt.saturating_sub(self.cached.unwrap_or(0)))
    }
}

/// Every request of the game so far, in the order they ended.
#[derive(Resource, Default)]
pub struct Ledger {
    /// The turn being played, from 1 once the first began.
    turn: u32,
    /// Requests asked whose outcome has not come. A request is written in the frame
    /// it is submitted, and read here in that frame's `Last`, before any outcome.
    asked: HashMap<RequestId, (u32, Purpose)>,
    pub rows: Vec<Row>,
}

impl Ledger {
    fn asked(&mut self, request: RequestId, purpose: Purpose) {
        self.asked.insert(request, (self.turn, purpose));
    }

    /// Notes an outcome; one of a request that is neither a decision nor a narration
    /// (a warm-up) is not the ledger's.
    fn ended(&mut self, response: &LlmResponse) {
        if let Some((turn, purpose)) = self.asked.remove(&response.id) {
            self.rows.push(row(turn, purpose, response));
        }
    }
}

fn row(turn: u32, purpose: Purpose, response: &LlmResponse) -> Row {
    let usage = response.result.as_ref().ok().and_then(|reply| reply.usage);
    let outcome = match &response.result {
        Ok(_) => Outcome::Answered,
        Err(LlmError::TooSlow { predicted, .. }) => Outcome::TooSlow {
            predicted: *predicted,
        },
        Err(error) => Outcome::Lost(error.to_string()),
    };
    Row {
        turn,
        purpose,
        outcome,
        prompt: usage.map(|usage| usage.prompt_tokens),
        cached: usage.and_then(|usage| usage.cached_tokens),
        answer: usage.map(|usage| usage.completion_tokens),
        latency: response.latency,
        first_token: response.first_token,
    }
}

/// Who a report's actor is, by name.
fn name_of(names: &Query<&DisplayName>, entity: Entity) -> String {
    names
        .get(entity)
        .map_or_else(|_| format!("{entity}"), |name| name.0.clone())
}

fn keep_ledger(
    mut ledger: ResMut<Ledger>,
    mut turns: MessageReader<TurnEnded>,
    mut decisions: MessageReader<DecisionRequested>,
    mut narrations: MessageReader<NarrationRequested>,
    mut responses: MessageReader<LlmResponse>,
    names: Query<&DisplayName>,
) {
    for _ in turns.read() {
        ledger.turn += 1;
    }
    for decision in decisions.read() {
        let purpose = Purpose::Decision(name_of(&names, decision.actor));
        ledger.asked(decision.request, purpose);
    }
    for narration in narrations.read() {
        let purpose = Purpose::Narration(name_of(&names, narration.report.actor));
        ledger.asked(narration.request, purpose);
    }
    for response in responses.read() {
        ledger.ended(response);
    }
}

/// The ledger as tables: the decisions, then the narrations, each row one request,
/// each table closed by its totals and medians.
pub fn tables(rows: &[Row]) -> String {
    let mut out = String::new();
    for (title, is_decision) in [("Decisions", true), ("Narration", false)] {
        let rows: Vec<&Row> = (rows.iter())
            .filter(|row| matches!(row.purpose, Purpose::Decision(_)) == is_decision)
            .collect();
        out.push_str(&format!("\n{title}\n"));
        out.push_str(&format!(
            "{:>4}  {:<10} {:>6} {:>6} {:>6} {:>6} {:>9} {:>9}  {}\n",
            "turn", "who", "prompt", "cached", "new", "answer", "latency", "1st token", "outcome"
        ));
        for row in &rows {
            let who = match &row.purpose {
                Purpose::Decision(name) | Purpose::Narration(name) => name,
            };
            out.push_str(&format!(
                "{:>4}  {:<10} {:>6} {:>6} {:>6} {:>6} {:>9} {:>9}  {}\n",
                row.turn,
                who,
                count(row.prompt),
                count(row.cached),
                count(row.new_tokens()),
                count(row.answer),
                seconds(Some(row.latency)),
                seconds(row.first_token),
                outcome(&row.outcome),
            ));
        }
        out.push_str(&summary(&rows));
    }
    out
}

/// A table's totals and medians.
fn summary(rows: &[&Row]) -> String {
    let answered: Vec<&&Row> = (rows.iter())
        .filter(|row| row.outcome == Outcome::Answered)
        .collect();
    let too_slow = (rows.iter())
        .filter(|row| matches!(row.outcome, Outcome::TooSlow { .. }))
        .count();
    let lost = rows.len() - answered.len() - too_slow;
    let total =
        |of: fn(&Row) -> Option<u64>| -> u64 { answered.iter().filter_map(|r| of(r)).sum() };
    let mut latencies: Vec<Duration> = answered.iter().map(|row| row.latency).collect();
    let mut firsts: Vec<Duration> = answered.iter().filter_map(|row| row.first_token).collect();
    let mut new: Vec<u64> = answered.iter().filter_map(|row| row.new_tokens()).collect();
    format!(
        "  {} asked: {} answered, {too_slow} not sent as too slow, {lost} lost\n  \
         tokens: {} prompt ({} cached, {} new), {} answer\n  \
         median: latency {}, first token {}, new prompt tokens {}\n",
        rows.len(),
        answered.len(),
        total(|row| row.prompt),
        total(|row| row.cached),
        total(Row::new_tokens),
        total(|row| row.answer),
        seconds(median(&mut latencies)),
        seconds(median(&mut firsts)),
        count(median(&mut new)),
    )
}

/// The middle value (the lower of the two middle ones of an even count).
fn median<T: Ord + Copy>(values: &mut [T]) -> Option<T> {
    values.sort_unstable();
    values.get(values.len().saturating_sub(1) / 2).copied()
}

fn count(value: Option<u64>) -> String {
    value.map_or("-".to_owned(), |value| value.to_string())
}

fn seconds(value: Option<Duration>) -> String {
    value.map_or("-".to_owned(), |value| {
        format!("{:.1} s", value.as_secs_f32())
    })
}

fn outcome(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Answered => "answered".to_owned(),
        Outcome::TooSlow { predicted } => format!(
            "not sent: too slow (about {:.1} s)",
            predicted.as_secs_f32()
        ),
        Outcome::Lost(why) => format!("lost: {why}"),
    }
}
