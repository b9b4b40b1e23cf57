/**
 * The shapes the reader returns. They mirror efmesh-core's Rust types field for field
 * (`core/src/manifest.rs`, `core/src/reader/`), which serialise to exactly these JSON shapes;
 * `manifest-schema/manifest.schema.json` is the manifest's normative description.
 */

/** What data may be believed to answer, best to worst. */
export type Answerable = "full" | "sampled" | "unobservable";

/** `[start, end)` in ISO 8601 UTC. */
export interface Interval {
  start: string;
  end: string;
}

/** One immutable data file of a version. */
export interface ManifestFile {
  /** Relative to the manifest's folder. */
  path: string;
  bytes: number;
  rows: number;
  interval: Interval | null;
}

/** A column of the published data. */
export interface ManifestColumn {
  name: string;
  /** As DuckDB reports it (`BIGINT`, `TIMESTAMP`). */
  type: string;
  family: "text" | "numeric" | "temporal" | "boolean" | "any";
}

/** A caveat with the model that declared it. */
export interface Caveat {
  model: string;
  text: string;
}

/** The passport narrowed by every ancestor. */
export interface Effective {
  answerable: Answerable;
  answerableLimitedBy: string | null;
  completeThrough: string | null;
  limitedBy: string | null;
  caveats: Caveat[];
}

/** One version of one model, as efmesh publishes it beside its files. */
export interface Manifest {
  manifestVersion: number;
  model: string;
  fingerprint: string;
  kind: string;
  files: ManifestFile[];
  schema: ManifestColumn[];
  intervals: Interval[];
  answerable: Answerable;
  caveats: string[];
  freshness: {
    contiguousThrough: string | null;
    latestInterval: Interval | null;
    failedIntervals: Interval[];
    /** Where a closed history (the model's `end`) ends, exclusive; absent when it is open. */
    historyEnd?: string;
  };
  /** Written by every efmesh; absent only from producers that know the declared half. */
  effective?: Effective;
  redacted: string[];
  generatedAt: string;
}

/** The passport to render next to the data. */
export interface Passport {
  model: string;
  answerable: Answerable;
  answerableLimitedBy: string | null;
  caveats: Caveat[];
  /** Complete before this instant (exclusive); null with `limitedBy` set: nothing computed yet. */
  completeThrough: string | null;
  limitedBy: string | null;
  /** Failed intervals or holes: a total over this data is partial. */
  hasGaps: boolean;
  /** The manifest carried no effective passport; this is the model's own declaration. */
  declaredOnly: boolean;
}

/** Why data is or is not fresh. */
export type FreshnessStatus = "fresh" | "stale" | "gaps" | "no-coverage";

/** The answer to "may I show this data as current?". */
export interface FreshnessVerdict {
  fresh: boolean;
  status: FreshnessStatus;
  lagSeconds: number | null;
  completeThrough: string | null;
  limitedBy: string | null;
  /** One sentence, fit for an operator or a 503 body. */
  reason: string;
}

/** The subset of duckdb-wasm's `AsyncDuckDB` that `registerModel` uses. */
export interface AsyncDuckDBLike {
  registerFileURL(name: string, url: string, protocol: number, directIO: boolean): Promise<void>;
  connect(): Promise<{ query(sql: string): Promise<unknown>; close(): Promise<void> }>;
}
