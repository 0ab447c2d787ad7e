/**
 * The official SDK acceptance tests (`@unleash/client-specification`) as the tests use them: the
 * files, the writes the admin API refuses or alters on purpose (with the reasons), and the making
 * of a file's state through the admin API in a project of its own (segments mapped to our ids,
 * flags, strategies, variants, enabling, dependencies). Flag names are kept as the specification's
 * (flag-level variants hash with the flag name, rollouts with the groupId), so files that share a
 * flag name go to different services (`batches`).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { paths } from './helpers'

const SPECS = join(import.meta.dir, '..', 'node_modules', '@unleash', 'client-specification', 'specifications')
/** The environment every file's state is made in. */
export const ENVIRONMENT = 'development'

export interface SpecConstraint {
  contextName: string
  operator: string
  values?: string[]
  value?: string
  caseInsensitive?: boolean
  inverted?: boolean
}
export interface SpecStrategy {
  name: string
  parameters?: Record<string, string>
  constraints?: SpecConstraint[]
  segments?: number[]
  variants?: Record<string, unknown>[]
}
export interface SpecFeature {
  name: string
  description?: string
  enabled: boolean
  type?: string
  strategies: SpecStrategy[]
  variants?: Record<string, any>[] | null
  dependencies?: { feature: string; enabled?: boolean; variants?: string[] }[]
}
export interface SpecFile {
  name: string
  state: {
    features?: SpecFeature[]
    segments?: { id: number; name?: string; constraints: SpecConstraint[] }[]
    events?: unknown[]
  }
  tests?: { description: string; context: Record<string, unknown>; toggleName: string; expectedResult: boolean }[]
  variantTests?: {
    description: string
    context: Record<string, unknown>
    toggleName: string
    expectedResult: Record<string, unknown>
  }[]
}

/** Files not run, and why: their `state` is not a flag list the admin API could store. */
export const NOT_RUN: Record<string, string> = {
  '19-delta-api-hydration.json':
    'its state is a list of delta events, not flags: test/system/streaming-sdk.test.ts runs it through the streaming and delta APIs',
  '20-delta-api-events.json':
    'its state is a list of delta events, not flags: test/system/streaming-sdk.test.ts runs it through the streaming and delta APIs',
}

/**
 * Writes the admin API refuses on purpose, by `file/flag`: the flag's tests are not asserted (the
 * flag is stored without what was refused, so the specification's answer would not apply).
 */
const EMPTY_VALUES = 'IN / NOT_IN with an empty values list (contract §4: multi-value operators need a non-empty list)'
const BAD_CIDR = 'an IN_CIDR value that is no address or range (contract §4: values are checked at save)'
export const REFUSED: Record<string, string> = {
  '09-strategy-constraints.json/Feature.constraints.empty': EMPTY_VALUES,
  '09-strategy-constraints.json/Feature.constraints.empty-not-in': EMPTY_VALUES,
  '11-strategy-constraints-edge-cases.json/Feature.constraints.no_values': EMPTY_VALUES,
  '11-strategy-constraints-edge-cases.json/Feature.constraints.no_values_NOT_IN': EMPTY_VALUES,
  '13-constraint-operators.json/F7.invalid-operator': 'an operator that is none of the 18 (+ IN_CIDR) of contract §4',
  '14-constraint-semver-operators.json/F8.invalidSemverWithLeadingV':
    'SEMVER_* value v2.0.0 (contract §4: strict semver, v2.0.0 is refused)',
  '15-global-constraints.json/F9.withMissingSegment': 'a strategy naming a segment that does not exist',
  '17-dependent-features.json/child.with.cycle': 'a dependency cycle (the parent depends on a flag itself)',
  '17-dependent-features.json/parent.enabled.child.enabled':
    'two levels of dependencies: as in Unleash, a parent cannot depend on another flag',
  '17-dependent-features.json/parents.not.exist.child.enabled': 'a parent that does not exist',
  '18-utf8-flag-names.json/Feature.UTF-8.Hellø_Wørld':
    "a flag name that is not URL-friendly (as in Unleash, names use letters, digits and - _ . ! ~ * ' ( ) only)",
  '18-utf8-flag-names.json/Feature.UTF-8.😊_φriend_你好_🌍':
    "a flag name that is not URL-friendly (as in Unleash, names use letters, digits and - _ . ! ~ * ' ( ) only)",
  '21-regex-constraint-operators.json/invalid-regex-defaults-to-false': 'an invalid regular expression',
  '21-regex-constraint-operators.json/Inverted.constraint': 'an inverted REGEX constraint (contract §4)',
  '21-regex-constraint-operators.json/R90.reject_lookahead': 'a look-ahead, not RE2 syntax (contract §4)',
  '21-regex-constraint-operators.json/R91.reject_backreference': 'a back-reference, not RE2 syntax (contract §4)',
  '22-cidr-constraint-operators.json/CIDR.mixed.values': BAD_CIDR,
  '22-cidr-constraint-operators.json/CIDR.invalid.only': BAD_CIDR,
  '22-cidr-constraint-operators.json/CIDR.ipv6.mixed.values': BAD_CIDR,
}

/**
 * Flags the admin API stores, but not as the specification writes them, on purpose (contract §4:
 * variant weights are normalised to a total of 1000, variable variants sharing it equally, and the
 * list is sorted by name). The SDK buckets by `hash % total weight` in list order, so these flags'
 * variant tests cannot give the specification's answers; their variant tests are not asserted.
 */
export const ALTERED: Record<string, string> = {
  '08-variants.json/Feature.Variants.C': 'weights 33/33/33 (total 99) become 334/333/333 of 1000',
  '08-variants.json/Feature.Variants.D': 'unequal variable weights 1/49/50 become equal shares of 1000',
  '08-variants.json/Feature.Variants.override.D': 'weights 33/33/34 (total 100) become 334/333/333 of 1000',
  '12-custom-stickiness.json/Feature.flexible.rollout.custom.stickiness_100':
    'variants blue, red, green, yellow are stored sorted by name',
  '15-global-constraints.json/F9.globalSegmentOn': 'variants blue, red, green, yellow are stored sorted by name',
  '16-strategy-variants.json/Feature.strategy.variants.stickiness': 'weights 1/1 (total 2) become 500/500 of 1000',
}

export const files: string[] = JSON.parse(readFileSync(join(SPECS, 'index.json'), 'utf8'))
export const specs = files.map(file => ({
  file,
  spec: JSON.parse(readFileSync(join(SPECS, file), 'utf8')) as SpecFile,
}))

/** An admin API call, answered with its status, text and parsed body. */
export type AdminCall = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; text: string; body: any }>

class Refused extends Error {}

async function checked(call: AdminCall, method: string, path: string, body?: unknown): Promise<any> {
  const answer = await call(method, path, body)
  if (answer.status >= 500) throw new Error(`${method} ${path} → ${answer.status} ${answer.text}`)
  if (answer.status >= 300) throw new Refused(`${method} ${path} → ${answer.status} ${answer.text}`)
  return answer.body
}

const constraintOf = (constraint: SpecConstraint) => ({ ...constraint, values: constraint.values ?? [] })

/** Makes the file's state in `project`; returns the refusals, by flag name. */
export async function createState(call: AdminCall, project: string, spec: SpecFile): Promise<Map<string, string>> {
  const refusals = new Map<string, string>()
  const attempt = async (flag: string, write: () => Promise<unknown>) => {
    try {
      await write()
    } catch (error) {
      if (!(error instanceof Refused)) throw error
      refusals.set(flag, [refusals.get(flag), error.message].filter(Boolean).join('; '))
    }
  }
  await checked(call, 'POST', '/api/admin/projects', { id: project, name: project })
  const segmentIds = new Map<number, number>()
  for (const segment of spec.state.segments ?? []) {
    const created = await checked(call, 'POST', '/api/admin/segments', {
      name: `${project}-${segment.name ?? `segment-${segment.id}`}`,
      project,
      constraints: segment.constraints.map(constraintOf),
    })
    segmentIds.set(segment.id, created.id)
  }
  const features = spec.state.features ?? []
  const created = new Set<string>()
  for (const feature of features) {
    await attempt(feature.name, async () => {
      await checked(call, 'POST', `/api/admin/projects/${project}/features`, {
        name: feature.name,
        description: feature.description,
        ...(feature.type ? { type: feature.type } : {}),
      })
      created.add(feature.name)
    })
    if (!created.has(feature.name)) continue
    for (const strategy of feature.strategies) {
      await attempt(feature.name, () =>
        checked(
          call,
          'POST',
          `${paths.flag(encodeURIComponent(feature.name), project)}/environments/${ENVIRONMENT}/strategies`,
          {
            name: strategy.name,
            parameters: strategy.parameters ?? {},
            constraints: (strategy.constraints ?? []).map(constraintOf),
            segments: (strategy.segments ?? []).map(id => segmentIds.get(id) ?? id),
            ...(strategy.variants
              ? {
                  variants: strategy.variants.map(variant => ({
                    weightType: 'variable',
                    stickiness: strategy.parameters?.stickiness ?? 'default',
                    ...variant,
                  })),
                }
              : {}),
          },
        ),
      )
    }
    if (feature.variants && feature.variants.length > 0) {
      const variants = feature.variants.map(variant => ({
        weightType: 'variable',
        stickiness: 'default',
        overrides: [],
        ...variant,
      }))
      await attempt(feature.name, () =>
        checked(
          call,
          'PUT',
          `${paths.flag(encodeURIComponent(feature.name), project)}/environments/${ENVIRONMENT}/variants`,
          variants,
        ),
      )
    }
    if (feature.enabled)
      await attempt(feature.name, () =>
        checked(
          call,
          'POST',
          `${paths.flag(encodeURIComponent(feature.name), project)}/environments/${ENVIRONMENT}/on`,
        ),
      )
  }
  // Parents first: every flag exists before any dependency names it.
  for (const feature of features) {
    if (!created.has(feature.name)) continue
    for (const dependency of feature.dependencies ?? []) {
      await attempt(feature.name, () =>
        checked(call, 'POST', `${paths.flag(encodeURIComponent(feature.name), project)}/dependencies`, dependency),
      )
    }
  }
  return refusals
}

/** Files in groups whose flag names differ (flag names are unique per service), files not run left out. */
export function batches(): { names: Set<string>; specs: typeof specs }[] {
  const result: { names: Set<string>; specs: typeof specs }[] = []
  for (const entry of specs) {
    if (NOT_RUN[entry.file]) continue
    const names = (entry.spec.state.features ?? []).map(feature => feature.name)
    let batch = result.find(candidate => names.every(name => !candidate.names.has(name)))
    if (!batch) result.push((batch = { names: new Set(), specs: [] }))
    for (const name of names) batch.names.add(name)
    batch.specs.push(entry)
  }
  return result
}

/** Whether the flag, or a parent of it at any depth, was refused: its tests do not apply then. */
export function affectedBy(spec: SpecFile, refusals: Map<string, string>): (name: string) => boolean {
  const parents = new Map(
    (spec.state.features ?? []).map(feature => [
      feature.name,
      (feature.dependencies ?? []).map(dependency => dependency.feature),
    ]),
  )
  const affected = (name: string, seen = new Set<string>()): boolean =>
    refusals.has(name) ||
    (!seen.has(name) && (parents.get(name) ?? []).some(parent => affected(parent, seen.add(name))))
  return name => affected(name)
}
