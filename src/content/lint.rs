//! The content linter: which entities lack fragments for the verbs the loaded actions
//! narrate with, which pools are too small, how much variety each verb has, which
//! planning content no actor can use ([`lint_planning`]), which abilities no actor may
//! invoke ([`lint_abilities`]), and the content errors, as
//! one [`LintReport`].
//!
//! It reads a [`ContentRegistry`] and nothing else, so a game can run it in its own CI
//! (see `examples/lint.rs`) or in a test on its content folder. Scenes load apart from
//! the mods: [`lint_scene`] checks a scene file against the registry.
//!
//! ```
//! use bevy_loom::content::ContentRegistry;
//! use bevy_loom::content::lint::lint_narrative;
//!
//! let report = lint_narrative(&ContentRegistry::default());
//! assert!(!report.has_errors());
//! assert_eq!(report.coverage_percent(), 100.0);
//! ```

use std::collections::BTreeSet;
use std::fmt;

pub use super::PoolShortfall;
use super::{
    ActorSpec, ContentError, ContentRegistry, FragmentPool, NarrativeContext, POOL_MINIMUMS,
    POOL_RECOMMENDED, RefinementStep, SceneDefinition, parse_content,
};

/// What the linter found in the loaded narrative content.
#[derive(Debug, Clone, PartialEq)]
pub struct LintReport {
    /// Every narrative entity that loaded, sorted by key.
    pub entities: Vec<EntityLint>,
    /// The verbs loaded actions narrate with (each action's `verb`), sorted, each once.
    pub verbs: Vec<String>,
    /// Covered (entity, verb) pairs: see [`coverage_percent`](Self::coverage_percent).
    pub covered_pairs: usize,
    /// Every (entity, verb) pair that counts: see
    /// [`coverage_percent`](Self::coverage_percent).
    pub total_pairs: usize,
    /// Content errors: the registry's problems, plus any load errors added with
    /// [`with_load_errors`](Self::with_load_errors).
    pub errors: Vec<ContentError>,
    /// Warnings about planning content no actor can use ([`lint_planning`]).
    pub planning: Vec<ContentError>,
    /// Warnings about abilities no actor may invoke ([`lint_abilities`]).
    pub abilities: Vec<ContentError>,
}

/// What the linter found for one narrative entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityLint {
    /// The entity key (`tavern:lute`).
    pub key: String,
    /// The asset path it was loaded from.
    pub file: String,
    /// How narration uses it, which decides the verbs it is counted against.
    pub kind: EntityKind,
    /// Verbs it is counted against (see [`EntityKind`]) that it has neither
    /// `action_fragments` nor `behavior_fragments` for.
    pub missing_verbs: Vec<String>,
    /// Failure reasons of the vocabulary it has no `failure_fragments` for; empty for
    /// an entity without any action or behaviour pool, which nothing fails on.
    pub missing_failure_reasons: Vec<String>,
    /// Pools below [`POOL_MINIMUMS`] (warnings: narration repeats itself).
    pub small_pools: Vec<PoolShortfall>,
    /// Pools below [`POOL_RECOMMENDED`], including those below the minimum.
    pub below_recommended: Vec<PoolShortfall>,
    /// How many different narrations each action and behaviour pool can give.
    pub variety: Vec<VerbVariety>,
}

/// How narration uses an entity, and so which verbs of the loaded actions it should
/// have fragments for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntityKind {
    /// A loaded actor spec has its key as id, or it has `behavior_fragments`: it may
    /// do every verb, and needs behaviour fragments for each.
    Character,
    /// It has action, failure or state pools: things are done to it, and it needs
    /// action fragments for every verb of an action that targets things (a target
    /// scope other than `self`, `characters_here` and `exits`).
    Thing,
    /// Only traits, atmosphere, effects or dialogue (a place, a piece of scenery):
    /// narration describes it but no verb is done to it, so it counts against none.
    Scenery,
}

impl EntityKind {
    /// How narration uses the entity of `context`: a character when a spec has its key
    /// or it has behaviour fragments, a thing when something is done to it, else scenery.
    fn of(context: &NarrativeContext, registry: &ContentRegistry) -> Self {
        if registry.actor(&context.key).is_some() || !context.behavior_fragments.is_empty() {
            Self::Character
        } else if !context.action_fragments.is_empty()
            || !context.failure_fragments.is_empty()
            || !context.state_variants.is_empty()
        {
            Self::Thing
        } else {
            Self::Scenery
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Character => "character",
            Self::Thing => "thing",
            Self::Scenery => "scenery",
        }
    }
}

/// How many different narrations of one verb an entity's pool can give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerbVariety {
    /// The verb.
    pub verb: String,
    /// The pool: `/action_fragments/<verb>` or `/behavior_fragments/<verb>`.
    pub pointer: String,
    /// `cores × color choices × state variants × trait choices`, saturating:
    ///
    /// - color choices: the sets of 1–2 different colors, `c + c(c−1)/2`, order
    ///   ignored (1 when the pool has no colors);
    /// - state variants: the largest of the entity's state pools (1 without states);
    /// - trait choices: the sets of 3–5 different traits, `C(t,3) + C(t,4) + C(t,5)`,
    ///   all of them when there are fewer (1 without traits).
    ///
    /// This is what narration's `FragmentResolver` can pick at
    /// full verbosity.
    pub variety: u128,
}

impl LintReport {
    /// Whether there are content errors. Pools below the minimum are warnings and do
    /// not count.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Covered (entity, verb) pairs as a percentage of all that count: a character
    /// with every verb of a loaded action, a thing with every verb of an action that
    /// targets things, scenery with none (see [`EntityKind`]). A character's pair is
    /// covered when it has `behavior_fragments` for the verb (what it looks like doing
    /// it); a thing's when it has `action_fragments` (what doing it to the thing looks
    /// like). 100 when there are no pairs.
    pub fn coverage_percent(&self) -> f64 {
        if self.total_pairs == 0 {
            100.0
        } else {
            self.covered_pairs as f64 * 100.0 / self.total_pairs as f64
        }
    }

    /// Adds errors the registry does not hold, such as files that did not parse
    /// (an app reads them as [`ContentError`] messages); errors already listed are
    /// not repeated.
    #[must_use]
    pub fn with_load_errors(mut self, errors: impl IntoIterator<Item = ContentError>) -> Self {
        for error in errors {
            if !self.errors.contains(&error) {
                self.errors.push(error);
            }
        }
        self
    }
}

/// Lints the narrative content of a registry: see [`LintReport`].
pub fn lint_narrative(registry: &ContentRegistry) -> LintReport {
    let verbs: BTreeSet<&str> = registry
        .actions()
        .iter()
        .filter_map(|action| action.verb.as_deref())
        .collect();
    let thing_verbs: BTreeSet<&str> = registry
        .actions()
        .iter()
        .filter(|action| {
            action.target_slots().any(|(_, slot)| {
                !matches!(slot.scope.as_str(), "self" | "characters_here" | "exits")
            })
        })
        .filter_map(|action| action.verb.as_deref())
        .collect();
    let mut total_pairs = 0;
    let mut contexts: Vec<&NarrativeContext> = registry.narratives().collect();
    contexts.sort_by(|a, b| a.key.cmp(&b.key));

    let mut covered_pairs = 0;
    let mut entities = Vec::with_capacity(contexts.len());
    for context in contexts {
        let kind = EntityKind::of(context, registry);
        let (counted, covering) = match kind {
            EntityKind::Character => (&verbs, &context.behavior_fragments),
            EntityKind::Thing => (&thing_verbs, &context.action_fragments),
            EntityKind::Scenery => (&BTreeSet::new(), &context.action_fragments),
        };
        total_pairs += counted.len();
        covered_pairs += counted
            .iter()
            .filter(|v| covering.contains_key(**v))
            .count();
        let acts = !context.action_fragments.is_empty() || !context.behavior_fragments.is_empty();
        let missing_failure_reasons = if acts {
            registry
                .vocabulary()
                .failure_reasons
                .iter()
                .filter(|reason| !context.failure_fragments.contains_key(*reason))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        entities.push(EntityLint {
            key: context.key.clone(),
            file: registry
                .narrative_file(&context.key)
                .unwrap_or_default()
                .to_owned(),
            kind,
            missing_verbs: counted
                .iter()
                .filter(|v| {
                    !context.action_fragments.contains_key(**v)
                        && !context.behavior_fragments.contains_key(**v)
                })
                .map(|v| (*v).to_owned())
                .collect(),
            missing_failure_reasons,
            small_pools: context.pools_below(&POOL_MINIMUMS),
            below_recommended: context.pools_below(&POOL_RECOMMENDED),
            variety: variety(context),
        });
    }
    LintReport {
        total_pairs,
        covered_pairs,
        verbs: verbs.into_iter().map(str::to_owned).collect(),
        entities,
        errors: registry.problems().to_vec(),
        planning: lint_planning(registry),
        abilities: lint_abilities(registry),
    }
}

/// Warnings about abilities no loaded smart actor may invoke: no actor spec's
/// `policy.allowedAbilities` names them, so no model is ever told of them.
pub fn lint_abilities(registry: &ContentRegistry) -> Vec<ContentError> {
    let specs: Vec<&ActorSpec> = registry.actors().collect();
    (registry.abilities())
        .filter(|ability| !specs.iter().any(|spec| spec.policy.allows_ability(&ability.id)))
        .map(|ability| {
            ContentError::new(
                registry.ability_file(&ability.id).unwrap_or_default(),
                "/id",
                format!("no actor spec may invoke ability `{}`: add it to a spec's `policy.allowedAbilities`, or remove the file from the mod's `content.abilities`", ability.id),
            )
        })
        .collect()
}

/// Warnings about planning content no loaded smart actor can use: a task no actor
/// spec carries out (its `policy.allowedTasks` lets it be offered neither the task nor
/// one whose methods run it: only the game can start it), and a method step whose
/// action no actor spec's `policy.allowedActions` and `allowedVerbs` allow, or a spec
/// carrying out the step's task does not (an actor carrying the plan out would do
/// what its policy never lets it choose).
pub fn lint_planning(registry: &ContentRegistry) -> Vec<ContentError> {
    let specs: Vec<&ActorSpec> = registry.actors().collect();
    // What each spec may carry out: the tasks it may be offered, and those their
    // methods' task steps run, however deep.
    let carries_out: Vec<BTreeSet<&str>> = (specs.iter())
        .map(|spec| tasks_carried_out(registry, spec))
        .collect();
    let mut warnings = Vec::new();
    for task in registry.tasks() {
        if !carries_out
            .iter()
            .any(|tasks| tasks.contains(task.id.as_str()))
        {
            warnings.push(ContentError::new(
                registry.task_file(&task.id).unwrap_or_default(),
                "/id",
                format!("no actor spec may be offered task `{}`: add it to a spec's `policy.allowedTasks`, or start it from the game with `StartPlan`", task.id),
            ));
        }
    }
    for method in registry.methods() {
        let file = registry
            .method_file(&method.refinement_method_id)
            .unwrap_or_default();
        let actions = method
            .each_step()
            .into_iter()
            .filter_map(|(pointer, step)| match step {
                RefinementStep::PrimitiveAction(step) => Some((pointer, &*step.action_id)),
                _ => None,
            });
        for (pointer, action_id) in actions {
            let verb = registry.action(action_id).and_then(|a| a.verb.as_deref());
            let allowed =
                |spec: &&ActorSpec| spec.policy.allows(action_id) && spec.policy.allows_verb(verb);
            if !specs.iter().any(allowed) {
                warnings.push(ContentError::new(
                    file,
                    format!("{pointer}/actionId"),
                    format!("no actor spec may take `{action_id}`: allow it in a spec's `policy.allowedActions` (and `allowedVerbs`), or use another action"),
                ));
                continue;
            }
            // A spec that carries out the task takes its steps, whatever its policy
            // says: offered the task, or one that runs it.
            let task = method.task_id.as_str();
            let carrying = (specs.iter().zip(&carries_out))
                .filter(|(spec, tasks)| tasks.contains(task) && !allowed(spec));
            for (spec, _) in carrying {
                let how = if spec.policy.allows_task(task) {
                    "may take on"
                } else {
                    "carries out, as a step of a task it may take on,"
                };
                warnings.push(ContentError::new(
                    file,
                    format!("{pointer}/actionId"),
                    format!("`{}` {how} task `{task}`, whose step takes `{action_id}`, which its policy does not allow: a plan would have it do what it may never choose; allow the action in its `policy.allowedActions` (and `allowedVerbs`), or leave the task out of its `allowedTasks`", spec.id),
                ));
            }
        }
    }
    warnings
}

/// The tasks `spec` may carry out: those its policy lets it be offered, and those
/// their methods' task steps run, however deep.
fn tasks_carried_out<'r>(registry: &'r ContentRegistry, spec: &ActorSpec) -> BTreeSet<&'r str> {
    let mut carried: BTreeSet<&str> = BTreeSet::new();
    let mut next: Vec<&str> = (registry.tasks())
        .filter(|task| spec.policy.allows_task(&task.id))
        .map(|task| task.id.as_str())
        .collect();
    while let Some(id) = next.pop() {
        let Some(task) = registry.task(id).filter(|_| carried.insert(id)) else {
            continue;
        };
        for method in registry.methods_of(task) {
            next.extend(
                method
                    .each_step()
                    .into_iter()
                    .filter_map(|(_, step)| match step {
                        RefinementStep::Task(step) => Some(step.task_id.as_str()),
                        _ => None,
                    }),
            );
        }
    }
    carried
}

/// The problems of a scene file (`file` is its path, for the errors) with the loaded
/// content: what stops it from parsing or spawning, then the actor keys
/// ([`check_actor_keys`](SceneDefinition::check_actor_keys)) and narrative keys
/// ([`check_narrative_keys`](SceneDefinition::check_narrative_keys)) nothing loaded
/// defines. Add them to a report with [`LintReport::with_load_errors`].
pub fn lint_scene(bytes: &[u8], file: &str, registry: &ContentRegistry) -> Vec<ContentError> {
    match parse_content::<SceneDefinition>(bytes, file) {
        Ok(scene) => {
            let mut problems = scene.check_actor_keys(registry, file);
            problems.extend(scene.check_narrative_keys(registry, file));
            problems
        }
        Err(problems) => problems,
    }
}

/// The variety of each action and behaviour pool, actions first, each by verb.
/// One entity's part of the printed report.
fn write_entity(f: &mut fmt::Formatter<'_>, entity: &EntityLint) -> fmt::Result {
    let list = |words: &[String]| words.join(", ");
    let pools = |pools: &[PoolShortfall]| {
        pools
            .iter()
            .map(|p| format!("{} {} of {}", p.pointer, p.have, p.wanted))
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(
        f,
        "\n{} ({}, {})",
        entity.key,
        entity.kind.name(),
        entity.file
    )?;
    if !entity.missing_verbs.is_empty() {
        writeln!(f, "  missing verbs: {}", list(&entity.missing_verbs))?;
    }
    if !entity.missing_failure_reasons.is_empty() {
        writeln!(
            f,
            "  missing failure reasons ({}): {}",
            entity.missing_failure_reasons.len(),
            list(&entity.missing_failure_reasons)
        )?;
    }
    if !entity.small_pools.is_empty() {
        writeln!(
            f,
            "  below minimum ({}): {}",
            entity.small_pools.len(),
            pools(&entity.small_pools)
        )?;
    }
    if !entity.below_recommended.is_empty() {
        writeln!(
            f,
            "  below recommended ({}): {}",
            entity.below_recommended.len(),
            pools(&entity.below_recommended)
        )?;
    }
    if !entity.variety.is_empty() {
        let variety: Vec<String> = entity
            .variety
            .iter()
            .map(|v| format!("{} {}", v.pointer, v.variety))
            .collect();
        writeln!(f, "  variety: {}", variety.join(", "))?;
    }
    Ok(())
}

fn variety(context: &NarrativeContext) -> Vec<VerbVariety> {
    let states = context
        .state_variants
        .values()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(1) as u128;
    let traits = trait_choices(context.traits.len());
    let of = |field: &str, verb: &String, pool: &FragmentPool| VerbVariety {
        verb: verb.clone(),
        pointer: format!("/{field}/{}", pointer_escape(verb)),
        variety: (pool.core.len() as u128)
            .saturating_mul(color_choices(pool.color.len()))
            .saturating_mul(states)
            .saturating_mul(traits),
    };
    context
        .action_fragments
        .iter()
        .map(|(verb, pool)| of("action_fragments", verb, pool))
        .chain(
            context
                .behavior_fragments
                .iter()
                .map(|(verb, pool)| of("behavior_fragments", verb, pool)),
        )
        .collect()
}

/// The sets of 1–2 different colors from `colors`; 1 (no color) for none.
fn color_choices(colors: usize) -> u128 {
    match colors {
        0 => 1,
        c => binomial(c, 1).saturating_add(binomial(c, 2)),
    }
}

/// The sets of 3–5 different traits from `traits`, as the resolver picks them: a count
/// of 3–5, capped at the pool, so a pool of 3 or fewer has one choice.
fn trait_choices(traits: usize) -> u128 {
    if traits <= 3 {
        return 1;
    }
    (3..=traits.min(5)).fold(0u128, |sum, k| sum.saturating_add(binomial(traits, k)))
}

/// `n` choose `k`, saturating.
fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k) as u128;
    let n = n as u128;
    // Each step's product divides exactly: it is `(i + 1) · C(n, i + 1)`.
    (0..k)
        .try_fold(1u128, |acc, i| Some(acc.checked_mul(n - i)? / (i + 1)))
        .unwrap_or(u128::MAX)
}

fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl fmt::Display for LintReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |words: &[String]| words.join(", ");
        writeln!(
            f,
            "{} narrative entities; verbs used by actions: {}",
            self.entities.len(),
            if self.verbs.is_empty() {
                "none".to_owned()
            } else {
                list(&self.verbs)
            }
        )?;
        for entity in &self.entities {
            write_entity(f, entity)?;
        }
        if !self.planning.is_empty() {
            writeln!(f, "\nplanning warnings ({}):", self.planning.len())?;
            for warning in &self.planning {
                writeln!(f, "  {warning}")?;
            }
        }
        if !self.abilities.is_empty() {
            writeln!(f, "\nability warnings ({}):", self.abilities.len())?;
            for warning in &self.abilities {
                writeln!(f, "  {warning}")?;
            }
        }
        if !self.errors.is_empty() {
            writeln!(f, "\ncontent errors ({}):", self.errors.len())?;
            for error in &self.errors {
                writeln!(f, "  {error}")?;
            }
        }
        let small: usize = self.entities.iter().map(|e| e.small_pools.len()).sum();
        let below: usize = self
            .entities
            .iter()
            .map(|e| e.below_recommended.len())
            .sum();
        write!(
            f,
            "\ncoverage {:.1}% ({} of {} entity-verb pairs); {} content error{}, {} pool{} below minimum, {} below recommended",
            self.coverage_percent(),
            self.covered_pairs,
            self.total_pairs,
            self.errors.len(),
            if self.errors.len() == 1 { "" } else { "s" },
            small,
            if small == 1 { "" } else { "s" },
            below,
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::{ActionDefinition, ActorSpec, ContentSources, GameManifest, ModManifest};

    #[test]
    fn choices_follow_the_resolver_picks() {
        assert_eq!(color_choices(0), 1);
        assert_eq!(color_choices(1), 1);
        assert_eq!(color_choices(4), 4 + 6);
        assert_eq!(trait_choices(0), 1);
        assert_eq!(trait_choices(3), 1);
        assert_eq!(trait_choices(4), 4 + 1);
        assert_eq!(trait_choices(6), 20 + 15 + 6);
        assert_eq!(binomial(10, 5), 252);
        assert_eq!(
            binomial(usize::MAX, 5),
            u128::MAX,
            "saturates instead of overflowing"
        );
    }

    /// A registry with the mod `shop` and these actions, actors and narrative files,
    /// each listed by its manifest.
    fn registry(
        actions: &[serde_json::Value],
        actors: &[serde_json::Value],
        narratives: &[serde_json::Value],
    ) -> ContentRegistry {
        fn parse<T: serde::de::DeserializeOwned>(values: &[serde_json::Value]) -> Vec<T> {
            values
                .iter()
                .map(|v| serde_json::from_value(v.clone()).expect("valid content"))
                .collect()
        }
        /// `<folder>/<name>.<extension>` for each id, the name after `shop:`.
        fn listed<'a>(
            ids: impl Iterator<Item = &'a str>,
            folder: &str,
            extension: &str,
        ) -> Vec<String> {
            ids.map(|id| format!("{folder}/{}.{extension}", &id["shop:".len()..]))
                .collect()
        }
        fn paths(listed: &[String]) -> Vec<String> {
            listed.iter().map(|f| format!("mods/shop/{f}")).collect()
        }
        /// Each asset path with its item.
        fn paired<'a, T>(listed: &'a [String], items: &'a [T]) -> Vec<(&'a str, &'a T)> {
            listed.iter().map(String::as_str).zip(items).collect()
        }
        let actions: Vec<ActionDefinition> = parse(actions);
        let actors: Vec<ActorSpec> = parse(actors);
        let narratives: Vec<NarrativeContext> = parse(narratives);
        let action_files = listed(
            actions.iter().map(|a| a.id.as_str()),
            "actions",
            "action.json",
        );
        let actor_files = listed(actors.iter().map(|a| a.id.as_str()), "actors", "actor.json");
        let narrative_files = listed(
            narratives.iter().map(|n| n.key.as_str()),
            "narrative",
            "narrative.json",
        );
        let manifest: ModManifest = serde_json::from_value(json!({
            "id": "shop", "version": "1.0.0", "name": "Shop",
            "content": { "actions": action_files, "actors": actor_files, "narrative": narrative_files }
        }))
        .expect("manifest");
        let game = GameManifest {
            mods: vec!["shop".into()],
            action_group_order: vec![],
        };
        let action_paths = paths(&action_files);
        let actor_paths = paths(&actor_files);
        let narrative_paths = paths(&narrative_files);
        let actions = paired(&action_paths, &actions);
        let actors = paired(&actor_paths, &actors);
        let narratives = paired(&narrative_paths, &narratives);
        ContentRegistry::build(ContentSources {
            game: Some(("game.loom.json", &game)),
            mods: &[("mods/shop/mod.json", &manifest)],
            actions: &actions,
            actors: &actors,
            narratives: &narratives,
            scopes: None,
            ..ContentSources::default()
        })
    }

    #[test]
    fn a_registry_built_in_code_is_linted() {
        let registry = registry(
            &[
                json!({ "id": "shop:take", "name": "Take", "description": "Take", "template": "take {item}", "verb": "take",
                        "targets": { "primary": { "scope": "things_here", "placeholder": "item" } } }),
                json!({ "id": "shop:open", "name": "Open", "description": "Open", "template": "open {item}", "verb": "open",
                        "targets": { "primary": { "scope": "things_here", "placeholder": "item" } } }),
                json!({ "id": "shop:wait", "name": "Wait", "description": "Wait", "template": "wait" }),
            ],
            &[
                json!({ "id": "shop:keeper", "persona": { "name": "Ada", "role": "the shopkeeper" } }),
            ],
            &[
                json!({ "key": "shop:box",
                        "traits": ["a", "b", "c", "d"],
                        "state_variants": { "open": ["x", "y"], "shut": ["z", "w", "v"] },
                        "action_fragments": { "open": { "core": ["o1", "o2", "o3"], "color": ["c1", "c2", "c3", "c4"] } },
                        "failure_fragments": { "locked": { "core": ["it is locked"] } } }),
                json!({ "key": "shop:keeper",
                        "action_fragments": { "take": { "core": ["you take Ada's hand", "you grab Ada's arm"] } } }),
                json!({ "key": "shop:wall", "traits": ["grey", "cold", "tall", "damp", "old"] }),
            ],
        );
        let report = lint_narrative(&registry);
        assert!(!report.has_errors(), "{:?}", report.errors);
        assert_eq!(report.verbs, ["open", "take"], "`shop:wait` has no verb");
        // Only the box's `open` is covered: the keeper is a character (an actor has her
        // key), so only behaviour fragments cover her verbs, and she has none; the
        // wall is scenery and counts against no verb.
        assert_eq!((report.covered_pairs, report.total_pairs), (1, 4));
        assert_eq!(report.coverage_percent(), 25.0);

        let [bx, keeper, wall] = &report.entities[..] else {
            panic!("three entities: {:#?}", report.entities);
        };
        assert_eq!(bx.key, "shop:box");
        assert_eq!(bx.file, "mods/shop/narrative/box.narrative.json");
        assert_eq!(bx.kind, EntityKind::Thing);
        assert_eq!(bx.missing_verbs, ["take"]);
        assert_eq!(
            bx.missing_failure_reasons.len(),
            registry.vocabulary().failure_reasons.len() - 1,
            "every reason but `locked`"
        );
        assert!(!bx.missing_failure_reasons.contains(&"locked".to_owned()));
        assert_eq!(
            bx.small_pools,
            [PoolShortfall {
                pointer: "/traits".into(),
                have: 4,
                wanted: 5
            }]
        );
        // 3 cores × (4 + 6) color sets × 3 variants × (4 + 1) trait sets.
        assert_eq!(
            bx.variety,
            [VerbVariety {
                verb: "open".into(),
                pointer: "/action_fragments/open".into(),
                variety: 3 * 10 * 3 * 5
            }]
        );

        assert_eq!(keeper.kind, EntityKind::Character);
        assert_eq!(
            keeper.missing_verbs,
            ["open"],
            "action fragments are not missing"
        );

        assert_eq!(wall.kind, EntityKind::Scenery);
        assert!(wall.missing_verbs.is_empty(), "{:?}", wall.missing_verbs);
        assert!(
            wall.missing_failure_reasons.is_empty(),
            "nothing acts on a wall, so nothing fails on it"
        );
        assert!(wall.small_pools.is_empty());
        assert!(wall.variety.is_empty());
    }
}
