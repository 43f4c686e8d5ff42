//! Which mods load, in order: those the game file lists that have a manifest, less
//! those whose conflicts, dependency cycles or missing dependencies rule them out,
//! each reported with what to fix.

use std::collections::HashSet;

use super::{ContentError, GameManifest, ModManifest, owning_mod};

/// The mods that load, in order: the game file's mods that have a manifest, less those
/// [`resolve_mods`] rules out. A mod ruled out by an edit of its manifest keeps its
/// `previous` manifest (the last that loaded) when that one passes.
pub(super) fn load_order<'a>(
    game: &GameManifest,
    mods: &[(&'a str, &'a ModManifest)],
    previous: &[(&'a str, &'a ModManifest)],
    problems: &mut Vec<ContentError>,
) -> Vec<(&'a str, &'a ModManifest)> {
    let candidates = select_mods(game, mods);
    let mut first = Vec::new();
    let kept = resolve_mods(candidates.clone(), game, &mut first);
    let fallbacks: Vec<(&str, &ModManifest)> = candidates
        .iter()
        .filter(|(file, _)| !kept.iter().any(|(k, _)| k == file))
        .filter_map(|&(file, current)| {
            previous
                .iter()
                .find(|&&(f, manifest)| f == file && manifest != current)
                .copied()
        })
        .collect();
    if fallbacks.is_empty() {
        problems.append(&mut first);
        return kept;
    }
    // Of the first pass's problems, those of the manifests edited out say why each
    // keeps its last version; what it said of the mods that needed them, the second
    // pass says again if it still holds.
    let edited = |problem: &ContentError| fallbacks.iter().any(|(f, _)| *f == problem.file);
    problems.extend(first.into_iter().filter(edited));
    let substituted = candidates
        .iter()
        .map(|&(file, manifest)| {
            fallbacks
                .iter()
                .copied()
                .find(|(f, _)| *f == file)
                .unwrap_or((file, manifest))
        })
        .collect();
    let mut second = Vec::new();
    let kept = resolve_mods(substituted, game, &mut second);
    for (file, _) in &fallbacks {
        if kept.iter().any(|(k, _)| k == file) {
            problems.push(ContentError::kept_last_valid(file));
        }
    }
    for problem in second {
        if !problems.contains(&problem) {
            problems.push(problem);
        }
    }
    kept
}

/// The ids of the game file's `actionGroupOrder` (`preferred`, in the file
/// `game_path`) that name none of the `loaded` mods, as warnings: a misspelt one leaves
/// that mod's actions where the alphabet puts them.
pub(super) fn unknown_groups(
    game_path: &str,
    preferred: &[String],
    loaded: &[&str],
) -> Vec<ContentError> {
    let known = |id: &str| loaded.iter().any(|m| m.eq_ignore_ascii_case(id));
    (preferred.iter().enumerate())
        .filter(|(_, id)| !known(id))
        .map(|(index, id)| {
            let known = super::error::known_ids(loaded.iter().copied(), "no mod is loaded");
            let message =
                format!("`{id}` is no loaded mod, so it orders no actions: name a mod ({known})");
            ContentError::new(game_path, format!("/actionGroupOrder/{index}"), message)
        })
        .collect()
}

/// The order of the loaded mods' action groups in prompts, as lower-cased ids: the
/// game file's `actionGroupOrder` first (loaded mods only, each once), then the rest
/// alphabetically.
pub(super) fn group_order<'a>(
    preferred: &[String],
    loaded: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let loaded: Vec<String> = loaded.map(str::to_ascii_lowercase).collect();
    let mut order: Vec<String> = Vec::new();
    for id in preferred.iter().map(|id| id.to_ascii_lowercase()) {
        if loaded.contains(&id) && !order.contains(&id) {
            order.push(id);
        }
    }
    let mut rest: Vec<String> = loaded
        .into_iter()
        .filter(|id| !order.contains(id))
        .collect();
    rest.sort();
    rest.dedup();
    order.extend(rest);
    order
}

/// The game file's mods that have a manifest, in load order, each once.
pub(super) fn select_mods<'a>(
    game: &GameManifest,
    mods: &[(&'a str, &'a ModManifest)],
) -> Vec<(&'a str, &'a ModManifest)> {
    let mut selected: Vec<(&str, &ModManifest)> = Vec::new();
    for id in &game.mods {
        // A manifest that failed to load was already reported by its loader.
        let found = mods.iter().find(|(file, manifest)| {
            manifest.id.eq_ignore_ascii_case(id)
                && owning_mod(file).is_none_or(|folder| folder.eq_ignore_ascii_case(id))
        });
        if let Some(&(file, manifest)) = found
            && !selected.iter().any(|(_, m)| m.id.eq_ignore_ascii_case(id))
        {
            selected.push((file, manifest));
        }
    }
    selected
}

/// The mods that pass conflicts, cycles and dependencies, reporting the others.
pub(super) fn resolve_mods<'a>(
    mut candidates: Vec<(&'a str, &'a ModManifest)>,
    game: &GameManifest,
    problems: &mut Vec<ContentError>,
) -> Vec<(&'a str, &'a ModManifest)> {
    drop_conflicting(&mut candidates, problems);
    drop_cycles(&mut candidates, problems);
    drop_missing_dependencies(&mut candidates, game, problems);
    candidates
}

/// Declared conflicts: the mod that declares a conflict with a present mod is dropped.
fn drop_conflicting(candidates: &mut Vec<(&str, &ModManifest)>, problems: &mut Vec<ContentError>) {
    let is_present = |set: &[(&str, &ModManifest)], id: &str| {
        set.iter().any(|(_, m)| m.id.eq_ignore_ascii_case(id))
    };

    let before_conflicts = candidates.clone();
    candidates.retain(|(file, manifest)| {
        let mut ok = true;
        for (index, other) in manifest.conflicts.iter().enumerate() {
            if !other.eq_ignore_ascii_case(&manifest.id) && is_present(&before_conflicts, other) {
                problems.push(ContentError::new(
                    *file,
                    format!("/conflicts/{index}"),
                    format!("`{}` conflicts with `{other}`, which is also loaded: remove one of them from the game file", manifest.id),
                ));
                ok = false;
            }
        }
        ok
    });
}

/// Dependency cycles: every mod on a cycle is dropped.
fn drop_cycles(candidates: &mut Vec<(&str, &ModManifest)>, problems: &mut Vec<ContentError>) {
    let cycles = dependency_cycles(candidates);
    for cycle in &cycles {
        let ids: Vec<&str> = cycle.iter().map(|&i| candidates[i].1.id.as_str()).collect();
        let names = format!("{} → {}", ids.join(" → "), ids[0]);
        for (position, &member) in cycle.iter().enumerate() {
            let (file, manifest) = candidates[member];
            let next = ids[(position + 1) % ids.len()];
            let index = manifest
                .dependencies
                .iter()
                .position(|d| d.id.eq_ignore_ascii_case(next))
                .unwrap_or_default();
            problems.push(ContentError::new(
                file,
                format!("/dependencies/{index}/id"),
                format!("dependency cycle {names}: a mod cannot depend on itself through others; remove one of these dependencies"),
            ));
        }
    }
    let on_cycle: HashSet<usize> = cycles.into_iter().flatten().collect();
    *candidates = std::mem::take(candidates)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !on_cycle.contains(i))
        .map(|(_, c)| c)
        .collect();
}

/// Missing dependencies and version ranges, until nothing more drops out.
fn drop_missing_dependencies(
    candidates: &mut Vec<(&str, &ModManifest)>,
    game: &GameManifest,
    problems: &mut Vec<ContentError>,
) {
    loop {
        let mut dropped = false;
        let snapshot = candidates.clone();
        candidates.retain(|(file, manifest)| {
            for (index, dependency) in manifest.dependencies.iter().enumerate() {
                match snapshot.iter().find(|(_, m)| m.id.eq_ignore_ascii_case(&dependency.id)) {
                    None => {
                        let listed = game.mods.iter().any(|m| m.eq_ignore_ascii_case(&dependency.id));
                        let hint = if listed {
                            "it is listed in the game file but did not load; fix the errors reported for it"
                        } else {
                            "add it to the game file's `mods`"
                        };
                        problems.push(ContentError::new(
                            *file,
                            format!("/dependencies/{index}/id"),
                            format!("`{}` depends on `{}`, which is not loaded: {hint}", manifest.id, dependency.id),
                        ));
                        dropped = true;
                        return false;
                    }
                    Some((_, found)) if !dependency.version.matches(&found.version) => {
                        problems.push(ContentError::new(
                            *file,
                            format!("/dependencies/{index}/version"),
                            format!(
                                "`{}` needs `{}` {}, but version {} is loaded: update one of the mods or widen the range",
                                manifest.id, dependency.id, dependency.version, found.version
                            ),
                        ));
                        dropped = true;
                        return false;
                    }
                    Some(_) => {}
                }
            }
            true
        });
        if !dropped {
            break;
        }
    }
}

/// Each dependency cycle among the candidates, as candidate indices in dependency order.
fn dependency_cycles(candidates: &[(&str, &ModManifest)]) -> Vec<Vec<usize>> {
    let edges: Vec<Vec<usize>> = candidates
        .iter()
        .map(|(_, manifest)| {
            manifest
                .dependencies
                .iter()
                .filter_map(|d| {
                    candidates
                        .iter()
                        .position(|(_, m)| m.id.eq_ignore_ascii_case(&d.id))
                })
                .collect()
        })
        .collect();
    // 0 = unvisited, 1 = on the current path, 2 = done.
    let mut state = vec![0u8; candidates.len()];
    let mut cycles: Vec<Vec<usize>> = Vec::new();
    for root in 0..candidates.len() {
        if state[root] != 0 {
            continue;
        }
        // The path down from `root`, each mod with the next of its dependencies to look
        // at: a stack of its own, so a chain of thousands of mods cannot exhaust the
        // thread's.
        state[root] = 1;
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some((node, next)) = path.last_mut() {
            let Some(&dependency) = edges[*node].get(*next) else {
                state[*node] = 2;
                path.pop();
                continue;
            };
            *next += 1;
            match state[dependency] {
                0 => {
                    state[dependency] = 1;
                    path.push((dependency, 0));
                }
                1 => {
                    if let Some(start) = path.iter().position(|&(on, _)| on == dependency) {
                        cycles.push(path[start..].iter().map(|&(on, _)| on).collect());
                    }
                }
                _ => {}
            }
        }
    }
    cycles
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::fixtures::{game, manifest, pointers};

    fn path(id: &str) -> String {
        format!("mods/{id}/mod.json")
    }

    /// The ids of `mods`, in order.
    fn ids<'a>(mods: &[(&str, &'a ModManifest)]) -> Vec<&'a str> {
        mods.iter().map(|(_, m)| m.id.as_str()).collect()
    }

    #[test]
    fn the_game_files_mods_with_a_manifest_load_in_its_order_once() {
        let (core, items, stray) = (
            manifest("core", json!({})),
            manifest("items", json!({})),
            manifest("items", json!({})),
        );
        let (core_path, items_path) = (path("core"), path("items"));
        let mods = [
            (items_path.as_str(), &items),
            (core_path.as_str(), &core),
            ("mods/other/mod.json", &stray),
        ];
        let selected = select_mods(&game(&["items", "ghost", "CORE", "items"]), &mods);
        assert_eq!(
            selected,
            [(items_path.as_str(), &items), (core_path.as_str(), &core)]
        );
    }

    #[test]
    fn a_mod_that_declares_a_conflict_with_a_loaded_mod_is_skipped() {
        let (a, b) = (
            manifest("a", json!({ "conflicts": ["B", "a"] })),
            manifest("b", json!({})),
        );
        let mut problems = Vec::new();
        let kept = resolve_mods(
            vec![("a.json", &a), ("b.json", &b)],
            &game(&["a", "b"]),
            &mut problems,
        );
        assert_eq!(ids(&kept), ["b"]);
        assert_eq!(pointers(&problems), ["/conflicts/0"]);
        assert_eq!(problems[0].file, "a.json");
    }

    #[test]
    fn every_mod_on_a_dependency_cycle_is_skipped() {
        let depends = |on: &str| json!({ "dependencies": [{ "id": "core" }, { "id": on }] });
        let (core, a, b) = (
            manifest("core", json!({})),
            manifest("a", depends("b")),
            manifest("b", depends("a")),
        );
        let mut problems = Vec::new();
        let candidates = vec![("core.json", &core), ("a.json", &a), ("b.json", &b)];
        let kept = resolve_mods(candidates, &game(&["core", "a", "b"]), &mut problems);
        assert_eq!(ids(&kept), ["core"]);
        assert_eq!(
            pointers(&problems),
            ["/dependencies/1/id", "/dependencies/1/id"]
        );
        assert!(
            problems[0].message.contains("dependency cycle a → b → a"),
            "{}",
            problems[0]
        );
    }

    #[test]
    fn a_chain_of_thousands_of_mods_is_walked_without_a_stack_overflow() {
        const CHAIN: usize = 3000;
        // Each depends on the next; the last on the first: one cycle through them all.
        let mods: Vec<ModManifest> = (0..CHAIN)
            .map(|n| {
                let next = format!("m{}", (n + 1) % CHAIN);
                manifest(
                    &format!("m{n}"),
                    json!({ "dependencies": [{ "id": next }] }),
                )
            })
            .collect();
        let cycles = std::thread::Builder::new()
            .stack_size(128 << 10)
            .spawn(move || {
                let candidates: Vec<(&str, &ModManifest)> =
                    mods.iter().map(|m| ("mod.json", m)).collect();
                dependency_cycles(&candidates)
            })
            .expect("a thread")
            .join()
            .expect("no stack overflow");
        assert_eq!(cycles, [(0..CHAIN).collect::<Vec<usize>>()]);
    }

    #[test]
    fn a_missing_dependency_skips_the_mod_and_those_that_need_it() {
        let listed = manifest("listed", json!({ "dependencies": [{ "id": "broken" }] }));
        let chained = manifest("chained", json!({ "dependencies": [{ "id": "listed" }] }));
        let unlisted = manifest("unlisted", json!({ "dependencies": [{ "id": "nowhere" }] }));
        let mut problems = Vec::new();
        let candidates = vec![("l", &listed), ("c", &chained), ("u", &unlisted)];
        let kept = resolve_mods(
            candidates,
            &game(&["broken", "listed", "chained", "unlisted"]),
            &mut problems,
        );
        assert!(kept.is_empty());
        let files: Vec<&str> = problems.iter().map(|p| p.file.as_str()).collect();
        assert_eq!(files, ["l", "u", "c"]);
        assert!(
            problems[0]
                .message
                .contains("listed in the game file but did not load")
        );
        assert!(
            problems[1]
                .message
                .contains("add it to the game file's `mods`")
        );
    }

    #[test]
    fn a_dependency_outside_its_version_range_skips_the_mod() {
        let core = manifest("core", json!({ "version": "1.2.0" }));
        let fits = manifest(
            "fits",
            json!({ "dependencies": [{ "id": "core", "version": "^1.1" }] }),
        );
        let old = manifest(
            "old",
            json!({ "dependencies": [{ "id": "core", "version": ">=2" }] }),
        );
        let mut problems = Vec::new();
        let candidates = vec![("core", &core), ("fits", &fits), ("old", &old)];
        let kept = resolve_mods(candidates, &game(&["core", "fits", "old"]), &mut problems);
        assert_eq!(ids(&kept), ["core", "fits"]);
        assert_eq!(pointers(&problems), ["/dependencies/0/version"]);
        assert!(problems[0].message.contains("but version 1.2.0 is loaded"));
    }

    #[test]
    fn an_edit_that_rules_a_mod_out_keeps_its_last_valid_manifest() {
        let (before, after) = (
            manifest("items", json!({ "name": "Before" })),
            manifest("items", json!({ "dependencies": [{ "id": "nowhere" }] })),
        );
        let file = path("items");
        let mut problems = Vec::new();
        let kept = load_order(
            &game(&["items"]),
            &[(&file, &after)],
            &[(&file, &before)],
            &mut problems,
        );
        assert_eq!(kept, [(file.as_str(), &before)]);
        assert_eq!(pointers(&problems), ["/dependencies/0/id", ""]);
        assert!(problems[1].message.contains("kept the last valid version"));

        let mut problems = Vec::new();
        let without = load_order(&game(&["items"]), &[(&file, &after)], &[], &mut problems);
        assert!(without.is_empty(), "nothing to fall back on");
    }

    #[test]
    fn a_mod_that_needs_one_kept_at_its_last_manifest_loads_without_a_problem() {
        let (before, after) = (
            manifest("core", json!({ "version": "1.0.0" })),
            manifest(
                "core",
                json!({ "version": "2.0.0", "dependencies": [{ "id": "magic" }] }),
            ),
        );
        let needs = json!({ "dependencies": [{ "id": "core", "version": "^1" }] });
        let items = manifest("items", needs);
        let (core_file, items_file) = (path("core"), path("items"));
        let mut problems = Vec::new();
        let kept = load_order(
            &game(&["core", "items"]),
            &[(&core_file, &after), (&items_file, &items)],
            &[(&core_file, &before), (&items_file, &items)],
            &mut problems,
        );
        assert_eq!(ids(&kept), ["core", "items"]);
        let files: Vec<&str> = problems.iter().map(|p| p.file.as_str()).collect();
        assert_eq!(files, [core_file.as_str(); 2], "{problems:#?}");
        assert!(problems[1].message.contains("kept the last valid version"));
    }

    #[test]
    fn action_groups_follow_the_game_files_order_then_the_alphabet() {
        let preferred = ["Tavern".to_owned(), "ghost".to_owned(), "tavern".to_owned()];
        let order = group_order(&preferred, ["items", "core", "tavern"].into_iter());
        assert_eq!(order, ["tavern", "core", "items"]);
    }
}
