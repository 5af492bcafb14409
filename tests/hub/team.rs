//! The suites of the shared state (the board, agent evidence, idempotency
//! keys) once more with that state in a team database on PostgreSQL: the
//! same test source, so every rule is shown on both.

/// Where the suites below keep the board.
const BOARD: crate::common::Board = crate::common::Board::Team;

// the same files as the suites at the top: deliberately, so both backends run them
#[allow(clippy::duplicate_mod)]
#[path = "board_api.rs"]
mod board_api;
#[allow(clippy::duplicate_mod)]
#[path = "board_concurrency.rs"]
mod board_concurrency;
#[allow(clippy::duplicate_mod)]
#[path = "supervise.rs"]
mod supervise;
