//! The narrative linter on a fixture with known gaps (`tests/fixtures/lint`): what
//! `cargo run --example lint -- tests/fixtures/lint` prints and exits with, its mods
//! first, then its scene (`lint_scene`), whose errors the example adds.

use std::path::Path;

use bevy_loom::content::CANONICAL_FAILURE_REASONS;
use bevy_loom::content::lint::{
    EntityKind, EntityLint, LintReport, PoolShortfall, VerbVariety, lint_narrative, lint_scene,
};
use bevy_loom::prelude::*;

use bevy_loom::testing::registry_from_folder;

/// Loads the fixture as the example does and lints it, with the errors the app reported.
fn lint_fixture() -> (ContentRegistry, LintReport, Vec<ContentError>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint");
    let (registry, reported) =
        registry_from_folder(&root).unwrap_or_else(|error| panic!("{error}"));
    let report = lint_narrative(&registry).with_load_errors(reported.clone());
    (registry, report, reported)
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}

fn pool(pointer: &str, have: usize, wanted: usize) -> PoolShortfall {
    PoolShortfall {
        pointer: pointer.to_owned(),
        have,
        wanted,
    }
}

fn all_reasons_but(except: &str) -> Vec<String> {
    let mut reasons: Vec<&str> = CANONICAL_FAILURE_REASONS
        .iter()
        .copied()
        .filter(|r| *r != except)
        .collect();
    reasons.sort_unstable();
    words(&reasons)
}

#[test]
fn the_fixture_report_names_every_gap() {
    let (_, report, _) = lint_fixture();
    assert_eq!(report.verbs, ["greet", "take"]);
    let expected = vec![
        EntityLint {
            key: "shop:clerk".into(),
            file: "mods/shop/narrative/clerk.narrative.json".into(),
            kind: EntityKind::Character,
            missing_verbs: words(&["take"]),
            missing_failure_reasons: all_reasons_but("refused"),
            small_pools: vec![],
            below_recommended: vec![
                pool("/traits", 6, 15),
                pool("/failure_fragments/refused/core", 1, 2),
                pool("/failure_fragments/refused/color", 0, 2),
                pool("/behavior_fragments/greet/core", 2, 3),
            ],
            // 2 cores × 1 (no colors) × 3 sitting variants × (20 + 15 + 6) trait sets.
            variety: vec![VerbVariety {
                verb: "greet".into(),
                pointer: "/behavior_fragments/greet".into(),
                variety: 246,
            }],
        },
        EntityLint {
            key: "shop:counter".into(),
            file: "mods/shop/narrative/counter.narrative.json".into(),
            kind: EntityKind::Scenery,
            missing_verbs: vec![],
            // Furniture nobody acts on is not asked for failure fragments.
            missing_failure_reasons: vec![],
            small_pools: vec![],
            below_recommended: vec![pool("/traits", 5, 15)],
            variety: vec![],
        },
        EntityLint {
            key: "shop:lamp".into(),
            file: "mods/shop/narrative/lamp.narrative.json".into(),
            kind: EntityKind::Thing,
            // `greet` targets characters only.
            missing_verbs: vec![],
            missing_failure_reasons: all_reasons_but(""),
            small_pools: vec![pool("/action_fragments/take/color", 1, 2)],
            below_recommended: vec![
                pool("/traits", 5, 15),
                pool("/action_fragments/take/core", 2, 3),
                pool("/action_fragments/take/color", 1, 4),
            ],
            // 2 cores × 1 color set × 1 (no states) × (10 + 5 + 1) trait sets.
            variety: vec![VerbVariety {
                verb: "take".into(),
                pointer: "/action_fragments/take".into(),
                variety: 32,
            }],
        },
    ];
    assert_eq!(report.entities, expected);
    // The clerk may greet and take and has behaviour for greet; the lamp can be taken
    // and has action fragments for it; the counter is scenery: 2 of 2 + 1.
    assert_eq!((report.covered_pairs, report.total_pairs), (2, 3));
    assert_eq!(report.coverage_percent(), 200.0 / 3.0);
}

#[test]
fn the_one_content_error_fails_the_lint() {
    let (registry, report, reported) = lint_fixture();
    assert_eq!(report.errors.len(), 1, "{:#?}", report.errors);
    let error = &report.errors[0];
    assert_eq!(
        (error.file.as_str(), error.pointer.as_str()),
        (
            "mods/shop/narrative/juggler.narrative.json",
            "/behavior_fragments/juggle"
        )
    );
    assert!(error.message.contains("unknown verb `juggle`"), "{error}");
    assert_eq!(report.errors, reported, "the app reported the same error");
    assert!(report.has_errors(), "the example exits with 1");
    assert!(
        registry.narrative("shop:juggler").is_none(),
        "the broken file is skipped, so it is not linted"
    );
}

#[test]
fn pools_below_minimum_are_the_registry_warnings() {
    let (registry, report, _) = lint_fixture();
    let warned: Vec<(&str, &str)> = registry
        .warnings()
        .iter()
        .map(|w| (w.file.as_str(), w.pointer.as_str()))
        .collect();
    let small: Vec<(&str, &str)> = report
        .entities
        .iter()
        .flat_map(|e| {
            e.small_pools
                .iter()
                .map(|p| (e.file.as_str(), p.pointer.as_str()))
        })
        .collect();
    assert!(!small.is_empty(), "the fixture has pools below the minimum");
    assert_eq!(small, warned);
    assert!(
        (report.errors.iter()).all(|e| !small.contains(&(e.file.as_str(), e.pointer.as_str()))),
        "small pools are warnings, not errors: alone they let the example exit with 0"
    );
}

#[test]
fn the_printed_report_lists_entities_then_the_summary() {
    let (_, report, _) = lint_fixture();
    let text = report.to_string();
    assert!(
        text.starts_with("3 narrative entities; verbs used by actions: greet, take\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "\nshop:lamp (thing, mods/shop/narrative/lamp.narrative.json)\n  missing failure reasons (14)"
        ),
        "{text}"
    );
    assert!(
        text.contains("  below minimum (1): /action_fragments/take/color 1 of 2\n"),
        "{text}"
    );
    assert!(
        text.contains("  variety: /behavior_fragments/greet 246\n"),
        "{text}"
    );
    assert!(
        text.contains("\ncontent errors (1):\n  mods/shop/narrative/juggler.narrative.json at /behavior_fragments/juggle: unknown verb `juggle`"),
        "{text}"
    );
    assert_eq!(
        text.lines().last(),
        Some(
            "coverage 66.7% (2 of 3 entity-verb pairs); 1 content error, 1 pool below minimum, 8 below recommended"
        )
    );
}

#[test]
fn a_scene_naming_keys_nothing_defines_fails_the_lint() {
    let (registry, report, _) = lint_fixture();
    let file = "scenes/shop.scene.json";
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/lint")
            .join(file),
    )
    .expect("the fixture scene");
    let problems = lint_scene(&bytes, file, &registry);
    let places: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p.file.as_str(), p.pointer.as_str()))
        .collect();
    assert_eq!(
        places,
        [
            (file, "/places/0/narrative"),
            (file, "/entities/4/narrative")
        ],
        "{problems:#?}"
    );
    assert!(
        problems[0]
            .message
            .contains("no loaded narrative file defines the key `shop:shop_floor` (loaded: shop:clerk, shop:counter, shop:lamp)"),
        "{}",
        problems[0]
    );
    assert!(
        problems[1].message.contains("`shop:juggler`"),
        "the juggler's file did not load: {}",
        problems[1]
    );
    let report = report.with_load_errors(problems);
    assert_eq!(report.errors.len(), 3, "{:#?}", report.errors);
}

#[test]
fn a_scene_that_does_not_parse_is_a_lint_error() {
    let (registry, _, _) = lint_fixture();
    let problems = lint_scene(
        br#"{ "places": [{ "id": "shop", "name": "the shop" }], "entities": [{ "id": "x", "name": "x" }] }"#,
        "scenes/broken.scene.json",
        &registry,
    );
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(problems[0].pointer, "/entities/0");
}

/// A mod `shop` whose keeper may take `core:wait` only and be offered `shop:tidy` only,
/// with two tasks and their methods: `shop:tidy` waits; `shop:haggle` (offered to no
/// one) has a step that waits and one that sweeps (`shop:sweep`, allowed to no one).
fn planning_content() -> Vec<(&'static str, String)> {
    use serde_json::json;
    let task = |id: &str| {
        json!({ "id": id, "name": "A task", "description": "does it", "template": "do it" })
            .to_string()
    };
    let method = |id: &str, task: &str, steps: serde_json::Value| {
        json!({ "refinementMethodId": id, "taskId": task, "steps": steps }).to_string()
    };
    let wait = json!({ "stepType": "primitive_action", "actionId": "core:wait" });
    let sweep = json!({ "stepType": "primitive_action", "actionId": "shop:sweep" });
    let mut files = crate::support::core_mod();
    files.extend([
        crate::support::game(&["core", "shop"]),
        (
            "mods/shop/mod.json",
            crate::support::manifest(
                "shop",
                json!({ "content": {
                    "actions": ["actions/sweep.action.json"],
                    "actors": ["actors/keeper.actor.json"],
                    "tasks": ["tasks/tidy.task.json", "tasks/haggle.task.json"],
                    "methods": ["methods/tidy.method.json", "methods/haggle.method.json"]
                } }),
            ),
        ),
        (
            "mods/shop/actions/sweep.action.json",
            crate::support::action("shop:sweep", json!({ "template": "sweep" })),
        ),
        (
            "mods/shop/actors/keeper.actor.json",
            json!({
                "id": "shop:keeper",
                "persona": { "name": "Ada", "role": "the shopkeeper" },
                "policy": { "allowedActions": ["core:wait"], "allowedTasks": ["shop:tidy"] }
            })
            .to_string(),
        ),
        ("mods/shop/tasks/tidy.task.json", task("shop:tidy")),
        ("mods/shop/tasks/haggle.task.json", task("shop:haggle")),
        (
            "mods/shop/methods/tidy.method.json",
            method("shop:tidy_by_waiting", "shop:tidy", json!([wait])),
        ),
        (
            "mods/shop/methods/haggle.method.json",
            method(
                "shop:haggle_slowly",
                "shop:haggle",
                json!([wait, { "stepType": "conditional", "condition": true, "thenSteps": [sweep] }]),
            ),
        ),
    ]);
    files
}

#[test]
fn planning_content_no_actor_can_use_is_a_warning() {
    let (registry, errors) = crate::support::load(&planning_content());
    assert!(errors.is_empty(), "{errors:#?}");
    let report = lint_narrative(&registry);
    let warnings = planning_warnings(&report);
    assert_eq!(
        warnings,
        [
            ("mods/shop/tasks/haggle.task.json", "/id"),
            (
                "mods/shop/methods/haggle.method.json",
                "/steps/1/thenSteps/0/actionId"
            ),
        ]
    );
    assert!(
        report.planning[0]
            .message
            .contains("no actor spec may be offered task `shop:haggle`")
    );
    assert!(
        report.planning[1]
            .message
            .contains("no actor spec may take `shop:sweep`")
    );
    assert!(!report.has_errors(), "warnings only");
    assert!(report.to_string().contains("planning warnings (2):"));
}

/// The keeper may take on tidying, whose method now sweeps, which her policy does not
/// allow (a sweeper's does): the plan would have her sweep.
#[test]
fn a_step_the_policy_of_a_spec_offered_its_task_forbids_is_a_warning() {
    use serde_json::json;
    let steps = json!([
        { "stepType": "primitive_action", "actionId": "core:wait" },
        { "stepType": "primitive_action", "actionId": "shop:sweep" }
    ]);
    let report = linted_with_a_sweeper(steps);
    let warnings = planning_warnings(&report);
    assert_eq!(
        warnings,
        [
            ("mods/shop/tasks/haggle.task.json", "/id"),
            ("mods/shop/methods/tidy.method.json", "/steps/1/actionId"),
        ],
        "haggling's sweep is the sweeper's to take, and nobody is offered haggling"
    );
    assert!(
        report.planning[1].message.starts_with(
            "`shop:keeper` may take on task `shop:tidy`, whose step takes `shop:sweep`"
        ),
        "{}",
        report.planning[1]
    );
}

/// Where each planning warning of `report` is: its file and pointer.
fn planning_warnings(report: &LintReport) -> Vec<(&str, &str)> {
    (report.planning.iter())
        .map(|w| (w.file.as_str(), w.pointer.as_str()))
        .collect()
}

/// [`planning_content`] with tidying's method taking `tidy_steps`, and a sweeper
/// whose policy allows sweeping alone, linted.
fn linted_with_a_sweeper(tidy_steps: serde_json::Value) -> LintReport {
    use serde_json::json;
    let mut files = planning_content();
    let tidy = json!({ "refinementMethodId": "shop:tidy_by_waiting", "taskId": "shop:tidy",
        "steps": tidy_steps });
    let manifest = crate::support::manifest(
        "shop",
        json!({ "content": {
            "actions": ["actions/sweep.action.json"],
            "actors": ["actors/keeper.actor.json", "actors/sweeper.actor.json"],
            "tasks": ["tasks/tidy.task.json", "tasks/haggle.task.json"],
            "methods": ["methods/tidy.method.json", "methods/haggle.method.json"]
        } }),
    );
    for (path, text) in &mut files {
        match *path {
            "mods/shop/methods/tidy.method.json" => *text = tidy.to_string(),
            "mods/shop/mod.json" => *text = manifest.clone(),
            _ => {}
        }
    }
    let sweeper = json!({
        "id": "shop:sweeper",
        "persona": { "name": "Bo", "role": "the sweeper" },
        "policy": { "allowedActions": ["shop:sweep"] }
    });
    files.push(("mods/shop/actors/sweeper.actor.json", sweeper.to_string()));
    let (registry, errors) = crate::support::load(&files);
    assert!(errors.is_empty(), "{errors:#?}");
    lint_narrative(&registry)
}

/// A task run only as another's step is carried out by whoever takes the other on:
/// it is usable, and its steps are checked against that spec's policy.
#[test]
fn a_task_run_by_another_is_checked_against_who_takes_the_other_on() {
    let steps = serde_json::json!([{ "stepType": "task", "taskId": "shop:haggle" }]);
    let report = linted_with_a_sweeper(steps);
    let warnings = planning_warnings(&report);
    assert_eq!(
        warnings,
        [(
            "mods/shop/methods/haggle.method.json",
            "/steps/1/thenSteps/0/actionId"
        )],
        "haggling is tidying's step, so the keeper haggles, and sweeps: {:#?}",
        report.planning
    );
    assert!(
        report.planning[0].message.starts_with(
            "`shop:keeper` carries out, as a step of a task it may take on, task `shop:haggle`"
        ),
        "{}",
        report.planning[0]
    );
}

#[test]
fn the_shipped_planning_content_and_abilities_are_usable() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let (registry, _) = registry_from_folder(&root).unwrap_or_else(|error| panic!("{error}"));
    assert!(registry.tasks().count() > 0);
    assert_eq!(registry.abilities().count(), 3);
    let report = lint_narrative(&registry);
    assert_eq!(report.planning, []);
    assert_eq!(report.abilities, []);
}
