/**
 * The passport display: a `Passport` (and, when given, a `FreshnessVerdict`) as accessible,
 * themable DOM, and the `<efmesh-passport>` custom element around it. It decides nothing: every
 * value it shows was computed by efmesh-core (`passportOf`, `checkFreshness`), so a page says what
 * `efmesh passport` says. Data reaches the DOM only through `textContent` and attributes, never
 * markup, so a model name or caveat cannot inject elements.
 *
 * Nothing here touches `HTMLElement`, `document` or `customElements` at import time, so the
 * module loads under Node and in edge runtimes; the element class is created inside
 * {@link defineEfmeshPassport}.
 */
import type { Answerable, FreshnessStatus, FreshnessVerdict, Passport } from "./types.js";
import { checkFreshness, fetchManifest, passportOf, type EfmeshError } from "./api.js";

/** Options of {@link renderPassport}. */
export interface RenderPassportOptions {
  /** The verdict of `checkFreshness` for the same manifest; without it no freshness line is shown. */
  freshness?: FreshnessVerdict | null;
  /** The document to create elements in; the global `document` by default (pass one under Node). */
  document?: Document;
  /** The title's heading level, so the passport fits the page's outline; 2 by default. */
  headingLevel?: 1 | 2 | 3 | 4 | 5;
}

/** The custom element's tag. */
export const PASSPORT_TAG = "efmesh-passport";

/**
 * The default stylesheet. Every colour, the font and the radius are CSS custom properties with a
 * fallback, so a page themes the passport (light DOM or inside `<efmesh-passport>`'s shadow root,
 * which custom properties cross) without overriding rules:
 * `--efmesh-passport-font`, `-fg`, `-bg`, `-muted`, `-border`, `-accent`, `-ok`, `-warn`, `-bad`,
 * `-radius`.
 */
export const PASSPORT_CSS = `.efmesh-passport {
  font: var(--efmesh-passport-font, 14px/1.45 system-ui, sans-serif);
  color: var(--efmesh-passport-fg, #1f2328);
  background: var(--efmesh-passport-bg, #ffffff);
  border: 1px solid var(--efmesh-passport-border, #d0d7de);
  border-left: 4px solid var(--efmesh-passport-accent, #0969da);
  border-radius: var(--efmesh-passport-radius, 6px);
  padding: 0.75em 1em;
  margin: 0 0 1em;
}
.efmesh-passport__title { font-size: 1.15em; margin: 0 0 0.5em; color: var(--efmesh-passport-accent, #0969da); }
.efmesh-passport code { font: 0.95em ui-monospace, SFMono-Regular, Menlo, monospace; }
.efmesh-passport__freshness { margin: 0 0 0.5em; }
.efmesh-passport__status { font-weight: 600; }
.efmesh-passport__freshness--fresh .efmesh-passport__status { color: var(--efmesh-passport-ok, #1a7f37); }
.efmesh-passport__freshness--stale .efmesh-passport__status { color: var(--efmesh-passport-warn, #9a6700); }
.efmesh-passport__freshness--gaps .efmesh-passport__status,
.efmesh-passport__freshness--no-coverage .efmesh-passport__status { color: var(--efmesh-passport-bad, #cf222e); }
.efmesh-passport__facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2em 1em; margin: 0 0 0.5em; }
.efmesh-passport__facts dt { color: var(--efmesh-passport-muted, #59636e); }
.efmesh-passport__facts dd { margin: 0; }
.efmesh-passport__value { font-weight: 600; }
.efmesh-passport__answerable--sampled .efmesh-passport__value { color: var(--efmesh-passport-warn, #9a6700); }
.efmesh-passport__answerable--unobservable .efmesh-passport__value { color: var(--efmesh-passport-bad, #cf222e); }
.efmesh-passport__gaps--yes .efmesh-passport__value { color: var(--efmesh-passport-bad, #cf222e); }
.efmesh-passport__hint, .efmesh-passport__none { color: var(--efmesh-passport-muted, #59636e); }
.efmesh-passport__caveats-title { font-size: 1em; margin: 0.5em 0 0.25em; }
.efmesh-passport__caveats { margin: 0; padding-left: 1.25em; }
.efmesh-passport__error { color: var(--efmesh-passport-bad, #cf222e); }
`;

/** What each answerable level means, from efmesh-core's `Answerable` (core/src/passport.rs). */
const ANSWERABLE_MEANS: Record<Answerable, string> = {
  full: "complete for what it describes",
  sampled: "holds only part of what it describes, so totals and counts understate reality",
  unobservable: "cannot be believed to answer questions about what it describes",
};

/** The status word shown before the reason: the verdict in text, never in colour alone. */
const STATUS_WORD: Record<FreshnessStatus, string> = {
  fresh: "Fresh",
  stale: "Stale",
  gaps: "Has gaps",
  "no-coverage": "No coverage",
};

let sequence = 0;

function codedError(code: string, message: string): EfmeshError {
  const e = new Error(message) as EfmeshError;
  e.code = code;
  return e;
}

function documentFrom(options: { document?: Document }): Document {
  const doc = options.document ?? (globalThis as { document?: Document }).document;
  if (!doc) {
    throw codedError(
      "EFMESH_NO_DOM",
      "renderPassport needs a document: there is no global one here (Node, an edge function), so pass { document }",
    );
  }
  return doc;
}

function checkPassport(passport: unknown): asserts passport is Passport {
  const p = passport as Partial<Passport> | null;
  if (!p || typeof p !== "object" || typeof p.model !== "string" || !(p.answerable && p.answerable in ANSWERABLE_MEANS) || !Array.isArray(p.caveats) || typeof p.hasGaps !== "boolean") {
    throw codedError(
      "EFMESH_BAD_ARGUMENT",
      "renderPassport needs a Passport (what passportOf(manifest) returns), not a manifest or another object",
    );
  }
}

/**
 * A lag as core's freshness reason spells it (`3d 4h`, `2h 5m`, `40s`; core/src/reader/
 * freshness_check.rs), so the lag fact reads the same as the reason beside it.
 */
function humanLag(secs: number): string {
  const s = Math.max(0, Math.trunc(secs));
  const [d, h, m, r] = [Math.trunc(s / 86_400), Math.trunc((s % 86_400) / 3600), Math.trunc((s % 3600) / 60), s % 60];
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${r}s`;
  return `${r}s`;
}

/**
 * Render a passport as a `<section>` labelled by its heading: the model, what it can answer and
 * which model limits that, its coverage (complete through, limited by, gaps, declared only), its
 * caveats and, when `options.freshness` is given, a `role="status"` freshness line. Class names
 * (`efmesh-passport__*`) and `part` names are stable; style it with {@link PASSPORT_CSS} or your own.
 */
export function renderPassport(passport: Passport, options: RenderPassportOptions = {}): HTMLElement {
  checkPassport(passport);
  const doc = documentFrom(options);
  const el = <K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] => {
    const e = doc.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const code = (text: string) => el("code", "efmesh-passport__name", text);
  const none = (text: string) => el("span", "efmesh-passport__none", text);
  const instant = (iso: string) => {
    const t = el("time", undefined, iso);
    t.dateTime = iso;
    return t;
  };

  const id = `efmesh-passport-${++sequence}`;
  const section = el("section", "efmesh-passport");
  section.setAttribute("aria-labelledby", `${id}-title`);
  section.setAttribute("part", "passport");
  section.dataset.model = passport.model;
  section.dataset.answerable = passport.answerable;

  const level = options.headingLevel ?? 2;
  const title = el(`h${level}` as "h2", "efmesh-passport__title");
  title.id = `${id}-title`;
  title.setAttribute("part", "title");
  title.append("Passport of ", el("code", "efmesh-passport__model", passport.model));
  section.append(title);

  const v = options.freshness;
  if (v) {
    section.dataset.freshness = v.status;
    const line = el("p", `efmesh-passport__freshness efmesh-passport__freshness--${v.status}`);
    line.setAttribute("role", "status");
    line.setAttribute("part", "freshness");
    line.dataset.status = v.status;
    line.append(el("strong", "efmesh-passport__status", STATUS_WORD[v.status] ?? v.status), " — ", el("span", "efmesh-passport__reason", v.reason));
    if (v.lagSeconds !== null) {
      const lag = el("span", "efmesh-passport__lag");
      const t = el("time", undefined, humanLag(v.lagSeconds));
      t.dateTime = `PT${Math.max(0, Math.trunc(v.lagSeconds))}S`;
      lag.append(" (lag ", t, ")");
      line.append(lag);
    }
    section.append(line);
  }

  const facts = el("dl", "efmesh-passport__facts");
  facts.setAttribute("part", "facts");
  const fact = (key: string, label: string, ...value: (Node | string)[]) => {
    const dd = el("dd", `efmesh-passport__${key}`);
    dd.append(...value);
    facts.append(el("dt", undefined, label), dd);
    return dd;
  };
  fact(
    "answerable",
    "Answerable",
    el("span", "efmesh-passport__value", passport.answerable),
    " ",
    el("span", "efmesh-passport__hint", `(${ANSWERABLE_MEANS[passport.answerable]})`),
  ).classList.add(`efmesh-passport__answerable--${passport.answerable}`);
  fact(
    "answerable-limited-by",
    "Answerable limited by",
    passport.answerableLimitedBy ? code(passport.answerableLimitedBy) : none("none"),
  );
  fact(
    "complete-through",
    "Complete through",
    passport.completeThrough
      ? instant(passport.completeThrough)
      : none(passport.limitedBy ? "nothing computed yet" : "no time claim"),
  );
  fact("limited-by", "Coverage limited by", passport.limitedBy ? code(passport.limitedBy) : none("none"));
  fact(
    "gaps",
    "Gaps",
    el("span", "efmesh-passport__value", passport.hasGaps ? "yes" : "no"),
    ...(passport.hasGaps ? [" ", el("span", "efmesh-passport__hint", "(failed intervals or holes: a total over this data is partial)")] : []),
  ).classList.add(`efmesh-passport__gaps--${passport.hasGaps ? "yes" : "no"}`);
  fact(
    "declared-only",
    "Passport",
    passport.declaredOnly
      ? el("span", "efmesh-passport__value", "declared only (the manifest carried no effective passport)")
      : el("span", "efmesh-passport__value", "effective (narrowed by every ancestor)"),
  );
  section.append(facts);

  const caveatsTitle = el(`h${Math.min(level + 1, 6)}` as "h3", "efmesh-passport__caveats-title", `Caveats (${passport.caveats.length})`);
  caveatsTitle.id = `${id}-caveats`;
  section.append(caveatsTitle);
  if (passport.caveats.length > 0) {
    const list = el("ul", "efmesh-passport__caveats");
    list.setAttribute("part", "caveats");
    list.setAttribute("aria-labelledby", caveatsTitle.id);
    for (const c of passport.caveats) {
      const li = el("li", "efmesh-passport__caveat");
      li.append(el("code", "efmesh-passport__caveat-model", c.model), ": ", el("span", "efmesh-passport__caveat-text", c.text));
      list.append(li);
    }
    section.append(list);
  } else {
    const p = el("p", "efmesh-passport__caveats efmesh-passport__none", "none declared");
    p.setAttribute("part", "caveats");
    section.append(p);
  }
  return section;
}

/** `<efmesh-passport>`: the passport display in an open shadow root with the default stylesheet. */
export interface EfmeshPassportElement extends HTMLElement {
  /** The passport shown; setting it re-renders (and supersedes a `manifest-url` still loading). */
  passport: Passport | null;
  /** The freshness line's verdict; setting it re-renders. */
  freshness: FreshnessVerdict | null;
}

/** The constructor {@link defineEfmeshPassport} registers. */
export interface EfmeshPassportElementConstructor {
  new (): EfmeshPassportElement;
  readonly prototype: EfmeshPassportElement;
  readonly observedAttributes: string[];
}

declare global {
  interface HTMLElementTagNameMap {
    "efmesh-passport": EfmeshPassportElement;
  }
}

/** The element's public shape under another name, since the class inside {@link defineEfmeshPassport} takes its name. */
type PassportElementShape = EfmeshPassportElement;

/** `:host` rules the element adds to the default stylesheet. */
const HOST_CSS = `:host { display: block; }\n:host([hidden]) { display: none; }\n`;

/**
 * Register `<efmesh-passport>` in `registry` (the global `customElements` by default) and return
 * its class; a second call returns the class already registered. The element shows `.passport`
 * and `.freshness` when set, or, given a `manifest-url` attribute, fetches that manifest and shows
 * `passportOf` and `checkFreshness` of it (`max-lag-seconds`, 86400 by default). It fires
 * `efmesh-passport-load` (`detail: {manifest, passport, freshness}`) or `efmesh-passport-error`
 * (`detail: error`, also shown with `role="alert"`). Parts: `passport`, `title`, `freshness`,
 * `facts`, `caveats`, `error`.
 */
export function defineEfmeshPassport(registry?: CustomElementRegistry): EfmeshPassportElementConstructor {
  const g = globalThis as { customElements?: CustomElementRegistry; HTMLElement?: typeof HTMLElement };
  const reg = registry ?? g.customElements;
  const Base = g.HTMLElement;
  if (!reg || !Base) {
    throw codedError(
      "EFMESH_NO_DOM",
      "defineEfmeshPassport needs custom elements (a browser page); use renderPassport with { document } elsewhere",
    );
  }
  const existing = reg.get(PASSPORT_TAG);
  if (existing) return existing as unknown as EfmeshPassportElementConstructor;

  class EfmeshPassportElement extends Base implements PassportElementShape {
    static readonly observedAttributes = ["manifest-url", "max-lag-seconds"];
    #passport: Passport | null = null;
    #freshness: FreshnessVerdict | null = null;
    #load = 0;
    readonly #root: ShadowRoot;

    constructor() {
      super();
      this.#root = this.attachShadow({ mode: "open" });
    }

    get passport(): Passport | null {
      return this.#passport;
    }
    set passport(value: Passport | null) {
      this.#load++; // a passport set by hand wins over a manifest still loading
      this.#passport = value;
      this.#render();
    }
    get freshness(): FreshnessVerdict | null {
      return this.#freshness;
    }
    set freshness(value: FreshnessVerdict | null) {
      this.#freshness = value;
      this.#render();
    }

    connectedCallback(): void {
      // properties set before the element was upgraded sit on the instance and hide the accessors
      for (const key of ["passport", "freshness"] as const) {
        if (Object.prototype.hasOwnProperty.call(this, key)) {
          const value = this[key];
          delete (this as Partial<PassportElementShape>)[key];
          this[key] = value as never;
        }
      }
      this.#render();
    }

    attributeChangedCallback(_name: string, old: string | null, value: string | null): void {
      if (old !== value && this.getAttribute("manifest-url")) void this.#fetch();
    }

    async #fetch(): Promise<void> {
      const token = ++this.#load;
      const url = this.getAttribute("manifest-url")!;
      const lagText = this.getAttribute("max-lag-seconds");
      try {
        const maxLag = lagText === null ? 86_400 : Number(lagText);
        if (lagText !== null && (lagText.trim() === "" || !Number.isFinite(maxLag))) {
          throw codedError("EFMESH_BAD_ARGUMENT", `max-lag-seconds must be a number of seconds, got "${lagText}"`);
        }
        const manifest = await fetchManifest(url);
        if (token !== this.#load) return;
        const passport = passportOf(manifest);
        const freshness = checkFreshness(manifest, new Date(), maxLag);
        this.#passport = passport;
        this.#freshness = freshness;
        this.#render();
        this.dispatchEvent(new CustomEvent("efmesh-passport-load", { detail: { manifest, passport, freshness } }));
      } catch (e) {
        if (token !== this.#load) return;
        this.#renderError(e as Error);
        this.dispatchEvent(new CustomEvent("efmesh-passport-error", { detail: e }));
      }
    }

    #style(): HTMLStyleElement {
      const style = this.ownerDocument.createElement("style");
      style.textContent = HOST_CSS + PASSPORT_CSS;
      return style;
    }

    #render(): void {
      if (!this.#passport) {
        this.#root.replaceChildren(this.#style());
        return;
      }
      const view = renderPassport(this.#passport, { freshness: this.#freshness, document: this.ownerDocument });
      this.#root.replaceChildren(this.#style(), view);
    }

    #renderError(e: Error): void {
      const p = this.ownerDocument.createElement("p");
      p.className = "efmesh-passport efmesh-passport__error";
      p.setAttribute("role", "alert");
      p.setAttribute("part", "error");
      p.textContent = `Could not show the passport of ${this.getAttribute("manifest-url")}: ${e.message}`;
      this.#root.replaceChildren(this.#style(), p);
    }
  }

  reg.define(PASSPORT_TAG, EfmeshPassportElement);
  return EfmeshPassportElement as unknown as EfmeshPassportElementConstructor;
}
