// fetchManifest and resolveFiles over a real HTTP server, and the edge-freshness example's
// fetch handler (examples/edge-freshness) under Node and under the edge (`workerd`) condition.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { statSync } from "node:fs";
import { join } from "node:path";
import { fetchManifest, resolveFiles, passportOf } from "@efmesh/lake";
import { createHandler } from "../../examples/edge-freshness/handler.mjs";
import { gapsLake, hospitalLake, repo, serve } from "./helpers.mjs";

const hospital = hospitalLake();
const gaps = gapsLake();
const server = await serve({ "/lake/": hospital.lake, "/gaps/": gaps.lake });
after(() => server.close());
const urlOf = (prefix, m) => `${server.url}${prefix}${m.rel}`;

test("fetchManifest is the one fetch; resolveFiles names every file, each served in full", async () => {
  for (const m of Object.values(hospital.manifests)) {
    let fetches = 0;
    const counting = (...a) => { fetches++; return fetch(...a); };
    const manifest = await fetchManifest(urlOf("/lake/", m), { fetch: counting });
    assert.equal(fetches, 1);
    assert.deepEqual(manifest, m.json);
    const urls = resolveFiles(urlOf("/lake/", m), manifest);
    assert.equal(urls.length, manifest.files.length);
    assert.ok(urls.length > 0);
    for (const [i, u] of urls.entries()) {
      assert.ok(u.startsWith(server.url + "/lake/"), u);
      const r = await fetch(u);
      assert.equal(r.status, 200, u);
      const body = new Uint8Array(await r.arrayBuffer());
      assert.equal(body.length, manifest.files[i].bytes);
      assert.equal(body.length, statSync(join(m.path, "..", manifest.files[i].path)).size);
    }
  }
});

test("fetchManifest reports an unreachable or missing manifest with a code", async () => {
  await assert.rejects(fetchManifest(`${server.url}/lake/nope/manifest.json`), (e) => e.code === "EFMESH_FETCH" && /answered 404/.test(e.message));
  await assert.rejects(fetchManifest("http://127.0.0.1:9/manifest.json"), (e) => e.code === "EFMESH_FETCH" && /could not fetch/.test(e.message));
});

test("edge handler: 200 with the passport when fresh, 503 with the reason when stale", async () => {
  const m = hospital.manifests["mart.daily_admissions"];
  const through = Date.parse(passportOf(m.json).completeThrough);
  const handler = (offsetSeconds) =>
    createHandler({ manifestUrl: urlOf("/lake/", m), maxLagSeconds: 86400, now: () => new Date(through + offsetSeconds * 1000) });

  const ok = await handler(3600)(new Request("http://edge/"));
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get("cache-control"), "no-store");
  const body = await ok.json();
  assert.equal(body.fresh, true);
  assert.deepEqual(body.passport, passportOf(m.json));
  assert.equal(body.freshness.lagSeconds, 3600);

  const stale = await handler(2 * 86400)(new Request("http://edge/"));
  assert.equal(stale.status, 503);
  assert.equal(stale.headers.get("retry-after"), "300");
  const sb = await stale.json();
  assert.equal(sb.fresh, false);
  assert.equal(sb.freshness.status, "stale");
  assert.match(sb.reason, /^stale: complete through 2026-02-01T00:00:00Z \(limited by med\.moves\), 2d 0h behind/);
});

test("edge handler: 503 on gaps, 502 when the manifest is missing, 405 on POST", async () => {
  const feed = gaps.manifests["raw.feed"];
  const g = await createHandler({ manifestUrl: urlOf("/gaps/", feed), now: () => new Date("2026-01-04T01:00:00Z") })(new Request("http://edge/"));
  assert.equal(g.status, 503);
  const gb = await g.json();
  assert.equal(gb.freshness.status, "gaps");
  assert.equal(gb.passport.hasGaps, true);

  const missing = await createHandler({ manifestUrl: `${server.url}/lake/gone/manifest.json` })(new Request("http://edge/"));
  assert.equal(missing.status, 502);
  assert.equal((await missing.json()).code, "EFMESH_FETCH");

  const post = await createHandler({ manifestUrl: urlOf("/lake/", feed) })(new Request("http://edge/", { method: "POST" }));
  assert.equal(post.status, 405);
  assert.throws(() => createHandler({}), /manifestUrl/);
});

test("edge handler under the workerd condition loads the bundler build and answers", async () => {
  const m = hospital.manifests["med.moves"];
  const script = `
    const lake = await import("@efmesh/lake");
    const { default: worker } = await import(${JSON.stringify(join(repo, "examples/edge-freshness/handler.mjs"))});
    const r = await worker.fetch(new Request("http://edge/"), { MANIFEST_URL: ${JSON.stringify(urlOf("/lake/", m))}, MAX_LAG_SECONDS: "60" });
    console.log(JSON.stringify({ build: lake.BUILD, status: r.status, body: await r.json() }));`;
  // asynchronously: this process serves the lake the child fetches
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--conditions=workerd", "--experimental-wasm-modules", "--no-warnings", "--input-type=module", "-e", script],
    { cwd: repo, encoding: "utf8", timeout: 60_000 },
  );
  const out = JSON.parse(stdout);
  assert.equal(out.build, "bundler");
  // the real clock is far past the lake's 2026-02-01 coverage, so the guard refuses
  assert.equal(out.status, 503);
  assert.equal(out.body.freshness.status, "stale");
  assert.equal(out.body.model, "med.moves");
});
