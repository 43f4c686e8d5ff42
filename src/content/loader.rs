//! Loading content files (JSON or RON) as Bevy assets, with errors that point at the field.

use std::marker::PhantomData;

use bevy::asset::io::Reader;
use bevy::asset::{Asset, AssetLoader, LoadContext};
use bevy::reflect::TypePath;
use serde::Serialize;
use serde::de::DeserializeOwned;
use thiserror::Error;

use super::ContentError;

/// A content type that loads from a file and checks itself once parsed. It serializes
/// too, so every string in it can be checked for characters prompts must not hold.
///
/// Register one with [`ContentAppExt::init_content`](super::ContentAppExt::init_content).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a content kind: it does not implement `ContentAsset`",
    label = "not a content kind",
    note = "derive `Asset`, `TypePath`, `Serialize` and `Deserialize` for `{Self}`, then implement `ContentAsset` for it: `EXTENSIONS` (the file extensions it loads from) and `check` (its problems as `ContentError`s; `parse_hint` is optional)"
)]
pub trait ContentAsset: Asset + DeserializeOwned + Serialize {
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
/// A leading UTF-8 byte-order mark is skipped. Text that reaches prompts may not hold
/// control characters, bidirectional overrides or tag characters
/// ([`forbidden_character`]): a file with one is rejected, with the field and the
/// character named.
///
/// This is what the asset loader runs; games may call it on files they read themselves.
pub fn parse_content<T: ContentAsset>(bytes: &[u8], file: &str) -> Result<T, Vec<ContentError>> {
    // Editors on Windows save a byte-order mark that neither parser accepts.
    let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    let parsed: T = if file.ends_with(".ron") {
        parse_ron(bytes, file)
    } else {
        parse_json(bytes, file)
    }
    .map_err(|error| vec![error])?;
    let mut problems = forbidden_characters(&parsed, file);
    problems.extend(parsed.check(file));
    if problems.is_empty() {
        Ok(parsed)
    } else {
        Err(problems)
    }
}

/// The UTF-8 byte-order mark.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

fn parse_json<T: ContentAsset>(bytes: &[u8], file: &str) -> Result<T, ContentError> {
    if let Some(problem) = not_text(bytes) {
        return Err(ContentError::new(file, "", problem));
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let parsed = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        // Valid JSON that is not what the file holds (an unknown field, a wrong type)
        // is not a JSON error.
        let detail = error.inner().to_string();
        match error.inner().classify() {
            serde_json::error::Category::Data => path_error::<T>(
                file,
                "not what this kind of file holds",
                error.path(),
                detail,
            ),
            _ => {
                let detail = with_hint(detail, not_json(bytes, error.inner()));
                path_error::<T>(file, "not valid JSON", error.path(), detail)
            }
        }
    })?;
    // serde_json's errors already say the line and column.
    deserializer.end().map_err(|error| {
        let detail = with_hint(error.to_string(), not_json(bytes, &error));
        ContentError::new(file, "", format!("not valid JSON: {detail}"))
    })?;
    // A map's key given twice is no error to serde, which keeps the last: the first
    // one's content would be gone without a word. (A struct's field twice is one.)
    let mut twice = Twice::default();
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    if let Err(error) = serde::de::DeserializeSeed::deserialize(&mut twice, &mut deserializer)
        && let Some(found) = twice.found
    {
        return Err(given_twice(file, found, (error.line(), error.column())));
    }
    Ok(parsed)
}

/// Why `bytes` are no text a parser reads: UTF-16 (what Windows Notepad saves as
/// "Unicode"), or no text at all, as a zero byte among its first says.
fn not_text(bytes: &[u8]) -> Option<String> {
    let utf16 = bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF");
    (utf16 || bytes.iter().take(64).any(|&b| b == 0)).then(|| {
        "the file is UTF-16 text (what Windows Notepad saves as \"Unicode\"), or no text at all: save it as UTF-8".to_owned()
    })
}

/// What most likely made text not JSON, when the text says: a file left empty, one
/// written as RON, a comment, curly or single quotes where the `error` is (outside
/// the strings of its line, up to it: a string may hold any of them).
fn not_json(bytes: &[u8], error: &serde_json::Error) -> Option<&'static str> {
    let text = String::from_utf8_lossy(bytes);
    let line = text
        .lines()
        .nth(error.line().saturating_sub(1))
        .unwrap_or("");
    let code = outside_strings(line, error.column());
    let first = text.trim_start().chars().next();
    if first.is_none() {
        Some("the file is empty: write the JSON object this kind of file holds")
    } else if first.is_some_and(|c| c == '(' || c.is_alphabetic()) {
        Some("it reads like RON: name the file `.ron`, or write it as JSON (`{ \"field\": … }`)")
    } else if comment(&code) {
        Some("JSON has no comments: remove them (a `.ron` file may have them)")
    } else if code.contains(['\u{201C}', '\u{201D}', '\u{2018}', '\u{2019}']) {
        Some("curly quotes (“ ” ‘ ’) are not JSON's: write straight double quotes (\")")
    } else if code.contains('\'') {
        Some("JSON's keys and strings are in double quotes (\"), not single ones")
    } else {
        None
    }
}

/// What `line` holds outside its JSON strings, up to the byte after `column` (where
/// an error is, from 1): everything before it parsed, so its strings are whole. A
/// curly quote typed for a closing `"` leaves its string open to the next `"`, so
/// one inside a string, followed by what follows a string (`,` `:` `}` `]`), is kept
/// as if outside.
fn outside_strings(line: &str, column: usize) -> String {
    let (mut code, mut in_string, mut escaped) = (String::new(), false, false);
    // A curly quote in a string, and the spaces after it so far.
    let mut curly: Option<char> = None;
    let upto = line.char_indices().take_while(|&(at, _)| at <= column);
    for c in upto.map(|(_, c)| c) {
        if in_string && !escaped {
            match (curly, c) {
                (_, '\u{201D}' | '\u{2019}') => curly = Some(c),
                (Some(quote), ',' | ':' | '}' | ']') => {
                    code.push(quote);
                    curly = None;
                }
                (Some(_), ' ') => {}
                _ => curly = None,
            }
        }
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') | (false, _, '"') => in_string = !in_string,
            (true, false, _) => {}
            (false, _, c) => code.push(c),
        }
    }
    code
}

/// Whether code (outside strings) holds a comment: `//` or `/*`.
fn comment(code: &str) -> bool {
    code.contains("//") || code.contains("/*")
}

/// `detail`, and after it `hint` when there is one.
fn with_hint(detail: String, hint: Option<&str>) -> String {
    match hint {
        Some(hint) => format!("{detail}; {hint}"),
        None => detail,
    }
}

/// The error of a key given twice, `found` as [`Twice`] found it, the second `at`
/// this line and column.
fn given_twice(file: &str, (pointer, key): (String, String), at: (usize, usize)) -> ContentError {
    let (line, column) = at;
    ContentError::new(
        file,
        pointer,
        format!(
            "`{key}` is given twice in one object (the second at line {line} column {column}): the second would replace the first; give each key once, renaming or merging one of them"
        ),
    )
}

/// Finds the first key an object gives twice, and where: its JSON pointer, and the key.
/// Read as any value, and the values read only to pass over them.
#[derive(Default)]
struct Twice {
    /// The pointer of the value being read.
    pointer: String,
    found: Option<(String, String)>,
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut Twice {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut Twice {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, inner: D) -> Result<(), D::Error> {
        inner.deserialize_any(self)
    }

    fn visit_newtype_struct<D: serde::Deserializer<'de>>(self, inner: D) -> Result<(), D::Error> {
        inner.deserialize_any(self)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        let length = self.pointer.len();
        for index in 0.. {
            self.pointer.truncate(length);
            self.pointer.push_str(&format!("/{index}"));
            if items.next_element_seed(&mut *self)?.is_none() {
                break;
            }
        }
        self.pointer.truncate(length);
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut fields: A) -> Result<(), A::Error> {
        let length = self.pointer.len();
        let mut keys = bevy::platform::collections::HashSet::new();
        while let Some(key) = fields.next_key::<String>()? {
            self.pointer.truncate(length);
            self.pointer.push('/');
            self.pointer.push_str(&super::validate::pointer_token(&key));
            if !keys.insert(key.clone()) {
                self.found = Some((std::mem::take(&mut self.pointer), key));
                return Err(serde::de::Error::custom("a key given twice"));
            }
            fields.next_value_seed(&mut *self)?;
        }
        self.pointer.truncate(length);
        Ok(())
    }
}

fn parse_ron<T: ContentAsset>(bytes: &[u8], file: &str) -> Result<T, ContentError> {
    if let Some(problem) = not_text(bytes) {
        return Err(ContentError::new(file, "", problem));
    }
    let text = std::str::from_utf8(bytes).map_err(|error| {
        ContentError::new(file, "", format!("the file is not UTF-8 text: {error}"))
    })?;
    let mut deserializer =
        ron::Deserializer::from_str_with_options(text, &ron_options()).map_err(|error| {
            ContentError::new(file, "", format!("not valid RON: {}", ron_detail(&error)))
        })?;
    let parsed = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().clone();
        // ron's own error has no position; the deserializer still knows where it stopped.
        let spanned = deserializer.span_error(error.into_inner());
        path_error::<T>(
            file,
            "not valid RON for this file",
            &path,
            ron_detail(&spanned),
        )
    })?;
    deserializer.end().map_err(|error| {
        let spanned = deserializer.span_error(error);
        ContentError::new(file, "", format!("not valid RON: {}", ron_detail(&spanned)))
    })?;
    // A map's key given twice, as in JSON ([`parse_json`]).
    let mut twice = Twice::default();
    if let Ok(mut deserializer) = ron::Deserializer::from_str_with_options(text, &ron_options())
        && let Err(error) = serde::de::DeserializeSeed::deserialize(&mut twice, &mut deserializer)
        && let Some(found) = twice.found
    {
        let at = deserializer.span_error(error).span.start;
        return Err(given_twice(file, found, (at.line, at.col)));
    }
    Ok(parsed)
}

/// A RON error with its place in the words serde_json uses: `… at line 3 column 7`.
fn ron_detail(error: &ron::error::SpannedError) -> String {
    let at = &error.span.start;
    format!("{} at line {} column {}", error.code, at.line, at.col)
}

/// The characters text that reaches prompts may not hold, each with its field. Every
/// string of the file counts, map keys included.
fn forbidden_characters<T: ContentAsset>(parsed: &T, file: &str) -> Vec<ContentError> {
    let Ok(value) = serde_json::to_value(parsed) else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    let mut found = |pointer: &str, text: &str| {
        if let Some((position, character)) = text
            .chars()
            .enumerate()
            .find_map(|(position, c)| forbidden_character(c).map(|name| (position, (c, name))))
        {
            let (c, name) = character;
            problems.push(ContentError::new(
                file,
                pointer,
                format!(
                    "holds {name} (U+{:04X}) at character {}: text that reaches the model may hold only printable characters, line breaks and tabs; the file is rejected until it is removed",
                    u32::from(c),
                    position + 1
                ),
            ));
        }
    };
    walk_strings(&value, &mut String::new(), &mut found);
    problems
}

/// Calls `found` with each string of `value` and its JSON pointer, keys before values.
fn walk_strings(
    value: &serde_json::Value,
    pointer: &mut String,
    found: &mut impl FnMut(&str, &str),
) {
    match value {
        serde_json::Value::String(text) => found(pointer, text),
        serde_json::Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let length = pointer.len();
                pointer.push_str(&format!("/{index}"));
                walk_strings(item, pointer, found);
                pointer.truncate(length);
            }
        }
        serde_json::Value::Object(fields) => {
            for (key, item) in fields {
                let length = pointer.len();
                pointer.push('/');
                pointer.push_str(&super::validate::pointer_token(key));
                found(pointer, key);
                walk_strings(item, pointer, found);
                pointer.truncate(length);
            }
        }
        _ => {}
    }
}

/// What a character is, when content text may not hold it: control characters other
/// than line breaks and tabs (NUL, escape, backspace, …), the invisible marks that
/// reorder text (bidirectional overrides, embeddings and isolates), which can make a
/// line read differently to a person than to the model, and tag characters (U+E0000
/// to U+E007F), which spell words no one sees but a model reads.
pub fn forbidden_character(c: char) -> Option<&'static str> {
    match c {
        '\n' | '\r' | '\t' => None,
        '\0' => Some("a NUL character"),
        '\u{061C}' | '\u{200E}' | '\u{200F}' => Some("a bidirectional mark"),
        '\u{202A}'..='\u{202E}' => Some("a bidirectional embedding or override"),
        '\u{2066}'..='\u{2069}' => Some("a bidirectional isolate"),
        '\u{E0000}'..='\u{E007F}' => Some("a tag character, unseen but read by the model"),
        c if c.is_control() => Some("a control character"),
        _ => None,
    }
}

/// RON as authors expect it: optional fields take plain values, `Some(...)` still works.
fn ron_options() -> ron::Options {
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

fn path_error<T: ContentAsset>(
    file: &str,
    what: &str,
    path: &serde_path_to_error::Path,
    detail: String,
) -> ContentError {
    let mut pointer = json_pointer(path);
    let detail = match super::method::split_nested(&detail) {
        Some((below, inner)) => {
            pointer.push_str(below);
            inner.to_owned()
        }
        None => detail,
    };
    let message = match T::parse_hint(&pointer, &detail) {
        Some(hint) => format!("{what}: {detail}; {hint}"),
        None => format!("{what}: {detail}"),
    };
    ContentError::new(file, pointer, message)
}

/// Turns a serde path (`targets.primary.scope`) into a JSON pointer (`/targets/primary/scope`).
pub(super) fn json_pointer(path: &serde_path_to_error::Path) -> String {
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
        let bytes = read_at_most(reader, LARGEST_FILE, &file).await?;
        parse_content(&bytes, &file).map_err(ContentLoaderError::Invalid)
    }

    fn extensions(&self) -> &[&str] {
        T::EXTENSIONS
    }
}

/// The largest content file read, in bytes: far more than any authored file holds,
/// and little enough that a file written by mistake (a log, a model's weights) is an
/// error, not the game's memory.
pub const LARGEST_FILE: u64 = 16 << 20;

/// The bytes of `file` from `reader`, unless there are more than `limit`.
async fn read_at_most(
    reader: &mut dyn Reader,
    limit: u64,
    file: &str,
) -> Result<Vec<u8>, ContentLoaderError> {
    use futures_lite::AsyncReadExt;
    let mut bytes = Vec::new();
    let io = |source| ContentLoaderError::Io {
        file: file.to_owned(),
        source,
    };
    // One byte more than allowed tells a file too large.
    let mut limited = AsyncReadExt::take(reader, limit.saturating_add(1));
    limited.read_to_end(&mut bytes).await.map_err(io)?;
    if bytes.len() as u64 > limit {
        let message = format!(
            "the file is larger than the {} MiB a content file may be: is it the file you meant? Split what is authored across several files",
            limit >> 20
        );
        return Err(ContentLoaderError::Invalid(vec![ContentError::new(
            file, "", message,
        )]));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use bevy::asset::io::VecReader;

    use super::*;
    use crate::content::ActionDefinition;

    #[test]
    fn a_file_larger_than_allowed_is_an_error_not_read_whole() {
        let file = "mods/core/actions/huge.action.json";
        let read = |size: usize| {
            let mut reader = VecReader::new(vec![b' '; size]);
            futures_lite::future::block_on(read_at_most(&mut reader, 2 << 20, file))
        };
        assert_eq!(read(2 << 20).map(|bytes| bytes.len()).ok(), Some(2 << 20));
        let Err(ContentLoaderError::Invalid(problems)) = read((2 << 20) + 1) else {
            panic!("a file one byte too large is refused");
        };
        assert_eq!(problems[0].file, file);
        assert!(
            problems[0].message.contains("larger than the 2 MiB"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_file_cut_short_is_not_valid_json_and_a_field_unknown_is_not_what_it_holds() {
        let file = "mods/core/actions/wait.action.json";
        let message = |text: &str| {
            let problems =
                parse_content::<ActionDefinition>(text.as_bytes(), file).expect_err("refused");
            problems[0].message.clone()
        };
        let cut = message(r#"{"id": "core:wait", "name": "#);
        assert!(cut.starts_with("not valid JSON: "), "{cut}");
        let typo = message(
            r#"{"id": "core:wait", "name": "Wait", "description": "d", "tempalte": "wait"}"#,
        );
        assert!(
            typo.starts_with("not what this kind of file holds: unknown field `tempalte`"),
            "{typo}"
        );
    }

    #[test]
    fn a_key_given_twice_in_a_map_is_an_error_that_names_it() {
        let file = "mods/smithy/narrative/hilda.narrative.json";
        let json = r#"{
            "key": "smithy:hilda",
            "behavior_fragments": {
                "sharpen": { "core": ["hones the edge"] },
                "mend": { "core": ["mends it"] },
                "sharpen": { "core": ["hammers it"] }
            }
        }"#;
        let problems = parse_content::<crate::content::NarrativeContext>(json.as_bytes(), file)
            .expect_err("a key given twice");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].pointer, "/behavior_fragments/sharpen");
        assert!(
            problems[0].message.starts_with("`sharpen` is given twice")
                && problems[0].message.contains("line 6"),
            "{}",
            problems[0]
        );
        // Keys alike in different objects are no repeat.
        let fine = r#"{"key": "smithy:hilda", "behavior_fragments": {
            "sharpen": { "core": ["hones the edge"], "color": ["sparks fly"] },
            "mend": { "core": ["mends it"], "color": ["sweat drips"] } } }"#;
        parse_content::<crate::content::NarrativeContext>(fine.as_bytes(), file).expect("valid");
        // In RON alike.
        let ron_file = "mods/smithy/narrative/hilda.narrative.ron";
        let ron = r#"(
            key: "smithy:hilda",
            behavior_fragments: {
                "sharpen": (core: ["hones the edge"]),
                "sharpen": (core: ["hammers it"]),
            },
        )"#;
        let problems = parse_content::<crate::content::NarrativeContext>(ron.as_bytes(), ron_file)
            .expect_err("a key given twice");
        assert_eq!(problems[0].pointer, "/behavior_fragments/sharpen");
        assert!(problems[0].message.contains("line 5"), "{}", problems[0]);
        // One repeated in an object within an array is found there.
        let mut twice = Twice::default();
        let text = r#"[{"a": 1, "b": [2]}, {"b": {"c": null}, "b": true}]"#;
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let found = serde::de::DeserializeSeed::deserialize(&mut twice, &mut deserializer);
        assert!(found.is_err());
        assert_eq!(twice.found, Some(("/1/b".to_owned(), "b".to_owned())));
    }

    #[test]
    fn text_that_is_not_json_says_what_likely_made_it_so() {
        let file = "mods/core/actions/wait.action.json";
        let message = |bytes: &[u8]| {
            let problems = parse_content::<ActionDefinition>(bytes, file).expect_err("refused");
            problems[0].message.clone()
        };
        let said = |bytes: &[u8], hint: &str| {
            let message = message(bytes);
            assert!(message.contains(hint), "{hint:?} not in {message}");
        };
        said(b"", "the file is empty");
        said(b"  \n", "the file is empty");
        said(b"(id: \"core:wait\")", "it reads like RON");
        said(
            b"{\n  // waits\n  \"id\": \"core:wait\"}",
            "JSON has no comments",
        );
        said(
            b"{\"id\": \"core:wait\", /* waits */ }",
            "JSON has no comments",
        );
        said(
            "{\"id\": \u{201C}core:wait\u{201D}}".as_bytes(),
            "curly quotes",
        );
        said(b"{'id': 'core:wait'}", "in double quotes");
        // A curly quote for a closing one: the string runs on to the next `"`.
        said(
            "{\"id\": \"core:wait\u{201D}, \"name\": \"Wait\"}".as_bytes(),
            "curly quotes",
        );
        let utf16: Vec<u8> = "\u{FEFF}{\"id\": 1}"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        said(&utf16, "UTF-16");
        let ron_file = "mods/core/actions/wait.action.ron";
        let problems = parse_content::<ActionDefinition>(&utf16, ron_file).expect_err("refused");
        assert!(problems[0].message.contains("UTF-16"), "{}", problems[0]);
        // What a string holds is no comment nor quote: a web address, an apostrophe,
        // quoted speech, straight or curly, an escaped quote.
        for missing_comma in [
            r#"{"id": "core:wait", "name": "Marta's http://x" "description": "d"}"#,
            r#"{"id": "core:wait", "name": "it's: 'x' /* \" "d": 1}"#,
            "{\"id\": \"core:wait\", \"name\": \"\u{201C}Ale!\u{201D} \u{2018}now\u{2019}\" \"d\": 1}",
        ] {
            let message = message(missing_comma.as_bytes());
            assert!(message.contains("expected `,`"), "{message}");
            assert!(!message.contains(';'), "no hint: {message}");
        }
    }

    #[test]
    fn line_breaks_and_tabs_pass_and_hidden_controls_do_not() {
        for allowed in ['\n', '\r', '\t', 'é', '—', '\u{00A0}', '\u{E0080}'] {
            assert_eq!(forbidden_character(allowed), None, "{allowed:?}");
        }
        for refused in [
            '\0',
            '\u{1B}',
            '\u{7F}',
            '\u{85}',
            '\u{200F}',
            '\u{202A}',
            '\u{202E}',
            '\u{2066}',
            '\u{2069}',
            '\u{E0001}',
            '\u{E0041}',
            '\u{E007F}',
        ] {
            assert!(forbidden_character(refused).is_some(), "{refused:?}");
        }
    }

    #[test]
    fn a_forbidden_character_in_a_key_names_the_key() {
        let json = r#"{ "id": "shop:hop", "name": "Hop", "description": "Hop", "template": "hop {n}",
                        "parameters": { "n\u001b": { "default": 1 }, "n": { "default": 2 } } }"#;
        let problems =
            parse_content::<ActionDefinition>(json.as_bytes(), "mods/shop/actions/hop.action.json")
                .expect_err("a control character in a key");
        assert_eq!(problems[0].pointer, "/parameters/n\u{1b}");
        assert!(problems[0].message.contains("U+001B"), "{}", problems[0]);
    }
}
