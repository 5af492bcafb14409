import { type FormEvent, useEffect, useRef, useState } from "react";
import { api, call, type Failure, fieldOf, type Kind, type Priority, type Task } from "../api/client";
import { FailureNotice } from "../components/FailureNotice";
import { KINDS, PRIORITIES } from "./BoardPage";

interface Props {
  /** The task to edit; absent to create one. */
  task?: Task;
  swimlanes: string[];
  onClose: () => void;
  onSaved: (task: Task) => void;
}

const list = (text: string) =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

type Fields = {
  title: string;
  description: string;
  kind: Kind;
  priority: Priority;
  swimlane: string;
  labels: string[];
  appetite: string | null;
  depends_on: string[];
};

/** Only what the person changed, so re-applying after a conflict keeps other people's edits. */
function changedFields(task: Task, fields: Fields): Partial<Fields> {
  const changes: Partial<Fields> = {};
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (fields.title !== task.title) changes.title = fields.title;
  if (fields.description !== task.description) changes.description = fields.description;
  if (fields.kind !== task.kind) changes.kind = fields.kind;
  if (fields.priority !== task.priority) changes.priority = fields.priority;
  if (fields.swimlane !== task.swimlane) changes.swimlane = fields.swimlane;
  if (!same(fields.labels, task.labels)) changes.labels = fields.labels;
  if ((fields.appetite ?? null) !== (task.appetite ?? null)) changes.appetite = fields.appetite;
  if (!same(fields.depends_on, task.depends_on)) changes.depends_on = fields.depends_on;
  return changes;
}

export function TaskDialog({ task, swimlanes, onClose, onSaved }: Props) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [version, setVersion] = useState(task?.version ?? 0);
  const [title, setTitle] = useState(task?.title ?? "");
  const [description, setDescription] = useState(task?.description ?? "");
  const [kind, setKind] = useState<Kind>(task?.kind ?? "feature");
  const [priority, setPriority] = useState<Priority>(task?.priority ?? "P2");
  const [swimlane, setSwimlane] = useState(task?.swimlane ?? swimlanes[0] ?? "");
  const [labels, setLabels] = useState(task?.labels.join(", ") ?? "");
  const [appetite, setAppetite] = useState(task?.appetite ?? "");
  const [dependsOn, setDependsOn] = useState(task?.depends_on.join(", ") ?? "");
  const [failure, setFailure] = useState<Failure | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    dialog.current?.showModal();
  }, []);

  const field = failure ? fieldOf(failure) : undefined;
  const errorFor = (name: string) =>
    field === name ? (
      <p className="field-error" id={`${name}-error`} role="alert">
        {failure?.error.message}
      </p>
    ) : null;

  const reloadLatest = async () => {
    if (!task) return;
    const result = await call(() => api.GET("/api/board/tasks/{id}", { params: { path: { id: task.id } } }));
    if (result.ok) {
      // keep what the person typed; only the version moves on, so saving re-applies their edit
      setVersion(result.data.version);
      setFailure(null);
    } else {
      setFailure(result.failure);
    }
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!title.trim()) {
      setFailure({
        status: 400,
        error: { category: "validation", code: "E_ARGUMENT", retryable: false, message: "A title is required.", details: { field: "title" } },
      });
      return;
    }
    setBusy(true);
    const fields: Fields = {
      title,
      description,
      kind,
      priority,
      swimlane,
      labels: list(labels),
      appetite: appetite.trim() ? appetite.trim() : null,
      depends_on: list(dependsOn),
    };
    const result = task
      ? await call(() =>
          api.PATCH("/api/board/tasks/{id}", {
            params: { path: { id: task.id }, header: { "If-Match": `"${version}"` } },
            body: { changes: changedFields(task, fields) },
          }),
        )
      : await call(() => api.POST("/api/board/tasks", { body: { ...fields, appetite: fields.appetite ?? undefined } }));
    setBusy(false);
    if (result.ok) {
      onSaved(result.data);
    } else {
      setFailure(result.failure);
    }
  };

  const described = (name: string) => (field === name ? `${name}-error` : undefined);
  return (
    <dialog ref={dialog} className="task-dialog" aria-labelledby="task-dialog-title" onClose={onClose}>
      <form onSubmit={(event) => void submit(event)} noValidate>
        <h2 id="task-dialog-title">{task ? `Edit ${task.id}` : "New task"}</h2>
        {failure && !field ? <FailureNotice failure={failure} onReload={() => void reloadLatest()} /> : null}
        <label>
          Title
          <input value={title} onChange={(e) => setTitle(e.target.value)} aria-invalid={field === "title"} aria-describedby={described("title")} autoFocus />
        </label>
        {errorFor("title")}
        <label>
          Description (Markdown)
          <textarea value={description} rows={5} onChange={(e) => setDescription(e.target.value)} />
        </label>
        <div className="row">
          <label>
            Kind
            <select value={kind} onChange={(e) => setKind(e.target.value as Kind)} aria-invalid={field === "kind"}>
              {KINDS.map((k) => (
                <option key={k}>{k}</option>
              ))}
            </select>
          </label>
          <label>
            Priority
            <select value={priority} onChange={(e) => setPriority(e.target.value as Priority)}>
              {PRIORITIES.map((p) => (
                <option key={p}>{p}</option>
              ))}
            </select>
          </label>
          <label>
            Swimlane
            <select value={swimlane} onChange={(e) => setSwimlane(e.target.value)} aria-invalid={field === "swimlane"}>
              {swimlanes.map((lane) => (
                <option key={lane}>{lane}</option>
              ))}
            </select>
          </label>
        </div>
        {errorFor("kind")}
        {errorFor("swimlane")}
        <label>
          Labels (comma-separated)
          <input value={labels} onChange={(e) => setLabels(e.target.value)} aria-invalid={field === "labels"} />
        </label>
        {errorFor("labels")}
        <div className="row">
          <label>
            Appetite
            <input value={appetite} placeholder="30m, 2h, 1d, 3w, 1cy" onChange={(e) => setAppetite(e.target.value)} aria-invalid={field === "appetite"} aria-describedby={described("appetite")} />
          </label>
          <label>
            Depends on
            <input value={dependsOn} placeholder="TASK-12, TASK-30" onChange={(e) => setDependsOn(e.target.value)} aria-invalid={field === "depends_on"} aria-describedby={described("depends_on")} />
          </label>
        </div>
        {errorFor("appetite")}
        {errorFor("depends_on")}
        <div className="dialog-actions">
          <button type="button" className="quiet" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {task ? "Save" : "Create"}
          </button>
        </div>
      </form>
    </dialog>
  );
}
