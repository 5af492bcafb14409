//! The indexed files, kept in memory between the queries of a process: their
//! table (id, path, language, place in path order); for each trigram token a
//! query asked for, the set of files holding it (as places in that order),
//! so a prefilter is a few bit operations instead of an FTS5 expression; and
//! their texts, each beside a lower-cased copy, so a code-text scan reads
//! memory instead of SQLite pages and finds a literal with a plain substring
//! search. Keyed by the database and the revision of the source the files
//! come from (the graph): a task or a document written keeps them. Texts
//! (128 MiB with their copies) and token sets (16 MiB) are bounded;
//! everything is dropped whole when the files move to a new revision, so
//! what is kept is always the indexed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fixedbitset::FixedBitSet;
use rusqlite::Connection;

use super::records;
use crate::store::StoreError;

/// Bytes of text kept at most, lower-cased copies included.
const MAX_BYTES: usize = 128 << 20;
/// Bytes of trigram token sets kept at most.
const MAX_TOKEN_SET_BYTES: usize = 16 << 20;

struct Kept {
    database: PathBuf,
    revision: i64,
    bytes: usize,
    texts: HashMap<i64, Arc<FileText>>,
    files: Option<Arc<FileTable>>,
    token_set_bytes: usize,
    token_sets: HashMap<String, Arc<FixedBitSet>>,
}

impl Kept {
    fn is_for(&self, database: &Path, revision: i64) -> bool {
        self.revision == revision && self.database == database
    }
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
    place_of: HashMap<i64, usize>,
}

impl FileTable {
    /// The table of `files`, given in path order.
    fn of(files: Vec<records::KeptFile>) -> FileTable {
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

    /// The places of the files of `ids`; ids the table does not hold are left out.
    fn places_of(&self, ids: &[i64]) -> FixedBitSet {
        let mut places = FixedBitSet::with_capacity(self.in_order.len());
        for place in ids.iter().filter_map(|id| self.place_of.get(id)) {
            places.insert(*place);
        }
        places
    }

    /// The files at `places` (every file when None), in path order.
    pub fn in_path_order<'t>(
        &'t self,
        places: Option<&'t FixedBitSet>,
    ) -> Box<dyn Iterator<Item = &'t records::KeptFile> + 't> {
        match places {
            Some(places) => Box::new(places.ones().filter_map(|at| self.in_order.get(at))),
            None => Box::new(self.in_order.iter()),
        }
    }
}

/// The table of the files indexed at `revision` of the database at `database`.
pub fn files(c: &Connection, database: &Path, revision: i64) -> Result<Arc<FileTable>, StoreError> {
    if let Some(files) = current(&mut lock(), database, revision).files.clone() {
        return Ok(files);
    }
    let files = Arc::new(FileTable::of(records::all_files(c)?));
    current(&mut lock(), database, revision).files = Some(files.clone());
    Ok(files)
}

/// The kept state for `database` at `revision`, started afresh when what
/// was kept belongs to another.
fn current<'k>(kept: &'k mut Option<Kept>, database: &Path, revision: i64) -> &'k mut Kept {
    if !kept.as_ref().is_some_and(|k| k.is_for(database, revision)) {
        *kept = None;
    }
    kept.get_or_insert_with(|| Kept {
        database: database.to_path_buf(),
        revision,
        bytes: 0,
        texts: HashMap::new(),
        files: None,
        token_set_bytes: 0,
        token_sets: HashMap::new(),
    })
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
    let known = lock()
        .as_ref()
        .filter(|k| k.is_for(database, revision))
        .and_then(|k| k.token_sets.get(token).cloned());
    if let Some(places) = known {
        return Ok(places);
    }
    let places = Arc::new(table.places_of(&records::files_with_token(c, token)?));
    let mut kept = lock();
    let kept = current(&mut kept, database, revision);
    let size = std::mem::size_of_val(places.as_slice()) + token.len();
    if kept.token_set_bytes + size > MAX_TOKEN_SET_BYTES {
        kept.token_sets.clear();
        kept.token_set_bytes = 0;
    }
    if kept
        .token_sets
        .insert(token.to_string(), places.clone())
        .is_none()
    {
        kept.token_set_bytes += size;
    }
    Ok(places)
}

static KEPT: Mutex<Option<Kept>> = Mutex::new(None);

/// File `id`'s text in the index at `revision` of the database at `database`.
pub fn text(
    c: &Connection,
    database: &Path,
    revision: i64,
    id: i64,
) -> Result<Option<Arc<FileText>>, StoreError> {
    if let Some(text) = kept(database, revision, id) {
        return Ok(Some(text));
    }
    let Some(text) = records::with_text(c, id, |text| Arc::new(FileText::of(text)))? else {
        return Ok(None);
    };
    keep(database, revision, id, &text);
    Ok(Some(text))
}

fn lock() -> std::sync::MutexGuard<'static, Option<Kept>> {
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn kept(database: &Path, revision: i64, id: i64) -> Option<Arc<FileText>> {
    let kept = lock();
    let kept = kept.as_ref().filter(|k| k.is_for(database, revision))?;
    kept.texts.get(&id).cloned()
}

fn keep(database: &Path, revision: i64, id: i64, text: &Arc<FileText>) {
    let size = text.bytes();
    if size > MAX_BYTES / 8 {
        return;
    }
    let mut kept = lock();
    let kept = current(&mut kept, database, revision);
    if kept.bytes + size > MAX_BYTES {
        kept.texts.clear();
        kept.bytes = 0;
    }
    if kept.texts.insert(id, text.clone()).is_none() {
        kept.bytes += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(id: i64, path: &str) -> records::KeptFile {
        records::KeptFile {
            id,
            path: path.into(),
            lang: "python".into(),
        }
    }

    #[test]
    fn a_file_table_gives_the_asked_files_in_path_order() {
        // as the database hands them: by path
        let table = FileTable::of(vec![file(7, "a.py"), file(3, "b/c.py"), file(9, "z.py")]);
        let paths = |places: Option<&FixedBitSet>| -> Vec<String> {
            table
                .in_path_order(places)
                .map(|f| f.path.clone())
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
            .insert(1, Arc::new(FileText::of("text")));
        assert!(current(&mut kept, here, 4).texts.contains_key(&1));
        assert!(
            current(&mut kept, here, 5).texts.is_empty(),
            "another revision"
        );
        current(&mut kept, here, 5)
            .texts
            .insert(1, Arc::new(FileText::of("text")));
        let elsewhere = Path::new("/nowhere/other.db");
        assert!(
            current(&mut kept, elsewhere, 5).texts.is_empty(),
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
