//! The economy example's ledger: every decision of the tavern is kept with the tokens
//! its server reported (those it held in its cache, those it read anew, the answer's)
//! and how it ended, and the tables total them and take their medians.

use std::sync::Arc;
use std::time::Duration;

use bevy::prelude::*;
use bevy_loom::llm::{DeltaSink, LlmBackend, LlmFuture, LlmReply, LlmRequest, TokenUsage};
use bevy_loom::prelude::*;

use crate::support::{run_turn, tavern_app};

#[path = "../../examples/economy/ledger.rs"]
mod ledger;

use ledger::{Ledger, LedgerPlugin, Outcome, Purpose, Row};

/// Lets every moment pass, and says it read a quarter of a token a character, half
/// of them from its cache, and wrote 5.
struct CachingServer;

impl LlmBackend for CachingServer {
    fn describe(&self) -> String {
        "a caching server".to_owned()
    }

    fn complete(&self, request: &LlmRequest, _deltas: DeltaSink) -> LlmFuture {
        let chars: usize = (request.messages.iter())
            .map(|message| message.content.chars().count())
            .sum();
        let prompt_tokens = (chars / 4) as u64;
        Box::pin(async move {
            Ok(LlmReply {
                text: r#"{"do": 0, "say": ""}"#.to_owned(),
                usage: Some(TokenUsage {
                    prompt_tokens,
                    completion_tokens: 5,
                    cached_tokens: Some(prompt_tokens / 2),
                }),
                ..LlmReply::default()
            })
        })
    }
}

#[test]
fn every_decision_is_kept_with_the_tokens_its_server_reported() {
    let (mut app, scene) = tavern_app(BackendChoice::Custom(Arc::new(CachingServer)));
    // The app has run (its content loaded): the plugin is built by hand.
    LedgerPlugin.build(&mut app);
    let mut asked = 0;
    for _ in 0..2 {
        asked += run_turn(&mut app).prompts.len();
    }
    app.update();
    let rows = &app.world().resource::<Ledger>().rows;
    let decisions: Vec<&Row> = (rows.iter())
        .filter(|row| matches!(row.purpose, Purpose::Decision(_)))
        .collect();
    assert!(
        asked >= 3,
        "every smart actor decided at least once: {asked}"
    );
    assert_eq!(decisions.len(), asked, "{rows:#?}");
    let names: Vec<String> = (scene.entities.values())
        .filter_map(|&entity| app.world().get::<DisplayName>(entity))
        .map(|name| name.0.clone())
        .collect();
    for row in &decisions {
        let Purpose::Decision(who) = &row.purpose else {
            unreachable!()
        };
        assert!(names.contains(who), "{who} is in the scene");
        assert!((1..=2).contains(&row.turn), "{row:?}");
        assert_eq!(row.outcome, Outcome::Answered);
        let prompt = row.prompt.expect("the prompt's tokens");
        assert!(prompt > 100, "a real prompt: {prompt}");
        assert_eq!(row.cached, Some(prompt / 2));
        assert_eq!(row.new_tokens(), Some(prompt - prompt / 2));
        assert_eq!(row.answer, Some(5));
    }
}

#[test]
fn the_tables_total_what_was_answered_and_say_what_was_not_sent() {
    let row = |turn, purpose, outcome, prompt: Option<u64>, latency| Row {
        turn,
        purpose,
        outcome,
        prompt,
        cached: prompt.map(|prompt| prompt - 78),
        answer: prompt.map(|_| 20),
        latency: Duration::from_secs(latency),
        first_token: None,
    };
    let marta = || Purpose::Decision("Marta".to_owned());
    let rows = [
        row(1, marta(), Outcome::Answered, Some(600), 40),
        row(2, marta(), Outcome::Answered, Some(700), 9),
        row(3, marta(), Outcome::Answered, Some(800), 8),
        row(
            3,
            marta(),
            Outcome::Lost("no answer within 60s".to_owned()),
            None,
            60,
        ),
        row(
            1,
            Purpose::Narration("Brom".to_owned()),
            Outcome::TooSlow {
                predicted: Duration::from_secs(33),
            },
            None,
            0,
        ),
    ];
    let tables = ledger::tables(&rows);
    assert!(
        tables.contains("4 asked: 3 answered, 0 not sent as too slow, 1 lost"),
        "{tables}"
    );
    assert!(
        tables.contains("tokens: 2100 prompt (1866 cached, 234 new), 60 answer"),
        "{tables}"
    );
    assert!(
        tables.contains("median: latency 9.0 s, first token -, new prompt tokens 78"),
        "{tables}"
    );
    assert!(tables.contains("lost: no answer within 60s"), "{tables}");
    assert!(
        tables.contains("1 asked: 0 answered, 1 not sent as too slow, 0 lost"),
        "{tables}"
    );
    assert!(
        tables.contains("not sent: too slow (about 33.0 s)"),
        "{tables}"
    );
}
