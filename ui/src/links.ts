// Addresses the pages hand each other: a document in the Documents page, a
// place in the code in the person's editor (VS Code's URL scheme).

/** `/documents/<mount>` (the mount's tree) or `/documents/<mount>/<path>`, with a section's anchor. */
export function documentHref(mount: string, path = "", anchor = ""): string {
  const base = `/documents/${encodeURIComponent(mount)}`;
  const file = path ? `/${path.split("/").map(encodeURIComponent).join("/")}` : "";
  return `${base}${file}${anchor ? `#${encodeURIComponent(anchor)}` : ""}`;
}

/** `path:line` of the repository opened in the editor; null without the repository's folder. */
export function editorHref(repoRoot: string | null, path: string, line: number): string | null {
  if (!repoRoot) return null;
  return `vscode://file/${encodeURI(`${repoRoot.replace(/\/$/, "")}/${path}`)}:${line}`;
}
