import { defineConfig } from "vite";

// The build lands in ../static, which the cos binary embeds.
export default defineConfig({
  build: { outDir: "../static", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 800 },
  oxc: { jsx: { runtime: "automatic" } },
  server: { proxy: { "/api": "http://127.0.0.1:9188", "/docs": "http://127.0.0.1:9188" } },
});
