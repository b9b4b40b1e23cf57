// The browser against an S3-hosted lake: the native CLI publishes a small project's lake into a
// bucket of the S3-compatible test server (moto, EFMESH_TEST_S3, started by `scripts/s3-server`),
// and headless Chromium, on another origin, reads one model straight from the bucket's HTTP URLs
// with @efmesh/lake (web build) and duckdb-wasm 1.28.0. The bucket is made readable the way a
// real public S3 bucket is: an anonymous-read policy plus a CORS rule for the page's origin only
// (the server runs with MOTO_DISABLE_GLOBAL_CORS=1, so a missing rule fails here as on S3).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { DuckDBInstance } from "@duckdb/node-api";
import { efmesh, repo, serve } from "./helpers.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const artifacts = join(repo, "js", "test-artifacts");
const KEY_ID = "efmesh-test";
const SECRET = "efmesh-test-secret";

/** The S3 test server's endpoint, e.g. http://127.0.0.1:54321; unset is a failure, never a skip. */
function s3Endpoint() {
  const endpoint = process.env.EFMESH_TEST_S3;
  if (!endpoint) {
    throw new Error(
      "EFMESH_TEST_S3 is not set: run the suite with ./scripts/test, which starts a throwaway S3-compatible server, or `scripts/s3-server start DIR` and export the endpoint it prints",
    );
  }
  return endpoint.replace(/\/+$/, "");
}

/** One unsigned path-style request to the test server (it accepts anonymous admin calls). */
async function s3(method, path, body, contentType) {
  const r = await fetch(`${s3Endpoint()}${path}`, {
    method,
    body,
    headers: contentType ? { "content-type": contentType } : {},
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`S3 ${method} ${path} answered ${r.status}: ${text}`);
  return text;
}

/** Every key in `bucket` under `prefix` (ListObjectsV2; one page is enough here), sorted. */
async function s3Keys(bucket, prefix) {
  const xml = await s3("GET", `/${bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}&max-keys=1000`);
  assert.match(xml, /<IsTruncated>false<\/IsTruncated>/);
  return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]).sort();
}

/** A fresh bucket any browser may read, with CORS for `origin` only. */
async function publicBucket(origin) {
  const bucket = `efmesh-js-${process.pid}-${Date.now() % 1_000_000_000}`;
  await s3("PUT", `/${bucket}`);
  // moto refuses HEAD and preflight OPTIONS under a policy granting only s3:GetObject
  const policy = {
    Version: "2012-10-17",
    Statement: [
      { Sid: "AnonymousRead", Effect: "Allow", Principal: "*", Action: "s3:*", Resource: [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`] },
    ],
  };
  await s3("PUT", `/${bucket}?policy`, JSON.stringify(policy), "application/json");
  const cors =
    `<CORSConfiguration><CORSRule><AllowedOrigin>${origin}</AllowedOrigin>` +
    `<AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod><AllowedHeader>*</AllowedHeader>` +
    `<ExposeHeader>Content-Range</ExposeHeader><ExposeHeader>Content-Length</ExposeHeader><ExposeHeader>ETag</ExposeHeader>` +
    `<MaxAgeSeconds>60</MaxAgeSeconds></CORSRule></CORSConfiguration>`;
  await s3("PUT", `/${bucket}?cors`, cors, "application/xml");
  return bucket;
}

/** The DuckDB extension directory with httpfs (scripts/duckdb-extensions fills it once and prints it). */
function extensionDirectory() {
  const dir = process.env.EFMESH_TEST_EXTENSIONS || join(homedir(), ".cache", "efmesh-tools", "duckdb-extensions");
  return execFileSync(join(repo, "scripts", "duckdb-extensions"), [dir], { encoding: "utf8" }).trim();
}

// Three daily batches (the project starts 2026-01-29, the tests' clock is 2026-02-01): 72 rows,
// one parquet file per day, under interval= folders the reader must resolve.
const HITS = `MODEL (name web.hits, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), target parquet, start '2026-01-29', cron '@daily');
SELECT t.ts, hour(t.ts) AS h, 'page ' || hour(t.ts) AS page
FROM generate_series(CAST(@start AS TIMESTAMP), CAST(@end AS TIMESTAMP) - INTERVAL 1 HOUR, INTERVAL 1 HOUR) AS t(ts)
`;
const HITS_ROWS = 3 * 24;

/** The project, its lake in `bucket`, applied to prod by the CLI. */
function s3Project(bucket, extensions) {
  const host = s3Endpoint().replace(/^http:\/\//, "");
  const dir = mkdtempSync(join(tmpdir(), "efmesh-js-s3-"));
  writeFileSync(
    join(dir, "efmesh.toml"),
    `[project]\nname = "s3js"\nstart = "2026-01-29"\n[engine]\nduckdb = "efmesh.duckdb"\nextensions = ["httpfs"]\n[engine.settings]\nextension_directory = "${extensions}"\n` +
      `[[engine.secrets]]\nname = "lake"\ntype = "s3"\nkey_id = "${KEY_ID}"\nsecret = "${SECRET}"\nregion = "us-east-1"\nendpoint = "${host}"\nurl_style = "path"\nuse_ssl = false\n` +
      `[lake]\npath = "s3://${bucket}/lake"\nsecret = "lake"\n`,
  );
  mkdirSync(join(dir, "models"));
  writeFileSync(join(dir, "models", "hits.sql"), HITS);
  const r = efmesh(dir, ["apply", "prod", "--yes"]);
  assert.equal(r.status, 0, `efmesh apply prod --yes:\n${r.stdout}\n${r.stderr}`);
  return dir;
}

/** count(*) of `relation` through the CLI's own prod view, read natively over s3:// with httpfs. */
async function nativeCount(dir, extensions, relation) {
  const instance = await DuckDBInstance.create(":memory:", { extension_directory: extensions, autoinstall_known_extensions: "false" });
  const conn = await instance.connect();
  const host = s3Endpoint().replace(/^http:\/\//, "");
  try {
    await conn.run("LOAD httpfs");
    await conn.run(`CREATE SECRET lake (TYPE s3, KEY_ID '${KEY_ID}', SECRET '${SECRET}', REGION 'us-east-1', ENDPOINT '${host}', URL_STYLE 'path', USE_SSL false)`);
    await conn.run(`ATTACH '${join(dir, "efmesh.duckdb").replaceAll("'", "''")}' AS project (READ_ONLY)`);
    return (await conn.runAndReadAll(`SELECT count(*)::INTEGER FROM project.${relation}`)).getRows()[0][0];
  } finally {
    conn.closeSync?.();
    instance.closeSync?.();
  }
}

test("headless Chromium reads a model from the S3-hosted lake: file URLs resolved against the manifest's URL", async () => {
  const endpoint = s3Endpoint();
  // the page is served from its own origin; the lake only from the bucket
  const server = await serve({ "/js/": join(repo, "js"), "/node_modules/": join(repo, "node_modules") });
  after(() => server.close());
  const bucket = await publicBucket(server.url);
  const extensions = extensionDirectory();
  const dir = s3Project(bucket, extensions);

  // the version's folder, found by listing the bucket
  const keys = await s3Keys(bucket, "lake/web/hits/");
  const folders = [...new Set(keys.map((k) => k.split("/").slice(0, 4).join("/")))];
  assert.equal(folders.length, 1, `one version of web.hits: ${keys.join(", ")}`);
  assert.match(folders[0], /^lake\/web\/hits\/fp=[0-9a-f]{8}$/);
  const manifestUrl = `${endpoint}/${bucket}/${folders[0]}/manifest.json`;
  assert.ok(keys.includes(`${folders[0]}/manifest.json`), keys.join(", "));
  const parquetUrls = keys.filter((k) => k.endsWith(".parquet")).map((k) => `${endpoint}/${bucket}/${k}`);
  assert.equal(parquetUrls.length, 3, `one file per day: ${keys.join(", ")}`);

  // the CORS rule is real: another origin gets no Access-Control-Allow-Origin
  const foreign = await fetch(manifestUrl, { headers: { origin: "http://127.0.0.1:1" } });
  assert.equal(foreign.status, 200);
  assert.equal(foreign.headers.get("access-control-allow-origin"), null);
  await foreign.arrayBuffer();

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1000, height: 600 } });
  const consoleLines = [];
  page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => consoleLines.push(`pageerror: ${e.message}`));
  const s3Requests = [];
  page.on("request", (r) => { if (r.url().startsWith(`${endpoint}/`)) s3Requests.push(`${r.method()} ${r.url()}`); });
  await page.goto(`${server.url}/js/test/browser/index.html?manifest=${encodeURIComponent(manifestUrl)}`);
  mkdirSync(artifacts, { recursive: true });
  try {
    await page.waitForFunction(() => window.efmeshResults || window.efmeshError, null, { timeout: 90_000 });
  } catch (e) {
    await page.screenshot({ path: join(artifacts, "s3.png"), fullPage: true });
    throw new Error(`the page never finished (${e.message}); it says "${await page.textContent("#status")}"; console:\n${consoleLines.join("\n")}`);
  }
  await page.screenshot({ path: join(artifacts, "s3.png"), fullPage: true });
  const error = await page.evaluate(() => window.efmeshError);
  assert.equal(error, undefined, `${error}\nconsole:\n${consoleLines.join("\n")}\nS3 requests:\n${s3Requests.join("\n")}`);
  const results = await page.evaluate(() => window.efmeshResults);
  assert.match(await page.textContent("#status"), /\(web build\)/);
  assert.equal(results.length, 1);
  const [r] = results;
  assert.equal(r.model, "web.hits");

  // the package resolved the manifest's files against its S3 URL: exactly the bucket's objects
  assert.deepEqual([...r.files].sort(), parquetUrls);
  // and duckdb-wasm read them from the bucket, cross-origin
  for (const u of parquetUrls) assert.ok(s3Requests.some((q) => q.endsWith(u)), `${u} was never requested:\n${s3Requests.join("\n")}`);

  // the count equals what the CLI built: the model's SQL, the manifest, native DuckDB over S3
  const manifest = await (await fetch(manifestUrl)).json();
  assert.equal(manifest.files.reduce((n, f) => n + f.rows, 0), HITS_ROWS);
  assert.equal(await nativeCount(dir, extensions, "web.hits"), HITS_ROWS);
  assert.equal(r.count, HITS_ROWS);
  assert.equal(Number(await page.textContent("section[data-model='web.hits'] .count")), HITS_ROWS);
});
