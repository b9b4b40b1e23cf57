// The real-browser test: a lake the native CLI built from the hospital example, served over
// HTTP with the package, read in headless Chromium by @efmesh/lake (web build) and duckdb-wasm
// 1.28.0. The browser's counts must equal native DuckDB's over the same files, and the
// rendered passport must equal `efmesh passport --json`.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { chromium } from "playwright-core";
import { DuckDBInstance } from "@duckdb/node-api";
import { efmesh, hospitalLake, repo, serve } from "./helpers.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const artifacts = join(repo, "js", "test-artifacts");

test("headless Chromium reads the lake: counts match native DuckDB, passports match the CLI", async () => {
  const hospital = hospitalLake();
  const server = await serve({
    "/lake/": hospital.lake,
    "/js/": join(repo, "js"),
    "/node_modules/": join(repo, "node_modules"),
  });
  after(() => server.close());
  const models = ["med.moves", "mart.daily_admissions"];
  const query = models.map((m) => `manifest=${encodeURIComponent(`/lake/${hospital.manifests[m].rel}`)}`).join("&");

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const consoleLines = [];
  page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => consoleLines.push(`pageerror: ${e.message}`));
  await page.goto(`${server.url}/js/test/browser/index.html?${query}`);
  mkdirSync(artifacts, { recursive: true });
  try {
    await page.waitForFunction(() => window.efmeshResults || window.efmeshError, null, { timeout: 90_000 });
  } catch (e) {
    await page.screenshot({ path: join(artifacts, "browser.png"), fullPage: true });
    throw new Error(`the page never finished (${e.message}); it says "${await page.textContent("#status")}"; console:\n${consoleLines.join("\n")}`);
  }
  await page.screenshot({ path: join(artifacts, "browser.png"), fullPage: true });
  const error = await page.evaluate(() => window.efmeshError);
  assert.equal(error, undefined, `${error}\n${consoleLines.join("\n")}`);

  // what the page rendered, read back from the DOM
  const rendered = await page.$$eval("section", (ss) =>
    ss.map((s) => ({ model: s.dataset.model, count: Number(s.querySelector(".count").textContent), passport: JSON.parse(s.querySelector(".passport").textContent) })),
  );
  assert.deepEqual(rendered.map((r) => r.model), models);
  assert.match(await page.textContent("#status"), /\(web build\)/);

  // native DuckDB over the same files, listed by the same manifests
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  const cli = JSON.parse(efmesh(hospital.dir, ["passport", "prod", "--json"]).stdout);
  for (const r of rendered) {
    const m = hospital.manifests[r.model];
    const files = m.json.files.map((f) => `'${join(dirname(m.path), f.path).replaceAll("'", "''")}'`);
    const reader = await conn.runAndReadAll(`SELECT count(*)::INTEGER FROM read_parquet([${files.join(", ")}], union_by_name = true)`);
    const native = reader.getRows()[0][0];
    assert.ok(native > 0, r.model);
    assert.equal(r.count, native, `${r.model}: browser count against native DuckDB`);
    const expected = m.json.files.reduce((n, f) => n + f.rows, 0);
    assert.equal(r.count, expected, `${r.model}: the manifest's row counts`);

    const effective = cli.models.find((x) => x.model === r.model).effective;
    const { answerable, answerableLimitedBy, completeThrough, limitedBy, caveats } = r.passport;
    assert.deepEqual({ answerable, answerableLimitedBy, completeThrough, limitedBy, caveats }, effective, r.model);
  }
  conn.closeSync?.();
});
