//! The indexed files, kept in memory between the queries of a process: their
//! table (id, path, language, place in path order); for each trigram token a
//! query asked for, the set of files holding it (as places in that order),
//! so a prefilter is a few bit operations instead of an FTS5 expression; and
//! their texts, each beside a lower-cased copy, so a code-text scan reads
//! memory instead of SQLite pages and finds a literal with a plain substring
//! search. Keyed by the database and the count of the index's commits that
//! rewrote files (`records::Sources::writes`): a task or a document written keeps
//! them, every batch of files drops them. Texts (512 MiB with their copies)
//! and token sets (16 MiB) are bounded; everything is dropped whole when the
//! files move on, so what is kept is always the indexed.

use std::path::Path;
use std::sync::Arc;

use fixedbitset::FixedBitSet;
use rusqlite::Connection;

use super::cache::{self, Bounded, Keyed, Shelf};
use crate::search::index::records;
use crate::store::StoreError;

/// Bytes of text kept at most, lower-cased copies included. Kept only as
/// queries read them, so a small repository keeps all of its text in far
/// less; on the Linux source, ten common identifiers read about 200 MB of
/// files, and a bound of 128 MiB read them from SQLite again at every query
/// (REST p50 6.7 ms against 2.6 ms, side by side).
const MAX_BYTES: usize = 512 << 20;
/// Bytes of trigram token sets kept at most.
const MAX_TOKEN_SET_BYTES: usize = 16 << 20;

struct Kept {
    texts: Bounded<i64, Arc<FileText>>,
    files: Option<Arc<FileTable>>,
    token_sets: Bounded<String, Arc<FixedBitSet>>,
}

/// A file's text, and the same text with its ASCII letters lower-cased:
/// byte for byte the same length, so an offset in one is an offset in the
/// other, and a lower-cased ASCII literal is found in it whatever its case.
pub struct FileText {
    pub text: Box<str>,
    pub folded: Box<[u8]>,
}

impl FileText {
    pub fn of(text: &str) -> FileText {
        FileText {
            folded: text.as_bytes().to_ascii_lowercase().into_boxed_slice(),
            text: text.into(),
        }
    }

    fn bytes(&self) -> usize {
        self.text.len() + self.folded.len()
    }
}

/// Every indexed file in path order, and each one's place in it by row id.
pub struct FileTable {
    in_order: Vec<records::KeptFile>,
    place_of: foldhash::HashMap<i64, usize>,
}

impl FileTable {
    /// The table of `files`, put in path order as Rust compares strings
    /// (bytes), the order lines are ranked by (`CodeLine::in_path_order`).
    fn of(mut files: Vec<records::KeptFile>) -> FileTable {
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        let place_of = files
            .iter()
            .enumerate()
            .map(|(place, file)| (file.id, place))
            .collect();
        FileTable {
            in_order: files,
            place_of,
        }
    }

    /// A set of places with every file in it.
    pub fn every_place(&self) -> FixedBitSet {
        let mut all = FixedBitSet::with_capacity(self.in_order.len());
        all.insert_range(..);
        all
    }

    /// The file at `place`.
    pub fn at(&self, place: usize) -> Option<&records::KeptFile> {
        self.in_order.get(place)
    }

    /// The place of the file of row `id`, and the file.
    pub fn place(&self, id: i64) -> Option<(usize, &records::KeptFile)> {
        let place = *self.place_of.get(&id)?;
        Some((place, self.in_order.get(place)?))
    }

    /// The places of the files of `ids`; ids the table does not hold are left out.
    fn places_of(&self, ids: &[i64]) -> FixedBitSet {
        let mut places = FixedBitSet::with_capacity(self.in_order.len());
        for place in ids.iter().filter_map(|id| self.place_of.get(id)) {
            places.insert(*place);
        }
        places
    }

    /// The files at `places` (every file when None) with their places, in path order.
    pub fn in_path_order<'t>(
        &'t self,
        places: Option<&'t FixedBitSet>,
    ) -> Box<dyn Iterator<Item = (usize, &'t records::KeptFile)> + 't> {
        match places {
            Some(places) => Box::new(
                places
                    .ones()
                    .filter_map(|at| self.in_order.get(at).map(|file| (at, file))),
            ),
            None => Box::new(self.in_order.iter().enumerate()),
        }
    }
}

/// The table of the files indexed at `revision` of the database at `database`.
pub fn files(c: &Connection, database: &Path, revision: i64) -> Result<Arc<FileTable>, StoreError> {
    if let Some(files) = current(&mut KEPT.lock(), database, revision).files.clone() {
        return Ok(files);
    }
    let files = Arc::new(FileTable::of(records::all_files(c)?));
    current(&mut KEPT.lock(), database, revision).files = Some(files.clone());
    Ok(files)
}

/// The kept state for `database` at `revision`, started afresh when what
/// was kept belongs to another.
fn current<'k>(kept: &'k mut Option<Keyed<Kept>>, database: &Path, revision: i64) -> &'k mut Kept {
    cache::current(kept, database, revision, || Kept {
        texts: Bounded::new(MAX_BYTES),
        files: None,
        token_sets: Bounded::new(MAX_TOKEN_SET_BYTES),
    })
}

/// What `shelf` of the kept state for `database` at `revision` holds under
/// `key`, else what `read` finds, then kept there with its size.
fn kept_or_read<K, V>(
    database: &Path,
    revision: i64,
    shelf: fn(&mut Kept) -> &mut Bounded<K, V>,
    key: K,
    read: impl FnOnce() -> Result<Option<(V, usize)>, StoreError>,
) -> Result<Option<V>, StoreError>
where
    K: std::hash::Hash + Eq,
    V: Clone,
{
    let known =
        cache::for_them(KEPT.lock().as_mut(), database, revision).and_then(|k| shelf(k).get(&key));
    if known.is_some() {
        return Ok(known);
    }
    let Some((value, size)) = read()? else {
        return Ok(None);
    };
    shelf(current(&mut KEPT.lock(), database, revision)).insert(key, value.clone(), size);
    Ok(Some(value))
}

/// The places in `table` (the files indexed at `revision` of the database
/// at `database`) of the files holding trigram `token`.
pub fn files_holding(
    c: &Connection,
    database: &Path,
    revision: i64,
    table: &FileTable,
    token: &str,
) -> Result<Arc<FixedBitSet>, StoreError> {
    let read = || {
        let places = table.places_of(&records::files_with_token(c, token)?);
        let size = std::mem::size_of_val(places.as_slice()) + token.len();
        Ok(Some((Arc::new(places), size)))
    };
    let places = kept_or_read(
        database,
        revision,
        |k| &mut k.token_sets,
        token.to_string(),
        read,
    )?;
    // `read` always answers a set; were it not to, every file stays a candidate
    Ok(places.unwrap_or_else(|| Arc::new(table.every_place())))
}

static KEPT: Shelf<Kept> = Shelf::new();

/// File `id`'s text in the index at `revision` of the database at `database`.
pub fn text(
    c: &Connection,
    database: &Path,
    revision: i64,
    id: i64,
) -> Result<Option<Arc<FileText>>, StoreError> {
    kept_or_read(
        database,
        revision,
        |k| &mut k.texts,
        id,
        || {
            let text = records::with_text(c, id, |text| Arc::new(FileText::of(text)))?;
            Ok(text.map(|text| {
                let size = text.bytes();
                (text, size)
            }))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(id: i64, path: &str) -> records::KeptFile {
        records::KeptFile {
            id,
            path: path.into(),
            lang: "python".into(),
            test: false,
        }
    }

    #[test]
    fn a_file_table_gives_the_asked_files_in_path_order() {
        // as the database hands them: by path
        let table = FileTable::of(vec![file(7, "a.py"), file(3, "b/c.py"), file(9, "z.py")]);
        let paths = |places: Option<&FixedBitSet>| -> Vec<String> {
            table
                .in_path_order(places)
                .map(|(_, f)| f.path.to_string())
                .collect()
        };
        assert_eq!(
            paths(Some(&table.places_of(&[9, 7, 42]))),
            ["a.py", "z.py"],
            "path order, and an id the table lacks is left out"
        );
        assert_eq!(paths(None), ["a.py", "b/c.py", "z.py"]);
        assert_eq!(paths(Some(&table.every_place())), paths(None));
    }

    #[test]
    fn what_is_kept_belongs_to_one_database_and_revision() {
        let mut kept = None;
        let here = Path::new("/nowhere/texts-test.db");
        current(&mut kept, here, 4)
            .texts
            .insert(1, Arc::new(FileText::of("text")), 4);
        assert!(current(&mut kept, here, 4).texts.get(&1).is_some());
        assert!(
            current(&mut kept, here, 5).texts.get(&1).is_none(),
            "another revision"
        );
        current(&mut kept, here, 5)
            .texts
            .insert(1, Arc::new(FileText::of("text")), 4);
        let elsewhere = Path::new("/nowhere/other.db");
        assert!(
            current(&mut kept, elsewhere, 5).texts.get(&1).is_none(),
            "another database"
        );
    }

    #[test]
    fn a_folded_copy_keeps_every_offset() {
        let kept = FileText::of("Größe = ParseHTTP(x)");
        assert_eq!(kept.folded.len(), kept.text.len());
        assert_eq!(&kept.folded[..], "größe = parsehttp(x)".as_bytes());
    }
}
