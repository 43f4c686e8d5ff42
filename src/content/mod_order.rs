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
    let kept = resolve_mods(candidates.clone(), game, problems);
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
        return kept;
    }
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
    let is_present = |set: &[(&str, &ModManifest)], id: &str| {
        set.iter().any(|(_, m)| m.id.eq_ignore_ascii_case(id))
    };

    // Declared conflicts: the mod that declares the conflict is skipped.
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

    // Dependency cycles: every mod on a cycle is skipped.
    let cycles = dependency_cycles(&candidates);
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
    candidates = candidates
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !on_cycle.contains(i))
        .map(|(_, c)| c)
        .collect();

    // Missing dependencies and version ranges, until nothing more drops out.
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

    candidates
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
    fn visit(
        node: usize,
        edges: &[Vec<usize>],
        state: &mut [u8],
        path: &mut Vec<usize>,
        cycles: &mut Vec<Vec<usize>>,
    ) {
        state[node] = 1;
        path.push(node);
        for &next in &edges[node] {
            if state[next] == 1 {
                if let Some(start) = path.iter().position(|&n| n == next) {
                    cycles.push(path[start..].to_vec());
                }
            } else if state[next] == 0 {
                visit(next, edges, state, path, cycles);
            }
        }
        path.pop();
        state[node] = 2;
    }
    for node in 0..candidates.len() {
        if state[node] == 0 {
            visit(node, &edges, &mut state, &mut Vec::new(), &mut cycles);
        }
    }
    cycles
}
