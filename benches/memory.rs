//! Memory benchmarks: retrieval from a large history store.
//!
//! - `memory/retrieve_top4_of_100000`: the top 4 for one actor from 100,000 entries
//!   (half of them the actor's own, the rest other actors', a plot's and global), with
//!   five context tags from a vocabulary of 60 keys, one to three tags an entry.
//! - `memory/retrieve_newest4_of_100000`: the same store and actor without context
//!   tags: the newest four in scope.
//! - `memory/append_one_entry_of_20000_tags`: appending one memory with 20,000
//!   distinct tags to an empty store, as loading a crafted or damaged save does: each
//!   tag is indexed once.
//!
//! Run with `cargo bench --bench memory`.

use std::hint::black_box;
use std::time::Duration;

use bevy_loom::actors::{HistoryStore, MemoryQuery, MemoryScope, NewMemory};
use criterion::{Criterion, criterion_group, criterion_main};

const ENTRIES: usize = 100_000;
const ACTOR: &str = "tavern:marta";

/// A history of [`ENTRIES`] entries, the same every run.
fn store() -> HistoryStore {
    let keys: Vec<String> = (0..60).map(|i| format!("tavern:key{i}")).collect();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut store = HistoryStore::new();
    for turn in 0..ENTRIES {
        let pinned = turn % 20_000 == 0;
        let roll = if pinned { 6 } else { next() % 10 };
        let scope = match roll {
            0..=4 => MemoryScope::Actor(ACTOR.to_owned()),
            5 => MemoryScope::Plot("letter".to_owned()),
            6 => MemoryScope::Global,
            _ => MemoryScope::Actor(format!("tavern:npc{}", next() % 100)),
        };
        let tags = (0..1 + next() % 3)
            .map(|_| keys[(next() % keys.len() as u64) as usize].clone())
            .collect();
        store.append(NewMemory {
            text: format!("On turn {turn} something happened near the bar."),
            tags,
            scope: Some(scope),
            turn: turn as u64,
            source: "witnessed".to_owned(),
            pinned,
        });
    }
    store
}

fn retrieval(c: &mut Criterion) {
    let store = store();
    let context = [
        "tavern:key3",
        "tavern:key17",
        "tavern:key29",
        "tavern:key41",
        "tavern:key58",
    ];
    let tagged = MemoryQuery {
        actor: ACTOR,
        plots: &["letter"],
        tags: &context,
        k: 4,
        token_budget: 400,
    };
    let recent = MemoryQuery {
        tags: &[],
        ..tagged
    };
    assert_eq!(
        store.retrieve(&tagged).len(),
        5 + 4,
        "the five pinned (global) seeds and the top 4"
    );

    let mut group = c.benchmark_group("memory");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.bench_function("retrieve_top4_of_100000", |b| {
        b.iter(|| black_box(store.retrieve(black_box(&tagged))));
    });
    group.bench_function("retrieve_newest4_of_100000", |b| {
        b.iter(|| black_box(store.retrieve(black_box(&recent))));
    });
    group.finish();
}

fn many_tags(c: &mut Criterion) {
    let tags: Vec<String> = (0..20_000).map(|i| format!("tavern:key{i}")).collect();
    let mut group = c.benchmark_group("memory");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.bench_function("append_one_entry_of_20000_tags", |b| {
        b.iter(|| {
            let mut store = HistoryStore::new();
            store.append(NewMemory {
                text: "A crowded memory.".to_owned(),
                tags: tags.clone(),
                scope: Some(MemoryScope::Actor(ACTOR.to_owned())),
                ..NewMemory::default()
            });
            black_box(store)
        });
    });
    group.finish();
}

criterion_group!(benches, retrieval, many_tags);
criterion_main!(benches);
