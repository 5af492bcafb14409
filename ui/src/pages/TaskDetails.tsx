import { useCallback, useEffect, useRef, useState } from "react";
import { api, call, type Failure, type HistoryEntry, type Status, type Task } from "../api/client";
import { FailureNotice } from "../components/FailureNotice";
import { EvidenceSessions } from "./EvidenceSessions";
import { LeaseBadge, STATUS_LABELS } from "./BoardPage";
import { TaskDialog } from "./TaskDialog";

interface Props {
  id: string;
  swimlanes: string[];
  onClose: () => void;
  onChanged: () => void;
}

const show = (value: unknown) => (value === null || value === undefined ? "—" : typeof value === "string" ? value : JSON.stringify(value));

export function TaskDetails({ id, swimlanes, onClose, onChanged }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [task, setTask] = useState<Task | null>(null);
  const [history, setHistory] = useState<HistoryEntry[]>([]);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [editing, setEditing] = useState(false);
  const [target, setTarget] = useState<Status>("in_progress");

  const load = useCallback(async () => {
    const [shown, logged] = await Promise.all([
      call(() => api.GET("/api/board/tasks/{id}", { params: { path: { id } } })),
      call(() => api.GET("/api/board/tasks/{id}/history", { params: { path: { id }, query: {} } })),
    ]);
    if (shown.ok) setTask(shown.data);
    if (logged.ok) setHistory(logged.data.history);
    setFailure(!shown.ok ? shown.failure : !logged.ok ? logged.failure : null);
  }, [id]);

  useEffect(() => {
    dialog.current?.showModal();
    void load();
  }, [load]);

  const move = async () => {
    if (!task) return;
    const result = await call(() =>
      api.POST("/api/board/tasks/{id}/move", { params: { path: { id } }, body: { from: task.status, to: target } }),
    );
    if (result.ok) {
      setFailure(null);
      onChanged();
      await load();
    } else {
      setFailure(result.failure);
    }
  };

  return (
    <dialog ref={dialog} className="task-details" aria-labelledby="details-title" onClose={onClose}>
      <header>
        <h2 id="details-title">{task ? `${task.id}: ${task.title}` : id}</h2>
        <button type="button" className="quiet" onClick={() => dialog.current?.close()} aria-label="Close">
          ×
        </button>
      </header>
      {failure ? <FailureNotice failure={failure} onReload={() => void load()} onRetry={() => void load()} /> : null}
      {task ? (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd>{STATUS_LABELS[task.status]}</dd>
            <dt>Kind</dt>
            <dd>{task.kind}</dd>
            <dt>Priority</dt>
            <dd>{task.priority}</dd>
            <dt>Swimlane</dt>
            <dd>{task.swimlane}</dd>
            <dt>Labels</dt>
            <dd>{task.labels.join(", ") || "—"}</dd>
            <dt>Depends on</dt>
            <dd>{task.depends_on.join(", ") || "—"}</dd>
            <dt>Assignee</dt>
            <dd>{task.assignee ?? "—"}</dd>
            <dt>Lease</dt>
            <dd>{task.lease ? <LeaseBadge lease={task.lease} /> : "—"}</dd>
            <dt>Version</dt>
            <dd>{task.version}</dd>
          </dl>
          <pre className="description">{task.description || "No description."}</pre>
          <div className="details-actions">
            <label>
              Move to
              <select value={target} onChange={(event) => setTarget(event.target.value as Status)}>
                {(Object.keys(STATUS_LABELS) as Status[])
                  .filter((status) => status !== task.status)
                  .map((status) => (
                    <option key={status} value={status}>
                      {STATUS_LABELS[status]}
                    </option>
                  ))}
              </select>
            </label>
            <button type="button" onClick={() => void move()}>
              Move
            </button>
            <button type="button" className="primary" onClick={() => setEditing(true)}>
              Edit
            </button>
          </div>
          <h3>History</h3>
          <ol className="history" data-testid="history">
            {history.map((entry, index) => (
              <li key={index}>
                <time dateTime={entry.at}>{entry.at.replace("T", " ").slice(0, 19)}</time> <strong>{entry.field}</strong>{" "}
                {entry.field === "created" ? `in ${show(entry.new)}` : `${show(entry.old)} → ${show(entry.new)}`}{" "}
                <span className="who">
                  by {entry.actor}{entry.user ? ` for ${entry.user}` : ""} via {entry.source}
                </span>
              </li>
            ))}
          </ol>
          <EvidenceSessions task={task.id} />
        </>
      ) : null}
      {editing && task ? (
        <TaskDialog
          task={task}
          swimlanes={swimlanes}
          onClose={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            onChanged();
            void load();
          }}
        />
      ) : null}
    </dialog>
  );
}
