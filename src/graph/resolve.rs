//! Cross-file resolution: turns the references extraction recorded (calls,
//! bases, imports, links) into resolver edges and external nodes.
//!
//! Owns only those edges and nodes; it reads files, folders, headings, symbols
//! and import bindings that the indexer wrote, and never touches a file's own
//! nodes. Lookups run in memory: symbols are loaded by name (all at once on a
//! cold index), and each import is resolved once per importing folder.
//!
//! One file (about 700 lines): the lookups and the rules that use them form
//! one pass whose caches live for that pass only.

use rusqlite::{CachedStatement, Connection, OptionalExtension, params};

use super::bindings::{LIBRARY, PACKAGE, RELATIVE};
use super::extract::{IMPLICIT_SELF, TYPE_ITSELF, unmarked};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// One reference to resolve, with the file its source node is in.
pub(super) struct Reference {
    pub source: i64,
    pub kind: &'static str,
    pub name: String,
    pub file: Rc<str>,
    /// The module an import binding says the name comes from.
    pub module: Option<String>,
    /// The type of the object a call was made on, when the code said.
    pub receiver: Option<String>,
    /// The reference's row in `graph_references`, and whether it is marked
    /// unresolved there now.
    pub row: i64,
    pub marked_unresolved: bool,
}

/// The reference kinds resolution knows, as the static strings extraction uses.
const REFERENCE_KINDS: [&str; 6] = [
    "calls",
    "inherits_from",
    "implements",
    "uses_type",
    "imports",
    "links_to",
];

/// Reads references from a query selecting (source, kind, name, file, module,
/// receiver, rowid, unresolved).
pub(super) fn references(tx: &Connection, sql: &str) -> rusqlite::Result<Vec<Reference>> {
    let mut statement = tx.prepare(sql)?;
    let mut rows = statement.query([])?;
    let mut references = Vec::new();
    while let Some(row) = rows.next()? {
        let kind = row.get_ref(1)?.as_str()?;
        let Some(kind) = REFERENCE_KINDS.into_iter().find(|known| *known == kind) else {
            continue;
        };
        references.push(Reference {
            source: row.get(0)?,
            kind,
            name: row.get(2)?,
            file: Rc::from(row.get_ref(3)?.as_str_or_null()?.unwrap_or_default()),
            module: row.get(4)?,
            receiver: row.get(5)?,
            row: row.get(6)?,
            marked_unresolved: row.get(7)?,
        });
    }
    Ok(references)
}

/// Which symbols a pass loads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reach {
    /// All of them in one scan (a cold index resolves every reference).
    Everything,
    /// Each name when first asked for (an incremental run resolves a few).
    Named,
}

/// Writes the edges `references` resolve to, marks each reference resolved
/// or not, and returns the files whose references it resolved. The caller
/// has deleted the resolver edges these references made before.
pub(super) fn resolve(
    tx: &Connection,
    references: Vec<Reference>,
    reach: Reach,
) -> rusqlite::Result<HashSet<Rc<str>>> {
    let mut resolver = Resolver::new(tx, reach)?;
    let mut by_name = Vec::new();
    let mut by_path = Vec::new();
    let mut outcomes = Vec::with_capacity(references.len());
    // every bound edge first: a name-only match is not added beside one
    for reference in references {
        match reference.kind {
            "imports" | "links_to" => by_path.push(reference),
            "calls" if reference.receiver.as_deref().is_some_and(|r| !r.is_empty()) => {
                let resolved = resolver.through_receiver(&reference)?
                    || !implicit_self(&reference) && resolver.extension_function(&reference)?;
                if resolved || !implicit_self(&reference) {
                    outcomes.push((reference, resolved));
                } else {
                    by_name.push(reference);
                }
            }
            "calls" | "inherits_from" | "implements" | "uses_type" => {
                if resolver.through_binding(&reference)? {
                    outcomes.push((reference, true));
                } else {
                    by_name.push(reference);
                }
            }
            _ => outcomes.push((reference, false)),
        }
    }
    for reference in by_name {
        let resolved = resolver.by_name(&reference)?;
        outcomes.push((reference, resolved));
    }
    for reference in by_path {
        let resolved = resolver.by_path(&reference)?;
        outcomes.push((reference, resolved));
    }
    mark(tx, outcomes)
}

/// Marks each reference resolved or not where that changed; the files they
/// come from.
fn mark(tx: &Connection, outcomes: Vec<(Reference, bool)>) -> rusqlite::Result<HashSet<Rc<str>>> {
    let mut update =
        tx.prepare_cached("UPDATE graph_references SET unresolved = ?1 WHERE rowid = ?2")?;
    let mut files = HashSet::new();
    for (reference, resolved) in outcomes {
        if reference.marked_unresolved == resolved {
            update.execute(params![!resolved, reference.row])?;
        }
        files.insert(reference.file);
    }
    Ok(files)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SymbolKind {
    Function,
    Method,
    Class,
    Interface,
    /// Read only to find the file an import of it names.
    Variable,
}

impl SymbolKind {
    fn parse(kind: &str) -> Option<SymbolKind> {
        match kind {
            "function" => Some(SymbolKind::Function),
            "method" => Some(SymbolKind::Method),
            "class" => Some(SymbolKind::Class),
            "interface" => Some(SymbolKind::Interface),
            "variable" => Some(SymbolKind::Variable),
            _ => None,
        }
    }

    /// What a reference of `kind` may name when matched by name only.
    fn named_by(self, kind: &str) -> bool {
        match kind {
            "calls" => matches!(self, SymbolKind::Function | SymbolKind::Method),
            _ => matches!(self, SymbolKind::Class | SymbolKind::Interface),
        }
    }

    /// What a reference of `kind` may name through an import (a call may construct a class).
    fn bound_by(self, kind: &str) -> bool {
        self.named_by(kind) || (kind == "calls" && self == SymbolKind::Class)
    }
}

/// A function, method, class, interface or variable.
struct Symbol {
    id: i64,
    kind: SymbolKind,
    file: String,
    /// The uid's part after `::` (`Model.save`).
    qualname: String,
}

const SYMBOL_KINDS: &str = "('function', 'method', 'class', 'interface', 'variable')";

/// Symbols by label, sorted by file so a file's symbols are one slice.
struct Symbols<'a> {
    by_label: HashMap<String, Vec<Symbol>>,
    /// Set when only some labels are loaded: reads one label's symbols.
    lookup: Option<CachedStatement<'a>>,
}

impl<'a> Symbols<'a> {
    fn load(tx: &'a Connection, reach: Reach) -> rusqlite::Result<Symbols<'a>> {
        let mut symbols = Symbols {
            by_label: HashMap::new(),
            lookup: None,
        };
        if reach == Reach::Named {
            symbols.lookup = Some(tx.prepare_cached(&format!(
                "SELECT id, kind, file, uid, label FROM graph_nodes WHERE label = ?1 AND kind IN {SYMBOL_KINDS}"
            ))?);
            return Ok(symbols);
        }
        let mut statement = tx.prepare(&format!(
            "SELECT id, kind, file, uid, label FROM graph_nodes WHERE kind IN {SYMBOL_KINDS}"
        ))?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            if let Some((label, symbol)) = symbol_of(row)? {
                symbols.by_label.entry(label).or_default().push(symbol);
            }
        }
        for list in symbols.by_label.values_mut() {
            list.sort_by(|a, b| a.file.cmp(&b.file).then(a.id.cmp(&b.id)));
        }
        Ok(symbols)
    }

    /// Every symbol called `label`.
    fn named(&mut self, label: &str) -> rusqlite::Result<&[Symbol]> {
        if let Some(lookup) = self.lookup.as_mut()
            && !self.by_label.contains_key(label)
        {
            let mut list = Vec::new();
            let mut rows = lookup.query([label])?;
            while let Some(row) = rows.next()? {
                if let Some((_, symbol)) = symbol_of(row)? {
                    list.push(symbol);
                }
            }
            list.sort_by(|a, b| a.file.cmp(&b.file).then(a.id.cmp(&b.id)));
            self.by_label.insert(label.to_string(), list);
        }
        Ok(self.by_label.get(label).map_or(&[], Vec::as_slice))
    }

    /// The symbols called `label` in `file`.
    fn named_in(&mut self, label: &str, file: &str) -> rusqlite::Result<&[Symbol]> {
        let all = self.named(label)?;
        let start = all.partition_point(|symbol| symbol.file.as_str() < file);
        let end = start + all[start..].partition_point(|symbol| symbol.file == file);
        Ok(&all[start..end])
    }
}

/// (label, symbol) from a row of (id, kind, file, uid, label).
fn symbol_of(row: &rusqlite::Row) -> rusqlite::Result<Option<(String, Symbol)>> {
    let Some(kind) = SymbolKind::parse(row.get_ref(1)?.as_str()?) else {
        return Ok(None);
    };
    let file: String = row.get::<_, Option<String>>(2)?.unwrap_or_default();
    let uid: String = row.get(3)?;
    let qualname = uid
        .split_once("::")
        .map_or(String::new(), |(_, qualname)| qualname.to_string());
    Ok(Some((
        row.get(4)?,
        Symbol {
            id: row.get(0)?,
            kind,
            file,
            qualname,
        },
    )))
}

/// Where a bound reference is looked for: a name in a module's file.
struct Lead {
    file: String,
    name: String,
    /// The module's last segment: a `Type.method` qualname may start with it.
    member: String,
}

struct Resolver<'a> {
    tx: &'a Connection,
    places: Places,
    symbols: Symbols<'a>,
    /// Import targets by (importing folder, module): many references share both.
    targets: HashMap<(String, String), Rc<ImportTarget>>,
    /// Python modules found under a source root, by module (see `under_source_roots`).
    source_roots: HashMap<String, Vec<String>>,
    externals: HashMap<String, i64>,
    /// (source, kind, target label) of the edges made so far: a name-only match
    /// is not added beside a better one.
    made: HashSet<(i64, &'static str, String)>,
    insert_edge: CachedStatement<'a>,
    binding: CachedStatement<'a>,
    /// Which types name which bases, read once when a typed call first asks.
    hierarchy: Option<Hierarchy>,
}

/// The bases every type names, and the types naming each base, by label.
#[derive(Default)]
struct Hierarchy {
    bases: HashMap<String, Vec<(String, Option<String>)>>,
    subtypes: HashMap<String, Vec<String>>,
}

impl Hierarchy {
    fn load(tx: &Connection) -> rusqlite::Result<Hierarchy> {
        let mut hierarchy = Hierarchy::default();
        let mut statement = tx.prepare(
            "SELECT n.label, r.name, r.module FROM graph_references r JOIN graph_nodes n ON n.id = r.source
             WHERE r.kind IN ('inherits_from', 'implements') AND n.kind IN ('class', 'interface')",
        )?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            let (label, base): (String, String) = (row.get(0)?, row.get(1)?);
            let subtypes = hierarchy.subtypes.entry(base.clone()).or_default();
            if !subtypes.contains(&label) {
                subtypes.push(label.clone());
            }
            hierarchy
                .bases
                .entry(label)
                .or_default()
                .push((base, row.get(2)?));
        }
        Ok(hierarchy)
    }
}

impl<'a> Resolver<'a> {
    fn new(tx: &'a Connection, reach: Reach) -> rusqlite::Result<Resolver<'a>> {
        Ok(Resolver {
            tx,
            places: Places::load(tx)?,
            symbols: Symbols::load(tx, reach)?,
            targets: HashMap::new(),
            source_roots: HashMap::new(),
            externals: HashMap::new(),
            made: HashSet::new(),
            insert_edge: tx.prepare_cached(
                "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
                 VALUES (?1, ?2, ?3, 'resolver', ?4)",
            )?,
            binding: tx.prepare_cached(
                "SELECT module, symbol FROM graph_bindings WHERE file = ?1 AND local = ?2 LIMIT 1",
            )?,
            hierarchy: None,
        })
    }

    fn edge(
        &mut self,
        source: i64,
        target: i64,
        kind: &str,
        confidence: &str,
    ) -> rusqlite::Result<()> {
        self.insert_edge
            .execute(params![source, target, kind, confidence])?;
        Ok(())
    }

    fn import_target(
        &mut self,
        module: &str,
        from_file: &str,
    ) -> rusqlite::Result<Rc<ImportTarget>> {
        let folder = folder_of(from_file);
        let key = (folder.to_string(), module.to_string());
        if let Some(found) = self.targets.get(&key) {
            return Ok(found.clone());
        }
        let mut found = import_target(module, from_file, &self.places);
        if found.0.is_none()
            && let Some(path) = module.strip_prefix(PACKAGE)
            && let Some(file) = self.member_file(path)?
        {
            found.0 = Some(Place::File(file));
        }
        if found.0.is_none() && from_file.ends_with(".py") && !module.starts_with('.') {
            found.0 = self.under_source_root(module, from_file).map(Place::File);
        }
        let found = Rc::new(found);
        self.targets.insert(key, found.clone());
        Ok(found)
    }

    /// A Python module under a source root, nearest to the importing file
    /// (the candidates read once a module, not once a folder importing it).
    fn under_source_root(&mut self, module: &str, from_file: &str) -> Option<String> {
        let places = &self.places;
        let candidates = self
            .source_roots
            .entry(module.to_string())
            .or_insert_with(|| under_source_roots(module, places));
        nearest_path(candidates.iter(), from_file).cloned()
    }

    /// `okhttp3.internal.http.HTTP_CONTINUE` when source sets share the
    /// package's folder names: the one file that declares the member at its
    /// top level in a folder whose path ends in the package's.
    fn member_file(&mut self, path: &str) -> rusqlite::Result<Option<String>> {
        let Some((package, member)) = path.rsplit_once('.') else {
            return Ok(None);
        };
        let ending = package.replace('.', "/");
        let files: HashSet<&str> = self
            .symbols
            .named(member)?
            .iter()
            .filter(|symbol| {
                let folder = folder_of(&symbol.file);
                symbol.qualname == member
                    && (folder == ending || folder.ends_with(&format!("/{ending}")))
            })
            .map(|symbol| symbol.file.as_str())
            .collect();
        Ok(match files.len() {
            1 => files.into_iter().next().map(str::to_string),
            _ => None,
        })
    }

    /// The row id of the external node standing for module `top`, made on first use.
    fn external_node(&mut self, top: &str) -> rusqlite::Result<i64> {
        if let Some(id) = self.externals.get(top) {
            return Ok(*id);
        }
        let id = self
            .tx
            .prepare_cached(
                "INSERT INTO graph_nodes(uid, kind, label, file) VALUES (?1, 'external', ?2, NULL)
                 ON CONFLICT(uid) DO UPDATE SET label = excluded.label RETURNING id",
            )?
            .query_row(params![format!("code:external:{top}"), top], |row| {
                row.get(0)
            })?;
        self.externals.insert(top.to_string(), id);
        Ok(id)
    }

    /// A call or base made through an import binding: the bound symbol in the
    /// bound module's file (following re-exports), with confidence `resolved`;
    /// a module outside the repository gets an edge to its external node.
    /// False when the reference is left to name matching.
    fn through_binding(&mut self, reference: &Reference) -> rusqlite::Result<bool> {
        let Some(module) = &reference.module else {
            return Ok(false);
        };
        let member = member_of(module).to_string();
        let leads: Vec<Lead> = match &*self.import_target(module, &reference.file)? {
            (Some(Place::File(file)), _) => vec![Lead {
                file: file.clone(),
                name: reference.name.clone(),
                member,
            }],
            (Some(Place::Folder(folder)), _) => self
                .places
                .files_by_folder
                .get(folder)
                .into_iter()
                .flatten()
                .map(|file| Lead {
                    file: file.clone(),
                    name: reference.name.clone(),
                    member: String::new(),
                })
                .collect(),
            (None, top) if is_external(top, module) => {
                let target = self.external_node(top)?;
                self.edge(reference.source, target, reference.kind, "external")?;
                return Ok(true);
            }
            (None, _) => return Ok(false),
        };
        let mut resolved = false;
        for lead in leads {
            match self.follow(lead, reference.kind)? {
                Some(Followed::Symbol(target, label)) => {
                    resolved = true;
                    if target != reference.source {
                        self.edge(reference.source, target, reference.kind, "resolved")?;
                        self.made.insert((reference.source, reference.kind, label));
                    }
                }
                Some(Followed::External(top)) => {
                    resolved = true;
                    let target = self.external_node(&top)?;
                    self.edge(reference.source, target, reference.kind, "external")?;
                }
                Some(Followed::Lead(_)) | None => {}
            }
        }
        Ok(resolved)
    }

    /// A call through an object of a known type: that type's method of the
    /// name, else the method its bases give it (up to MAX_BASE_HOPS levels).
    /// A known type without such a method gets no edge: another type's
    /// method of the same name is never a guess for it.
    fn through_receiver(&mut self, reference: &Reference) -> rusqlite::Result<bool> {
        let Some(receiver) = reference.receiver.as_deref() else {
            return Ok(false);
        };
        let on_the_type = receiver.starts_with(TYPE_ITSELF);
        let receiver = unmarked(receiver);
        let mut level = vec![(receiver.to_string(), reference.module.clone())];
        let mut seen = HashSet::new();
        for _ in 0..=MAX_BASE_HOPS {
            let mut next = Vec::new();
            for (type_name, module) in level {
                let type_name = type_name
                    .rsplit('.')
                    .next()
                    .unwrap_or(&type_name)
                    .to_string();
                if !seen.insert(type_name.clone()) {
                    continue;
                }
                if let Some(target) = self.method_of(&type_name, module.as_deref(), reference)? {
                    if target != reference.source {
                        self.edge(reference.source, target, "calls", "resolved")?;
                        self.made
                            .insert((reference.source, "calls", reference.name.clone()));
                    }
                    // a call on the type itself runs its own method, no override
                    if !on_the_type {
                        let declared = receiver.rsplit('.').next().unwrap_or(receiver);
                        self.dispatch(declared, reference)?;
                    }
                    return Ok(true);
                }
                next.extend(self.bases_of(&type_name)?);
            }
            if next.is_empty() {
                break;
            }
            level = next;
        }
        Ok(false)
    }

    /// The method `reference.name` of the type `type_name`: in the file or
    /// package the type's import leads to, else in the calling file, its
    /// folder, then the repository, taking a place only when it holds one.
    fn method_of(
        &mut self,
        type_name: &str,
        module: Option<&str>,
        reference: &Reference,
    ) -> rusqlite::Result<Option<i64>> {
        let suffix = format!(".{type_name}.{}", reference.name);
        let own = &suffix[1..];
        let methods: Vec<(i64, String)> = self
            .symbols
            .named(&reference.name)?
            .iter()
            .filter(|symbol| {
                matches!(symbol.kind, SymbolKind::Method | SymbolKind::Function)
                    && (symbol.qualname == own || symbol.qualname.ends_with(&suffix))
                    && same_family(&symbol.file, &reference.file)
            })
            .map(|symbol| (symbol.id, symbol.file.clone()))
            .collect();
        if methods.is_empty() {
            return Ok(None);
        }
        if let Some(module) = module {
            let files: Vec<String> = match &*self.import_target(module, &reference.file)? {
                (Some(Place::File(file)), _) => vec![file.clone()],
                (Some(Place::Folder(folder)), _) => self
                    .places
                    .files_by_folder
                    .get(folder)
                    .cloned()
                    .unwrap_or_default(),
                // the type is a library's (`io.WebSocket` of `dart:io`): none of
                // the repository's, whatever their names
                (None, top) if module.starts_with(LIBRARY) && is_external(top, module) => {
                    return Ok(None);
                }
                (None, _) => Vec::new(),
            };
            let found: Vec<i64> = methods
                .iter()
                .filter(|(_, file)| files.contains(file))
                .map(|(id, _)| *id)
                .collect();
            if let [one] = found.as_slice() {
                return Ok(Some(*one));
            }
            if !found.is_empty() {
                return Ok(None);
            }
        }
        Ok(nearest(&methods, &reference.file))
    }

    fn hierarchy(&mut self) -> rusqlite::Result<&Hierarchy> {
        if self.hierarchy.is_none() {
            self.hierarchy = Some(Hierarchy::load(self.tx)?);
        }
        Ok(self.hierarchy.get_or_insert_with(Hierarchy::default))
    }

    /// The bases a type named `type_name` declares, each with the module
    /// its import names.
    fn bases_of(&mut self, type_name: &str) -> rusqlite::Result<Vec<(String, Option<String>)>> {
        Ok(self
            .hierarchy()?
            .bases
            .get(type_name)
            .cloned()
            .unwrap_or_default())
    }

    /// A call through `type_name` may run an override in any type below
    /// it: `dispatch` edges to the methods of that name of its subtypes (up
    /// to MAX_BASE_HOPS levels down, at most MAX_DISPATCH of them).
    fn dispatch(&mut self, type_name: &str, reference: &Reference) -> rusqlite::Result<()> {
        let mut level = vec![type_name.to_string()];
        let mut seen: HashSet<String> = level.iter().cloned().collect();
        let mut made = 0;
        for _ in 0..MAX_BASE_HOPS {
            let below: Vec<String> = level
                .iter()
                .flat_map(|t| self.hierarchy().map(|h| h.subtypes.get(t).cloned()))
                .flatten()
                .flatten()
                .filter(|t| seen.insert(t.clone()))
                .collect();
            for subtype in &below {
                let suffix = format!(".{subtype}.{}", reference.name);
                let overrides: Vec<i64> = self
                    .symbols
                    .named(&reference.name)?
                    .iter()
                    .filter(|symbol| {
                        symbol.kind == SymbolKind::Method
                            && (symbol.qualname == suffix[1..]
                                || symbol.qualname.ends_with(&suffix))
                            && same_family(&symbol.file, &reference.file)
                    })
                    .map(|symbol| symbol.id)
                    .collect();
                for target in overrides {
                    if made == MAX_DISPATCH {
                        return Ok(());
                    }
                    if target != reference.source {
                        self.edge(reference.source, target, "calls", "dispatch")?;
                        made += 1;
                    }
                }
            }
            if below.is_empty() {
                break;
            }
            level = below;
        }
        Ok(())
    }

    /// The symbol a lead names, following up to MAX_REEXPORT_HOPS re-exports
    /// (its id and label), or the library outside a re-export leads to.
    fn follow(&mut self, mut lead: Lead, kind: &str) -> rusqlite::Result<Option<Followed>> {
        for hop in 0..=MAX_REEXPORT_HOPS {
            if let Some(target) = self.bound_symbol(&lead, kind)? {
                return Ok(Some(Followed::Symbol(target, lead.name)));
            }
            if hop == MAX_REEXPORT_HOPS {
                break;
            }
            match self.reexport(&lead)? {
                Some(Followed::Lead(next)) => lead = next,
                other => return Ok(other),
            }
        }
        Ok(None)
    }

    /// The symbol `lead.name` in `lead.file`: a top-level one or a method of
    /// the module's type first, else the only fitting symbol of that name there.
    fn bound_symbol(&mut self, lead: &Lead, kind: &str) -> rusqlite::Result<Option<i64>> {
        let in_file = self.symbols.named_in(&lead.name, &lead.file)?;
        let fitting = || in_file.iter().filter(|symbol| symbol.kind.bound_by(kind));
        let method_of_member = |symbol: &Symbol| {
            symbol
                .qualname
                .strip_suffix(lead.name.as_str())
                .and_then(|rest| rest.strip_suffix('.'))
                == Some(lead.member.as_str())
        };
        let exact = fitting()
            .filter(|symbol| match symbol.kind {
                SymbolKind::Method => method_of_member(symbol),
                _ => symbol.qualname == lead.name,
            })
            .min_by_key(|symbol| symbol.kind == SymbolKind::Method);
        if let Some(symbol) = exact {
            return Ok(Some(symbol.id));
        }
        let mut candidates = fitting();
        Ok(match (candidates.next(), candidates.next()) {
            (Some(only), None) => Some(only.id),
            _ => None,
        })
    }

    /// The file of `folder` that declares the top-level symbol an import of
    /// a package's member names (`import okhttp3.internal.http.HTTP_CONTINUE`,
    /// `import static a.b.Util.helper`): one file, or none.
    fn declaring_file(&mut self, name: &str, folder: &str) -> rusqlite::Result<Option<i64>> {
        let member = name.rsplit(['.', '\\', '/', ':']).next().unwrap_or(name);
        let mut files = self
            .symbols
            .named(member)?
            .iter()
            .filter(|symbol| symbol.qualname == member && folder_of(&symbol.file) == folder)
            .map(|symbol| symbol.file.clone());
        let (Some(first), rest) = (files.next(), files.collect::<HashSet<String>>()) else {
            return Ok(None);
        };
        if rest.iter().any(|file| *file != first) {
            return Ok(None);
        }
        Ok(self.places.files.get(&first).copied())
    }

    /// Kotlin's `value.toHttpDateOrNull()` with no import of it, on an object
    /// of unknown type or of a type without that method: an extension
    /// function of the calling file or its package's folder, when one
    /// function there has the name (a method is never a candidate).
    fn extension_function(&mut self, reference: &Reference) -> rusqlite::Result<bool> {
        let kotlin =
            super::facts::Language::of(&reference.file) == Some(super::facts::Language::Kotlin);
        let on_an_object = reference
            .receiver
            .as_deref()
            .is_some_and(|r| unmarked(r) == r);
        if !kotlin || !on_an_object {
            return Ok(false);
        }
        let folder = folder_of(&reference.file);
        let beside: Vec<(i64, String)> = self
            .symbols
            .named(&reference.name)?
            .iter()
            .filter(|symbol| {
                symbol.kind == SymbolKind::Function
                    && folder_of(&symbol.file) == folder
                    && symbol.id != reference.source
            })
            .map(|symbol| (symbol.id, symbol.file.clone()))
            .collect();
        let Some(target) = nearest(&beside, &reference.file) else {
            return Ok(false);
        };
        self.edge(reference.source, target, "calls", "name")?;
        Ok(true)
    }

    /// Where the lead goes when its file re-exports the name from another
    /// module: a lead in that module's file, or the library it is outside.
    fn reexport(&mut self, lead: &Lead) -> rusqlite::Result<Option<Followed>> {
        let Some(file_id) = self.places.files.get(&lead.file).copied() else {
            return Ok(None);
        };
        let found: Option<(String, Option<String>)> = self
            .binding
            .query_row(params![file_id, lead.name], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()?;
        let Some((module, symbol)) = found else {
            return Ok(None);
        };
        Ok(match &*self.import_target(&module, &lead.file)? {
            (Some(Place::File(next)), _) if *next != lead.file => Some(Followed::Lead(Lead {
                file: next.clone(),
                name: symbol.unwrap_or_else(|| lead.name.clone()),
                member: member_of(&module).to_string(),
            })),
            (None, top) if is_external(top, &module) => Some(Followed::External(top.clone())),
            _ => None,
        })
    }

    /// A call or base by name: the symbols of that name in the same file, else
    /// the only one in the repository (confidence `name`).
    fn by_name(&mut self, reference: &Reference) -> rusqlite::Result<bool> {
        let kind = reference.kind;
        // `thing.total()` on an object of unknown type names no method
        // for sure, however few have that name: it stays unresolved
        let key = (reference.source, kind, reference.name.clone());
        let implicit = implicit_self(reference);
        if reference.receiver.is_some() && !implicit {
            if self.made.contains(&key) {
                return Ok(true);
            }
            return self.extension_function(reference);
        }
        // a bare `helper()` runs a method only where a method body names its
        // type's members without `self`/`this` (or Ruby's implicit self)
        let methods_too = kind != "calls" || bare_calls_reach_methods(&reference.file) && !implicit;
        let fits = |symbol: &Symbol| {
            symbol.kind.named_by(kind)
                && (methods_too || symbol.kind != SymbolKind::Method)
                && symbol.id != reference.source
        };
        let in_file = self.symbols.named_in(&reference.name, &reference.file)?;
        let calls_itself = in_file.iter().any(|symbol| symbol.id == reference.source);
        let same_file: Vec<i64> = in_file
            .iter()
            .filter(|symbol| fits(symbol))
            .map(|symbol| symbol.id)
            .collect();
        // a function calling itself by name, with no other of that name beside it
        if calls_itself && same_file.is_empty() {
            return Ok(true);
        }
        for target in &same_file {
            self.edge(reference.source, *target, kind, "resolved")?;
        }
        if !same_file.is_empty() {
            self.made.insert(key);
            return Ok(true);
        }
        if self.made.contains(&key) {
            return Ok(true);
        }
        let everywhere = self.symbols.named(&reference.name)?;
        // the one of that name beside the caller (its package, in Go and
        // the JVM's languages), else the one in the repository
        let fitting: Vec<(i64, String)> = everywhere
            .iter()
            .filter(|symbol| fits(symbol) && same_family(&symbol.file, &reference.file))
            .map(|symbol| (symbol.id, symbol.file.clone()))
            .collect();
        if let Some(target) = nearest(&fitting, &reference.file) {
            self.edge(reference.source, target, kind, "name")?;
            self.made.insert(key);
            return Ok(true);
        }
        // `Cart()`, `new Cart()`: a call naming a type, where no callable
        // has its name, constructs the only type of that name
        let constructs = kind == "calls"
            && reference
                .name
                .chars()
                .next()
                .is_some_and(char::is_uppercase)
            && !everywhere.iter().any(|symbol| symbol.kind.named_by(kind));
        if constructs {
            let types: Vec<(i64, String)> = everywhere
                .iter()
                .filter(|symbol| {
                    symbol.kind == SymbolKind::Class && same_family(&symbol.file, &reference.file)
                })
                .map(|symbol| (symbol.id, symbol.file.clone()))
                .collect();
            if let Some(target) = nearest(&types, &reference.file) {
                self.edge(reference.source, target, kind, "name")?;
                self.made.insert(key);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Imports (module paths) to files, Go package folders or external nodes;
    /// Markdown links (relative paths) to files and headings.
    fn by_path(&mut self, reference: &Reference) -> rusqlite::Result<bool> {
        let (source, name, from_file) = (reference.source, &reference.name, &reference.file);
        if reference.kind == "links_to" {
            let (target_path, anchor) = name
                .split_once('#')
                .map_or((name.as_str(), None), |(p, a)| (p, Some(a)));
            let resolved = if target_path.is_empty() {
                from_file.to_string()
            } else {
                join_relative(from_file, target_path)
            };
            let heading = anchor
                .and_then(|a| {
                    self.places
                        .headings
                        .get(&format!("doc:heading:{resolved}#{a}"))
                })
                .copied();
            let file = self.places.files.get(&resolved).copied();
            match (heading, file) {
                (Some(target), _) => self.edge(source, target, "cites_heading", "resolved")?,
                (None, Some(target)) => self.edge(source, target, "links_to", "resolved")?,
                (None, None) => return Ok(false),
            }
            return Ok(true);
        }
        // the same (folder, module) lookup bound calls made, kept in `targets`
        let found = self.import_target(name, from_file)?;
        let (resolved, top) = &*found;
        let target = match resolved {
            Some(Place::File(path)) => self.places.files.get(path).copied(),
            Some(Place::Folder(path)) => match self.declaring_file(name, path)? {
                Some(file) => Some(file),
                None => self.places.folders.get(path).copied(),
            },
            None => None,
        };
        match target {
            Some(target) if target != source => {
                self.edge(source, target, "imports", "resolved")?;
            }
            Some(_) => {}
            // a relative import that finds no file is broken, not a package from elsewhere
            None if !is_external(top, name) => return Ok(false),
            None => {
                let target = self.external_node(top)?;
                self.edge(source, target, "imports", "external")?;
            }
        }
        Ok(true)
    }
}

/// The repository's files, folders and headings by path, for resolving imports and links.
struct Places {
    files: HashMap<String, i64>,
    folders: HashMap<String, i64>,
    headings: HashMap<String, i64>,
    /// Files directly inside each folder (a Go import names a folder).
    files_by_folder: HashMap<String, Vec<String>>,
    /// Files and folders by the dotted endings of their paths, built when a
    /// package import first asks.
    dotted: std::cell::OnceCell<HashMap<String, Option<Place>>>,
    /// Files by their names, built when an include or library import first asks.
    by_name: std::cell::OnceCell<HashMap<String, Vec<String>>>,
}

impl Places {
    fn load(tx: &Connection) -> rusqlite::Result<Places> {
        let pairs = |sql: &str| -> rusqlite::Result<HashMap<String, i64>> {
            let mut statement = tx.prepare(sql)?;
            let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect()
        };
        // by uid (an index), not by kind (a scan of every node)
        let files = pairs(
            "SELECT f.path, n.id FROM graph_files f JOIN graph_nodes n
             ON n.uid = (CASE f.language WHEN 'markdown' THEN 'doc:file:' ELSE 'code:file:' END) || f.path",
        )?;
        let mut files_by_folder: HashMap<String, Vec<String>> = HashMap::new();
        for path in files.keys() {
            let folder = folder_of(path);
            files_by_folder
                .entry(folder.to_string())
                .or_default()
                .push(path.clone());
        }
        Ok(Places {
            files,
            folders: pairs(
                "SELECT substr(uid, 8), id FROM graph_nodes WHERE uid >= 'folder:' AND uid < 'folder;'",
            )?,
            headings: pairs(
                "SELECT uid, id FROM graph_nodes WHERE uid >= 'doc:heading:' AND uid < 'doc:heading;'",
            )?,
            files_by_folder,
            dotted: Default::default(),
            by_name: Default::default(),
        })
    }

    /// `com.shop.model.Cart` → `src/main/java/com/shop/model/Cart.java`, and
    /// `com.shop.model` → its folder: every dotted ending of every code file
    /// (extension dropped) and folder; an ending two places share is neither's.
    fn dotted(&self) -> &HashMap<String, Option<Place>> {
        self.dotted.get_or_init(|| {
            let mut dotted: HashMap<String, Option<Place>> = HashMap::new();
            let mut add = |path: &str, place: fn(String) -> Place, full: &str| {
                let segments: Vec<&str> = path.split('/').collect();
                for start in 0..segments.len() {
                    let key = segments[start..].join(".");
                    dotted
                        .entry(key)
                        .and_modify(|found| {
                            if !matches!(found, Some(p) if p.path() == full) {
                                *found = None
                            }
                        })
                        .or_insert_with(|| Some(place(full.to_string())));
                }
            };
            for path in self.files.keys() {
                if let Some((stem, _)) = path.rsplit_once('.')
                    && !path.ends_with(".md")
                {
                    add(stem, Place::File, path);
                }
            }
            for folder in self.folders.keys().filter(|f| !f.is_empty()) {
                add(folder, Place::Folder, folder);
            }
            dotted
        })
    }

    /// The files called `name`.
    fn named(&self, name: &str) -> &[String] {
        let by_name = self.by_name.get_or_init(|| {
            let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
            for path in self.files.keys() {
                let name = path.rsplit('/').next().unwrap_or(path);
                by_name
                    .entry(name.to_string())
                    .or_default()
                    .push(path.clone());
            }
            by_name
        });
        by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The file whose path ends in `/ending` (or is `ending`), nearest to
    /// `from_file` when several do.
    fn ending_in(&self, ending: &str, from_file: &str) -> Option<String> {
        let name = ending.rsplit('/').next().unwrap_or(ending);
        let paths = self.named(name).iter();
        let ending_here =
            paths.filter(|path| *path == ending || path.ends_with(&format!("/{ending}")));
        nearest_path(ending_here, from_file).cloned()
    }
}

/// What following a name through imports and re-exports found.
enum Followed {
    /// A symbol in the repository: its id and label.
    Symbol(i64, String),
    /// A module of the repository to look in next.
    Lead(Lead),
    /// A library outside the repository, by its top-level name.
    External(String),
}

/// Where an import leads (see `import_target`).
type ImportTarget = (Option<Place>, String);

/// What an import names inside the repository.
#[derive(Clone)]
enum Place {
    File(String),
    /// A Go package, or a package or namespace of the languages that name one.
    Folder(String),
}

impl Place {
    fn path(&self) -> &str {
        match self {
            Place::File(path) | Place::Folder(path) => path,
        }
    }
}

/// True when code in one file can call code in the other: the same language,
/// or languages that share their runtime (TypeScript and JavaScript, C and
/// C++, the JVM's).
fn same_family(a: &str, b: &str) -> bool {
    use super::facts::Language::*;
    let family = |path: &str| match super::facts::Language::of(path) {
        Some(TypeScript | Tsx | JavaScript) => Some(TypeScript),
        Some(C | Cpp) => Some(C),
        Some(Java | Kotlin | Scala) => Some(Java),
        other => other,
    };
    family(a) == family(b)
}

/// A bare call in a method of a language that names members bare: its own
/// type's method when there is one, else a function of that name.
fn implicit_self(reference: &Reference) -> bool {
    reference
        .receiver
        .as_deref()
        .is_some_and(|r| r.starts_with(IMPLICIT_SELF))
}

/// True when a bare call in this file, made with no receiver marked, may run
/// a method: Ruby's implicit self. The languages that name members bare mark
/// a bare call inside a type with its implicit `this` (`IMPLICIT_SELF`), so
/// theirs unmarked are made outside any type and run functions only.
fn bare_calls_reach_methods(path: &str) -> bool {
    super::facts::Language::of(path) == Some(super::facts::Language::Ruby)
}

/// The folder a repository path is in (`""` at the root).
fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The path sharing the most leading folders with `from_file`, the shortest
/// among equals.
fn nearest_path<'p>(
    paths: impl Iterator<Item = &'p String>,
    from_file: &str,
) -> Option<&'p String> {
    let shared = |path: &str| {
        path.split('/')
            .zip(from_file.split('/'))
            .take_while(|(a, b)| a == b)
            .count()
    };
    paths.max_by_key(|path| (shared(path), std::cmp::Reverse(path.len())))
}

/// The one candidate (id, file) in the calling file, else in its folder,
/// else in the repository; none when the nearest place holds several.
fn nearest(candidates: &[(i64, String)], from_file: &str) -> Option<i64> {
    let own_folder = folder_of(from_file);
    let tiers: [&dyn Fn(&str) -> bool; 3] = [
        &|file: &str| file == from_file,
        &|file: &str| folder_of(file) == own_folder,
        &|_: &str| true,
    ];
    for in_tier in tiers {
        let mut found = candidates.iter().filter(|(_, file)| in_tier(file));
        match (found.next(), found.next()) {
            (Some((id, _)), None) => return Some(*id),
            (Some(_), Some(_)) => return None,
            _ => {}
        }
    }
    None
}

/// How many levels of bases a typed call looks through for an inherited
/// method (and of subtypes for an override it may run).
const MAX_BASE_HOPS: usize = 4;
/// Overrides a call through a base type is linked to at most.
const MAX_DISPATCH: usize = 32;

/// How many re-exports (`from .base import Model` in a package's `__init__`) a
/// bound reference follows before giving up.
const MAX_REEXPORT_HOPS: usize = 3;

/// The last segment of a module path (`app.models` → `models`, `./api` → `api`):
/// the type a `Type.method` qualname may start with.
fn member_of(module: &str) -> &str {
    module.rsplit(['.', '/']).next().unwrap_or("")
}

/// A module name that can only be outside the repository (not relative, not Rust's own paths).
fn is_external(top: &str, module: &str) -> bool {
    !top.is_empty() && !module.starts_with('.') && !matches!(top, "crate" | "self" | "super")
}

/// `a/b/c.md` + `../d.md` → `a/d.md`.
fn join_relative(from_file: &str, target: &str) -> String {
    let mut parts: Vec<&str> = from_file.split('/').collect();
    parts.pop();
    for segment in target.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

const SCRIPT_EXTENSIONS: &[&str] = &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"];

/// Single-file components import as scripts do; bundlers need their own
/// extension written out, so none is tried on an import.
const COMPONENT_EXTENSIONS: &[&str] = &["vue", "svelte"];

/// What an import names, by the importing file's language: the file or Go
/// package folder it resolves to, if any, and the name of the external module otherwise.
fn import_target(name: &str, from_file: &str, places: &Places) -> ImportTarget {
    if let Some(path) = name.strip_prefix(PACKAGE) {
        return package_target(path, places);
    }
    if let Some(path) = name.strip_prefix(RELATIVE) {
        let extension = from_file.rsplit('.').next().unwrap_or("");
        let base = join_relative(from_file, path);
        let found = [String::new(), format!(".{extension}")]
            .iter()
            .map(|suffix| format!("{base}{suffix}"))
            .find(|candidate| places.files.contains_key(candidate))
            .or_else(|| places.ending_in(path.trim_start_matches("./"), from_file))
            .map(Place::File);
        return (found, String::new());
    }
    if let Some(path) = name.strip_prefix(LIBRARY) {
        let extension = from_file.rsplit('.').next().unwrap_or("");
        let found = places
            .ending_in(path, from_file)
            .or_else(|| places.ending_in(&format!("{path}.{extension}"), from_file))
            .map(Place::File);
        let top = path.split('/').next().unwrap_or(path).to_string();
        return (found, top);
    }
    if let Some(path) = name.strip_prefix("go:") {
        // Go imports a package: the folder whose path ends the import path.
        let segments: Vec<&str> = path.split('/').collect();
        let found = (0..segments.len()).find_map(|start| {
            let folder = segments[start..].join("/");
            places
                .folders
                .contains_key(&folder)
                .then_some(Place::Folder(folder))
        });
        return (found, path.to_string());
    }
    let extension = from_file.rsplit('.').next().unwrap_or("");
    if SCRIPT_EXTENSIONS.contains(&extension) || COMPONENT_EXTENSIONS.contains(&extension) {
        if name.starts_with('.') || name.starts_with('/') {
            let base = join_relative(from_file, name);
            let mut candidates = vec![base.clone()];
            candidates.extend(SCRIPT_EXTENSIONS.iter().map(|ext| format!("{base}.{ext}")));
            candidates.extend(
                SCRIPT_EXTENSIONS
                    .iter()
                    .map(|ext| format!("{base}/index.{ext}")),
            );
            let found = candidates
                .into_iter()
                .find(|candidate| places.files.contains_key(candidate))
                .map(Place::File);
            return (found, String::new());
        }
        // a package: `react`, `@scope/name/sub` → `@scope/name`
        let parts: Vec<&str> = name.split('/').collect();
        let package = if name.starts_with('@') {
            parts.iter().take(2).copied().collect::<Vec<_>>().join("/")
        } else {
            parts[0].to_string()
        };
        return (None, package);
    }
    let top = name
        .trim_start_matches('.')
        .split('.')
        .next()
        .unwrap_or(name)
        .to_string();
    (
        module_file(name, from_file, &places.files).map(Place::File),
        top,
    )
}

/// The files a Python module may be under a source root other than the
/// repository's (the `src/` layout, a service's folder in a monorepo): those
/// whose path ends in the module's, in a folder that is no package itself,
/// for the longest run of the module's segments that has any.
fn under_source_roots(name: &str, places: &Places) -> Vec<String> {
    let segments: Vec<&str> = name.split('.').filter(|s| !s.is_empty()).collect();
    for length in (1..=segments.len()).rev() {
        let stem = segments[..length].join("/");
        let found: Vec<String> = [format!("{stem}.py"), format!("{stem}/__init__.py")]
            .iter()
            .flat_map(|ending| {
                let file_name = ending.rsplit('/').next().unwrap_or(ending);
                let suffix = format!("/{ending}");
                places
                    .named(file_name)
                    .iter()
                    .filter(move |path| path.ends_with(&suffix))
                    .filter(|path| {
                        let root = &path[..path.len() - ending.len()];
                        !places.files.contains_key(&format!("{root}__init__.py"))
                    })
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// A dotted package path (`com.shop.model.Cart`): the file or folder whose
/// path ends in the longest run of its segments, from its start (a type, then
/// its package), dropping leading segments a source root may hide (`App\` of
/// PHP's `src/`); a path ending nowhere names a library outside.
fn package_target(path: &str, places: &Places) -> ImportTarget {
    let segments: Vec<&str> = path.split('.').filter(|s| !s.is_empty()).collect();
    let top = segments.first().copied().unwrap_or_default().to_string();
    let dotted = places.dotted();
    let shortest = if segments.len() > 1 { 2 } else { 1 };
    for start in 0..segments.len() {
        for end in (start + shortest..=segments.len()).rev() {
            if let Some(Some(place)) = dotted.get(&segments[start..end].join(".")) {
                return (Some(place.clone()), top);
            }
        }
    }
    (None, top)
}

/// The `src` folder of the Rust package `from_file` is part of (its library,
/// binaries, tests, benches or examples).
fn crate_source_folder(from_file: &str) -> String {
    const PARTS: [&str; 4] = ["src/", "tests/", "benches/", "examples/"];
    if PARTS.iter().any(|part| from_file.starts_with(part)) {
        return "src".to_string();
    }
    PARTS
        .iter()
        .filter_map(|part| from_file.find(&format!("/{part}")))
        .min()
        .map_or_else(
            || "src".to_string(),
            |at| format!("{}/src", &from_file[..at]),
        )
}

/// The file a dotted module path names: Python packages and modules, Rust module paths.
fn module_file(name: &str, from_file: &str, files: &HashMap<String, i64>) -> Option<String> {
    let trimmed = name.trim_start_matches('.');
    let relative_depth = name.len() - trimmed.len();
    let mut segments: Vec<&str> = trimmed.split('.').filter(|s| !s.is_empty()).collect();
    let base: String = if relative_depth > 0 {
        let mut parts: Vec<&str> = from_file.split('/').collect();
        parts.pop();
        for _ in 1..relative_depth {
            parts.pop();
        }
        parts.join("/")
    } else if matches!(segments.first(), Some(&"crate")) {
        segments.remove(0);
        crate_source_folder(from_file)
    } else {
        String::new()
    };
    // longest prefix first: a.b.c may name module a/b/c or item c of module a/b
    for length in (1..=segments.len()).rev() {
        let stem = segments[..length].join("/");
        let stem = if base.is_empty() {
            stem
        } else {
            format!("{base}/{stem}")
        };
        for candidate in [
            format!("{stem}.py"),
            format!("{stem}/__init__.py"),
            format!("{stem}.rs"),
            format!("{stem}/mod.rs"),
        ] {
            if files.contains_key(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}
