// The passport display in headless Chromium: passports of a lake the native CLI built from the
// hospital example, rendered by renderPassport and by <efmesh-passport>, must say what
// `efmesh passport --json` says, be accessible (a named region, a status line), follow a theme
// set on the host page through the shadow root, and render markup in names as text. The page can
// reach only the test server: every other request is aborted and recorded.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { checkFreshness, defineEfmeshPassport, passportOf, renderPassport, PASSPORT_CSS } from "@efmesh/lake";
import { efmesh, hospitalLake, NOW, repo, serve } from "./helpers.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const artifacts = join(repo, "js", "test-artifacts");
const MAX_LAG = 86_400;
/** Three days after the lake's clock: every time-range model is stale by exactly 3d 0h. */
const LATER = new Date(Date.parse(NOW) + 3 * 86_400 * 1000).toISOString();

/**
 * Runs in the page: the passport facts a rendered `<section class="efmesh-passport">` shows, read
 * back from its text (null where it shows no model or instant).
 */
function readBack(section) {
  const text = (sel) => section.querySelector(sel)?.textContent ?? null;
  const time = section.querySelector(".efmesh-passport__complete-through time");
  const line = section.querySelector(".efmesh-passport__freshness");
  return {
    heading: section.querySelector(".efmesh-passport__title").textContent,
    labelledBy: section.getAttribute("aria-labelledby"),
    effective: {
      answerable: text(".efmesh-passport__answerable .efmesh-passport__value"),
      answerableLimitedBy: text(".efmesh-passport__answerable-limited-by code"),
      completeThrough: time ? time.getAttribute("datetime") : null,
      limitedBy: text(".efmesh-passport__limited-by code"),
      caveats: [...section.querySelectorAll("li.efmesh-passport__caveat")].map((li) => ({
        model: li.querySelector(".efmesh-passport__caveat-model").textContent,
        text: li.querySelector(".efmesh-passport__caveat-text").textContent,
      })),
    },
    timeText: time ? time.textContent : null,
    completeThroughText: text(".efmesh-passport__complete-through"),
    gaps: text(".efmesh-passport__gaps .efmesh-passport__value"),
    declared: text(".efmesh-passport__declared-only"),
    freshness: line && {
      role: line.getAttribute("role"),
      status: line.dataset.status,
      word: text(".efmesh-passport__status"),
      reason: text(".efmesh-passport__reason"),
      lag: text(".efmesh-passport__lag time"),
      lagDatetime: section.querySelector(".efmesh-passport__lag time")?.getAttribute("datetime") ?? null,
    },
  };
}

test("importing under Node does not need a DOM; rendering without one says what to pass", () => {
  assert.match(PASSPORT_CSS, /--efmesh-passport-accent/);
  const passport = passportOf(hospitalLake().manifests["mart.daily_admissions"].json);
  assert.throws(() => renderPassport(passport), (e) => e.code === "EFMESH_NO_DOM" && /pass \{ document \}/.test(e.message));
  assert.throws(() => defineEfmeshPassport(), (e) => e.code === "EFMESH_NO_DOM");
  assert.throws(() => renderPassport(hospitalLake().manifests["mart.daily_admissions"].json, { document: {} }), (e) => e.code === "EFMESH_BAD_ARGUMENT");
});

test("headless Chromium: renderPassport and <efmesh-passport> show the CLI's passport, accessibly and themably", async () => {
  const hospital = hospitalLake();
  const server = await serve({ "/lake/": hospital.lake, "/js/": join(repo, "js") });
  after(() => server.close());
  const models = ["mart.daily_admissions", "med.moves", "ref.departments"];
  const query = new URLSearchParams([...models.map((m) => ["manifest", `/lake/${hospital.manifests[m].rel}`]), ["now", LATER], ["maxLag", String(MAX_LAG)]]);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const blocked = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin === server.url) return route.continue();
    blocked.push(url);
    return route.abort("blockedbyclient");
  });
  const page = await context.newPage();
  const consoleLines = [];
  page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => consoleLines.push(`pageerror: ${e.message}`));
  await page.goto(`${server.url}/js/test/passport-view/index.html?${query}`);
  mkdirSync(artifacts, { recursive: true });
  try {
    await page.waitForFunction(() => window.efmeshResults || window.efmeshError, null, { timeout: 60_000 });
  } catch (e) {
    await page.screenshot({ path: join(artifacts, "passport-view.png"), fullPage: true });
    throw new Error(`the page never finished (${e.message}); it says "${await page.textContent("#status")}"; console:\n${consoleLines.join("\n")}`);
  }
  const error = await page.evaluate(() => window.efmeshError);
  assert.equal(error, undefined, `${error}\n${consoleLines.join("\n")}`);
  await page.screenshot({ path: join(artifacts, "passport-view.png"), fullPage: true });
  const results = await page.evaluate(() => window.efmeshResults);
  assert.match(await page.textContent("#status"), /rendered 3 passport\(s\) .*\(web build\)/);

  const cli = JSON.parse(efmesh(hospital.dir, ["passport", "prod", "--json"]).stdout);
  const effectiveOf = (model) => cli.models.find((m) => m.model === model).effective;

  // renderPassport in the light DOM: one section per model, saying what the CLI says
  const plain = await page.$$eval("#plain > section", (ss, fn) => ss.map((s) => new Function(`return (${fn})`)()(s)), readBack.toString());
  assert.equal(plain.length, models.length);
  for (const [i, model] of models.entries()) {
    const r = plain[i];
    const node = passportOf(hospital.manifests[model].json);
    assert.deepEqual(r.effective, effectiveOf(model), model);
    assert.equal(r.heading, `Passport of ${model}`);
    assert.equal(r.gaps, node.hasGaps ? "yes" : "no", model);
    assert.match(r.declared, node.declaredOnly ? /^declared only/ : /^effective/, model);
    if (node.completeThrough) assert.equal(r.timeText, node.completeThrough, model);
    else assert.equal(r.completeThroughText, node.limitedBy ? "nothing computed yet" : "no time claim", model);
    // the freshness line is the core's verdict at the page's clock, word and reason in text
    const verdict = checkFreshness(hospital.manifests[model].json, LATER, MAX_LAG);
    assert.equal(r.freshness.role, "status", model);
    assert.equal(r.freshness.status, verdict.status, model);
    assert.equal(r.freshness.reason, verdict.reason, model);
  }
  const mart = plain[0];
  assert.equal(mart.effective.answerable, "sampled");
  assert.equal(mart.effective.caveats.length, 2);
  assert.deepEqual(
    { word: mart.freshness.word, lag: mart.freshness.lag, lagDatetime: mart.freshness.lagDatetime },
    { word: "Stale", lag: "3d 0h", lagDatetime: "PT259200S" },
  );
  assert.match(mart.freshness.reason, / 3d 0h behind /, "the lag reads as the core's reason spells it");
  assert.equal(plain[2].effective.completeThrough, null, "ref.departments makes no time claim");

  // <efmesh-passport>: the same facts inside open shadow roots, by property and by manifest-url
  for (const id of ["early", "from-url"]) {
    const r = await page.$eval(`#${id}`, (el, fn) => new Function(`return (${fn})`)()(el.shadowRoot.querySelector("section")), readBack.toString());
    assert.deepEqual(r.effective, effectiveOf("mart.daily_admissions"), id);
    assert.equal(r.freshness.role, "status", id);
  }
  // the element computed the verdict itself, at the browser's clock, with its max-lag-seconds
  const fromUrl = await page.$eval("#from-url", (el) => el.shadowRoot.querySelector(".efmesh-passport__reason").textContent);
  assert.equal(fromUrl, results.fromUrl.freshness.reason);
  assert.equal(results.fromUrl.freshness.status, checkFreshness(hospital.manifests["mart.daily_admissions"].json, new Date(), MAX_LAG).status);
  assert.deepEqual(await page.$eval("#from-url", (el) => el.passport), passportOf(hospital.manifests["mart.daily_admissions"].json));
  // a manifest that is not there is an alert naming it, not an empty box
  assert.equal(results.missingError.code, "EFMESH_FETCH");
  const alert = page.locator("#missing").getByRole("alert");
  assert.match(await alert.textContent(), /no\/such\/manifest\.json.*404/);

  // accessibility: each passport is a region named by its heading, with a status line
  const name = "Passport of mart.daily_admissions";
  for (const scope of ["#plain", "#early", "#from-url"]) {
    const region = page.locator(scope).getByRole("region", { name, exact: true });
    assert.equal(await region.count(), 1, scope);
    assert.match(await region.getByRole("status").textContent(), /^Stale — stale: complete through 2026-02-01T00:00:00Z \(limited by med\.moves\)/, scope);
    assert.equal(await region.getByRole("list").getByRole("listitem").count(), 2, scope);
    assert.equal(await region.getByRole("term").count(), 6, scope);
  }
  const aria = await page.locator("#from-url").ariaSnapshot();
  assert.match(aria, /region "Passport of mart\.daily_admissions"/);
  assert.match(aria, /- status:\n\s+- strong: Stale\n/);
  assert.equal(await page.locator("#plain").getByRole("region").count(), 3);

  // theming: custom properties set on the host page reach inside the shadow root; parts are stylable
  const look = () =>
    page.$eval("#from-url", (el) => {
      const s = el.shadowRoot;
      return {
        title: getComputedStyle(s.querySelector(".efmesh-passport__title")).color,
        border: getComputedStyle(s.querySelector("section")).borderLeftColor,
        stale: getComputedStyle(s.querySelector(".efmesh-passport__status")).color,
        font: getComputedStyle(s.querySelector("section")).fontFamily,
        caveats: getComputedStyle(s.querySelector(".efmesh-passport__caveats")).backgroundColor,
        parts: [...s.querySelectorAll("[part]")].map((p) => p.getAttribute("part")),
      };
    });
  const before = await look();
  assert.equal(before.title, "rgb(9, 105, 218)", "the default accent");
  assert.deepEqual(before.parts, ["passport", "title", "freshness", "facts", "caveats"]);
  await page.addStyleTag({
    content: `:root { --efmesh-passport-accent: rgb(123, 31, 162); --efmesh-passport-warn: rgb(200, 80, 0); --efmesh-passport-font: 16px/1.5 Georgia, serif; }
      efmesh-passport::part(caveats) { background-color: rgb(255, 248, 197); }`,
  });
  const themed = await look();
  assert.equal(themed.title, "rgb(123, 31, 162)");
  assert.equal(themed.border, "rgb(123, 31, 162)");
  assert.equal(themed.stale, "rgb(200, 80, 0)");
  assert.match(themed.font, /Georgia/);
  assert.equal(themed.caveats, "rgb(255, 248, 197)");
  assert.notDeepEqual(themed, before);
  await page.screenshot({ path: join(artifacts, "passport-view-themed.png"), fullPage: true });

  // markup in a model name or caveat is text: no element, no script ran, the name reads literally
  const hostile = await page.evaluate(() => {
    const roots = [document, ...[...document.querySelectorAll("efmesh-passport")].map((e) => e.shadowRoot)];
    return {
      imgs: roots.reduce((n, r) => n + r.querySelectorAll("img, script:not([type]), b").length, 0),
      pwned: window.efmeshPwned ?? null,
      light: document.querySelector("#hostile .efmesh-passport__model").textContent,
      shadow: document.querySelector("#hostile-element").shadowRoot.querySelector(".efmesh-passport__model").textContent,
      caveat: document.querySelector("#hostile .efmesh-passport__caveat").textContent,
    };
  });
  assert.deepEqual(
    { imgs: hostile.imgs, pwned: hostile.pwned, light: hostile.light, shadow: hostile.shadow },
    { imgs: 0, pwned: null, light: results.hostileModel, shadow: results.hostileModel },
  );
  assert.equal(hostile.caveat, `<b>bold</b>: <script>window.efmeshPwned=2</script><img src=x onerror="window.efmeshPwned=3">`);
  const hostileRegion = page.locator("#hostile").getByRole("region", { name: `Passport of ${results.hostileModel}`, exact: true });
  assert.equal(await hostileRegion.count(), 2, "renderPassport's and the element's, named by the literal text");
  assert.equal(await page.locator("#hostile h3.efmesh-passport__title").count(), 1, "headingLevel sets the title's level");

  assert.deepEqual(blocked, [], "the page asked for nothing beyond the test server");
  assert.deepEqual(consoleLines.filter((l) => /^(error|pageerror)/.test(l) && !/404/.test(l)), []);
});
