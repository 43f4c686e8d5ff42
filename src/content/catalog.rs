//! One content kind's items by id, in load order, each with the file it came from.

// Content is looked up by id for every offer and plan step: Bevy's map hashes short
// ids several times faster than the standard library's.
use bevy::platform::collections::HashMap;

use super::{
    AbilityDefinition, ActionDefinition, ActorSpec, ContentError, NarrativeContext, PromptTemplate,
    RefinementMethod, TaskDefinition,
};

/// A content item a [`ContentCatalog`] holds: it has an id, unique among its kind.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be kept in a `ContentCatalog`: it does not implement `CatalogItem`",
    label = "not a catalog item",
    note = "implement `CatalogItem` for `{Self}`: `KIND` (the kind's name in messages) and `id` (the item's unique id)"
)]
pub trait CatalogItem {
    /// The kind's name in messages: `action`, `prompt template`.
    const KIND: &'static str;

    /// The JSON pointer of the id in the item's file.
    const ID_POINTER: &'static str = "/id";

    /// What messages call the id: `id`, or `key` for narrative files.
    const ID_WORD: &'static str = "id";

    /// The item's id (`items:give`), or key for narrative files (`tavern:lute`).
    fn id(&self) -> &str;
}

/// A file's name without its folders and extensions: `look_around` for
/// `mods/core/actions/look_around.action.json`.
fn file_stem(file: &str) -> Option<&str> {
    file.rsplit('/').next()?.split('.').next()
}

/// The items of one content kind, by id, in the order they were inserted, each with the
/// asset path it was loaded from. The first file to claim an id keeps it.
#[derive(Debug, Clone)]
pub struct ContentCatalog<T> {
    items: Vec<T>,
    files: Vec<String>,
    index: HashMap<String, usize>,
}

impl<T> Default for ContentCatalog<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            files: Vec::new(),
            index: HashMap::default(),
        }
    }
}

impl<T: CatalogItem> ContentCatalog<T> {
    /// Adds `item`, loaded from `file`, unless its id is taken: then the item is left
    /// out and the error, at the item's `/id`, names the file that has the id.
    pub fn insert(&mut self, file: &str, item: T) -> Result<(), ContentError> {
        let id = item.id();
        if let Some(&first) = self.index.get(id) {
            let (kind, word, first) = (T::KIND, T::ID_WORD, &self.files[first]);
            // Which of the two was given the wrong id only a file's name may tell: a
            // file named for the id is likelier the one that has it rightly.
            let named_for = |file: &str| file_stem(file) == id.rsplit(':').next();
            let advice = if named_for(file) && !named_for(first) {
                format!("this file's name is the {word}'s: check the {word} in {first}")
            } else {
                format!("give this {kind} its own {word}")
            };
            return Err(ContentError::new(
                file,
                T::ID_POINTER,
                format!("duplicate {kind} {word} `{id}`, already defined in {first}: {advice}"),
            ));
        }
        self.index.insert(id.to_owned(), self.items.len());
        self.items.push(item);
        self.files.push(file.to_owned());
        Ok(())
    }

    /// The item with this id.
    pub fn get(&self, id: &str) -> Option<&T> {
        self.index.get(id).map(|&i| &self.items[i])
    }

    /// Whether an item has this id.
    pub fn contains(&self, id: &str) -> bool {
        self.index.contains_key(id)
    }

    /// The asset path the item with this id was loaded from.
    pub fn file_of(&self, id: &str) -> Option<&str> {
        self.index.get(id).map(|&i| self.files[i].as_str())
    }

    /// The item an asset path defined, if it is in the catalog.
    pub fn defined_in(&self, file: &str) -> Option<&T> {
        self.files
            .iter()
            .position(|f| f == file)
            .map(|i| &self.items[i])
    }

    /// Keeps the items `keep` says yes to, given each with its asset path, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &T) -> bool) {
        let items = std::mem::take(&mut self.items);
        let files = std::mem::take(&mut self.files);
        self.index.clear();
        for (item, file) in items.into_iter().zip(files) {
            if keep(&file, &item) {
                self.index.insert(item.id().to_owned(), self.items.len());
                self.items.push(item);
                self.files.push(file);
            }
        }
    }

    /// Puts the items in the order `compare` gives (a stable sort).
    pub fn sort_by(&mut self, mut compare: impl FnMut(&T, &T) -> std::cmp::Ordering) {
        let mut order: Vec<usize> = (0..self.items.len()).collect();
        order.sort_by(|&a, &b| compare(&self.items[a], &self.items[b]));
        let mut items: Vec<Option<T>> = self.items.drain(..).map(Some).collect();
        let files = std::mem::take(&mut self.files);
        self.index.clear();
        for i in order {
            if let Some(item) = items[i].take() {
                self.index.insert(item.id().to_owned(), self.items.len());
                self.items.push(item);
                self.files.push(files[i].clone());
            }
        }
    }
}

impl<T> ContentCatalog<T> {
    /// Every item, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// Every item with its asset path, in order.
    pub fn iter_with_files(&self) -> impl Iterator<Item = (&str, &T)> {
        self.files.iter().map(String::as_str).zip(&self.items)
    }

    /// Every item, in order, as a slice.
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }

    /// How many items it holds.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether it holds no item.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<'a, T> IntoIterator for &'a ContentCatalog<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl CatalogItem for ActionDefinition {
    const KIND: &'static str = "action";
    fn id(&self) -> &str {
        &self.id
    }
}

impl CatalogItem for ActorSpec {
    const KIND: &'static str = "actor";
    fn id(&self) -> &str {
        &self.id
    }
}

impl CatalogItem for PromptTemplate {
    const KIND: &'static str = "prompt template";
    fn id(&self) -> &str {
        &self.id
    }
}

impl CatalogItem for AbilityDefinition {
    const KIND: &'static str = "ability";
    fn id(&self) -> &str {
        &self.id
    }
}

impl CatalogItem for TaskDefinition {
    const KIND: &'static str = "task";
    fn id(&self) -> &str {
        &self.id
    }
}

impl CatalogItem for RefinementMethod {
    const KIND: &'static str = "refinement method";
    const ID_POINTER: &'static str = "/refinementMethodId";
    fn id(&self) -> &str {
        &self.refinement_method_id
    }
}

impl CatalogItem for NarrativeContext {
    const KIND: &'static str = "narrative";
    const ID_POINTER: &'static str = "/key";
    const ID_WORD: &'static str = "key";
    fn id(&self) -> &str {
        &self.key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Item(&'static str, u32);

    impl CatalogItem for Item {
        const KIND: &'static str = "item";
        fn id(&self) -> &str {
            self.0
        }
    }

    #[test]
    fn items_keep_load_order_and_their_files() {
        let mut catalog = ContentCatalog::default();
        catalog.insert("b.json", Item("m:b", 1)).expect("a new id");
        catalog.insert("a.json", Item("m:a", 2)).expect("a new id");
        assert_eq!(catalog.len(), 2);
        assert_eq!(
            catalog.iter().map(|i| i.0).collect::<Vec<_>>(),
            ["m:b", "m:a"]
        );
        assert_eq!(catalog.get("m:a"), Some(&Item("m:a", 2)));
        assert_eq!(catalog.file_of("m:a"), Some("a.json"));
        assert_eq!(catalog.defined_in("b.json"), Some(&Item("m:b", 1)));
        assert_eq!(catalog.get("m:c"), None);
        assert_eq!(catalog.defined_in("c.json"), None);
    }

    #[test]
    fn a_second_narrative_file_for_a_key_is_pointed_at_its_key() {
        let lute = || NarrativeContext {
            key: "tavern:lute".into(),
            ..NarrativeContext::default()
        };
        let mut catalog = ContentCatalog::default();
        catalog
            .insert("first.narrative.json", lute())
            .expect("the first");
        let duplicate = (catalog.insert("second.narrative.json", lute()))
            .expect_err("the second is a duplicate");
        assert_eq!(duplicate.pointer, "/key");
        assert_eq!(
            duplicate.message,
            "duplicate narrative key `tavern:lute`, already defined in first.narrative.json: \
             give this narrative its own key"
        );
    }

    #[test]
    fn a_second_claim_to_an_id_is_a_duplicate_naming_the_first_file() {
        let mut catalog = ContentCatalog::default();
        catalog
            .insert("first.json", Item("m:a", 1))
            .expect("a new id");
        let duplicate = catalog
            .insert("second.json", Item("m:a", 2))
            .expect_err("the id is taken");
        assert_eq!(duplicate.file, "second.json");
        assert_eq!(duplicate.pointer, "/id");
        assert_eq!(
            duplicate.message,
            "duplicate item id `m:a`, already defined in first.json: give this item its own id"
        );
        assert_eq!(
            catalog.get("m:a"),
            Some(&Item("m:a", 1)),
            "the first keeps it"
        );
        assert_eq!(catalog.len(), 1);
        // A file named for the id that another file took is likelier the right one.
        let mut catalog = ContentCatalog::default();
        (catalog.insert("mods/m/wait.json", Item("m:look", 1))).expect("a new id");
        let duplicate =
            (catalog.insert("mods/m/look.json", Item("m:look", 2))).expect_err("the id is taken");
        assert_eq!(
            duplicate.message,
            "duplicate item id `m:look`, already defined in mods/m/wait.json: this file's \
             name is the id's: check the id in mods/m/wait.json"
        );
    }

    #[test]
    fn sorting_moves_files_and_lookups_with_their_items() {
        let mut catalog = ContentCatalog::default();
        for (file, item) in [
            ("x", Item("m:x", 3)),
            ("y", Item("m:y", 1)),
            ("z", Item("m:z", 2)),
        ] {
            catalog.insert(file, item).expect("a new id");
        }
        catalog.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(
            catalog
                .iter_with_files()
                .map(|(f, i)| (f, i.0))
                .collect::<Vec<_>>(),
            [("y", "m:y"), ("z", "m:z"), ("x", "m:x")]
        );
        assert_eq!(catalog.get("m:x"), Some(&Item("m:x", 3)));
        assert_eq!(catalog.file_of("m:z"), Some("z"));
    }
}
