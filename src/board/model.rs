//! The board's vocabulary: statuses, kinds, priorities, actors, tasks and cards.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::tools::ToolError;

/// Where a task is in the workflow.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Icebox,
    Emergency,
    InProgress,
    Testing,
    Complete,
    Blocked,
    Archive,
}

impl Status {
    /// Board order, left to right.
    pub const ALL: [Status; 7] = [
        Status::Emergency,
        Status::Icebox,
        Status::InProgress,
        Status::Testing,
        Status::Blocked,
        Status::Complete,
        Status::Archive,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Icebox => "icebox",
            Status::Emergency => "emergency",
            Status::InProgress => "in_progress",
            Status::Testing => "testing",
            Status::Complete => "complete",
            Status::Blocked => "blocked",
            Status::Archive => "archive",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
    }

    /// The transition table (the reference system's): where a task may go from here.
    pub fn allowed_targets(self) -> &'static [Status] {
        use Status::*;
        match self {
            Icebox => &[InProgress, Emergency, Archive],
            Emergency => &[InProgress, Icebox],
            InProgress => &[Testing, Blocked, Icebox, Emergency, Complete],
            Testing => &[Complete, InProgress, Blocked],
            Complete => &[Archive],
            Blocked => &[InProgress, Emergency, Icebox],
            Archive => &[Icebox, Complete],
        }
    }

    /// Complete and archive grow without bound, so they are paged.
    pub fn is_paged(self) -> bool {
        matches!(self, Status::Complete | Status::Archive)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Feature,
    Bug,
    Chore,
    Spike,
    Docs,
    Refactor,
    Test,
    Security,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Feature,
        Kind::Bug,
        Kind::Chore,
        Kind::Spike,
        Kind::Docs,
        Kind::Refactor,
        Kind::Test,
        Kind::Security,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Feature => "feature",
            Kind::Bug => "bug",
            Kind::Chore => "chore",
            Kind::Spike => "spike",
            Kind::Docs => "docs",
            Kind::Refactor => "refactor",
            Kind::Test => "test",
            Kind::Security => "security",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema,
)]
pub enum Priority {
    P0,
    P1,
    P2,
    P3,
}

impl Priority {
    pub const ALL: [Priority; 4] = [Priority::P0, Priority::P1, Priority::P2, Priority::P3];

    pub fn as_str(self) -> &'static str {
        match self {
            Priority::P0 => "P0",
            Priority::P1 => "P1",
            Priority::P2 => "P2",
            Priority::P3 => "P3",
        }
    }

    pub fn parse(text: &str) -> Option<Priority> {
        Priority::ALL
            .into_iter()
            .find(|priority| priority.as_str() == text)
    }
}

/// Who acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    Human,
    Agent,
    System,
}

impl ActorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Human => "human",
            ActorKind::Agent => "agent",
            ActorKind::System => "system",
        }
    }

    pub fn parse(text: &str) -> Option<ActorKind> {
        [ActorKind::Human, ActorKind::Agent, ActorKind::System]
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Actor {
    pub kind: ActorKind,
    /// A name, session id or job.
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub id: String,
}

impl Actor {
    pub fn validate(&self) -> Result<(), ToolError> {
        if self.id.trim().is_empty() || self.id.chars().count() > 200 {
            return Err(ToolError::invalid("actor.id", "1 to 200 characters"));
        }
        crate::tools::text::check_visible_name("actor.id", &self.id)
    }

    /// `kind:id`, the form stored in columns such as `assignee`.
    pub fn key(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.id)
    }

    pub fn from_key(key: &str) -> Option<Actor> {
        let (kind, id) = key.split_once(':')?;
        Some(Actor {
            kind: ActorKind::parse(kind)?,
            id: id.to_string(),
        })
    }
}

/// A task in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Task {
    /// `TASK-<n>`
    pub id: String,
    pub title: String,
    /// Markdown.
    pub description: String,
    pub status: Status,
    pub kind: Kind,
    pub priority: Priority,
    pub swimlane: String,
    pub epic: Option<String>,
    pub labels: Vec<String>,
    /// A duration such as 30m, 2h, 1d, 3w, 1cy.
    pub appetite: Option<String>,
    /// Tasks that must be complete before this one starts.
    pub depends_on: Vec<String>,
    /// Paths, URLs or graph uids.
    pub references: Vec<String>,
    /// The actor holding the task while it is in progress (`kind:id`).
    pub assignee: Option<String>,
    /// Order within its column (smaller is higher).
    pub position: f64,
    /// Bumped by every write; send it back to edit.
    pub version: i64,
    pub created_at: String,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub updated_at: String,
    /// `kind:id` of whoever made the last change.
    pub updated_by: String,
    /// The claim's lease while one is held.
    pub lease: Option<Lease>,
}

/// A claim's hold on a task: no one else is handed it, or may move it,
/// until it expires (then it returns to the ready pool) or its holder moves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Lease {
    /// `kind:id` of the claimant.
    pub holder: String,
    /// RFC 3339, UTC.
    pub expires_at: String,
}

impl Lease {
    /// A lease for `holder` from now for `seconds`.
    pub fn for_seconds(holder: String, seconds: u32) -> Lease {
        let until =
            std::time::SystemTime::now() + std::time::Duration::from_secs(u64::from(seconds));
        Lease {
            holder,
            expires_at: humantime::format_rfc3339_millis(until).to_string(),
        }
    }

    /// Still held at `now` (a time as the hub records them: RFC 3339 in UTC,
    /// to the millisecond, so text order is time order).
    pub fn is_live(&self, now: &str) -> bool {
        self.expires_at.as_str() > now
    }
}

/// A task as a board card: everything but the description.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Card {
    pub id: String,
    pub title: String,
    pub status: Status,
    pub kind: Kind,
    pub priority: Priority,
    pub swimlane: String,
    pub epic: Option<String>,
    pub labels: Vec<String>,
    pub appetite: Option<String>,
    pub depends_on: Vec<String>,
    pub assignee: Option<String>,
    pub position: f64,
    pub version: i64,
    pub created_at: String,
    pub completed_at: Option<String>,
    pub updated_at: String,
    pub lease: Option<Lease>,
}

impl From<Task> for Card {
    fn from(task: Task) -> Card {
        Card {
            id: task.id,
            title: task.title,
            status: task.status,
            kind: task.kind,
            priority: task.priority,
            swimlane: task.swimlane,
            epic: task.epic,
            labels: task.labels,
            appetite: task.appetite,
            depends_on: task.depends_on,
            assignee: task.assignee,
            position: task.position,
            version: task.version,
            created_at: task.created_at,
            completed_at: task.completed_at,
            updated_at: task.updated_at,
            lease: task.lease,
        }
    }
}

/// `TASK-7`, `TASK-007` and `task-7` all name task 7.
pub fn parse_task_id(text: &str) -> Option<i64> {
    let digits = text
        .trim()
        .strip_prefix("TASK-")
        .or_else(|| text.trim().strip_prefix("task-"))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 12 {
        return None;
    }
    digits.parse::<i64>().ok().filter(|n| *n > 0)
}

pub fn format_task_id(sequence: i64) -> String {
    format!("TASK-{sequence:03}")
}

/// Validates an appetite: a positive whole number and a unit (m, h, d, w or cy).
pub fn valid_appetite(text: &str) -> bool {
    let unit_start = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(unit_start);
    !number.is_empty()
        && number.len() <= 4
        && !number.starts_with('0')
        && matches!(unit, "m" | "h" | "d" | "w" | "cy")
}

/// One change in a task's history.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct HistoryEntry {
    pub at: String,
    /// `kind:id`
    pub actor: String,
    /// rest, mcp, cli or watcher
    pub source: String,
    /// `created`, `status` or the edited field.
    pub field: String,
    pub old: Option<serde_json::Value>,
    pub new: Option<serde_json::Value>,
    /// The task's version after this change.
    pub version: i64,
    /// The authenticated user the actor acted for (when the hub has users).
    pub user: Option<String>,
}

pub fn sequence_of(id: &str) -> i64 {
    parse_task_id(id).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_parse_with_any_padding() {
        assert_eq!(parse_task_id("TASK-007"), Some(7));
        assert_eq!(parse_task_id("TASK-1018"), Some(1018));
        assert_eq!(parse_task_id("task-5"), Some(5));
        assert_eq!(parse_task_id("TASK-"), None);
        assert_eq!(parse_task_id("TASK-0"), None);
        assert_eq!(parse_task_id("TASK-1x"), None);
        assert_eq!(format_task_id(7), "TASK-007");
        assert_eq!(format_task_id(1018), "TASK-1018");
    }

    #[test]
    fn appetites() {
        for ok in ["30m", "2h", "1d", "3w", "1cy", "2d", "4h"] {
            assert!(valid_appetite(ok), "{ok}");
        }
        for bad in ["", "d", "0d", "1y", "1.5d", "12345d", "1 d"] {
            assert!(!valid_appetite(bad), "{bad}");
        }
    }

    #[test]
    fn transition_table_is_the_reference_one() {
        assert_eq!(
            Status::Icebox.allowed_targets(),
            &[Status::InProgress, Status::Emergency, Status::Archive]
        );
        assert_eq!(Status::Complete.allowed_targets(), &[Status::Archive]);
        for status in Status::ALL {
            assert!(
                !status.allowed_targets().contains(&status),
                "{status:?} does not move to itself"
            );
        }
    }
}
