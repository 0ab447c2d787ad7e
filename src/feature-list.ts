/**
 * Every feature, listed once, with the collections it keeps in the state document: the store is
 * opened with them (state.json holds them in this order), and app.ts serves the features'
 * controllers in this order. This is the storage side of the list, which opening the store, the
 * backups and the command line need, so it imports no HTTP code: each feature's controllers are
 * in `CONTROLLERS` (services.ts), keyed by the names given here, and the compiler refuses a feature
 * listed here that has no entry there, or an entry there for a feature not listed here.
 */
import type { CollectionDefinition } from './storage/records'
import { ADDON_COLLECTIONS } from './features/addons/addons.records'
import {
  changeRequestSequenceCollection,
  changeRequestSettingsCollection,
  changeRequestsCollection,
} from './features/change-requests/change-requests.records'
import { contextFieldsCollection } from './features/context/context.records'
import { environmentsCollection } from './features/environments/environments.records'
import { flagTypesCollection } from './features/feature-types/feature-types.records'
import { flagsCollection } from './features/flags/flags.records'
import {
  applicationsCollection,
  instancesCollection,
  lastSeenCollection,
  usageCollection,
} from './features/metrics/metrics.records'
import { personalTokensCollection, serviceAccountsCollection } from './features/personal-tokens/personal-tokens.records'
import { projectsCollection } from './features/projects/projects.records'
import { segmentSequenceCollection, segmentsCollection } from './features/segments/segments.records'
import { ssoIdentitiesCollection, ssoSettingsCollection } from './features/sso/sso.records'
import { strategyTypesCollection } from './features/strategy-types/strategy-types.records'
import { tagTypesCollection } from './features/tag-types/tag-types.records'
import { tokensCollection } from './features/tokens/tokens.records'
import { sessionsCollection, usersCollection } from './features/users/users.records'

/** A feature with no collection of its own (it reads others', or keeps nothing in the state document). */
const NONE: readonly CollectionDefinition[] = []

export const FEATURES = {
  projects: [projectsCollection],
  environments: [environmentsCollection],
  flags: [flagsCollection],
  events: NONE,
  tokens: [tokensCollection],
  segments: [segmentsCollection, segmentSequenceCollection],
  client: NONE,
  strategyTypes: [strategyTypesCollection],
  tagTypes: [tagTypesCollection],
  flagTypes: [flagTypesCollection],
  context: [contextFieldsCollection],
  exportImport: NONE,
  metrics: [usageCollection, lastSeenCollection, applicationsCollection, instancesCollection],
  frontend: NONE,
  playground: NONE,
  users: [usersCollection, sessionsCollection],
  ofrep: NONE,
  addons: ADDON_COLLECTIONS,
  personalTokens: [personalTokensCollection, serviceAccountsCollection],
  sso: [ssoSettingsCollection, ssoIdentitiesCollection],
  changeRequests: [changeRequestSettingsCollection, changeRequestsCollection, changeRequestSequenceCollection],
} satisfies Record<string, readonly CollectionDefinition[]>

export type FeatureName = keyof typeof FEATURES

/** The features' names in the list's order. */
export const FEATURE_NAMES = Object.keys(FEATURES) as FeatureName[]

/** The collections of the state document, from the features that own them. */
export const COLLECTIONS: readonly CollectionDefinition[] = Object.values(FEATURES).flat()
