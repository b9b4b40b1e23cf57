// passportOf and checkFreshness against what the native CLI says about the same lake.
import { test } from "node:test";
import assert from "node:assert/strict";
import { passportOf, checkFreshness } from "@efmesh/lake";
import { efmesh, gapsLake, hospitalLake, noCoverageLake } from "./helpers.mjs";

const at = (iso, seconds) => new Date(Date.parse(iso) + seconds * 1000);

test("passportOf matches `efmesh passport --json` for every published model", () => {
  const { dir, manifests } = hospitalLake();
  const cli = JSON.parse(efmesh(dir, ["passport", "prod", "--json"]).stdout);
  for (const { model, json } of Object.values(manifests)) {
    const native = cli.models.find((m) => m.model === model);
    const p = passportOf(json);
    assert.deepEqual(
      {
        answerable: p.answerable,
        answerableLimitedBy: p.answerableLimitedBy,
        completeThrough: p.completeThrough,
        limitedBy: p.limitedBy,
        caveats: p.caveats,
      },
      native.effective,
      model,
    );
    assert.equal(p.hasGaps, false, model);
  }
  // the mart is narrowed by its ancestors, and says by whom
  const mart = passportOf(manifests["mart.daily_admissions"].json);
  assert.equal(mart.answerable, "sampled");
  assert.equal(mart.answerableLimitedBy, "mart.stays");
  assert.equal(mart.limitedBy, "med.moves");
  assert.ok(mart.caveats.length > 0 && mart.caveats.every((c) => c.model === "mart.stays"));
});

test("checkFreshness: fresh within the lag, stale beyond it", () => {
  const { json } = hospitalLake().manifests["mart.daily_admissions"];
  const through = passportOf(json).completeThrough;
  assert.equal(through, "2026-02-01T00:00:00Z", "complete through the CLI's clock");

  const fresh = checkFreshness(json, at(through, 3600), 7200);
  assert.deepEqual(
    { fresh: fresh.fresh, status: fresh.status, lagSeconds: fresh.lagSeconds, completeThrough: fresh.completeThrough, limitedBy: fresh.limitedBy },
    { fresh: true, status: "fresh", lagSeconds: 3600, completeThrough: through, limitedBy: "med.moves" },
  );
  const stale = checkFreshness(json, at(through, 3 * 86400), 86400);
  assert.equal(stale.fresh, false);
  assert.equal(stale.status, "stale");
  assert.equal(stale.lagSeconds, 3 * 86400);
  assert.equal(stale.reason, "stale: complete through 2026-02-01T00:00:00Z (limited by med.moves), 3d 0h behind (allowed 1d 0h)");
  // an ISO string works as the clock too, and bad arguments are refused
  assert.equal(checkFreshness(json, "2026-02-01T01:00:00Z", 7200).fresh, true);
  assert.throws(() => checkFreshness(json, "yesterday", 60), (e) => e.code === "EFMESH_BAD_ARGUMENT");
  assert.throws(() => checkFreshness(json, "2026-02-01T01:00:00Z", -1), (e) => e.code === "EFMESH_BAD_ARGUMENT");
});

test("checkFreshness: a failed interval is a gap, however recent the data", () => {
  const { apply, manifests } = gapsLake();
  assert.notEqual(apply.status, 0, "the feed fails on 2026-01-04");
  assert.match(apply.stderr, /feed outage/);
  const { json } = manifests["raw.feed"];
  assert.deepEqual(json.freshness.failedIntervals, [{ start: "2026-01-04T00:00:00Z", end: "2026-01-05T00:00:00Z" }]);
  const p = passportOf(json);
  assert.equal(p.hasGaps, true);
  assert.equal(p.completeThrough, "2026-01-04T00:00:00Z");
  const v = checkFreshness(json, "2026-01-04T01:00:00Z", 86400 * 30);
  assert.equal(v.fresh, false);
  assert.equal(v.status, "gaps");
  assert.equal(
    v.reason,
    "raw.feed has gaps: 1 failed interval(s), the first [2026-01-04T00:00:00Z, 2026-01-05T00:00:00Z); complete only through 2026-01-04T00:00:00Z",
  );
});

test("checkFreshness: no coverage yet names the model that has computed nothing", () => {
  const { apply, manifests } = noCoverageLake();
  assert.equal(apply.status, 0, apply.stderr);
  const { json } = manifests["mart.later_total"];
  const p = passportOf(json);
  assert.equal(p.completeThrough, null);
  assert.equal(p.limitedBy, "raw.later");
  const v = checkFreshness(json, "2026-02-01T00:00:00Z", 86400);
  assert.deepEqual(
    { fresh: v.fresh, status: v.status, lagSeconds: v.lagSeconds, reason: v.reason },
    { fresh: false, status: "no-coverage", lagSeconds: null, reason: "no coverage yet: raw.later has computed nothing" },
  );
});

test("checkFreshness: data without time semantics ages from when it was built", () => {
  const { json } = hospitalLake().manifests["ref.departments"];
  assert.equal(passportOf(json).completeThrough, null);
  const v = checkFreshness(json, at(json.generatedAt, 30), 60);
  assert.equal(v.status, "fresh");
  assert.equal(v.lagSeconds, 30);
  assert.match(v.reason, /^fresh: built at /);
  assert.equal(checkFreshness(json, at(json.generatedAt, 120), 60).status, "stale");
});
