// A freshness guard for a dashboard, as a standard fetch handler: `(Request) => Response`.
//
// It fetches one model's manifest from the lake and answers
//   200 {fresh: true, passport, freshness}      when the data is complete to within the allowed lag,
//   503 {fresh: false, reason, passport, ...}   when it is stale, has gaps or has no coverage yet,
//   502 {fresh: false, reason}                  when the manifest cannot be fetched or read.
// The verdict comes from efmesh's own core (WebAssembly), so it matches `efmesh passport`.
//
// Runs unchanged under Node (`node serve.mjs`), Cloudflare Workers (export default below, with
// MANIFEST_URL and MAX_LAG_SECONDS as variables), Deno and other edge runtimes.
import { fetchManifest, passportOf, checkFreshness } from "@efmesh/lake";

/**
 * Build a handler for one manifest.
 * @param {object} options
 * @param {string} options.manifestUrl  the model version's manifest.json
 * @param {number} [options.maxLagSeconds=86400]  how far behind "now" the data may be
 * @param {typeof fetch} [options.fetch]  the fetch to use (the global one by default)
 * @param {() => Date} [options.now]  the clock (tests pin it)
 * @returns {(request: Request) => Promise<Response>}
 */
export function createHandler({ manifestUrl, maxLagSeconds = 86_400, fetch, now = () => new Date() }) {
  if (!manifestUrl) throw new Error("createHandler: `manifestUrl` is required (set MANIFEST_URL)");
  return async function handle(request) {
    if (request.method !== "GET" && request.method !== "HEAD") {
      return json(405, { fresh: false, reason: `method ${request.method} not allowed; use GET` }, { allow: "GET, HEAD" });
    }
    let manifest;
    try {
      manifest = await fetchManifest(manifestUrl, { fetch });
    } catch (e) {
      return json(502, { fresh: false, reason: e.message, code: e.code ?? "EFMESH_FETCH" });
    }
    const passport = passportOf(manifest);
    const freshness = checkFreshness(manifest, now(), maxLagSeconds);
    const body = {
      fresh: freshness.fresh,
      model: manifest.model,
      fingerprint: manifest.fingerprint,
      reason: freshness.reason,
      freshness,
      passport,
    };
    return json(freshness.fresh ? 200 : 503, body, freshness.fresh ? {} : { "retry-after": "300" });
  };
}

function json(status, body, headers = {}) {
  return new Response(JSON.stringify(body, null, 2) + "\n", {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}

// Cloudflare Workers / workerd module syntax: configuration comes from the environment.
export default {
  async fetch(request, env) {
    return createHandler({
      manifestUrl: env.MANIFEST_URL,
      maxLagSeconds: Number(env.MAX_LAG_SECONDS ?? 86_400),
    })(request);
  },
};
