//! Smart actors' memory: an append-only history store, deterministic retrieval, and
//! saves that survive a crash.
//!
//! Retrieval follows one algorithm, the same every time for the same store and context:
//!
//! 1. Keep entries in scope: the actor's own, the current plots', and global ones.
//! 2. When the context has tags and the store has tagged entries, keep entries whose
//!    tags overlap the context's.
//! 3. Score each: `tag matches × 10 + recency rank`, the rank counting up from the
//!    oldest kept entry to the newest; ties go to the newer entry.
//! 4. Return the pinned seeds in scope first, in insertion order (they skip the tag
//!    filter), then the top `k` (default 4), within a token budget: whatever does not
//!    fit is left out, lowest ranked first.
//!
//! Without tags in the context (or in the store), step 2 is skipped and the newest
//! entries win.

use bevy::platform::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use bevy::prelude::*;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use thiserror::Error;

use crate::prompt::estimate_tokens;

/// Whose memory an entry is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// One actor's own memory, by its spec's store key (`history.storeKey`, the spec's
    /// id `tavern:marta` by default).
    Actor(String),
    /// Everyone's, while this plot is current.
    Plot(String),
    /// Everyone's, always.
    Global,
}

/// One remembered fact, observation or exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryEntry {
    /// Its id: the order it was written in, from 1.
    pub id: u64,
    /// What is remembered, as the actor will read it.
    pub text: String,
    /// What it is about: keys of places, items and actors.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Whose memory it is.
    pub scope: MemoryScope,
    /// The turn it was written in.
    #[serde(default)]
    pub turn: u64,
    /// Who wrote it: `witnessed`, `heard`, `seed`, or the game's own word.
    #[serde(default)]
    pub source: String,
    /// A seed that is always recalled (while in scope), before anything ranked.
    #[serde(default)]
    pub pinned: bool,
}

/// A memory to append; the store gives it its id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewMemory {
    /// What is remembered.
    pub text: String,
    /// What it is about.
    pub tags: Vec<String>,
    /// Whose memory it is; global when `None`.
    pub scope: Option<MemoryScope>,
    /// The turn it was written in.
    pub turn: u64,
    /// Who wrote it.
    pub source: String,
    /// Always recalled.
    pub pinned: bool,
}

/// What an actor is recalling for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryQuery<'a> {
    /// The actor's store key ([`ActorSpec::store_key`](crate::content::ActorSpec::store_key)).
    pub actor: &'a str,
    /// The current plots.
    pub plots: &'a [&'a str],
    /// The context's tags: keys of the place, the items and the actors around.
    pub tags: &'a [&'a str],
    /// How many ranked entries to return, besides pinned seeds.
    pub k: usize,
    /// The most estimated tokens the returned texts may take together.
    pub token_budget: usize,
}

/// Why a history file could not be saved or loaded.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// Reading or writing the file failed.
    #[error("history file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a history save: damaged, cut short, or something else.
    #[error(
        "history file {path} is damaged or not a history save ({detail}); the game keeps its current memories: restore a backup or delete the file"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, from the parser.
        detail: String,
    },
    /// The file is a history save of a version this crate does not read: written by
    /// another version of it.
    #[error(
        "history file {path} is a save of version {found}, and this version of the game reads version {supported}; the game keeps its current memories: keep the file for the version that wrote it"
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version it was saved as.
        found: u32,
        /// The version read.
        supported: u32,
    },
}

/// The append-only history of every smart actor, indexed for retrieval.
#[derive(Resource, Debug, Clone, Default)]
pub struct HistoryStore {
    /// Which store this is: one made anew or loaded has its own, so a system can tell
    /// that the game put in another store.
    instance: StoreInstance,
    entries: Vec<MemoryEntry>,
    /// Each entry's estimated tokens, counted once as it is added: retrieval weighs
    /// memories against its budget without reading their texts again.
    tokens: Vec<u32>,
    tag_ids: HashMap<String, u32>,
    /// Scope ids by actor key, by plot, and the global scope's.
    actor_scopes: HashMap<String, u32>,
    plot_scopes: HashMap<String, u32>,
    global_scope: Option<u32>,
    /// Per scope: its unpinned entries, oldest first.
    by_scope: Vec<Vec<u32>>,
    /// Per scope: its pinned seeds, in insertion order.
    pinned: Vec<Vec<u32>>,
    /// Per (scope, tag): its unpinned entries with that tag, oldest first.
    by_scope_tag: HashMap<(u32, u32), Vec<u32>>,
}

/// The save file's layout.
#[derive(Serialize, Deserialize)]
struct Save<E> {
    format: String,
    version: u32,
    entries: E,
}

/// What every version of the save file begins with: which format and version it is,
/// whatever else another version holds.
#[derive(Deserialize)]
struct SaveHeader {
    format: String,
    version: u32,
}

const SAVE_FORMAT: &str = "bevy_loom history";
const SAVE_VERSION: u32 = 1;

/// Tells stores apart: each new or loaded one draws the next number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StoreInstance(u64);

impl Default for StoreInstance {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl HistoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Which store this is; a copy is the same one.
    pub(crate) fn instance(&self) -> StoreInstance {
        self.instance
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> &[MemoryEntry] {
        &self.entries
    }

    /// The entry with this id, if the store holds it.
    pub fn get(&self, id: u64) -> Option<&MemoryEntry> {
        // Entries are kept in the order they were written, which is their ids' order.
        let found = self.entries.binary_search_by_key(&id, |entry| entry.id);
        found.ok().map(|index| &self.entries[index])
    }

    /// How many entries the store holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether an entry came from this source (`seed tavern:marta/oath`).
    pub fn has_source(&self, source: &str) -> bool {
        self.entries.iter().any(|entry| entry.source == source)
    }

    /// Stops recalling the pinned seeds `stale` picks (the old words of a seed since
    /// edited or removed): they stay in the history, no longer recalled. The entries
    /// keep `pinned`, and a save keeps them as written: a store loaded pins them
    /// again until seeding, which runs for every store put in, unpins them.
    pub fn unpin_where(&mut self, stale: impl Fn(&MemoryEntry) -> bool) {
        let entries = &self.entries;
        for pinned in &mut self.pinned {
            pinned.retain(|&index| !stale(&entries[index as usize]));
        }
    }

    /// The seeds pinned now: recalled first, in no particular order.
    pub fn pinned(&self) -> impl Iterator<Item = &MemoryEntry> {
        (self.pinned.iter().flatten()).map(|&index| &self.entries[index as usize])
    }

    /// Appends a memory and returns its id.
    pub fn append(&mut self, memory: NewMemory) -> u64 {
        let id = self.entries.len() as u64 + 1;
        self.push(MemoryEntry {
            id,
            text: memory.text,
            tags: memory.tags,
            scope: memory.scope.unwrap_or(MemoryScope::Global),
            turn: memory.turn,
            source: memory.source,
            pinned: memory.pinned,
        });
        id
    }

    fn push(&mut self, entry: MemoryEntry) {
        let index = self.entries.len() as u32;
        let next = self.by_scope.len() as u32;
        let known = |ids: &mut HashMap<String, u32>, name: &String| match ids.get(name) {
            Some(&id) => id,
            None => {
                ids.insert(name.clone(), next);
                next
            }
        };
        let scope = match &entry.scope {
            MemoryScope::Actor(actor) => known(&mut self.actor_scopes, actor),
            MemoryScope::Plot(plot) => known(&mut self.plot_scopes, plot),
            MemoryScope::Global => *self.global_scope.get_or_insert(next),
        };
        if scope == next {
            self.by_scope.push(Vec::new());
            self.pinned.push(Vec::new());
        }
        if entry.pinned {
            self.pinned[scope as usize].push(index);
        } else {
            self.by_scope[scope as usize].push(index);
            let tag_ids = &mut self.tag_ids;
            let mut tags: SmallVec<[u32; 8]> = (entry.tags.iter())
                .map(|tag| match tag_ids.get(tag) {
                    Some(&id) => id,
                    None => {
                        let id = tag_ids.len() as u32;
                        tag_ids.insert(tag.clone(), id);
                        id
                    }
                })
                .collect();
            // Each tag once, however many an entry has (a save may hold any number).
            tags.sort_unstable();
            tags.dedup();
            for tag in tags {
                self.by_scope_tag
                    .entry((scope, tag))
                    .or_default()
                    .push(index);
            }
        }
        let tokens = estimate_tokens(&entry.text);
        self.tokens.push(u32::try_from(tokens).unwrap_or(u32::MAX));
        self.entries.push(entry);
    }

    /// The memories for a query: pinned seeds in scope first, then the best `k`
    /// ranked entries, within the token budget. See the [module docs](self).
    pub fn retrieve(&self, query: &MemoryQuery<'_>) -> Vec<&MemoryEntry> {
        let mut scopes: SmallVec<[u32; 4]> = SmallVec::new();
        scopes.extend(self.actor_scopes.get(query.actor).copied());
        scopes.extend(
            query
                .plots
                .iter()
                .filter_map(|plot| self.plot_scopes.get(*plot).copied()),
        );
        scopes.extend(self.global_scope);
        // Each scope once, however many times its plot is named.
        scopes.sort_unstable();
        scopes.dedup();
        let mut tags: SmallVec<[u32; 16]> = query
            .tags
            .iter()
            .filter_map(|tag| self.tag_ids.get(*tag).copied())
            .collect();
        tags.sort_unstable();
        tags.dedup();

        let ranked = if query.tags.is_empty() || self.tag_ids.is_empty() {
            let lists: SmallVec<[&[u32]; 4]> = scopes
                .iter()
                .map(|&s| self.by_scope[s as usize].as_slice())
                .collect();
            newest(&lists, query.k)
        } else {
            let lists: SmallVec<[&[u32]; 16]> = scopes
                .iter()
                .flat_map(|&s| tags.iter().map(move |&t| (s, t)))
                .filter_map(|key| self.by_scope_tag.get(&key).map(Vec::as_slice))
                .collect();
            best_scored(&lists, tags.len(), query.k)
        };

        let mut pinned: SmallVec<[u32; 8]> = scopes
            .iter()
            .flat_map(|&s| self.pinned[s as usize].iter().copied())
            .collect();
        pinned.sort_unstable();
        let mut recalled = Vec::with_capacity(pinned.len() + ranked.len());
        let mut spent = 0;
        for index in pinned.into_iter().chain(ranked) {
            let cost = self.tokens[index as usize] as usize;
            if spent + cost > query.token_budget {
                continue;
            }
            spent += cost;
            recalled.push(&self.entries[index as usize]);
        }
        recalled
    }

    /// Writes the store to `path` atomically: to a temporary file beside it, flushed
    /// to disk, then renamed over it, so a crash during a save leaves the previous save
    /// (and its temporary file, which the next save removes).
    pub fn save(&self, path: &Path) -> Result<(), MemoryError> {
        save_atomically(path, |file| {
            let save = Save {
                format: SAVE_FORMAT.to_owned(),
                version: SAVE_VERSION,
                entries: &self.entries,
            };
            serde_json::to_writer(&mut *file, &save).map_err(std::io::Error::other)
        })
    }

    /// Loads a store saved with [`save`](Self::save); it retrieves exactly as the one saved.
    pub fn load(path: &Path) -> Result<Self, MemoryError> {
        let bytes = std::fs::read(path).map_err(|source| MemoryError::Io {
            path: path.to_owned(),
            source,
        })?;
        let corrupt = |detail: String| MemoryError::Corrupt {
            path: path.to_owned(),
            detail,
        };
        // Editors on Windows save a byte-order mark that the parser does not take.
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        // Which format and version first: another version's entries may be laid out
        // otherwise, and are no damage.
        let save: SaveHeader =
            serde_json::from_slice(bytes).map_err(|error| corrupt(error.to_string()))?;
        if save.format != SAVE_FORMAT {
            return Err(corrupt(format!(
                "format `{}`, expected `{SAVE_FORMAT}`",
                save.format
            )));
        }
        if save.version != SAVE_VERSION {
            return Err(MemoryError::UnsupportedVersion {
                path: path.to_owned(),
                found: save.version,
                supported: SAVE_VERSION,
            });
        }
        // A save edited by hand says which entry and field is wrong.
        let entries = &mut serde_json::Deserializer::from_slice(bytes);
        let save: Save<Vec<MemoryEntry>> = serde_path_to_error::deserialize(entries)
            .map_err(|error| corrupt(format!("at `{}`: {}", error.path(), error.inner())))?;
        let mut store = Self::new();
        for (position, entry) in save.entries.into_iter().enumerate() {
            if entry.id != position as u64 + 1 {
                return Err(corrupt(format!(
                    "entry {} has id {}: entries are missing or out of order",
                    position + 1,
                    entry.id
                )));
            }
            store.push(entry);
        }
        Ok(store)
    }
}

/// Writes a file through a temporary one beside it, flushed and renamed over it, then
/// syncs the folder so the rename itself survives a crash. The temporary file has a
/// name of its own (two saves at once do not write into one file), and is removed
/// when the save fails.
pub(crate) fn save_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), MemoryError> {
    let io = |source| MemoryError::Io {
        path: path.to_owned(),
        source,
    };
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let prefix = path
        .file_name()
        .map_or_else(|| ".save".into(), |name| name.to_os_string());
    let temporary = tempfile::Builder::new()
        .prefix(&prefix)
        .rand_bytes(TEMPORARY_RANDOM_CHARS)
        .suffix(TEMPORARY_SUFFIX)
        .tempfile_in(folder)
        .map_err(io)?;
    let mut writer = std::io::BufWriter::new(temporary.as_file().try_clone().map_err(io)?);
    write(&mut writer)
        .and_then(|()| writer.flush())
        .and_then(|()| writer.get_ref().sync_all())
        .map_err(io)?;
    drop(writer);
    temporary.persist(path).map_err(|error| io(error.error))?;
    sync_folder(folder).map_err(io)?;
    remove_leftovers(folder, &prefix);
    Ok(())
}

/// How a save's temporary file is named: the saved file's name, this many random
/// characters, and the suffix.
const TEMPORARY_RANDOM_CHARS: usize = 6;
const TEMPORARY_SUFFIX: &str = ".saving";

/// Removes the temporary files earlier saves of the file named `prefix` left in
/// `folder` when their process died mid-save: each crash would leave one more. Only
/// names of exactly that shape go (not another file's, `history.json.bak…`); what
/// cannot be read or removed stays, as the save itself succeeded.
fn remove_leftovers(folder: &Path, prefix: &std::ffi::OsStr) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let prefix = prefix.as_encoded_bytes();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let random = (name.as_encoded_bytes().strip_prefix(prefix))
            .and_then(|rest| rest.strip_suffix(TEMPORARY_SUFFIX.as_bytes()));
        let leftover = random.is_some_and(|random| {
            random.len() == TEMPORARY_RANDOM_CHARS && random.iter().all(u8::is_ascii_alphanumeric)
        });
        if leftover && entry.file_type().is_ok_and(|kind| kind.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Syncs a folder's entries to disk: a rename is durable only then. Folders cannot be
/// opened as files on every platform; there, the rename is as durable as it gets.
fn sync_folder(folder: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(folder)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = folder;
        Ok(())
    }
}

/// Ranked entries, best first: as many as a query's `k` (usually a handful).
type Ranked = SmallVec<[u32; 8]>;

/// The `k` newest entries of several ascending lists.
fn newest(lists: &[&[u32]], k: usize) -> Ranked {
    let mut cursors: SmallVec<[usize; 16]> = lists.iter().map(|l| l.len()).collect();
    let mut found = Ranked::new();
    while found.len() < k {
        // The newest entry left at the end of any list (an entry is in one list only).
        let mut newest: Option<(usize, u32)> = None;
        for (list, &cursor) in cursors.iter().enumerate() {
            if let Some(&index) = cursor.checked_sub(1).and_then(|last| lists[list].get(last))
                && newest.is_none_or(|(_, best)| index > best)
            {
                newest = Some((list, index));
            }
        }
        let Some((list, index)) = newest else {
            break;
        };
        cursors[list] -= 1;
        found.push(index);
    }
    found
}

/// The `k` best of the entries in several ascending lists (one per scope and tag),
/// scored `tag matches × 10 + recency rank`, best first.
///
/// Walks the entries from the newest down. Only differences of rank matter, so the
/// rank is counted down from the newest, and the walk stops once an older entry,
/// even matching every tag, could no longer beat the `k`-th best.
fn best_scored(lists: &[&[u32]], tags: usize, k: usize) -> Ranked {
    if k == 0 {
        return Ranked::new();
    }
    let mut cursors: SmallVec<[usize; 16]> = lists.iter().map(|l| l.len()).collect();
    // (score, index), best first; grown as entries come, however large `k` is.
    let mut best: SmallVec<[(i64, u32); 8]> = SmallVec::new();
    let best_possible = 10 * tags as i64;
    let mut newer = 0i64;
    while let Some(index) = cursors
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c > 0)
        .map(|(list, &c)| lists[list][c - 1])
        .max()
    {
        let mut matches = 0i64;
        for (list, cursor) in cursors.iter_mut().enumerate() {
            if *cursor > 0 && lists[list][*cursor - 1] == index {
                *cursor -= 1;
                matches += 1;
            }
        }
        let score = 10 * matches - newer;
        newer += 1;
        // Equal scores keep the newer entry first: it was seen first.
        let position = best.partition_point(|&(s, _)| s >= score);
        if position < k {
            best.insert(position, (score, index));
            best.truncate(k);
        }
        if best.len() == k && best_possible - newer < best[k - 1].0 {
            break;
        }
    }
    best.into_iter().map(|(_, index)| index).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(text: &str, tags: &[&str], scope: MemoryScope) -> NewMemory {
        NewMemory {
            text: text.to_owned(),
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            scope: Some(scope),
            ..NewMemory::default()
        }
    }

    fn marta() -> MemoryScope {
        MemoryScope::Actor("tavern:marta".into())
    }

    fn query<'a>(tags: &'a [&'a str], plots: &'a [&'a str]) -> MemoryQuery<'a> {
        MemoryQuery {
            actor: "tavern:marta",
            plots,
            tags,
            k: 4,
            token_budget: 1000,
        }
    }

    fn texts<'a>(entries: &[&'a MemoryEntry]) -> Vec<&'a str> {
        entries.iter().map(|e| e.text.as_str()).collect()
    }

    /// Every entry scored the slow way: the reference the fast walk must match.
    fn by_the_book<'a>(store: &'a HistoryStore, query: &MemoryQuery<'_>) -> Vec<&'a str> {
        let in_scope = |scope: &MemoryScope| match scope {
            MemoryScope::Actor(actor) => actor == query.actor,
            MemoryScope::Plot(plot) => query.plots.contains(&plot.as_str()),
            MemoryScope::Global => true,
        };
        let matches = |e: &MemoryEntry| {
            e.tags
                .iter()
                .filter(|t| query.tags.contains(&t.as_str()))
                .count()
        };
        let kept: Vec<&MemoryEntry> = store
            .entries()
            .iter()
            .filter(|e| !e.pinned && in_scope(&e.scope))
            .filter(|e| query.tags.is_empty() || matches(e) > 0)
            .collect();
        let mut scored: Vec<(usize, usize, &MemoryEntry)> = kept
            .iter()
            .enumerate()
            .map(|(rank, e)| (matches(e) * 10 + rank, rank, *e))
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        let pinned = store
            .entries()
            .iter()
            .filter(|e| e.pinned && in_scope(&e.scope));
        pinned
            .chain(scored.into_iter().take(query.k).map(|(_, _, e)| e))
            .map(|e| e.text.as_str())
            .collect()
    }

    #[test]
    fn recalling_as_many_as_there_are_takes_every_match() {
        let mut store = HistoryStore::new();
        store.append(memory("Silas owes me.", &["tavern:silas"], marta()));
        store.append(memory("Brom drank.", &["tavern:brom"], marta()));
        store.append(memory("Silas sang.", &["tavern:silas"], marta()));
        for tags in [&["tavern:silas"][..], &[]] {
            let all = MemoryQuery {
                k: usize::MAX,
                ..query(tags, &[])
            };
            assert_eq!(
                texts(&store.retrieve(&all)),
                by_the_book(&store, &all),
                "{tags:?}"
            );
        }
    }

    #[test]
    fn a_plot_named_twice_is_recalled_from_once() {
        let mut store = HistoryStore::new();
        let act2 = || MemoryScope::Plot("act2".into());
        store.append(NewMemory {
            pinned: true,
            ..memory("The duke is dead.", &[], act2())
        });
        store.append(memory("The letter came.", &["tavern:letter"], act2()));
        store.append(memory("Brom drank.", &["tavern:brom"], marta()));
        for tags in [&["tavern:letter"][..], &[]] {
            let twice = store.retrieve(&query(tags, &["act2", "act2"]));
            assert_eq!(
                texts(&twice),
                texts(&store.retrieve(&query(tags, &["act2"])))
            );
            assert_eq!(
                texts(&twice),
                by_the_book(&store, &query(tags, &["act2"])),
                "{tags:?}"
            );
        }
    }

    #[test]
    fn scope_tags_and_recency_decide_what_is_recalled() {
        let mut store = HistoryStore::new();
        store.append(NewMemory {
            pinned: true,
            ..memory("The cellar key is mine to keep.", &["tavern:key"], marta())
        });
        store.append(memory("Brom drank too much.", &["tavern:brom"], marta()));
        store.append(memory(
            "Silas owes me two silver.",
            &["tavern:silas"],
            marta(),
        ));
        store.append(memory(
            "Someone else's secret.",
            &["tavern:silas"],
            MemoryScope::Actor("tavern:brom".into()),
        ));
        store.append(memory("A storm is coming.", &[], MemoryScope::Global));
        store.append(memory(
            "The letter came from the capital.",
            &["tavern:letter", "tavern:silas"],
            MemoryScope::Plot("letter".into()),
        ));
        store.append(memory("Silas sang badly.", &["tavern:silas"], marta()));
        assert_eq!(
            store.get(2).map(|entry| entry.text.as_str()),
            Some("Brom drank too much."),
            "by its id"
        );
        assert_eq!(store.get(8), None);

        let recalled = store.retrieve(&query(&["tavern:silas", "tavern:letter"], &["letter"]));
        assert_eq!(
            texts(&recalled),
            [
                "The cellar key is mine to keep.",
                "The letter came from the capital.",
                "Silas sang badly.",
                "Silas owes me two silver.",
            ]
        );
        // Without the plot, its memory is out of scope; without tags, recency decides.
        let recalled = store.retrieve(&query(&[], &[]));
        assert_eq!(
            texts(&recalled),
            [
                "The cellar key is mine to keep.",
                "Silas sang badly.",
                "A storm is coming.",
                "Silas owes me two silver.",
                "Brom drank too much.",
            ]
        );
    }

    #[test]
    fn the_fast_walk_ranks_exactly_like_scoring_every_entry() {
        let tags = ["a", "b", "c", "d", "e", "f"];
        let mut store = HistoryStore::new();
        // A fixed pseudo-random history: scopes, tags and pins vary.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for i in 0..3000 {
            let roll = next();
            let scope = match roll % 5 {
                0 => MemoryScope::Global,
                1 => MemoryScope::Plot("p".into()),
                2 => MemoryScope::Actor("other".into()),
                _ => MemoryScope::Actor("tavern:marta".into()),
            };
            let chosen: Vec<&str> = tags.iter().copied().filter(|_| next() % 4 == 0).collect();
            store.append(NewMemory {
                pinned: roll % 97 == 0,
                ..memory(&format!("entry {i}"), &chosen, scope)
            });
        }
        for context in [&["a"][..], &["a", "b"], &["c", "d", "e"], &["f", "z"], &[]] {
            for plots in [&[][..], &["p"]] {
                for k in [1, 4, 10] {
                    let query = MemoryQuery {
                        k,
                        ..query(context, plots)
                    };
                    assert_eq!(
                        texts(&store.retrieve(&query)),
                        by_the_book(&store, &query),
                        "{query:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_token_budget_leaves_out_the_lowest_ranked() {
        let mut store = HistoryStore::new();
        for text in [
            "oldest memory here",
            "middle memory here",
            "newest memory here",
        ] {
            store.append(memory(text, &[], marta()));
        }
        let recalled = store.retrieve(&MemoryQuery {
            token_budget: 10,
            ..query(&[], &[])
        });
        assert_eq!(
            texts(&recalled),
            ["newest memory here", "middle memory here"]
        );
    }

    #[test]
    fn a_saved_store_loads_and_recalls_exactly_as_before() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("history.json");
        let mut store = HistoryStore::new();
        for i in 0..50 {
            let tag = ["tavern:brom", "tavern:silas", "tavern:key"][i % 3];
            store.append(memory(&format!("memory {i}"), &[tag], marta()));
        }
        store.save(&path).expect("the store saves");
        let loaded = HistoryStore::load(&path).expect("the save loads");
        assert_eq!(loaded.entries(), store.entries());
        let query = query(&["tavern:key", "tavern:brom"], &[]);
        assert_eq!(
            texts(&loaded.retrieve(&query)),
            texts(&store.retrieve(&query))
        );
    }

    #[test]
    fn a_crash_during_a_save_leaves_the_previous_save() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("history.json");
        let mut store = HistoryStore::new();
        store.append(memory("before the crash", &[], marta()));
        store.save(&path).expect("the first save");
        let before = std::fs::read(&path).expect("the save");

        // The process dies halfway through writing the next save.
        store.append(memory("after the crash", &[], marta()));
        let crashed = save_atomically(&path, |file| {
            file.write_all(b"{\"format\":\"bevy_loom history\",\"version\":1,\"entr")?;
            Err(std::io::Error::other("the process was killed"))
        });
        assert!(crashed.is_err());
        assert_eq!(std::fs::read(&path).expect("the save"), before);
        let loaded = HistoryStore::load(&path).expect("the previous save loads");
        assert_eq!(
            texts(&loaded.entries().iter().collect::<Vec<_>>()),
            ["before the crash"]
        );
    }

    #[test]
    fn a_save_writes_through_a_temporary_file_of_its_own() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("history.json");
        // What a fixed temporary name would collide with: another save's leftover.
        std::fs::create_dir(dir.path().join("history.json.saving")).expect("a leftover");
        let mut store = HistoryStore::new();
        store.append(memory("a memory", &[], marta()));
        store.save(&path).expect("the store saves");
        let crashed = save_atomically(&path, |_| Err(std::io::Error::other("killed")));
        assert!(crashed.is_err());
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("the folder")
            .map(|entry| entry.expect("an entry").file_name())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["history.json", "history.json.saving"],
            "no temporary file is left behind"
        );
        let loaded = HistoryStore::load(&path).expect("the save loads");
        assert_eq!(loaded.entries(), store.entries());
    }

    /// A process killed mid-save leaves its temporary file; the next save removes
    /// it, and leaves every other file alone.
    #[test]
    fn a_save_removes_what_a_save_killed_midway_left() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("history.json");
        let leftovers = ["history.jsona1B2c3.saving", "history.jsonZZZZZZ.saving"];
        let others = [
            "history.json.bakZz9Yy8.saving",
            "history.jsonabc.saving",
            "history.json-1234.saving",
            "other.jsona1B2c3.saving",
        ];
        for name in leftovers.iter().chain(&others) {
            std::fs::write(dir.path().join(name), "{\"format\":\"bevy_loom hist").expect("a file");
        }
        // A folder of the shape is nobody's leftover file.
        std::fs::create_dir(dir.path().join("history.jsonfolder.saving")).expect("a folder");
        let mut store = HistoryStore::new();
        store.append(memory("a memory", &[], marta()));
        store.save(&path).expect("the store saves");
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("the folder")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into()
            })
            .collect();
        names.sort();
        let mut expected: Vec<&str> = others.to_vec();
        expected.extend(["history.json", "history.jsonfolder.saving"]);
        expected.sort_unstable();
        assert_eq!(names, expected, "the two leftovers are gone");
        assert_eq!(
            HistoryStore::load(&path).expect("loads").entries(),
            store.entries()
        );
    }

    #[test]
    fn a_damaged_save_is_reported_and_not_loaded() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("history.json");
        let mut store = HistoryStore::new();
        store.append(memory("a memory", &[], marta()));
        store.save(&path).expect("the save");
        let whole = std::fs::read(&path).expect("the save");
        std::fs::write(&path, &whole[..whole.len() / 2]).expect("cut the file short");
        let error = HistoryStore::load(&path).expect_err("a truncated save is refused");
        assert!(matches!(error, MemoryError::Corrupt { .. }), "{error}");
        assert!(error.to_string().contains("history.json"), "{error}");

        std::fs::write(
            &path,
            b"{\"format\":\"something else\",\"version\":1,\"entries\":[]}",
        )
        .expect("write");
        let error = HistoryStore::load(&path).expect_err("another format is refused");
        assert!(error.to_string().contains("something else"), "{error}");

        let missing = HistoryStore::load(&dir.path().join("none.json"));
        assert!(matches!(missing, Err(MemoryError::Io { .. })));
    }

    #[test]
    fn a_save_edited_by_hand_says_where_it_is_wrong_and_may_open_with_a_bom() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("history.json");
        let mut store = HistoryStore::new();
        store.append(memory("a memory", &[], marta()));
        store.append(memory("another", &[], marta()));
        store.save(&path).expect("the save");
        let saved = std::fs::read_to_string(&path).expect("the save");
        // Saved again by an editor that writes a byte-order mark.
        std::fs::write(&path, format!("\u{feff}{saved}")).expect("write");
        let loaded = HistoryStore::load(&path).expect("the save loads");
        assert_eq!(loaded.entries(), store.entries());
        // A turn written as text in the second entry.
        let turn = format!("\"turn\":{}", store.entries()[1].turn);
        let edited = saved.rfind(&turn).map(|at| {
            let mut edited = saved.clone();
            edited.replace_range(at..at + turn.len(), "\"turn\":\"5\"");
            edited
        });
        std::fs::write(&path, edited.expect("a turn to edit")).expect("write");
        let error = HistoryStore::load(&path).expect_err("a wrong type is refused");
        assert!(
            error.to_string().contains("at `entries[1].turn`"),
            "{error}"
        );
    }

    /// A save of a later version is no damaged file: the error says which version
    /// wrote it, and not to delete it.
    #[test]
    fn a_save_of_another_version_says_so_and_is_not_called_damaged() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("history.json");
        // Its entries laid out as this version does not lay them.
        std::fs::write(
            &path,
            br#"{"format":"bevy_loom history","version":7,"entries":[{"id":"a1","scope":{"who":"x"}}]}"#,
        )
        .expect("write");
        let error = HistoryStore::load(&path).expect_err("a later version is refused");
        assert!(
            matches!(
                error,
                MemoryError::UnsupportedVersion {
                    found: 7,
                    supported: 1,
                    ..
                }
            ),
            "{error}"
        );
        let message = error.to_string();
        assert!(!message.contains("delete"), "{message}");
        assert!(message.contains("version 7"), "{message}");
        // One whose memories are no longer called `entries` at all.
        std::fs::write(
            &path,
            br#"{"format":"bevy_loom history","version":8,"memories":{"by_actor":{}}}"#,
        )
        .expect("write");
        let error = HistoryStore::load(&path).expect_err("a later version is refused");
        assert!(
            matches!(error, MemoryError::UnsupportedVersion { found: 8, .. }),
            "{error}"
        );
    }
}
