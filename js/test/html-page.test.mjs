// The HTML pages efmesh writes, in headless Chromium with every request beyond the test server
// refused: `efmesh graph --html --env prod` (self-contained: it may fetch nothing at all) and
// the lake's index.html that apply writes, whose SQL box runs duckdb-wasm loaded from the URLs
// in [lake.index] (here the test server's own copy). What the pages show is checked against
// the CLI's JSON and native DuckDB over the same files.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync, appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { efmesh, hospitalLake, repo, serve } from "./helpers.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const artifacts = join(repo, "js", "test-artifacts");
mkdirSync(artifacts, { recursive: true });

async function launch() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  after(() => browser.close());
  return browser;
}

/** A page whose requests are refused unless `allowed(url)`; refused URLs are collected. */
async function guardedPage(browser, allowed) {
  const context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
  const blocked = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (allowed(url)) return route.continue();
    blocked.push(url);
    return route.abort("blockedbyclient");
  });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  return { page, blocked, errors };
}

test("graph --html: a self-contained layered DAG whose details match the CLI", async () => {
  const hospital = hospitalLake();
  const r = efmesh(hospital.dir, ["graph", "--html", "--env", "prod"]);
  assert.equal(r.status, 0, r.stderr);
  const file = join(mkdtempSync(join(tmpdir(), "efmesh-dag-")), "dag.html");
  writeFileSync(file, r.stdout);
  const graph = JSON.parse(efmesh(hospital.dir, ["graph", "--json"]).stdout);
  const passports = JSON.parse(efmesh(hospital.dir, ["passport", "prod", "--json"]).stdout);

  const browser = await launch();
  const pageUrl = pathToFileURL(file).href;
  const { page, blocked, errors } = await guardedPage(browser, (url) => url === pageUrl || url.startsWith(pageUrl + "#"));
  await page.goto(pageUrl);
  await page.waitForFunction(() => window.efmeshPage?.ready);

  // one node per model, one edge per dependency
  const names = await page.$$eval("g.node", (gs) => gs.map((g) => g.dataset.model));
  assert.deepEqual(names.sort(), graph.models.map((m) => m.name).sort());
  const edgeCount = graph.models.reduce((n, m) => n + m.deps.length, 0);
  assert.equal(await page.locator("path.edge").count(), edgeCount);
  // layered: every model is drawn right of each of its dependencies
  const x = Object.fromEntries(
    await page.$$eval("g.node", (gs) => gs.map((g) => [g.dataset.model, g.getBoundingClientRect().x])),
  );
  for (const m of graph.models) for (const d of m.deps) assert.ok(x[m.name] > x[d], `${m.name} right of ${d}`);

  // a click shows the model: kind, fingerprint, SQL, columns, audits and the passport
  await page.getByRole("button", { name: "mart.stays, FULL" }).click();
  const stays = graph.models.find((m) => m.name === "mart.stays");
  assert.equal(await page.textContent("#model-name"), "mart.stays");
  const details = await page.textContent("#details");
  assert.ok(details.includes(stays.fingerprint), "the fingerprint");
  assert.match(await page.textContent("pre.sql"), /lead\(/i);
  const columns = await page.$$eval("table.columns tr td:first-child", (tds) => tds.map((t) => t.textContent));
  assert.deepEqual(columns, ["stay_id", "patient_id", "stay_seq", "dept_code", "dept_name", "age_band", "entered_at", "left_at", "stay_hours", "is_current"]);
  const audits = await page.$$eval("ul.audits li", (lis) => lis.map((l) => l.textContent));
  assert.equal(audits.length, 3);
  assert.ok(audits.includes("assert_stay_non_negative"), audits.join(" | "));
  const effective = passports.models.find((m) => m.model === "mart.stays").effective;
  const passport = await page.$$eval("dl.passport dt", (dts) => Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent])));
  assert.equal(passport.answerable, effective.answerable);
  assert.equal(passport["complete through"], effective.completeThrough);
  assert.equal(passport["coverage limited by"], effective.limitedBy);
  // the keyboard reaches a model too
  await page.getByRole("button", { name: "med.moves, INCREMENTAL_BY_TIME_RANGE" }).focus();
  await page.keyboard.press("Enter");
  assert.equal(await page.textContent("#model-name"), "med.moves");
  assert.ok((await page.textContent("#details")).includes("contiguous through"));
  await page.getByRole("button", { name: "mart.stays, FULL" }).click();
  await page.screenshot({ path: join(artifacts, "graph.png"), fullPage: true });
  assert.deepEqual(blocked, [], "the page fetched nothing");
  assert.deepEqual(errors, []);
  // no SQL box on the DAG page
  assert.equal(await page.isHidden("#query"), true);
});

test("the lake's index.html lists the lake's models and runs SQL over them with duckdb-wasm", async () => {
  const dir = mkdtempSync(join(tmpdir(), "efmesh-js-index-"));
  cpSync(join(repo, "examples", "hospital"), dir, {
    recursive: true,
    filter: (src) => !/(\/lake$|efmesh\.duckdb|efmesh\.state\.sqlite|\.efmesh$)/.test(src),
  });
  const dist = "/node_modules/@duckdb/duckdb-wasm/dist/";
  appendFileSync(
    join(dir, "efmesh.toml"),
    `\n[lake.index]\nduckdb_wasm = "${dist}duckdb-browser.mjs"\nduckdb_wasm_dist = "${dist}"\n` +
      `imports = { "apache-arrow" = "/node_modules/apache-arrow/Arrow.dom.mjs", "tslib" = "/node_modules/tslib/tslib.es6.mjs", "flatbuffers" = "/node_modules/flatbuffers/mjs/flatbuffers.js" }\n`,
  );
  const applied = efmesh(dir, ["apply", "prod", "--yes"]);
  assert.equal(applied.status, 0, applied.stderr);
  assert.ok(existsSync(join(dir, "lake", "index.html")), "apply wrote the lake's page");
  const count = (sql) => Number(JSON.parse(efmesh(dir, ["query", "prod", sql, "--json"]).stdout).rows[0].n);

  const server = await serve({ "/lake/": join(dir, "lake"), "/node_modules/": join(repo, "node_modules") });
  after(() => server.close());
  const browser = await launch();
  const { page, blocked, errors } = await guardedPage(browser, (url) => url.startsWith(server.url + "/") || url.startsWith("blob:"));
  await page.goto(`${server.url}/lake/index.html`);
  await page.waitForFunction(() => window.efmeshPage?.ready);
  // the lake's models (target parquet) are marked; others are shown as part of the DAG
  const lake = await page.$$eval("g.node.lake", (gs) => gs.map((g) => g.dataset.model).sort());
  assert.deepEqual(lake, ["mart.daily_admissions", "med.moves", "ref.departments"]);

  async function run(sql) {
    await page.fill("#sql", sql);
    await page.click("#run");
    await page.waitForFunction(() => /row\(s\)|error/.test(document.getElementById("query-status").textContent), null, { timeout: 90_000 });
    return {
      status: await page.textContent("#query-status"),
      header: await page.$$eval("table.results th", (ths) => ths.map((t) => t.textContent)),
      rows: await page.$$eval("table.results tr", (trs) => trs.slice(1).map((tr) => [...tr.children].map((td) => td.textContent))),
    };
  }
  const moves = await run("SELECT count(*) AS n FROM med.moves");
  assert.equal(moves.status, "1 row(s)", moves.status);
  assert.deepEqual(moves.header, ["n"]);
  assert.equal(Number(moves.rows[0][0]), count("SELECT count(*) AS n FROM med.moves"));
  // a join of two lake models, answered in the browser as natively
  const joined = "SELECT count(*) AS n FROM med.moves AS m JOIN ref.departments AS d ON d.dept_code = m.dept_code WHERE d.is_critical_care";
  const j = await run(joined);
  assert.equal(Number(j.rows[0][0]), count(joined));
  assert.ok(Number(j.rows[0][0]) > 0);
  await page.getByRole("button", { name: "mart.daily_admissions, FULL" }).click();
  assert.ok((await page.textContent("#details")).includes('"mart"."daily_admissions"'));
  const days = await run("SELECT admitted_on, admissions FROM mart.daily_admissions ORDER BY admitted_on LIMIT 5");
  const cli = JSON.parse(efmesh(dir, ["query", "prod", "SELECT admitted_on, admissions FROM mart.daily_admissions ORDER BY admitted_on LIMIT 5", "--json"]).stdout);
  assert.deepEqual(days.rows, cli.rows.map((r) => [r.admitted_on, r.admissions]), "dates and counts as the CLI prints them");
  await page.screenshot({ path: join(artifacts, "lake-index.png"), fullPage: true });
  // a model that is not in the lake is an error in the page, not a crash
  const bad = await run("SELECT * FROM mart.stays");
  assert.match(bad.status, /^error: .*stays/, bad.status);
  assert.deepEqual(blocked, [], "the page asked for nothing beyond the test server");
  assert.deepEqual(errors.filter((e) => !/stays/.test(e)), []);
});

test("by default the lake's page loads duckdb-wasm from the pinned CDN URL", () => {
  const hospital = hospitalLake();
  const html = readFileSync(join(hospital.lake, "index.html"), "utf8");
  const data = JSON.parse(html.match(/<script type="application\/json" id="efmesh-data">(.*?)<\/script>/s)[1]);
  assert.equal(data.query.module, "https://cdn.jsdelivr.net/npm/@duckdb/duckdb-wasm@1.28.0/+esm");
  assert.equal(data.env, "prod");
  assert.ok(!html.includes("importmap"), "no import map without [lake.index] imports");
});
