import { useState } from "react";
import { api, call, type ModuleInfo } from "../api/client";
import { useLoaded } from "../api/useLoaded";
import { FailureNotice } from "../components/FailureNotice";

const listModules = async () => {
  const result = await call(() => api.GET("/api/settings/modules"));
  return result.ok ? { ok: true as const, data: result.data.modules } : result;
};

export function SettingsPage() {
  const { data: modules, setData: setModules, failure, setFailure, reload: load } = useLoaded(listModules);
  // the module whose switch is being saved: its switch waits until the hub has
  // it, so a page opened next sees the module as the switch shows it
  const [saving, setSaving] = useState<string | null>(null);

  const toggle = async (module: ModuleInfo) => {
    // show the switch where the person put it; a refusal puts it back on reload
    setModules((current) => current?.map((m) => (m.id === module.id ? { ...m, enabled: !m.enabled } : m)) ?? null);
    setSaving(module.id);
    try {
      const result = await call(() =>
        api.PUT("/api/settings/modules/{module}", {
          params: { path: { module: module.id } },
          body: { enabled: !module.enabled },
        }),
      );
      if (!result.ok) setFailure(result.failure);
      await load();
    } finally {
      setSaving(null);
    }
  };

  return (
    <section className="settings" aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <h2>Modules</h2>
      <p>A disabled module's tools answer "module disabled" everywhere: in this app, over REST and to agents.</p>
      {failure ? <FailureNotice failure={failure} onRetry={() => void load()} /> : null}
      <ul className="modules">
        {(modules ?? []).map((module) => (
          <li key={module.id}>
            <label>
              <input
                type="checkbox"
                checked={module.enabled}
                disabled={module.id === "core" || saving === module.id}
                aria-busy={saving === module.id}
                onChange={() => void toggle(module)}
                data-testid={`module-${module.id}`}
              />
              <strong>{module.id}</strong> <span>{module.description}</span>
            </label>
            <span className="module-tools">{module.tools.length} tools</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
