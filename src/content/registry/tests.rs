use serde_json::json;

use super::*;
use crate::content::fixtures::{action, game, manifest, parsed, pointers};

const GIVE: &str = "mods/items/actions/give.action.json";

/// `files` listed, in this load order.
fn listed(files: &[&str]) -> Listed {
    (files.iter().enumerate())
        .map(|(place, file)| ((*file).to_owned(), place))
        .collect()
}

/// A check that refuses an action whose name is `bad`.
fn no_bad_name(file: &str, action: &ActionDefinition) -> Vec<ContentError> {
    if action.name == "bad" {
        vec![ContentError::new(file, "/name", "bad")]
    } else {
        Vec::new()
    }
}

#[test]
fn only_listed_items_that_pass_are_accepted() {
    let (good, bad) = (
        action("items:give", "give", json!({})),
        action("items:take", "take", json!({ "name": "bad" })),
    );
    let take = "mods/items/actions/take.action.json";
    let items = [
        (GIVE, &good),
        (take, &bad),
        ("mods/items/unlisted.action.json", &good),
    ];
    let mut problems = Vec::new();
    let accepted = accept_items(
        &items,
        &listed(&[GIVE, take]),
        |_| None,
        no_bad_name,
        &mut problems,
    );
    assert_eq!(accepted, [(GIVE, &good)]);
    assert_eq!(pointers(&problems), ["/name"]);
}

#[test]
fn a_file_that_became_invalid_keeps_its_last_valid_version() {
    let (before, after) = (
        action("items:give", "give", json!({})),
        action("items:give", "give", json!({ "name": "bad" })),
    );
    let mut problems = Vec::new();
    let accepted = accept_items(
        &[(GIVE, &after)],
        &listed(&[GIVE]),
        |_| Some(&before),
        no_bad_name,
        &mut problems,
    );
    assert_eq!(accepted, [(GIVE, &before)]);
    assert_eq!(
        problems,
        [
            ContentError::new(GIVE, "/name", "bad"),
            ContentError::kept_last_valid(GIVE)
        ]
    );

    let mut problems = Vec::new();
    let accepted = accept_items(
        &[(GIVE, &after)],
        &listed(&[GIVE]),
        |_| Some(&after),
        no_bad_name,
        &mut problems,
    );
    assert!(accepted.is_empty(), "a version that fails is never kept");
}

#[test]
fn items_of_mods_that_did_not_load_are_left_out_and_a_second_claim_is_a_duplicate() {
    let (first, second, stray) = (
        action("items:give", "give", json!({})),
        action("items:give", "hand", json!({})),
        action("shop:sell", "sell", json!({})),
    );
    let (copy, sell) = (
        "mods/items/actions/copy.action.json",
        "mods/shop/actions/sell.action.json",
    );
    let items = [(GIVE, &first), (copy, &second), (sell, &stray)];
    let mut problems = Vec::new();
    let catalog = gather(
        &items,
        &listed(&[GIVE, copy, sell]),
        &ContentCatalog::default(),
        |_, _| Vec::new(),
        |id| action_namespace(id) == "items",
        &mut problems,
    );
    assert_eq!(catalog.iter().collect::<Vec<_>>(), [&first]);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].file, copy);
    assert!(
        problems[0]
            .message
            .starts_with("duplicate action id `items:give`")
    );
}

/// [`gather`] of `items`, each passing its checks and of a mod loaded: the catalog,
/// and the problems told.
fn gather_passing<'a>(
    items: &[(&'a str, &'a ActionDefinition)],
    listed: &Listed,
    previous: &'a ContentCatalog<ActionDefinition>,
) -> (ContentCatalog<ActionDefinition>, Vec<ContentError>) {
    let mut problems = Vec::new();
    let catalog = gather(
        items,
        listed,
        previous,
        |_, _| Vec::new(),
        |_| true,
        &mut problems,
    );
    (catalog, problems)
}

/// Sources with the game file listing `mods`, their manifests, and `actions`.
fn build(
    game_file: &GameManifest,
    mods: &[(&str, &ModManifest)],
    actions: &[(&str, &ActionDefinition)],
    tags: &[(&str, &TagFile)],
) -> ContentRegistry {
    ContentRegistry::build(ContentSources {
        game: Some(("game.loom.json", game_file)),
        mods,
        actions,
        tags,
        ..ContentSources::default()
    })
}

#[test]
fn without_a_game_file_nothing_loads() {
    let items = manifest("items", json!({}));
    let registry = ContentRegistry::build(ContentSources {
        mods: &[("mods/items/mod.json", &items)],
        ..ContentSources::default()
    });
    assert!(registry.mods().is_empty());
}

#[test]
fn actions_are_in_prompt_order_and_aliases_resolve_against_their_mod() {
    let mut game_file = game(&["items", "core", "tavern"]);
    game_file.action_group_order = vec!["tavern".to_owned()];
    let listing = |files: &[&str]| json!({ "content": { "actions": files } });
    let items = manifest("items", {
        let mut m = listing(&["actions/b.action.json", "actions/a.action.json"]);
        m["verbAliases"] = json!({ "hand": "give", "yell": "shout" });
        m
    });
    let (core, tavern) = (
        manifest("core", listing(&["actions/wait.action.json"])),
        manifest("tavern", listing(&["actions/sing.action.json"])),
    );
    let actions = [
        action(
            "items:b_give",
            "give {x}",
            json!({ "parameters": { "x": { "default": 1 } } }),
        ),
        action("items:a_take", "take", json!({})),
        action("core:wait", "wait", json!({})),
        action("tavern:sing", "shout", json!({})),
    ];
    let paths = [
        "mods/items/actions/b.action.json",
        "mods/items/actions/a.action.json",
        "mods/core/actions/wait.action.json",
        "mods/tavern/actions/sing.action.json",
    ];
    let sources: Vec<(&str, &ActionDefinition)> = paths.into_iter().zip(&actions).collect();
    let mods = [
        ("mods/items/mod.json", &items),
        ("mods/core/mod.json", &core),
        ("mods/tavern/mod.json", &tavern),
    ];
    let registry = build(&game_file, &mods, &sources, &[]);
    let ids: Vec<&str> = registry.actions().iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        ids,
        ["tavern:sing", "core:wait", "items:a_take", "items:b_give"]
    );
    assert_eq!(registry.action_file("core:wait"), Some(paths[2]));
    assert_eq!(registry.action("items:b_give"), Some(&actions[0]));
    let aliases = registry.verb_aliases("items:a_take");
    assert_eq!(aliases.len(), 1, "`yell` stands for another mod's command");
    assert_eq!(pointers(registry.problems()), ["/verbAliases/yell"]);
}

#[test]
fn a_group_order_naming_no_loaded_mod_is_a_warning() {
    let mut game_file = game(&["core", "tavern"]);
    game_file.action_group_order = vec!["tavern".to_owned(), "convresation".to_owned()];
    let (core, tavern) = (manifest("core", json!({})), manifest("tavern", json!({})));
    let mods = [
        ("mods/core/mod.json", &core),
        ("mods/tavern/mod.json", &tavern),
    ];
    let registry = build(&game_file, &mods, &[], &[]);
    assert_eq!(pointers(registry.warnings()), ["/actionGroupOrder/1"]);
    let warning = &registry.warnings()[0];
    assert_eq!(warning.file, "game.loom.json");
    assert!(
        warning.message.contains("`convresation`"),
        "{}",
        warning.message
    );
    assert!(
        warning.message.contains("core, tavern"),
        "{}",
        warning.message
    );
    assert!(registry.problems().is_empty());
    // With no mod loaded (its manifest empty, its id misspelt), the warning says so
    // instead of ending on an empty list.
    let registry = build(&game_file, &[], &[], &[]);
    let said: Vec<&str> = (registry.warnings().iter())
        .filter(|w| w.pointer.starts_with("/actionGroupOrder"))
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        said,
        [
            "`tavern` is no loaded mod, so it orders no actions: name a mod (no mod is loaded)",
            "`convresation` is no loaded mod, so it orders no actions: name a mod (no mod is loaded)"
        ]
    );
}

#[test]
fn tag_files_merge_in_load_order_and_unknown_keys_are_warnings() {
    let game_file = game(&["tavern"]);
    let tavern = manifest(
        "tavern",
        json!({ "content": { "tags": ["b.tags.json", "a.tags.json"] } }),
    );
    let tags = |key: &str, tag: &str| -> TagFile {
        parsed(json!({ "places": { key: [tag] } }), json!({}))
    };
    let (first, second) = (tags("tavern:hall", "warm"), tags("tavern:hall", "loud"));
    let files = [
        ("mods/tavern/a.tags.json", &second),
        ("mods/tavern/b.tags.json", &first),
    ];
    let registry = build(
        &game_file,
        &[("mods/tavern/mod.json", &tavern)],
        &[],
        &files,
    );
    assert_eq!(registry.tags().tags_of("tavern:hall"), ["warm", "loud"]);
    let warned: Vec<&str> = registry
        .warnings()
        .iter()
        .map(|w| w.file.as_str())
        .collect();
    assert_eq!(
        warned,
        ["mods/tavern/b.tags.json", "mods/tavern/a.tags.json"]
    );
}

#[test]
fn the_listed_files_are_the_manifests_paths_inside_its_folder() {
    let items = manifest(
        "items",
        json!({ "content": { "actions": ["actions/give.action.json"], "tags": ["t.tags.json"] } }),
    );
    let registry = build(
        &game(&["items"]),
        &[("mods/items/mod.json", &items)],
        &[],
        &[],
    );
    assert_eq!(
        listed_files(registry.mods()),
        listed(&[GIVE, "mods/items/t.tags.json"])
    );
}

#[test]
fn a_method_edit_that_breaks_a_rule_across_files_keeps_the_last_valid_version() {
    const METHOD: &str = "mods/tavern/methods/rest.method.json";
    let game_file = game(&["tavern"]);
    let tavern = manifest(
        "tavern",
        json!({ "content": {
            "actions": ["actions/wait.action.json"],
            "tasks": ["tasks/rest.task.json"],
            "methods": ["methods/rest.method.json"]
        } }),
    );
    let wait = action("tavern:wait", "wait", json!({}));
    let rest: TaskDefinition = parsed(
        json!({ "id": "tavern:rest", "name": "Rest", "description": "rest a while",
                "template": "rest" }),
        json!({}),
    );
    let method = |action_id: &str| -> RefinementMethod {
        parsed(
            json!({ "refinementMethodId": "tavern:rest_by_waiting", "taskId": "tavern:rest",
                    "steps": [{ "stepType": "primitive_action", "actionId": action_id }] }),
            json!({}),
        )
    };
    let (valid, misspelt) = (method("tavern:wait"), method("tavern:wiat"));
    let mods = [("mods/tavern/mod.json", &tavern)];
    let actions = [("mods/tavern/actions/wait.action.json", &wait)];
    let tasks = [("mods/tavern/tasks/rest.task.json", &rest)];
    let sources = |methods| ContentSources {
        game: Some(("game.loom.json", &game_file)),
        mods: &mods,
        actions: &actions,
        tasks: &tasks,
        methods,
        ..ContentSources::default()
    };
    let (was, is) = ([(METHOD, &valid)], [(METHOD, &misspelt)]);
    let first = ContentRegistry::build(sources(&was));
    assert_eq!(first.problems(), []);
    let edited = ContentRegistry::rebuild(sources(&is), &first);
    let problems: Vec<(&str, &str)> = (edited.problems().iter())
        .map(|p| (p.file.as_str(), p.message.as_str()))
        .collect();
    assert!(
        problems
            .iter()
            .any(|(file, said)| *file == METHOD && said.contains("tavern:wiat")),
        "the edit's problem is told: {problems:#?}"
    );
    assert!(
        problems.contains(&(
            METHOD,
            ContentError::kept_last_valid(METHOD).message.as_str()
        )),
        "{problems:#?}"
    );
    assert_eq!(problems.len(), 2, "and nothing else: {problems:#?}");
    assert_eq!(
        edited.method("tavern:rest_by_waiting"),
        Some(&valid),
        "the last valid version stays in use"
    );
    assert!(edited.task("tavern:rest").is_some(), "and so does its task");
}

#[test]
fn an_edit_taking_another_files_id_is_refused_and_keeps_its_last_version() {
    const A: &str = "mods/items/actions/a.action.json";
    const B: &str = "mods/items/actions/b.action.json";
    let (a, b) = (
        action("items:a", "take", json!({})),
        action("items:b", "give", json!({})),
    );
    let mut previous = ContentCatalog::default();
    previous.insert(A, a.clone()).expect("unique");
    previous.insert(B, b.clone()).expect("unique");
    // `a` is saved with `b`'s id (its text copied over): `a` sorts first.
    let copied = action("items:b", "take", json!({}));
    let items = [(A, &copied), (B, &b)];
    let (catalog, problems) = gather_passing(&items, &listed(&[A, B]), &previous);
    assert_eq!(
        catalog.iter_with_files().collect::<Vec<_>>(),
        [(A, &a), (B, &b)],
        "the untouched file keeps its id, the edited one its last version, in order"
    );
    let told: Vec<(&str, &str)> = (problems.iter())
        .map(|p| (p.file.as_str(), p.message.as_str()))
        .collect();
    assert_eq!(told.len(), 2, "{told:#?}");
    assert_eq!(told[0].0, A);
    assert!(
        told[0].1.starts_with(
            "duplicate action id `items:b`, already defined in mods/items/actions/b.action.json"
        ),
        "{told:#?}"
    );
    assert_eq!(
        told[1],
        (A, ContentError::kept_last_valid(A).message.as_str())
    );
}

#[test]
fn the_file_that_held_an_id_keeps_it_through_its_own_edit() {
    const WAIT: &str = "mods/core/actions/wait.action.json";
    const IDLE: &str = "mods/core/actions/idle.action.json";
    let wait = action("core:wait", "wait", json!({}));
    let mut previous = ContentCatalog::default();
    previous.insert(WAIT, wait.clone()).expect("unique");
    // A new file copies `wait`'s id (refused), then `wait` itself is edited.
    let copy = action("core:wait", "idle", json!({}));
    let edited = action("core:wait", "wait patiently", json!({}));
    let items = [(IDLE, &copy), (WAIT, &edited)];
    let (catalog, problems) = gather_passing(&items, &listed(&[IDLE, WAIT]), &previous);
    assert_eq!(
        catalog.iter_with_files().collect::<Vec<_>>(),
        [(WAIT, &edited)],
        "the edit applies; the copy is refused"
    );
    let told: Vec<&str> = problems.iter().map(|p| p.file.as_str()).collect();
    assert_eq!(told, [IDLE], "{problems:#?}");
}

#[test]
fn a_catalog_is_in_load_order_and_the_first_claim_is_the_earlier_mods() {
    const TAVERN: &str = "mods/tavern/actions/wave.action.json";
    const CORE: &str = "mods/core/actions/wait.action.json";
    const COPY: &str = "mods/core/actions/wave.action.json";
    let (wave, wait, copy) = (
        action("tavern:wave", "wave", json!({})),
        action("core:wait", "wait", json!({})),
        action("tavern:wave", "wave too", json!({})),
    );
    // Sources come sorted by path; the game file loads `tavern` first.
    let items = [(CORE, &wait), (COPY, &copy), (TAVERN, &wave)];
    let (catalog, problems) = gather_passing(
        &items,
        &listed(&[TAVERN, CORE, COPY]),
        &ContentCatalog::default(),
    );
    assert_eq!(
        catalog.iter_with_files().collect::<Vec<_>>(),
        [(TAVERN, &wave), (CORE, &wait)]
    );
    let told: Vec<&str> = problems.iter().map(|p| p.file.as_str()).collect();
    assert_eq!(told, [COPY], "{problems:#?}");
}
