import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  api,
  type Board,
  call,
  type Card,
  type Column,
  type Failure,
  type Kind,
  type Priority,
  type Status,
} from "../api/client";
import { FailureNotice } from "../components/FailureNotice";
import { counted } from "../counted";
import { revisionOf, useLive } from "../live";
import { TaskDetails } from "./TaskDetails";
import { TaskDialog } from "./TaskDialog";

export const KINDS: Kind[] = ["feature", "bug", "chore", "spike", "docs", "refactor", "test", "security"];
export const PRIORITIES: Priority[] = ["P0", "P1", "P2", "P3"];
export const STATUS_LABELS: Record<Status, string> = {
  emergency: "Emergency",
  icebox: "Icebox",
  in_progress: "In progress",
  testing: "Testing",
  blocked: "Blocked",
  complete: "Complete",
  archive: "Archive",
};

interface Filters {
  text: string;
  kind: Kind | "";
  priority: Priority | "";
  label: string;
  swimlane: string;
}

const NO_FILTERS: Filters = { text: "", kind: "", priority: "", label: "", swimlane: "" };
const CARD_HEIGHT = 96;

/** Extra pages of complete and archive loaded with "Load more". */
type ExtraPages = Partial<Record<Status, { cards: Card[]; cursor: string | null }>>;

function query(filters: Filters, cursors: { complete?: string; archive?: string } = {}) {
  return {
    ...(filters.text.trim() ? { text: filters.text.trim() } : {}),
    ...(filters.kind ? { kind: filters.kind } : {}),
    ...(filters.priority ? { priority: filters.priority } : {}),
    ...(filters.label.trim() ? { label: filters.label.trim() } : {}),
    ...(filters.swimlane ? { swimlane: filters.swimlane } : {}),
    ...(cursors.complete ? { complete_cursor: cursors.complete } : {}),
    ...(cursors.archive ? { archive_cursor: cursors.archive } : {}),
  };
}

/** The board with a card moved to `to`, as the person expects to see it at once. */
function withMoved(board: Board, card: Card, to: Status): Board {
  return {
    ...board,
    columns: board.columns.map((column) => {
      if (column.status === card.status && column.status !== to) {
        return { ...column, total: column.total - 1, cards: column.cards.filter((c) => c.id !== card.id) };
      }
      if (column.status === to && card.status !== to) {
        return { ...column, total: column.total + 1, cards: [...column.cards, { ...card, status: to }] };
      }
      return column;
    }),
  };
}

export function BoardPage() {
  const [board, setBoard] = useState<Board | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [moveFailure, setMoveFailure] = useState<Failure | null>(null);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [extra, setExtra] = useState<ExtraPages>({});
  const [creating, setCreating] = useState(false);
  // a deep link (`/board?task=TASK-7`, as search opens a task) opens its details
  const [openTask, setOpenTask] = useState<string | null>(() => new URLSearchParams(window.location.search).get("task"));
  const live = useLive();
  const liveBoard = revisionOf(live, "board");
  const firstRender = useRef(true);

  const load = useCallback(async (current: Filters) => {
    const result = await call(() => api.GET("/api/board/list", { params: { query: query(current) } }));
    if (result.ok) {
      setBoard(result.data);
      setExtra({});
      setFailure(null);
    } else {
      setFailure(result.failure);
    }
  }, []);

  // The first load starts at once; filter changes reload after a short pause in
  // typing; live changes reload at once.
  const loadedOnce = useRef(false);
  useEffect(() => {
    const delay = loadedOnce.current ? 200 : 0;
    loadedOnce.current = true;
    const timer = window.setTimeout(() => void load(filters), delay);
    return () => window.clearTimeout(timer);
  }, [filters, load]);
  // Reload when the stream announces a newer revision than the board on screen.
  const shownRevision = board?.revision;
  useEffect(() => {
    if (liveBoard !== null && shownRevision !== undefined && liveBoard > shownRevision) void load(filters);
    // only a new announcement should trigger this reload, not a filter edit
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [liveBoard, shownRevision]);

  useEffect(() => {
    if (board && firstRender.current) {
      firstRender.current = false;
      requestAnimationFrame(() => performance.mark("board-rendered"));
    }
  }, [board]);

  const move = async (card: Card, to: Status) => {
    if (!board || card.status === to) return;
    const before = board;
    setBoard(withMoved(board, card, to));
    setMoveFailure(null);
    const result = await call(() =>
      api.POST("/api/board/tasks/{id}/move", { params: { path: { id: card.id } }, body: { from: card.status, to } }),
    );
    if (!result.ok) {
      setBoard(before); // the card snaps back
      setMoveFailure(result.failure);
    }
    void load(filters);
  };

  const reposition = async (card: Card, anchor: Card, place: "before" | "after") => {
    setMoveFailure(null);
    const result = await call(() =>
      api.POST("/api/board/tasks/{id}/reposition", {
        params: { path: { id: card.id } },
        body: place === "before" ? { before: anchor.id } : { after: anchor.id },
      }),
    );
    if (!result.ok) setMoveFailure(result.failure);
    void load(filters);
  };

  const loadMore = async (column: Column) => {
    const cursor = extra[column.status]?.cursor ?? column.next_cursor;
    if (!cursor) return;
    const cursors = column.status === "complete" ? { complete: cursor } : { archive: cursor };
    const result = await call(() => api.GET("/api/board/list", { params: { query: query(filters, cursors) } }));
    if (!result.ok) {
      setFailure(result.failure);
      return;
    }
    const page = result.data.columns.find((c) => c.status === column.status);
    setExtra((pages) => ({
      ...pages,
      [column.status]: {
        cards: [...(pages[column.status]?.cards ?? []), ...(page?.cards ?? [])],
        cursor: page?.next_cursor ?? null,
      },
    }));
  };

  const allCards = useMemo(() => {
    const byId = new Map<string, Card>();
    board?.columns.forEach((column) => column.cards.forEach((card) => byId.set(card.id, card)));
    Object.values(extra).forEach((page) => page?.cards.forEach((card) => byId.set(card.id, card)));
    return byId;
  }, [board, extra]);

  return (
    <section className="board-page" aria-labelledby="board-title">
      <div className="board-toolbar">
        <h1 id="board-title">Board</h1>
        <span className={`live ${live.connected ? "on" : "off"}`} title="Live updates">
          {live.connected ? "live" : "reconnecting…"}
        </span>
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          New task
        </button>
      </div>
      <FilterBar filters={filters} swimlanes={board?.swimlanes ?? []} onChange={setFilters} />
      {failure ? <FailureNotice failure={failure} onRetry={() => void load(filters)} /> : null}
      {moveFailure ? (
        <div data-testid="move-error">
          <FailureNotice
            failure={moveFailure}
            onReload={() => void load(filters)}
            onDismiss={() => setMoveFailure(null)}
          />
        </div>
      ) : null}
      {board ? (
        <div className="columns">
          {board.columns.map((column) => (
            <BoardColumn
              key={column.status}
              column={column}
              extraCards={extra[column.status]?.cards ?? []}
              canLoadMore={Boolean(extra[column.status] ? extra[column.status]?.cursor : column.next_cursor)}
              onLoadMore={() => void loadMore(column)}
              onDrop={(id, target) => {
                const card = allCards.get(id);
                if (!card) return;
                if (target && card.status === column.status && target.id !== card.id) {
                  void reposition(card, target, "before");
                } else {
                  void move(card, column.status);
                }
              }}
              onOpen={setOpenTask}
              onNudge={(card, direction) => {
                const cards = column.cards;
                const index = cards.findIndex((c) => c.id === card.id);
                const neighbour = cards[index + (direction === "up" ? -1 : 1)];
                if (neighbour) void reposition(card, neighbour, direction === "up" ? "before" : "after");
              }}
            />
          ))}
        </div>
      ) : failure ? null : (
        <p className="loading">Loading the board…</p>
      )}
      {creating ? (
        <TaskDialog
          swimlanes={board?.swimlanes ?? []}
          onClose={() => setCreating(false)}
          onSaved={() => {
            setCreating(false);
            void load(filters);
          }}
        />
      ) : null}
      {openTask ? (
        <TaskDetails
          id={openTask}
          swimlanes={board?.swimlanes ?? []}
          onClose={() => setOpenTask(null)}
          onChanged={() => void load(filters)}
        />
      ) : null}
    </section>
  );
}

function FilterBar({
  filters,
  swimlanes,
  onChange,
}: {
  filters: Filters;
  swimlanes: string[];
  onChange: (filters: Filters) => void;
}) {
  return (
    <form className="filters" role="search" aria-label="Filter tasks" onSubmit={(event) => event.preventDefault()}>
      <label>
        Text
        <input
          type="search"
          value={filters.text}
          placeholder="words in title or description"
          onChange={(event) => onChange({ ...filters, text: event.target.value })}
        />
      </label>
      <label>
        Kind
        <select value={filters.kind} onChange={(event) => onChange({ ...filters, kind: event.target.value as Kind | "" })}>
          <option value="">any</option>
          {KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </select>
      </label>
      <label>
        Priority
        <select
          value={filters.priority}
          onChange={(event) => onChange({ ...filters, priority: event.target.value as Priority | "" })}
        >
          <option value="">any</option>
          {PRIORITIES.map((priority) => (
            <option key={priority} value={priority}>
              {priority}
            </option>
          ))}
        </select>
      </label>
      <label>
        Label
        <input value={filters.label} onChange={(event) => onChange({ ...filters, label: event.target.value })} />
      </label>
      <label>
        Swimlane
        <select value={filters.swimlane} onChange={(event) => onChange({ ...filters, swimlane: event.target.value })}>
          <option value="">any</option>
          {swimlanes.map((lane) => (
            <option key={lane} value={lane}>
              {lane}
            </option>
          ))}
        </select>
      </label>
      {filters !== NO_FILTERS ? (
        <button type="button" className="quiet" onClick={() => onChange(NO_FILTERS)}>
          Clear
        </button>
      ) : null}
    </form>
  );
}

interface ColumnProps {
  column: Column;
  extraCards: Card[];
  canLoadMore: boolean;
  onLoadMore: () => void;
  onDrop: (id: string, target: Card | null) => void;
  onOpen: (id: string) => void;
  onNudge: (card: Card, direction: "up" | "down") => void;
}

function BoardColumn({ column, extraCards, canLoadMore, onLoadMore, onDrop, onOpen, onNudge }: ColumnProps) {
  const cards = useMemo(() => [...column.cards, ...extraCards], [column.cards, extraCards]);
  const scroller = useRef<HTMLDivElement>(null);
  const [over, setOver] = useState(false);
  const virtual = useVirtualizer({
    count: cards.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => CARD_HEIGHT,
    overscan: 6,
  });
  const wip = column.wip;
  const headingId = `column-${column.status}-title`;
  return (
    <section
      className={`column ${over ? "drop-target" : ""} ${wip?.at_limit ? "at-limit" : ""}`}
      data-testid={`column-${column.status}`}
      aria-labelledby={headingId}
      onDragOver={(event) => {
        event.preventDefault();
        event.dataTransfer.dropEffect = "move";
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(event) => {
        event.preventDefault();
        setOver(false);
        const id = event.dataTransfer.getData("text/plain");
        const targetId = (event.target as HTMLElement).closest<HTMLElement>("[data-card-id]")?.dataset.cardId;
        onDrop(id, cards.find((card) => card.id === targetId) ?? null);
      }}
    >
      <header className="column-header">
        <h2 id={headingId}>{STATUS_LABELS[column.status]}</h2>
        <span className="count" data-testid={`count-${column.status}`} aria-label={counted(column.total, "task")}>
          {column.total}
        </span>
        {wip ? (
          <span
            className={`wip ${wip.at_limit ? "full" : ""}`}
            title={wip.per_actor ? "WIP limit per person or agent" : "WIP limit for the column"}
          >
            WIP {wip.occupied}/{wip.limit}
            {wip.per_actor ? " each" : ""}
          </span>
        ) : null}
      </header>
      <div className="column-body" ref={scroller}>
        <div style={{ height: virtual.getTotalSize(), position: "relative" }}>
          {virtual.getVirtualItems().map((item) => {
            const card = cards[item.index];
            if (!card) return null;
            return (
              <div
                key={card.id}
                data-index={item.index}
                ref={virtual.measureElement}
                style={{ position: "absolute", top: 0, left: 0, right: 0, transform: `translateY(${item.start}px)` }}
              >
                <CardView card={card} onOpen={onOpen} onNudge={onNudge} />
              </div>
            );
          })}
        </div>
        {canLoadMore ? (
          <button type="button" className="load-more" onClick={onLoadMore}>
            Load more
          </button>
        ) : null}
      </div>
    </section>
  );
}

function CardView({
  card,
  onOpen,
  onNudge,
}: {
  card: Card;
  onOpen: (id: string) => void;
  onNudge: (card: Card, direction: "up" | "down") => void;
}) {
  return (
    <article
      className={`card priority-${card.priority}`}
      data-testid={`card-${card.id}`}
      data-card-id={card.id}
      draggable
      tabIndex={0}
      aria-label={`${card.id}: ${card.title}. ${card.priority} ${card.kind}. Enter opens it; Alt+Arrow keys reorder.`}
      onDragStart={(event) => {
        event.dataTransfer.setData("text/plain", card.id);
        event.dataTransfer.effectAllowed = "move";
      }}
      onClick={() => onOpen(card.id)}
      onKeyDown={(event) => {
        // Consume the keys we act on, so the same keystroke does not also reach the dialog that opens.
        if (event.key === "Enter") {
          event.preventDefault();
          onOpen(card.id);
        } else if (event.altKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
          event.preventDefault();
          onNudge(card, event.key === "ArrowUp" ? "up" : "down");
        }
      }}
    >
      <div className="card-top">
        <span className="card-id">{card.id}</span>
        <span className={`badge priority`}>{card.priority}</span>
        <span className="badge kind">{card.kind}</span>
      </div>
      <p className="card-title">{card.title}</p>
      <div className="card-bottom">
        {card.labels.slice(0, 3).map((label) => (
          <span key={label} className="label">
            {label}
          </span>
        ))}
        {card.depends_on.length > 0 ? (
          <span className="deps" title={`Depends on ${card.depends_on.join(", ")}`}>
            ⛓ {card.depends_on.join(", ")}
          </span>
        ) : null}
        {card.lease ? <LeaseBadge lease={card.lease} /> : null}
      </div>
    </article>
  );
}

/** Who holds a claimed task and until when (local time); an expired lease is said to be. */
export function LeaseBadge({ lease }: { lease: { holder: string; expires_at: string } }) {
  const until = new Date(lease.expires_at);
  const expired = until.getTime() <= Date.now();
  const time = until.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return (
    <span
      className={`lease${expired ? " expired" : ""}`}
      data-testid="lease"
      title={`Claimed by ${lease.holder}; the lease ${expired ? "ran out" : "runs"} at ${lease.expires_at}`}
    >
      🔒 {lease.holder} {expired ? "(expired)" : `until ${time}`}
    </span>
  );
}
