//! Registering a content kind on an [`App`], the way Bevy registers an asset type.

use bevy::app::App;
use bevy::asset::AssetApp;

use super::{ContentAsset, ContentLoader};

/// Adds content kinds to an [`App`], like Bevy's [`AssetApp::init_asset`].
///
/// [`ContentPlugin`](super::ContentPlugin) registers the crate's own kinds (game file,
/// manifests, actions, actor specs, narrative files, prompt templates, tag files and
/// scenes) this way; a game registers its own kind the same way and loads its files
/// with the [`AssetServer`](bevy::asset::AssetServer), getting the same errors with the
/// file and the field.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_loom::content::{ContentAppExt, ContentAsset, ContentError};
/// use serde::{Deserialize, Serialize};
///
/// /// A game's own content kind: `recipes/stew.recipe.json`.
/// #[derive(Asset, TypePath, Serialize, Deserialize)]
/// struct Recipe {
///     id: String,
///     ingredients: Vec<String>,
/// }
///
/// impl ContentAsset for Recipe {
///     const EXTENSIONS: &'static [&'static str] = &["recipe.json", "recipe.ron"];
///
///     fn check(&self, file: &str) -> Vec<ContentError> {
///         if self.ingredients.is_empty() {
///             vec![ContentError::new(file, "/ingredients", "list at least one ingredient")]
///         } else {
///             Vec::new()
///         }
///     }
/// }
///
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, AssetPlugin::default()))
///     .init_content::<Recipe>();
/// assert!(app.world().contains_resource::<Assets<Recipe>>());
/// ```
pub trait ContentAppExt {
    /// Registers `T` as an asset type with the crate's content loader for its
    /// [`EXTENSIONS`](ContentAsset::EXTENSIONS): its files parse as JSON or RON,
    /// run [`ContentAsset::check`], and fail to load with a
    /// [`ContentLoaderError`](super::ContentLoaderError) naming each field at fault.
    fn init_content<T: ContentAsset>(&mut self) -> &mut Self;
}

impl ContentAppExt for App {
    fn init_content<T: ContentAsset>(&mut self) -> &mut Self {
        self.init_asset::<T>()
            .register_asset_loader(ContentLoader::<T>::default())
    }
}
