// Live updates: the hub's /api/stream says when an area's data changed (from
// any tab, an agent over MCP, the CLI or the graph's file watcher), as one
// revision number per area. EventSource reconnects by itself.
import { useEffect, useRef, useState } from "react";
import type { Schemas } from "./api/client";

export interface LiveState {
  /** The revision last announced for each area; empty before the first event. */
  revisions: Schemas["Revisions"];
  connected: boolean;
}

export function useLive(): LiveState {
  const [state, setState] = useState<LiveState>({ revisions: {}, connected: false });
  useEffect(() => {
    const source = new EventSource("/api/stream");
    source.addEventListener("change", (event) => {
      try {
        const revisions = JSON.parse((event as MessageEvent<string>).data) as Schemas["Revisions"];
        setState({ revisions, connected: true });
      } catch {
        // an unreadable event is skipped; the next one carries the full state
      }
    });
    source.onopen = () => setState((current) => ({ ...current, connected: true }));
    source.onerror = () => setState((current) => ({ ...current, connected: false }));
    return () => source.close();
  }, []);
  return state;
}

/** An area's announced revision, or null before the feed said anything of it. */
export function revisionOf(live: LiveState, area: string): number | null {
  return live.revisions[area] ?? null;
}

/** Calls `refresh` when `revision` moves on from the one first seen. */
export function useOnNewRevision(revision: number | null, refresh: () => void) {
  const seen = useRef<number | null>(null);
  useEffect(() => {
    if (revision === null) return;
    const first = seen.current === null;
    const moved = seen.current !== revision;
    seen.current = revision;
    if (!first && moved) refresh();
    // only a new revision should refresh, not a new callback
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [revision]);
}
