// parseManifest and the version constants, on manifests the native CLI wrote and on the
// JSON Schema's fixtures.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import * as lake from "@efmesh/lake";
import { hospitalLake, repo } from "./helpers.mjs";

test("the node condition loads the nodejs build, and versions match the crates and the schema", () => {
  assert.equal(lake.BUILD, "nodejs");
  const schema = JSON.parse(readFileSync(join(repo, "manifest-schema", "manifest.schema.json"), "utf8"));
  assert.equal(lake.MANIFEST_VERSION, schema.properties.manifestVersion.const);
  const cargo = readFileSync(join(repo, "Cargo.toml"), "utf8");
  assert.equal(lake.VERSION, cargo.match(/\[workspace\.package\][^[]*?version = "([^"]+)"/)[1]);
  const pkg = JSON.parse(readFileSync(join(repo, "js", "package.json"), "utf8"));
  assert.equal(pkg.version, lake.VERSION, "the npm package and the crates carry one version");
});

test("every manifest the CLI wrote parses, from text and from an object, unchanged", () => {
  const { manifests } = hospitalLake();
  assert.deepEqual(Object.keys(manifests).sort(), ["mart.daily_admissions", "med.moves", "ref.departments"]);
  for (const { text, json } of Object.values(manifests)) {
    assert.deepEqual(lake.parseManifest(text), json);
    assert.deepEqual(lake.parseManifest(json), json);
  }
});

test("a newer manifestVersion is refused with a message that says so", () => {
  const { json } = hospitalLake().manifests["med.moves"];
  const future = { ...json, manifestVersion: lake.MANIFEST_VERSION + 1, someNewField: true };
  assert.throws(
    () => lake.parseManifest(future),
    (e) => e.code === "EFMESH_MANIFEST_NEWER" && /manifest version 2 is newer than this reader's 1; upgrade the reader/.test(e.message),
  );
  // unknown fields alone are additive
  assert.equal(lake.parseManifest({ ...json, someNewField: { any: 1 } }).model, "med.moves");
});

test("the schema's valid fixtures parse and every invalid one is refused", () => {
  const dir = (k) => join(repo, "manifest-schema", "fixtures", k);
  const read = (k, f) => JSON.parse(readFileSync(join(dir(k), f), "utf8"));
  for (const f of readdirSync(dir("valid"))) lake.parseManifest(read("valid", f));
  const invalid = readdirSync(dir("invalid"));
  assert.ok(invalid.length >= 20);
  for (const f of invalid) {
    assert.throws(
      () => lake.parseManifest(read("invalid", f)),
      (e) => e.code === (f === "manifest-version-newer.json" ? "EFMESH_MANIFEST_NEWER" : "EFMESH_MANIFEST_INVALID"),
      `${f} was accepted`,
    );
  }
  assert.throws(() => lake.parseManifest("{not json"), (e) => e.code === "EFMESH_MANIFEST_INVALID");
  assert.throws(() => lake.parseManifest(42), (e) => e.code === "EFMESH_MANIFEST_INVALID");
});

test("a manifest without an effective passport falls back to the declared half", () => {
  const { json } = hospitalLake().manifests["med.moves"];
  const { effective, ...declared } = json;
  const p = lake.passportOf(declared);
  assert.equal(p.declaredOnly, true);
  assert.equal(p.completeThrough, json.freshness.contiguousThrough);
  assert.equal(p.limitedBy, "med.moves");
  assert.equal(lake.passportOf(json).declaredOnly, false);
  assert.ok(effective);
});

test("a crafted column type is refused before anything reaches duckdb-wasm", async () => {
  const { json } = hospitalLake().manifests["med.moves"];
  const crafted = structuredClone(json);
  crafted.schema[0].type = "INTEGER) AS x; DROP TABLE patients; --";
  assert.throws(
    () => lake.parseManifest(crafted),
    (e) => e.code === "EFMESH_MANIFEST_INVALID" && /schema\[0\]\.type/.test(e.message),
  );
  // registerModel refuses it before its first call on the database: whatever it is
  // handed records every call, and none may happen
  const calls = [];
  const db = new Proxy({}, { get: (_, name) => (...args) => { calls.push([name, ...args]); } });
  await assert.rejects(lake.registerModel(db, "http://127.0.0.1:1/m/manifest.json", crafted), (e) => e.code === "EFMESH_MANIFEST_INVALID");
  assert.deepEqual(calls, []);
  // a real engine type still parses, and comes back as the manifest wrote it
  assert.equal(lake.parseManifest(json).schema[0].type, json.schema[0].type);
});

test("a manifest nested 5,000 deep is refused, twice, and the module keeps working", () => {
  const { json } = hospitalLake().manifests["med.moves"];
  let deep = 1;
  for (let i = 0; i < 5000; i++) deep = { x: deep };
  let shallow = 1;
  for (let i = 0; i < 100; i++) shallow = { x: shallow };
  // deeper than 64 but well within what JavaScript serialises: refused by efmesh's own limit
  assert.throws(() => lake.parseManifest({ ...json, extra: shallow }), (e) => /deeper than 64/.test(e.message));
  for (let round = 0; round < 2; round++) {
    assert.throws(
      () => lake.parseManifest({ ...json, extra: deep }),
      (e) => e.code === "EFMESH_MANIFEST_INVALID" && /deeper|recursion|call stack/.test(e.message),
    );
    const text = JSON.stringify(json).replace(/}$/, `, "extra": ${"[".repeat(5000)}1${"]".repeat(5000)}}`);
    assert.throws(() => lake.parseManifest(text), (e) => e.code === "EFMESH_MANIFEST_INVALID" && /recursion|deeper/.test(e.message));
  }
  const cyclic = { ...json };
  cyclic.self = cyclic;
  assert.throws(() => lake.parseManifest(cyclic), (e) => e.code === "EFMESH_MANIFEST_INVALID");
  assert.equal(lake.parseManifest(json).model, "med.moves");
});
