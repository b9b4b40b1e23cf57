// Renders passports of real manifests three ways: renderPassport into the light DOM (with the
// default stylesheet), <efmesh-passport> given .passport/.freshness (set before the element was
// defined), and <efmesh-passport manifest-url>. Then a passport with markup in its names, and an
// element whose manifest does not exist.
import { fetchManifest, passportOf, checkFreshness, renderPassport, defineEfmeshPassport, PASSPORT_CSS, BUILD } from "@efmesh/lake";

const status = document.getElementById("status");
const loaded = (el) =>
  new Promise((resolve, reject) => {
    el.addEventListener("efmesh-passport-load", (e) => resolve(e.detail), { once: true });
    el.addEventListener("efmesh-passport-error", (e) => reject(e.detail), { once: true });
  });
const failed = (el) => new Promise((resolve) => el.addEventListener("efmesh-passport-error", (e) => resolve(e.detail), { once: true }));

try {
  const params = new URLSearchParams(location.search);
  const urls = params.getAll("manifest");
  const now = params.get("now");
  const maxLag = Number(params.get("maxLag"));
  const style = document.createElement("style");
  style.textContent = PASSPORT_CSS;
  document.head.append(style);

  const rendered = [];
  for (const url of urls) {
    const manifest = await fetchManifest(url);
    const passport = passportOf(manifest);
    const freshness = checkFreshness(manifest, now, maxLag);
    document.getElementById("plain").append(renderPassport(passport, { freshness }));
    rendered.push({ model: manifest.model, passport, freshness });
  }

  const first = rendered[0];
  const early = document.getElementById("early");
  early.passport = first.passport; // an own property until the element is upgraded
  early.freshness = first.freshness;
  defineEfmeshPassport();
  defineEfmeshPassport(); // a second call returns the registered class

  const fromUrl = document.createElement("efmesh-passport");
  fromUrl.id = "from-url";
  fromUrl.setAttribute("max-lag-seconds", String(maxLag));
  const fromUrlLoaded = loaded(fromUrl);
  fromUrl.setAttribute("manifest-url", urls[0]);
  document.getElementById("elements").append(fromUrl);
  const detail = await fromUrlLoaded;

  const missing = document.createElement("efmesh-passport");
  missing.id = "missing";
  const missingFailed = failed(missing);
  missing.setAttribute("manifest-url", "/lake/no/such/manifest.json");
  document.getElementById("elements").append(missing);
  const missingError = await missingFailed;

  const hostile = {
    ...first.passport,
    model: `<img src=x onerror="window.efmeshPwned=1">`,
    caveats: [{ model: "<b>bold</b>", text: `<script>window.efmeshPwned=2</script><img src=x onerror="window.efmeshPwned=3">` }],
  };
  document.getElementById("hostile").append(renderPassport(hostile, { freshness: first.freshness, headingLevel: 3 }));
  const hostileEl = document.createElement("efmesh-passport");
  hostileEl.id = "hostile-element";
  hostileEl.passport = hostile;
  document.getElementById("hostile").append(hostileEl);

  status.textContent = `rendered ${rendered.length} passport(s) with @efmesh/lake (${BUILD} build)`;
  window.efmeshResults = {
    rendered,
    hostileModel: hostile.model,
    fromUrl: { passport: detail.passport, freshness: detail.freshness, model: detail.manifest.model },
    missingError: { code: missingError.code, message: missingError.message },
  };
} catch (e) {
  status.textContent = `error: ${e.message}`;
  window.efmeshError = String(e.stack ?? e);
}
