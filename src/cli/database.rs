//! `cos database copy`: moves a hub's shared state (board, evidence,
//! receipts, users, the board's `board.toml`) from its own database to a team database, or back, with
//! ids, positions, history and revisions intact; the target must be empty.

use super::*;
use crate::store::SharedStore;
use crate::store::copy::{CopyError, SharedFiles, copy};
use crate::store::pg::PgStore;

#[derive(Debug, Subcommand)]
pub(super) enum DatabaseCommand {
    /// Copy this hub's shared state into a team database (--to), or a team
    /// database's into this hub's own (--from); the target must be empty.
    Copy {
        /// The team database to copy into (postgres://user:password@host:port/db).
        #[arg(
            long,
            value_name = "URL",
            conflicts_with = "from",
            required_unless_present = "from"
        )]
        to: Option<String>,
        /// The team database to copy from, into this hub's own database.
        #[arg(long, value_name = "URL")]
        from: Option<String>,
    },
}

pub(super) fn run(command: DatabaseCommand, hub: &Hub) -> i32 {
    let DatabaseCommand::Copy { to, from } = command;
    let registry = hub.registry();
    let local = SharedStore::Local(hub.state().store.clone());
    let open = |url: &str| PgStore::open(url, registry.team_schemas()).map(SharedStore::Team);
    let (source, target) = match (to, from) {
        (Some(url), _) => match open(&url) {
            Ok(team) => (local, team),
            Err(error) => return failed(&error.into()),
        },
        (None, Some(url)) => match open(&url) {
            Ok(team) => (team, local),
            Err(error) => return failed(&error.into()),
        },
        (None, None) => {
            eprintln!("cos database copy: give --to URL or --from URL");
            return 2;
        }
    };
    let files = SharedFiles {
        names: &registry.shared_files(),
        state_dir: &hub.state().config.state_dir,
    };
    match copy(&source, &target, &registry.shared_tables(), &files) {
        Ok(report) => {
            for (table, rows) in &report {
                println!("{table:<24} {rows}");
            }
            eprintln!("copied from {} to {}", source.describe(), target.describe());
            0
        }
        Err(error) => failed(&error),
    }
}

fn failed(error: &CopyError) -> i32 {
    eprintln!("cos database copy: {error}");
    1
}
