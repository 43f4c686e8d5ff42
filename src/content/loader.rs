//! Loading content files (JSON or RON) as Bevy assets, with errors that point at the field.

use std::marker::PhantomData;

use bevy::asset::io::Reader;
use bevy::asset::{Asset, AssetLoader, LoadContext};
use bevy::reflect::TypePath;
use serde::de::DeserializeOwned;
use thiserror::Error;

use super::ContentError;

/// A content type that loads from a file and checks itself once parsed.
pub trait ContentAsset: Asset + DeserializeOwned {
    /// File extensions (without the leading dot) this type loads from.
    const EXTENSIONS: &'static [&'static str];

    /// Problems found in this file alone; any of them rejects the file.
    fn check(&self, file: &str) -> Vec<ContentError>;

    /// A hint to add to a parse error at `pointer` with serde's `detail`, for mistakes
    /// worth explaining, such as a field that moved.
    fn parse_hint(_pointer: &str, _detail: &str) -> Option<&'static str> {
        None
    }
}

/// Why a content file could not be loaded.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ContentLoaderError {
    /// The file could not be read.
    #[error("could not read {file}: {source}")]
    Io {
        /// The asset path.
        file: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file was read but has problems; each names its field.
    #[error("{}", join_problems(.0))]
    Invalid(Vec<ContentError>),
}

impl ContentLoaderError {
    /// The problems to report, one per field.
    pub fn problems(&self) -> Vec<ContentError> {
        match self {
            Self::Io { file, source } => vec![ContentError::new(
                file.clone(),
                "",
                format!("could not read the file: {source}"),
            )],
            Self::Invalid(problems) => problems.clone(),
        }
    }
}

fn join_problems(problems: &[ContentError]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Parses and checks one content file. `.ron` files are RON; everything else is JSON.
///
/// This is what the asset loader runs; games may call it on files they read themselves.
pub fn parse_content<T: ContentAsset>(bytes: &[u8], file: &str) -> Result<T, Vec<ContentError>> {
    let parsed: T = if file.ends_with(".ron") {
        let text = std::str::from_utf8(bytes).map_err(|error| {
            vec![ContentError::new(
                file,
                "",
                format!("the file is not UTF-8 text: {error}"),
            )]
        })?;
        let mut deserializer = ron::Deserializer::from_str_with_options(text, &ron_options())
            .map_err(|error| {
                vec![ContentError::new(
                    file,
                    "",
                    format!("not valid RON: {error}"),
                )]
            })?;
        serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|error| path_error::<T>(file, "RON", error.path(), error.inner().to_string()))
    } else {
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        serde_path_to_error::deserialize(&mut deserializer)
            .map_err(|error| path_error::<T>(file, "JSON", error.path(), error.inner().to_string()))
    }
    .map_err(|error| vec![error])?;
    let problems = parsed.check(file);
    if problems.is_empty() {
        Ok(parsed)
    } else {
        Err(problems)
    }
}

/// RON as authors expect it: optional fields take plain values, `Some(...)` still works.
fn ron_options() -> ron::Options {
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

fn path_error<T: ContentAsset>(
    file: &str,
    format: &str,
    path: &serde_path_to_error::Path,
    detail: String,
) -> ContentError {
    let pointer = json_pointer(path);
    let message = match T::parse_hint(&pointer, &detail) {
        Some(hint) => format!("not valid {format} for this file: {detail}; {hint}"),
        None => format!("not valid {format} for this file: {detail}"),
    };
    ContentError::new(file, pointer, message)
}

/// Turns a serde path (`targets.primary.scope`) into a JSON pointer (`/targets/primary/scope`).
fn json_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } => {
                pointer.push('/');
                pointer.push_str(&super::validate::pointer_token(key));
            }
            Segment::Enum { variant } => {
                pointer.push('/');
                pointer.push_str(variant);
            }
            Segment::Unknown => {}
        }
    }
    pointer
}

/// The asset loader for every content type: JSON or RON by extension.
#[derive(TypePath)]
pub struct ContentLoader<T> {
    marker: PhantomData<fn() -> T>,
}

impl<T> Default for ContentLoader<T> {
    fn default() -> Self {
        Self {
            marker: PhantomData,
        }
    }
}

impl<T: ContentAsset> AssetLoader for ContentLoader<T> {
    type Asset = T;
    type Settings = ();
    type Error = ContentLoaderError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<T, ContentLoaderError> {
        let file = load_context
            .path()
            .path()
            .to_string_lossy()
            .replace('\\', "/");
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .await
            .map_err(|source| ContentLoaderError::Io {
                file: file.clone(),
                source,
            })?;
        parse_content(&bytes, &file).map_err(ContentLoaderError::Invalid)
    }

    fn extensions(&self) -> &[&str] {
        T::EXTENSIONS
    }
}
