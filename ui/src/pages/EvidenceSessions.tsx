// A task's agent sessions and, for the one chosen, its evidence bundle: which
// role slots are filled, which formulas degraded, and the dispatch timeline.
import { useCallback, useEffect, useState } from "react";
import { api, call, type EvidenceBundle, type Failure, type SessionSummary } from "../api/client";
import { FailureNotice } from "../components/FailureNotice";

const when = (at: string) => at.replace("T", " ").slice(0, 19);

function Bundle({ bundle }: { bundle: EvidenceBundle }) {
  return (
    <section className="bundle" aria-label={`Bundle of ${bundle.session_id}`} data-testid="bundle">
      <p className="muted">
        {bundle.fields_filled} of {bundle.slots.length} slots filled · persona {bundle.persona_id} · version{" "}
        {bundle.version} · <code>{bundle.bundle_file}</code>
      </p>
      <ul className="slots">
        {bundle.slots.map((slot) => (
          <li key={slot.field} className={slot.filled ? "filled" : "empty"} data-testid={`slot-${slot.field}`}>
            <strong>{slot.field}</strong> {slot.filled ? "filled" : "empty"}
            {bundle.degraded_formulas.some((formula) => slot.roles.includes(formula)) ? (
              <span className="badge degraded">degraded</span>
            ) : null}
            {slot.filled ? (
              <details>
                <summary>
                  output of {slot.formula_id} at {when(slot.filled_at ?? "")}
                </summary>
                <pre>{JSON.stringify(slot.output, null, 2)}</pre>
              </details>
            ) : null}
          </li>
        ))}
      </ul>
      {bundle.degraded_formulas.length > 0 ? (
        <p className="degraded-list" data-testid="degraded">
          Degraded: {bundle.degraded_formulas.join(", ")}
        </p>
      ) : null}
      {bundle.backtracks.length > 0 ? (
        <>
          <h5>Backtracks</h5>
          <ul>
            {bundle.backtracks.map((backtrack, index) => (
              <li key={index}>
                {backtrack.from_formula} → {backtrack.to_formula}: {backtrack.reason}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {bundle.discoveries.length > 0 ? (
        <>
          <h5>Discoveries</h5>
          <ul>
            {bundle.discoveries.map((discovery, index) => (
              <li key={index}>
                <strong>{discovery.kind}</strong> ({discovery.decision.replace("_", " ")}): {discovery.summary}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <h5>
        Dispatches ({bundle.dispatches.length < bundle.dispatch_count ? `latest ${bundle.dispatches.length} of ` : ""}
        {bundle.dispatch_count})
      </h5>
      <ol className="dispatches" data-testid="dispatches">
        {bundle.dispatches.map((dispatch) => (
          <li key={dispatch.seq} className={`dispatch ${dispatch.status}`}>
            <time dateTime={dispatch.at}>{when(dispatch.at)}</time> <strong>{dispatch.formula_id}</strong>{" "}
            <span className={`badge ${dispatch.status}`}>{dispatch.status}</span> {dispatch.latency_ms} ms
            {dispatch.error ? <div className="dispatch-error">{dispatch.error}</div> : null}
          </li>
        ))}
      </ol>
    </section>
  );
}

export function EvidenceSessions({ task }: { task: string }) {
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [chosen, setChosen] = useState<string | null>(null);
  const [bundle, setBundle] = useState<EvidenceBundle | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);

  const load = useCallback(async () => {
    const listed = await call(() => api.GET("/api/supervise/sessions", { params: { query: { task_marker: task } } }));
    if (listed.ok) {
      setSessions(listed.data.sessions);
      setFailure(null);
    } else {
      setFailure(listed.failure);
    }
  }, [task]);

  const open = useCallback(async (session: string) => {
    setChosen(session);
    const read = await call(() =>
      api.GET("/api/supervise/sessions/{session_id}", { params: { path: { session_id: session } } }),
    );
    if (read.ok) {
      setBundle(read.data);
      setFailure(null);
    } else {
      setFailure(read.failure);
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  return (
    <section aria-labelledby="sessions-title" data-testid="sessions">
      <h3 id="sessions-title">Agent sessions</h3>
      {failure ? <FailureNotice failure={failure} onReload={() => void load()} onRetry={() => void load()} /> : null}
      {sessions.length === 0 ? (
        <p className="muted">No agent has recorded evidence for this task.</p>
      ) : (
        <ul className="sessions">
          {sessions.map((session) => (
            <li key={session.session_id}>
              <button
                type="button"
                className={chosen === session.session_id ? "quiet chosen" : "quiet"}
                aria-pressed={chosen === session.session_id}
                onClick={() => void open(session.session_id)}
              >
                {session.session_id}
              </button>{" "}
              {session.fields_filled} filled · {session.dispatch_count} dispatches
              {session.degraded_formulas.length > 0 ? (
                <span className="badge degraded">{session.degraded_formulas.length} degraded</span>
              ) : null}{" "}
              <span className="muted">updated {when(session.updated_at)}</span>
            </li>
          ))}
        </ul>
      )}
      {bundle && chosen === bundle.session_id ? <Bundle bundle={bundle} /> : null}
    </section>
  );
}
