//! `cos user`: the people the hub knows by their tokens. `add` prints a new
//! token once (only its hash is kept), in the team database when there is
//! one; `list` and `remove` manage them. Once any user exists, the HTTP
//! doors need a user's token.

use super::*;
use crate::tools::users::{Role, check_name, new_token, token_hash};

#[derive(Debug, Subcommand)]
pub(super) enum UserCommand {
    /// Add a user and print their token (shown this once).
    Add {
        /// 1 to 64 letters, digits, '.', '_' or '-'.
        name: String,
        /// read (read-only tools), write (every tool but the hub's settings) or admin.
        #[arg(long, default_value = "write")]
        role: String,
    },
    /// The users, one a line: name, role, when added.
    List,
    /// Remove a user: their token stops working within seconds.
    Remove { name: String },
}

pub(super) fn run(command: UserCommand, hub: &Hub) -> i32 {
    let shared = &hub.state().shared;
    match command {
        UserCommand::Add { name, role } => {
            if let Err(error) = check_name(&name) {
                eprintln!("cos user add: {error}");
                return 2;
            }
            let Some(role) = Role::parse(&role) else {
                eprintln!("cos user add: --role: expected read, write or admin, not {role:?}");
                return 2;
            };
            let token = new_token();
            let row = crate::store::users::UserRow {
                name: name.clone(),
                role: role.as_str().to_string(),
                created_at: crate::tools::now(),
            };
            match shared.add_user(&row, &token_hash(&token)) {
                Ok(true) => {
                    eprintln!(
                        "added {name} ({}) in {}; their token, shown this once:",
                        role.as_str(),
                        shared.describe()
                    );
                    println!("{token}");
                    0
                }
                Ok(false) => {
                    eprintln!("cos user add: a user named {name} exists; remove them first");
                    1
                }
                Err(error) => failed("cos user add", &error),
            }
        }
        UserCommand::List => match shared.users() {
            Ok(users) => {
                for user in &users {
                    println!("{:<24} {:<6} {}", user.name, user.role, user.created_at);
                }
                if users.is_empty() {
                    eprintln!("no users: the HTTP doors take COS_HUB_TOKEN, if set");
                }
                0
            }
            Err(error) => failed("cos user list", &error),
        },
        UserCommand::Remove { name } => match shared.remove_user(&name) {
            Ok(true) => {
                eprintln!("removed {name}");
                0
            }
            Ok(false) => {
                eprintln!("cos user remove: no user named {name}");
                1
            }
            Err(error) => failed("cos user remove", &error),
        },
    }
}

fn failed(what: &str, error: &crate::store::StoreError) -> i32 {
    eprintln!("{what}: {error}");
    1
}

/// The user the shell or an agent over stdio acts as: the token in
/// `COS_USER_TOKEN`, else `[user] token` of the settings file.
pub(super) fn configured_user(hub: &Hub) -> Result<Option<crate::tools::users::User>, String> {
    let token = match std::env::var("COS_USER_TOKEN") {
        Ok(token) if !token.trim().is_empty() => Some(token),
        _ => {
            let state_dir = &hub.state().config.state_dir;
            let section = crate::tools::settings::section(state_dir, "user")
                .map_err(|error| error.to_string())?;
            section
                .get("token")
                .and_then(|value| value.as_str())
                .map(str::to_string)
        }
    };
    let Some(token) = token else {
        return Ok(None);
    };
    match hub.user_by_token(&token) {
        Ok(Some(user)) => Ok(Some(user)),
        Ok(None) => {
            Err("the configured user token (COS_USER_TOKEN or [user] token) names no user".into())
        }
        Err(error) => Err(format!(
            "the configured user token cannot be checked: {error}"
        )),
    }
}
