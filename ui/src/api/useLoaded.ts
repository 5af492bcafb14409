// One answer loaded when a page mounts and again on demand (after a change, or Retry).
import { type Dispatch, type SetStateAction, useCallback, useEffect, useState } from "react";
import type { Failure, Result } from "./client";

export interface Loaded<T> {
  /** The last answer that arrived; a failed reload keeps it on screen beside the failure. */
  data: T | null;
  setData: Dispatch<SetStateAction<T | null>>;
  failure: Failure | null;
  setFailure: Dispatch<SetStateAction<Failure | null>>;
  reload: () => Promise<void>;
}

/** `request` must keep its identity between renders (define it outside the component). */
export function useLoaded<T>(request: () => Promise<Result<T>>): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);

  const reload = useCallback(async () => {
    const result = await request();
    if (result.ok) {
      setData(result.data);
      setFailure(null);
    } else {
      setFailure(result.failure);
    }
  }, [request]);

  useEffect(() => {
    void reload();
  }, [reload]);

  return { data, setData, failure, setFailure, reload };
}
