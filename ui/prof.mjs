import { chromium } from "@playwright/test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const folder = "../tests/fixtures/coding-os-tasks";
let parts=["# Every task\n\n"], size=0;
for (const name of readdirSync(folder).sort()) { const t = readFileSync(join(folder,name),"utf8").replace(/^(#{1,5}) /gm, "#$1 "); parts.push(`## ${name}\n\n${t}\n`); size+=t.length; if (size>1048576) break; }
const repo = mkdtempSync(join(tmpdir(), "prof-")); mkdirSync(join(repo,"docs")); writeFileSync(join(repo,"docs","big.md"), parts.join(""));
const hub = spawn("../target/release/cos", ["serve", repo, "--port", "29555"], {stdio:"ignore", env:{...process.env, COS_STATE_DIR: join(repo,".cos")}});
await new Promise(r=>setTimeout(r,1500));
const browser = await chromium.launch({executablePath:"/usr/bin/chromium", args:["--no-sandbox"]});
const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
const un = readdirSync("/tmp/unmin/assets");
await page.route("**/assets/*", route => { const u = route.request().url(); const ext = u.split(".").pop(); const prefix = u.split("/").pop().split("-")[0]; const f = un.find(n => n.startsWith(prefix+"-") && n.endsWith(ext)); if (!f) return route.continue(); let body = readFileSync("/tmp/unmin/assets/"+f, "utf8"); if (ext==="css") body += (process.argv[3]??"").includes("cv") ? "\n.markdown > * { content-visibility: auto; contain-intrinsic-size: auto 1.5em; }" : ""; return route.fulfill({body, contentType: ext==="js"?"text/javascript":"text/css"}); });
const cdp = await page.context().newCDPSession(page);
await cdp.send("Profiler.enable"); await cdp.send("Profiler.setSamplingInterval", {interval: 200});
const mode = process.argv[2] ?? "render";
await page.goto("http://127.0.0.1:29555/documents/docs/big.md");
await page.locator("[data-testid=rendered] h2").last().waitFor({state:"attached", timeout: 60000});
if (mode === "render") { for (let i=0;i<3;i++){ await page.goto("http://127.0.0.1:29555/documents/docs"); await page.getByTestId("doc-entry").first().waitFor(); if (i===2) await cdp.send("Profiler.start"); const t=Date.now(); await page.getByTestId("doc-entry").first().click(); await page.locator("[data-testid=rendered] h2").first().waitFor({state:"visible", timeout: 60000}); await page.evaluate(() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))); console.log("render ms", Date.now()-t);} }
else { await page.getByRole("button", {name:"Edit document"}).click();
 const opts = process.argv[3] ?? "";
 if (opts.includes("nospell")) await page.evaluate(() => document.querySelector("[data-testid=doc-textarea]").spellcheck = false);
 if (opts.includes("cv")) await page.addStyleTag({content: ".markdown > * { content-visibility: auto; contain-intrinsic-size: auto 1.5em; }"});
 if (opts.includes("hide")) await page.addStyleTag({content: "[data-testid=rendered], .doc-outline { display: none }"});
 if (opts.includes("nopreview")) await page.getByLabel("Preview").uncheck();
 if (opts.includes("contain")) await page.addStyleTag({content: ".doc-editor textarea { contain: strict; height: 36rem; }"}); await page.getByTestId("doc-textarea").click(); await page.keyboard.press("Control+End"); await page.waitForTimeout(1500); await cdp.send("Profiler.start"); for (let i=0;i<15;i++){ await page.keyboard.type("x"); await page.waitForTimeout(30);} }
const { profile } = await cdp.send("Profiler.stop");
const self = new Map(); const dt = profile.timeDeltas; const byId = new Map(profile.nodes.map(n=>[n.id,n]));
profile.samples.forEach((id,i)=>{ const n = byId.get(id); const key = `${n.callFrame.functionName||"(anon)"} ${n.callFrame.url.split("/").pop()}:${n.callFrame.lineNumber}`; self.set(key,(self.get(key)??0)+(dt[i]??0)); });
const total = [...self.values()].reduce((a,b)=>a+b,0);
console.log("total ms", (total/1000).toFixed(0));
[...self.entries()].sort((a,b)=>b[1]-a[1]).slice(0,25).forEach(([k,v])=>console.log((v/1000).toFixed(0).padStart(6), k));
await browser.close(); hub.kill();
