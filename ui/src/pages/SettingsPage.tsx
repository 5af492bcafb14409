import { api, call, type ModuleInfo } from "../api/client";
import { useLoaded } from "../api/useLoaded";
import { FailureNotice } from "../components/FailureNotice";

const listModules = async () => {
  const result = await call(() => api.GET("/api/settings/modules"));
  return result.ok ? { ok: true as const, data: result.data.modules } : result;
};

export function SettingsPage() {
  const { data: modules, setData: setModules, failure, setFailure, reload: load } = useLoaded(listModules);

  const toggle = async (module: ModuleInfo) => {
    // show the switch where the person put it; a refusal puts it back on reload
    setModules((current) => current?.map((m) => (m.id === module.id ? { ...m, enabled: !m.enabled } : m)) ?? null);
    const result = await call(() =>
      api.PUT("/api/settings/modules/{module}", {
        params: { path: { module: module.id } },
        body: { enabled: !module.enabled },
      }),
    );
    if (!result.ok) setFailure(result.failure);
    await load();
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
                disabled={module.id === "core"}
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
