/**
 * How many of each thing a client can make, declared once: the services check them on every write
 * that adds one (POST, PUT and PATCH alike), the request schemas take their `maxItems` from here, and
 * docs/limits.md lists them. Without them one client could grow a flag without bound, and
 * every flag event (which carries all the flag's tags) with it.
 */
import { ValidationError } from '../errors'
import type { Collection } from '../storage/records'
import type { StateReader, Store, Tx } from '../storage/store'

export const LIMITS = {
  /** Each flag event stores all the flag's tags: 50 bounds that copy to about 6 kB. */
  tagsPerFlag: { max: 50, what: 'tags per flag' },
  /** Unleash's default `featureEnvironmentStrategies`. */
  strategiesPerFlagEnvironment: { max: 30, what: 'strategies per flag and environment' },
  /** Unleash's default `constraints`. */
  constraintsPerStrategy: { max: 30, what: 'constraints per strategy' },
  /** Unleash's default `constraintValues`. */
  valuesPerConstraint: { max: 250, what: 'values per constraint' },
  variantsPerStrategy: { max: 100, what: 'variants per strategy' },
  /** Weights are shared out of 1000; 100 variants is already 10 each. */
  variantsPerFlagEnvironment: { max: 100, what: 'variants per flag and environment' },
  overridesPerVariant: { max: 100, what: 'overrides per variant' },
  valuesPerOverride: { max: 250, what: 'values per variant override' },
  /** Parents per flag; Unleash's UI offers one. */
  dependenciesPerFlag: { max: 10, what: 'dependencies per flag' },
  /** Unleash allows 2,000; authentication is one lookup whatever the number. */
  apiTokens: { max: 10_000, what: 'API tokens' },
  /** A person or service account lists all theirs on one page. */
  personalTokensPerOwner: { max: 50, what: 'personal access tokens per user or service account' },
  serviceAccounts: { max: 1000, what: 'service accounts' },
  /** Live and archived, in all projects: the whole state is held in memory. */
  flags: { max: 20_000, what: 'flags (archived included)' },
  /** Unleash's default `projects`. */
  projects: { max: 500, what: 'projects' },
  /** Unleash's default `environments`. */
  environments: { max: 50, what: 'environments' },
  /** Unleash's default `segments`. */
  segments: { max: 300, what: 'segments' },
  /** As for a strategy: a segment's constraints are evaluated with the strategy's. */
  constraintsPerSegment: { max: 30, what: 'constraints per segment' },
  /** Unleash's `segmentValuesLimit`: every value of every constraint of one segment. */
  valuesPerSegment: { max: 1000, what: 'constraint values per segment' },
  /** Unleash's `strategySegmentsLimit`. */
  segmentsPerStrategy: { max: 5, what: 'segments per strategy' },
  /** Unleash sets none; every tag type is listed whole, as are context fields. */
  tagTypes: { max: 1000, what: 'tag types' },
  contextFields: { max: 1000, what: 'context fields' },
  legalValuesPerContextField: { max: 1000, what: 'legal values per context field' },
} as const

export type LimitName = keyof typeof LIMITS

/** Refuses a write that would leave `count` things where the limit allows fewer. */
export function checkLimit(limit: LimitName, count: number, path: string): void {
  const { max, what } = LIMITS[limit]
  if (count <= max) return
  const message = `Limit reached: at most ${max.toLocaleString('en-US')} ${what} (${limit}); this would make ${count.toLocaleString('en-US')}`
  throw ValidationError.at(path, message)
}

/**
 * The number of records in a collection, kept from the store's record changes so that a write
 * adding one need not count them all.
 */
export class RecordCount {
  private committed = 0

  constructor(
    private readonly store: Pick<Store, 'watch' | 'reader'>,
    private readonly collection: Collection,
  ) {
    store.watch(collection, (_key, before, after) => {
      this.committed += (after ? 1 : 0) - (before ? 1 : 0)
    })
  }

  /** The count as `tx` sees it: the committed records plus what it has staged. */
  in(tx: Pick<Tx, 'staged'>): number {
    let count = this.committed
    const committed: StateReader = this.store.reader
    for (const [key, value] of tx.staged(this.collection)) {
      count += (value !== null ? 1 : 0) - (committed.get(this.collection, key) !== undefined ? 1 : 0)
    }
    return count
  }
}
