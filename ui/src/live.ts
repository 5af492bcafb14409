// Live updates: the hub's /api/stream says when the board changed (from any
// tab, an agent over MCP, or the CLI). EventSource reconnects by itself.
import { useEffect, useState } from "react";

export interface LiveState {
  /** The board revision last announced, or null before the first event. */
  board: number | null;
  connected: boolean;
}

export function useLive(): LiveState {
  const [state, setState] = useState<LiveState>({ board: null, connected: false });
  useEffect(() => {
    const source = new EventSource("/api/stream");
    source.addEventListener("change", (event) => {
      try {
        const revisions = JSON.parse((event as MessageEvent<string>).data) as { board?: number };
        setState({ board: revisions.board ?? null, connected: true });
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
