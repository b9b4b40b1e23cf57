// One fetch per model (its manifest), then duckdb-wasm reads exactly the files it names, resolved
// against the manifest's URL (the page's own server, or another origin such as an S3 bucket).
import * as duckdb from "@duckdb/duckdb-wasm";
import { fetchManifest, registerModel, resolveFiles, passportOf, BUILD } from "@efmesh/lake";

const dist = "/node_modules/@duckdb/duckdb-wasm/dist/";
const status = document.getElementById("status");
try {
  const bundle = await duckdb.selectBundle({
    mvp: { mainModule: dist + "duckdb-mvp.wasm", mainWorker: dist + "duckdb-browser-mvp.worker.js" },
    eh: { mainModule: dist + "duckdb-eh.wasm", mainWorker: dist + "duckdb-browser-eh.worker.js" },
  });
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), new Worker(bundle.mainWorker));
  await db.instantiate(bundle.mainModule);
  const results = [];
  for (const url of new URLSearchParams(location.search).getAll("manifest")) {
    const manifest = await fetchManifest(url);
    const relation = await registerModel(db, url, manifest);
    await registerModel(db, url, manifest); // a second call replaces the view, nothing more
    const conn = await db.connect();
    const table = await conn.query(`SELECT count(*)::INTEGER AS n FROM ${relation}`);
    await conn.close();
    const count = table.toArray()[0].n;
    const passport = passportOf(manifest);
    results.push({ model: manifest.model, relation, count, passport, files: resolveFiles(url, manifest) });

    const s = document.createElement("section");
    s.dataset.model = manifest.model;
    const complete = passport.completeThrough ?? (passport.limitedBy ? "nothing yet" : "no time claim");
    s.innerHTML = `<h2></h2><div class="count"></div>
      <p>answers: <b class="${passport.answerable}"></b>, complete through <b class="through"></b>
      ${passport.limitedBy ? `(limited by <code class="by"></code>)` : ""}</p><ul></ul><pre class="passport"></pre>`;
    s.querySelector("h2").textContent = `${manifest.model} → ${relation}`;
    s.querySelector(".count").textContent = String(count);
    s.querySelector(`.${passport.answerable}`).textContent = passport.answerable;
    s.querySelector(".through").textContent = complete;
    if (passport.limitedBy) s.querySelector(".by").textContent = passport.limitedBy;
    for (const c of passport.caveats) {
      const li = document.createElement("li");
      li.textContent = `${c.model}: ${c.text}`;
      s.querySelector("ul").append(li);
    }
    s.querySelector(".passport").textContent = JSON.stringify(passport, null, 2);
    document.getElementById("models").append(s);
  }
  status.textContent = `read ${results.length} model(s) with @efmesh/lake (${BUILD} build) and duckdb-wasm`;
  window.efmeshResults = results;
} catch (e) {
  status.textContent = `error: ${e.message}`;
  window.efmeshError = String(e.stack ?? e);
}
