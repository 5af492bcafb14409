//! MCP over stdin/stdout (`cos mcp`): one JSON-RPC message a line, each
//! screened before rmcp sees it, answers written a whole line at a time.
//!
//! Owns the stdio relay only: the byte streams, the bound on a line, the
//! order of the lines written. It must not hold business rules.
//!
//! An agent's client runs us with pipes: those are driven by the runtime's
//! poller, so a message crosses no thread to be read or written (tokio's own
//! stdin and stdout hand every read and write to the blocking pool, a thread
//! hop each way per message). A file or a terminal falls back to tokio's.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;

use super::screen;
use crate::tools::Hub;

/// Serves MCP on stdin/stdout until the client closes it. Each line from the
/// client passes the JSON-RPC screen first; what it refuses is answered on
/// stdout beside the server's own lines, one whole line at a time. A line
/// may hold `max_line_bytes` (the caller's body limit); `filter` chooses the
/// tools the session lists and calls.
pub async fn serve(
    hub: Hub,
    max_line_bytes: usize,
    filter: super::ToolFilter,
) -> Result<(), io::Error> {
    let (server_side, relay_side) = tokio::io::duplex(1 << 20);
    let (relay_read, mut relay_write) = tokio::io::split(relay_side);
    let (lines_out, mut to_stdout) = tokio::sync::mpsc::channel::<String>(64);
    let writer = tokio::spawn(async move {
        let mut stdout = stdout();
        while let Some(mut line) = to_stdout.recv().await {
            // one write a line: the client reads up to the newline
            line.push('\n');
            stdout.write_all(line.as_bytes()).await?;
            stdout.flush().await?;
        }
        Ok::<(), io::Error>(())
    });
    let answers = lines_out.clone();
    let forward = tokio::spawn(async move {
        let mut lines = BufReader::new(relay_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if answers.send(line).await.is_err() {
                break;
            }
        }
    });
    let reader = tokio::spawn(async move {
        let mut input = BufReader::new(stdin());
        let mut line = Vec::new();
        while let Ok(Some(whole)) = next_line(&mut input, &mut line, max_line_bytes).await {
            let refusal = if whole {
                if line.trim_ascii().is_empty() {
                    continue;
                }
                screen::screen(&line).map(|refusal| refusal.body)
            } else {
                Some(too_long(max_line_bytes))
            };
            match refusal {
                Some(body) => {
                    if lines_out.send(body.to_string()).await.is_err() {
                        break;
                    }
                }
                None => {
                    let passed = relay_write.write_all(&line).await.is_ok()
                        && relay_write.write_all(b"\n").await.is_ok();
                    if !passed {
                        break;
                    }
                }
            }
        }
        // end of input: the server sees its input end and stops
        let _ = relay_write.shutdown().await;
    });
    // the relays run before the server starts: it waits for initialize to come through them
    // the change feed that announces watched resources' changes
    let (feed, watcher) = crate::events::start(hub.clone());
    let outcome = match rmcp::ServiceExt::serve(
        super::McpServer::new(hub.clone(), filter, feed),
        tokio::io::split(server_side),
    )
    .await
    {
        Ok(service) => service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err(error) => Err(error.to_string()),
    };
    reader.abort();
    watcher.abort();
    let _ = forward.await;
    let _ = writer.await;
    hub.close().await;
    outcome.map_err(io::Error::other)
}

fn too_long(max_line_bytes: usize) -> serde_json::Value {
    screen::error_response(
        serde_json::Value::Null,
        screen::INVALID_REQUEST,
        &format!("Invalid Request: a message of at most {max_line_bytes} bytes on one line"),
    )
}

/// Reads the next line (without its newline) into `line`: `Some(true)` for a
/// line of at most `max` bytes, `Some(false)` for a longer one (skipped to its
/// end, never held whole), `None` at the end of input.
async fn next_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<bool>> {
    line.clear();
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(read_any.then_some(!too_long));
        }
        read_any = true;
        let end = memchr::memchr(b'\n', available);
        let chunk = &available[..end.unwrap_or(available.len())];
        if !too_long && line.len() + chunk.len() <= max {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line.clear();
        }
        let used = end.map_or(available.len(), |at| at + 1);
        input.consume(used);
        if end.is_some() {
            return Ok(Some(!too_long));
        }
    }
}

/// Standard input: a pipe through the poller, else tokio's stdin.
fn stdin() -> Box<dyn AsyncRead + Send + Unpin> {
    match own_fd(&std::io::stdin()).and_then(|file| pipe::Receiver::from_file(file).ok()) {
        Some(pipe) => Box::new(pipe),
        None => Box::new(tokio::io::stdin()),
    }
}

/// Standard output: a pipe through the poller, else tokio's stdout.
fn stdout() -> Box<dyn AsyncWrite + Send + Unpin> {
    match own_fd(&std::io::stdout()).and_then(|file| pipe::Sender::from_file(file).ok()) {
        Some(pipe) => Box::new(pipe),
        None => Box::new(tokio::io::stdout()),
    }
}

/// A file of our own on the same open stream (a duplicate descriptor), so
/// the pipe types may own and close it; `from_file` refuses anything that is
/// not a pipe.
fn own_fd(stream: &impl std::os::fd::AsFd) -> Option<std::fs::File> {
    stream
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .map(std::fs::File::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(input: &[u8], max: usize) -> Vec<Option<(bool, String)>> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            let next = next_line(&mut reader, &mut line, max).await.unwrap();
            out.push(next.map(|whole| (whole, String::from_utf8_lossy(&line).into_owned())));
            if next.is_none() {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_are_split_bounded_and_a_long_one_is_skipped_to_its_end() {
        let read = lines_of(b"ab\nabcdefghij\n\nxyz", 5).await;
        assert_eq!(
            read,
            vec![
                Some((true, "ab".into())),
                Some((false, String::new())),
                Some((true, String::new())),
                Some((true, "xyz".into())),
                None,
            ]
        );
        assert_eq!(lines_of(b"", 5).await, vec![None]);
        assert_eq!(
            lines_of(b"abcde\n", 5).await,
            vec![Some((true, "abcde".into())), None]
        );
    }
}
