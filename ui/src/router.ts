// A minimal history router: the hub has a handful of top-level pages.
import { useEffect, useState } from "react";

/** The app's top-level pages, in the order the navigation shows them. */
export const PAGES = [
  { path: "/board", label: "Board" },
  { path: "/graph", label: "Graph" },
  { path: "/search", label: "Search" },
  { path: "/changes", label: "Changes" },
  { path: "/documents", label: "Documents" },
  { path: "/settings", label: "Settings" },
] as const;

const listeners = new Set<() => void>();

export function navigate(path: string): void {
  if (window.location.pathname !== path) {
    window.history.pushState(null, "", path);
    listeners.forEach((listener) => listener());
  }
}

export function usePath(): string {
  const [path, setPath] = useState(window.location.pathname);
  useEffect(() => {
    const update = () => setPath(window.location.pathname);
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return path;
}
