// Test support: lakes written by the real native CLI, and a real HTTP server over them.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir, homedir } from "node:os";
import { join, dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import serveStatic from "serve-static";
import finalhandler from "finalhandler";

export const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Every lake the tests build sees the same clock. */
export const NOW = "2026-02-01T00:00:00Z";

/** The efmesh binary `cargo build -p efmesh` made (scripts/test builds it before these tests). */
export function efmeshBin() {
  const bin =
    process.env.EFMESH_BIN ||
    join(process.env.CARGO_TARGET_DIR ?? join(homedir(), ".cache", "efmesh-target"), "debug", "efmesh");
  if (!existsSync(bin)) {
    throw new Error(`no efmesh binary at ${bin}: run \`cargo build -p efmesh --no-default-features\` or set EFMESH_BIN`);
  }
  return bin;
}

/** Run the CLI in `cwd`; returns {status, stdout, stderr}. */
export function efmesh(cwd, args, env = {}) {
  const r = spawnSync(efmeshBin(), args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, EFMESH_NOW: NOW, NO_COLOR: "1", ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every manifest under `lake`, keyed by model name: {model, path (absolute), rel (to lake), json}. */
export function manifests(lake) {
  const out = {};
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === "manifest.json") {
        const text = readFileSync(p, "utf8");
        const json = JSON.parse(text);
        out[json.model] = { model: json.model, path: p, rel: relative(lake, p), text, json };
      }
    }
  };
  walk(lake);
  return out;
}

let hospital;
/** The hospital example applied to `prod` by the CLI: {dir, lake, manifests}. */
export function hospitalLake() {
  if (hospital) return hospital;
  const dir = mkdtempSync(join(tmpdir(), "efmesh-js-hospital-"));
  cpSync(join(repo, "examples", "hospital"), dir, {
    recursive: true,
    filter: (src) => !/(\/lake$|efmesh\.duckdb|efmesh\.state\.sqlite)/.test(src),
  });
  const r = efmesh(dir, ["apply", "prod", "--yes"]);
  if (r.status !== 0) throw new Error(`efmesh apply failed:\n${r.stderr}`);
  const lake = join(dir, "lake");
  hospital = { dir, lake, manifests: manifests(lake) };
  return hospital;
}

/** A small project written into a fresh directory and applied to `dev`; the apply may fail. */
export function projectLake(name, models) {
  const dir = mkdtempSync(join(tmpdir(), `efmesh-js-${name}-`));
  writeFileSync(
    join(dir, "efmesh.toml"),
    `[project]\nname = "${name}"\nstart = "2026-01-01"\n[engine]\nduckdb = "efmesh.duckdb"\n[state]\nsqlite = "state.sqlite"\n[lake]\npath = "lake"\n`,
  );
  mkdirSync(join(dir, "models"));
  for (const [file, sql] of Object.entries(models)) writeFileSync(join(dir, "models", file), sql);
  const apply = efmesh(dir, ["apply", "dev", "--yes"]);
  const lake = join(dir, "lake");
  return { dir, lake, apply, manifests: existsSync(lake) ? manifests(lake) : {} };
}

/** A feed that fails on 2026-01-04 (the engine raises), so its manifest records a failed interval. */
export function gapsLake() {
  return projectLake("gaps", {
    "feed.sql": `MODEL (name raw.feed, target parquet, kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1), start '2026-01-01', cron '@daily');
SELECT id, ts, CASE WHEN ts >= TIMESTAMP '2026-01-04' AND ts < TIMESTAMP '2026-01-05' THEN error('feed outage') ELSE 'ok' END AS note
FROM (SELECT range AS id, TIMESTAMP '2026-01-01' + to_hours(range) AS ts FROM range(1000)) WHERE ts >= @start AND ts < @end`,
  });
}

/** A mart over a feed whose history starts after "now": the mart has no coverage yet. */
export function noCoverageLake() {
  return projectLake("nocoverage", {
    "later.sql": `MODEL (name raw.later, kind INCREMENTAL_BY_TIME_RANGE (time_column ts), start '2026-03-01', cron '@daily');
SELECT range AS id, TIMESTAMP '2026-03-01' + to_hours(range) AS ts FROM range(100) WHERE ts >= @start AND ts < @end`,
    "total.sql": `MODEL (name mart.later_total, target parquet, kind FULL);
SELECT count(*) AS n FROM raw.later`,
  });
}

/**
 * A static HTTP server (with Range requests, as duckdb-wasm needs) mounting each
 * `{prefix: directory}`. Resolves to {url, close}.
 */
export function serve(mounts) {
  const handlers = Object.entries(mounts).map(([prefix, root]) => [prefix, serveStatic(root, { fallthrough: false, dotfiles: "allow", cacheControl: false })]);
  const server = createServer((req, res) => {
    const done = finalhandler(req, res);
    for (const [prefix, handler] of handlers) {
      if (req.url.startsWith(prefix)) {
        req.url = req.url.slice(prefix.length - 1);
        return handler(req, res, done);
      }
    }
    done();
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
      }),
    ),
  );
}
