//! The graph's health: dangling edges, self loops, orphans, malformed uids,
//! paths gone from disk, files with parse errors; and fixing the fixable
//! categories (the seed's list) on request.

use super::records;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use utoipa::ToSchema;

use super::analysis::meta;
use super::tools::{graph_offsets, spec};
use crate::envelope::{Category, Code, ErrorBody};
use crate::store::StoreError;
use crate::tools::cursor::{Keep, Offsets, narrowing};
use crate::tools::{Answer, Page, Tool, ToolContext, ToolError, ToolSpec};

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DoctorInput {
    /// Delete what the fixable categories found.
    #[serde(default)]
    pub fix: bool,
    #[schema(schema_with = fixable_categories)]
    pub categories: Option<Vec<String>>,
    /// An issue's `next_cursor`: that issue's samples after the ones already seen.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DoctorIssue {
    pub category: String,
    /// `real` (counts against health) or `info`.
    pub severity: String,
    /// `fix=true` deletes what this category found.
    pub fixable: bool,
    pub count: u64,
    /// Up to ten examples (node uids or file paths).
    pub sample: Vec<String>,
    /// Pass back as `cursor` for the next samples; null when none remain.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DoctorStats {
    pub nodes: u64,
    pub edges: u64,
    /// Real issues only.
    pub issue_count: u64,
    /// Real and informational.
    pub issue_count_total: u64,
    /// Rows deleted by `fix`.
    pub fixed: u64,
    /// By language, as the last index counted: calls_resolved,
    /// calls_unresolved, imports_resolved, imports_unresolved.
    #[schema(value_type = Object)]
    pub resolution: BTreeMap<String, super::index::Resolution>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Doctor {
    pub healthy: bool,
    pub issues: Vec<DoctorIssue>,
    pub stats: DoctorStats,
}

fn fixable_categories() -> utoipa::openapi::schema::Array {
    crate::tools::schema::list_of(
        FIXABLE,
        "With fix: only these fixable categories (default: every fixable one).",
    )
}

/// The seed's fixable categories, in its order: what `fix=true` deletes.
const FIXABLE: &[&str] = &[
    "stale_paths",
    "malformed_uid_path",
    "dangling_source",
    "dangling_target",
    "duplicate_contains",
    "orphaned_phantom",
    "orphaned_external_unresolved",
];
/// The seed's informational categories: listed, never trip `healthy`.
const INFORMATIONAL: &[&str] = &[
    "slowest_extractions",
    "orphaned_external_unresolved",
    "files_with_parse_errors",
];

pub struct GraphDoctor;

impl Tool for GraphDoctor {
    type Input = DoctorInput;
    type Output = Doctor;
    const SPEC: ToolSpec = spec(
        "cos_graph_doctor",
        "The graph's faults: dangling edges, self loops, orphans, malformed uids, paths gone from disk, parse errors \
         (healthy ignores the informational ones); fix=true deletes the fixable ones.",
    )
        // fix=true deletes what the doctor found; with fix=false it only reads
        .writing(true, true)
        .for_upkeep();

    fn run(context: &ToolContext, input: DoctorInput) -> Result<Answer<Doctor>, ToolError> {
        let chosen = chosen_categories(input.categories.as_deref())?;
        let root = context.hub.config.repo_root.clone();
        let (examined, offsets, from) = context.hub.store.view(|c| {
            let offsets = graph_offsets(context, c, Self::SPEC.name, ())?;
            // a cursor that cannot continue is refused before the whole graph is examined
            let from = offsets.start_in("cursor", input.cursor.as_deref())?;
            let examined = examine(c, &root)?;
            Ok::<_, ToolError>((examined, offsets, from))
        })?;
        let names: Vec<&str> = examined
            .found
            .iter()
            .map(|(category, _)| *category)
            .collect();
        let keep = narrowing("cursor", &names, from.as_ref())?;
        let starts: Vec<usize> = keep
            .iter()
            .map(|keep| match keep {
                Keep::From(start) => *start,
                Keep::Nothing => 0,
            })
            .collect();
        let pages: Vec<Page> = names
            .iter()
            .zip(&starts)
            .enumerate()
            .map(|(index, (name, start))| {
                let list = format!("/issues/{index}/sample");
                offsets.page_in(name, &list, &format!("/issues/{index}/next_cursor"), *start)
            })
            .collect();
        let fixed = if input.fix {
            context
                .hub
                .store
                .write(|tx| records::delete_fixable(tx, &chosen, &examined.stale))?
        } else {
            0
        };
        let issues: Vec<DoctorIssue> = examined
            .found
            .into_iter()
            .zip(&starts)
            .map(|((category, rows), start)| issue(category, rows, *start, &offsets))
            .collect();
        let issue_count = issues
            .iter()
            .filter(|i| i.severity == "real" && i.count > 0)
            .count() as u64;
        let issue_count_total = issues.iter().filter(|i| i.count > 0).count() as u64;
        let answer = Answer::new(Doctor {
            healthy: issue_count == 0,
            stats: DoctorStats {
                nodes: examined.nodes,
                edges: examined.edges,
                issue_count,
                issue_count_total,
                fixed,
                resolution: examined.resolution,
            },
            issues,
        });
        Ok(pages
            .into_iter()
            .fold(answer, Answer::with_page)
            .with_meta(meta(&[
                ("fixable_categories", json!(FIXABLE)),
                ("informational_categories", json!(INFORMATIONAL)),
            ])))
    }
}

/// The fixable categories `fix` may delete: all of them, or those asked for.
fn chosen_categories(asked: Option<&[String]>) -> Result<Vec<&'static str>, ToolError> {
    let Some(asked) = asked else {
        return Ok(FIXABLE.to_vec());
    };
    asked
        .iter()
        .map(|category| {
            FIXABLE
                .iter()
                .find(|fixable| **fixable == category.as_str())
                .copied()
                .ok_or_else(|| {
                    ToolError::from(
                        ErrorBody::new(
                            Category::Validation,
                            Code::E_ARGUMENT,
                            format!(
                                "categories: {category:?} is not fixable; one of {}",
                                FIXABLE.join(", ")
                            ),
                        )
                        .with_details(
                            json!({"field": "categories", "allowed": FIXABLE, "got": category}),
                        ),
                    )
                })
        })
        .collect()
}

/// What one look at the graph found.
struct Examination {
    found: Vec<Finding>,
    /// Indexed files gone from disk.
    stale: Vec<String>,
    nodes: u64,
    edges: u64,
    resolution: BTreeMap<String, super::index::Resolution>,
}

/// Runs every check, and looks for indexed files that are gone from disk.
fn examine(c: &Connection, root: &std::path::Path) -> Result<Examination, ToolError> {
    let mut found = Vec::new();
    for (category, sql, _) in records::CHECKS {
        found.push((*category, records::check_rows(c, sql)?));
    }
    let stale: Vec<String> = records::indexed_paths(c)?
        .into_iter()
        .filter(|path| !root.join(path).exists())
        .collect();
    found.push(("stale_paths", stale.clone()));
    let (nodes, edges) = records::sizes(c)?;
    let resolution = super::index::resolution_now(c).map_err(|e| StoreError::on(c, e))?;
    Ok(Examination {
        found,
        stale,
        nodes,
        edges,
        resolution,
    })
}

/// A check's category and every row it found.
type Finding = (&'static str, Vec<String>);

/// Samples an issue shows a page.
const SAMPLES: usize = 10;

fn issue(category: &str, rows: Vec<String>, start: usize, offsets: &Offsets) -> DoctorIssue {
    let count = rows.len();
    let sample: Vec<String> = rows.into_iter().skip(start).take(SAMPLES).collect();
    let next_cursor =
        (start + sample.len() < count).then(|| offsets.cursor_in(category, start + sample.len()));
    DoctorIssue {
        category: category.to_string(),
        severity: if INFORMATIONAL.contains(&category) {
            "info"
        } else {
            "real"
        }
        .to_string(),
        fixable: FIXABLE.contains(&category),
        count: count as u64,
        sample,
        next_cursor,
    }
}
