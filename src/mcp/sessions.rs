//! MCP sessions over HTTP, bounded: at most a set number live at once (the
//! one idle longest makes room for a new one), and one idle past the idle
//! time is gone, so a request on it gets 404 and the client initialises
//! again, as the MCP transport spec says. rmcp's in-memory manager keeps each
//! session; this wrapper keeps the bounds.

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many MCP sessions may live at once, and how long one may sit idle.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    pub max_sessions: usize,
    pub idle: Duration,
}

impl Default for SessionLimits {
    fn default() -> SessionLimits {
        SessionLimits {
            max_sessions: 256,
            idle: Duration::from_secs(600),
        }
    }
}

pub struct BoundedSessions {
    inner: LocalSessionManager,
    limits: SessionLimits,
    /// When each live session was last used.
    last_used: Mutex<HashMap<SessionId, Instant>>,
}

impl BoundedSessions {
    pub fn new(limits: SessionLimits) -> BoundedSessions {
        let mut inner = LocalSessionManager::default();
        // rmcp ends a session's worker once it has been idle this long, too
        inner.session_config.keep_alive = Some(limits.idle);
        BoundedSessions {
            inner,
            limits,
            last_used: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        self.last_used
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// True when the session is known and not idle past the limit; marks it used.
    fn touch(&self, id: &SessionId) -> bool {
        let mut last_used = self.lock();
        match last_used.get_mut(id) {
            Some(at) if at.elapsed() <= self.limits.idle => {
                *at = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// Closes sessions idle past the limit, then the longest idle ones while
    /// there is no room for one more.
    async fn make_room(&self) {
        let doomed: Vec<SessionId> = {
            let mut last_used = self.lock();
            let mut by_age: Vec<(Instant, SessionId)> =
                last_used.iter().map(|(id, at)| (*at, id.clone())).collect();
            by_age.sort();
            let expired = by_age
                .iter()
                .take_while(|(at, _)| at.elapsed() > self.limits.idle)
                .count();
            let over = by_age
                .len()
                .saturating_sub(expired)
                .saturating_sub(self.limits.max_sessions.saturating_sub(1));
            let doomed: Vec<SessionId> = by_age
                .into_iter()
                .take(expired + over)
                .map(|(_, id)| id)
                .collect();
            for id in &doomed {
                last_used.remove(id);
            }
            doomed
        };
        for id in doomed {
            if let Err(error) = self.inner.close_session(&id).await {
                tracing::debug!(%error, "closing an evicted MCP session");
            }
        }
    }

    /// An id this manager no longer serves: answered like one never issued.
    fn gone(id: &SessionId) -> LocalSessionManagerError {
        LocalSessionManagerError::SessionNotFound(id.clone())
    }

    /// Forgets a session the client may still name, once it expired.
    async fn expire(&self, id: &SessionId) {
        self.lock().remove(id);
        let _ = self.inner.close_session(id).await;
    }
}

impl SessionManager for BoundedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        self.lock().insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if !self.touch(id) {
            self.expire(id).await;
            return Ok(false);
        }
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.resume(id, last_event_id).await
    }
}
